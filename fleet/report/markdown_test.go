package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestMarkdownGolden(t *testing.T) {
	reps, cmp := goldenSet(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md.golden", buf.Bytes())
}

func TestMarkdownContent(t *testing.T) {
	reps, cmp := goldenSet(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"**3 of 7 runs passed, 4 failed; 1 run stopped before its end, not judged; 2 comparisons across a sweep's variants held.**",
		"Comparisons across the variants:",
		"| ✓ | drop-oldest serves as much |",
		"| slow-consumers |  | ⏹️ stopped |",
		"**stopped**: by q on the dashboard at 12.3s of 60s (simulated), before its end: not judged",
		// the sweep's table, from the leader mailbox.
		"| variant | offered | served | rejected | dropped | lost | max depth | wait p50 | wait p99 | |",
		"| leader.mailbox.policy=unbounded | 8,000 | 8,000 | 0 | 0 | 0 | 4,338 | 2.36 s | 4.63 s | ❌ failed |",
		"| leader.mailbox.policy=reject | 8,001 | 3,891 | 4,110 | 0 | 0 | 200 | 215 ms | 218 ms | ❌ failed |",
		"| leader.mailbox.policy=drop-oldest | 8,000 | 3,872 | 0 | 4,128 | 0 | 200 | 99 ms | 193 ms | ✅ passed |",
		"| leader mailbox max depth / capacity | 500 / 500 (reject) |",
		"| ✗ | relay never stalls | `relay.limit.min >= 5` |",
		"| – | deploy is quick | `deploys[0].duration < 120` | machine could not keep up",
		"| ✗ regression | `relay.backpressure` | 5 | 25 | 1.5× ± 10 |",
		"| ✓ better | `lost` | 2 | 0 | exact, lower is better |",
		"| ✗ regression | `deploys[1].delivered` | 4 | – | exact | the run has no such metric",
		"| – not compared | `deploys[0].duration` | 58.5 | 58.5 | 3× ± 0.5s, lower is better | not compared: run fell behind",
		"Not in the baseline, so not compared: `workers.duplicates`.",
		"**Baseline**: not compared: the baseline was captured with 1000 workers and this run has 100",
		"**failed**: the run did not complete: restart leader: open /tmp/x/outbox.db: timeout",
		"**failed**: 1 of 5 expectations failed; 2 baseline regressions",
		// a baseline of another size compares nothing: the run fails.
		"**failed**: baseline not compared: the baseline was captured with 1000 workers",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

// TestMarkdownEscapes: text from a scenario file cannot break a table row
// or inject markup.
func TestMarkdownEscapes(t *testing.T) {
	r := small()
	r.Verdicts = []result.Verdict{{
		Name:   "a | b <script>alert(1)</script> *bold* [link](x)",
		Check:  "lost == 0 || `x` | y",
		Status: result.Fail,
		Detail: "first line\nsecond | line",
	}}
	var buf bytes.Buffer
	if err := Markdown(&buf, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "| ✗ |") {
			row = l
		}
	}
	if row == "" {
		t.Fatalf("no expectation row in\n%s", buf.String())
	}
	// 5 cell borders, no more: every | in the text is escaped.
	if n := unescapedPipes(row); n != 5 {
		t.Errorf("row has %d cell borders, want 5: %s", n, row)
	}
	for _, bad := range []string{"<script>", "*bold*", "[link](x)"} {
		if strings.Contains(row, bad) {
			t.Errorf("row holds live markup %q: %s", bad, row)
		}
	}
	if !strings.Contains(row, "``lost == 0 \\|\\| `x` \\| y``") {
		t.Errorf("check not in a code span that survives its backticks: %s", row)
	}
}

func unescapedPipes(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

func TestMarkdownEdges(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, judged(nil, nil)); err != nil || !strings.Contains(buf.String(), "No scenario ran.") {
		t.Errorf("no reports: %v %q", err, buf.String())
	}
	if err := Markdown(&buf, judged([]*result.Report{nil}, nil)); err == nil || !strings.Contains(err.Error(), "runs[0]: no report") {
		t.Errorf("nil report: err = %v", err)
	}
}

func TestSecs(t *testing.T) {
	for _, tc := range []struct {
		in   result.Seconds
		want string
	}{{0, "0 s"}, {0.0004, "0.4 ms"}, {0.012, "12 ms"}, {0.2176, "218 ms"}, {2.362, "2.36 s"}, {31.44, "31.4 s"}, {312, "312.0 s"}, {754, "12m 34s"}} {
		if got := secs(tc.in); got != tc.want {
			t.Errorf("secs(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {4338, "4,338"}, {1234567, "1,234,567"}, {-8001, "-8,001"}} {
		if got := thousands(tc.in); got != tc.want {
			t.Errorf("thousands(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMarkdownGateways: the summary says when the workers sat behind
// gateways, and only then.
func TestMarkdownGateways(t *testing.T) {
	r := small()
	r.Result.Fleet.Online = 10
	var buf bytes.Buffer
	if err := Markdown(&buf, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "gateways") {
		t.Errorf("a fleet of sessions is said to have gateways:\n%s", buf.String())
	}
	r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 3, 4
	buf.Reset()
	if err := Markdown(&buf, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	if want := "10 workers, 10 online at the end; behind 3 gateways of up to 4"; !strings.Contains(buf.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, buf.String())
	}
}
