package wire

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxVersionLen bounds a version a deploy sends.
const MaxVersionLen = 64

// ValidVersion is the one rule for a version, shared by the leader (which
// refuses to deploy any other), the worker (which refuses to install any
// other, answering reject) and 'leader deploy' (which refuses the flag):
// 1 to 64 characters from A-Z a-z 0-9 . _ + -, the first a letter or a
// digit (2.1.0, 2.1.0-rc.1, 1.0.0+build.7, v2). A deploy's version
// becomes a label on the leader's /metrics, a field in its logs and its
// stats, so nothing that would need escaping there (spaces, newlines,
// quotes) is allowed; and a version that starts with "-" would read as a
// flag on a command line. The error quotes at most the first few
// characters of a long version.
func ValidVersion(v string) error {
	const want = "want 1 to 64 characters of letters, digits or . _ + -, starting with a letter or digit (e.g. 2.1.0)"
	if v == "" {
		return fmt.Errorf("version is empty: %s", want)
	}
	if len(v) > MaxVersionLen {
		return fmt.Errorf("version %s is %d characters: %s", clipQuote(v), len(v), want)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !idChar(c) && c != '+' {
			r, _ := utf8.DecodeRuneInString(v[i:])
			return fmt.Errorf("version %s: character %q not allowed: %s", clipQuote(v), r, want)
		}
		if i == 0 && !alnum(c) {
			return fmt.Errorf("version %s: starts with %q: %s", clipQuote(v), c, want)
		}
	}
	return nil
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// clipQuote quotes s for an error message, cut to its first 32 bytes when
// longer: a message about bad input must not grow with it.
func clipQuote(s string) string {
	const keep = 32
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:keep]) + "…"
}
