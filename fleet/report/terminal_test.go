package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestTerminalGolden: the end summary a terminal shows after a run, for
// the herd, a run that fell behind and a run that broke.
func TestTerminalGolden(t *testing.T) {
	var b bytes.Buffer
	for _, r := range []*result.Report{herdReport(), behindReport(), brokenReport()} {
		b.WriteString("== " + name(r) + "\n")
		if err := Terminal(&b, r); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "terminal.golden", b.Bytes())
}

// TestTerminalContent: the summary holds each distribution's four
// quantiles, the rates, the deploy and the relay limits, each limit
// labelled as one partition's or the sum, and fits 100 columns.
func TestTerminalContent(t *testing.T) {
	var b bytes.Buffer
	if err := Terminal(&b, herdReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"leader mailbox wait", "p50 12 ms", "p90 3.10 s", "p99 12.4 s", "max 12.5 s",
		"ask round trip", "heartbeat age", "worker mailbox wait",
		"commands delivered", "/s",
		"deploy 2.1.0", "delivered in 58.5 s",
		"relay limit per partition", "relay limit at the end", "the sum of 4 partitions",
		"lost", "simulated seconds",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > TerminalWidth {
			t.Errorf("line of %d columns, want at most %d: %q", n, TerminalWidth, l)
		}
	}
}
