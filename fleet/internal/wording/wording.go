package wording

import (
	"strconv"
	"strings"
)

// DidYouMean returns " (did you mean X?)" for the options closest to word,
// or "" when none is close: a misspelt key or metric should cost a glance,
// not a trip to the docs.
func DidYouMean(word string, options []string) string {
	best := Closest(word, options)
	if len(best) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(best, " or ") + "?)"
}

// Closest returns the one to three options nearest to word by edit
// distance, or none if none is near.
func Closest(word string, options []string) []string {
	best, bestD := []string(nil), len(word)/3+1
	for _, o := range options {
		d := distance(word, o)
		if strings.HasPrefix(o, word) || strings.HasPrefix(word, o) {
			d = min(d, 2)
		}
		switch {
		case d < bestD:
			best, bestD = []string{o}, d
		case d == bestD:
			best = append(best, o)
		}
	}
	if len(best) > 3 {
		return nil
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes (keys and
// metric names are ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Some joins the first n of xs with commas, and says how many more there
// are: "a, b, c and 997 more". A message that lists the names a file
// defines stays short however many it defines.
func Some(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + " and " + strconv.Itoa(len(xs)-n) + " more"
}

// List joins xs as "a", "a and b", "a, b and c".
func List(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
