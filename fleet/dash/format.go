package dash

import (
	"fmt"
	"math"
	"strconv"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// fmtSec formats seconds compactly: "0.25s", "12.3s", "4m05s", "2h03m".
func fmtSec(s result.Seconds) string {
	v := float64(s)
	neg := ""
	if v < 0 {
		neg, v = "-", -v
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "?"
	case v < 1:
		return neg + strconv.FormatFloat(v, 'f', 2, 64) + "s"
	case v < 60:
		return neg + strconv.FormatFloat(v, 'f', 1, 64) + "s"
	case v < 3600:
		t := int(v)
		return fmt.Sprintf("%s%dm%02ds", neg, t/60, t%60)
	}
	t := int(v) / 60
	return fmt.Sprintf("%s%dh%02dm", neg, t/60, t%60)
}

// fmtSpeed formats a speed factor: "×1", "×16", "×2.5", and a speed
// below 1 as the fraction it is when it is one over a whole number:
// "×1/4", "×1/64".
func fmtSpeed(s float64) string {
	if s > 0 && s < 1 {
		if inv := 1 / s; math.Abs(inv-math.Round(inv)) < 1e-9 {
			return "×1/" + strconv.FormatFloat(math.Round(inv), 'f', 0, 64)
		}
	}
	return "×" + strconv.FormatFloat(s, 'g', 3, 64)
}

// pad right-aligns s in w cells, so a field keeps its place as its
// number changes width.
func pad(s string, w int) string { return fmt.Sprintf("%*s", w, s) }

// numWidth is the widest fmtNum gives ("999.9k", "-12.3M").
const numWidth = 6

// fmtNum formats a count with a k/M suffix past 10,000.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 10e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 10e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// fmtRate formats a per-second rate.
func fmtRate(v float64) string { return fmtNum(v) + "/s" }
