package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update and review the diff):\n%s", path, firstDiff(want, got))
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y []byte
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if !bytes.Equal(x, y) {
			return "line " + itoa(i+1) + ":\nwant: " + string(x) + "\ngot:  " + string(y)
		}
	}
	return ""
}

func itoa(i int) string { return string(bytes.TrimSpace([]byte(num(float64(i))))) }

// goldenSet is every kind of run a summary shows: a run with a failed
// expectation and a baseline with a regression, a better metric, a missing
// metric and a new one; a run that fell behind (timings not compared); a
// run that did not complete; a sweep with comparisons across its variants,
// one variant compared with a baseline of another fleet size (which fails
// it); and a run stopped before its end.
func goldenSet(t testing.TB) ([]*result.Report, []Comparison) {
	herd := herdReport()
	b := capture(t, herd)
	var ms []Metric
	for _, m := range b.Metrics {
		switch m.Name {
		case "relay.backpressure":
			// got 25: a regression under a rule a user tightened
			m.Value, m.Rule = 5, Rule{Kind: Band, Factor: 1.5, Abs: 10}
		case "lost":
			m.Value = 2 // got 0: better
		case "workers.duplicates":
			continue // in the run, not in the baseline: new
		}
		ms = append(ms, m)
	}
	ms = append(ms, Metric{Name: "deploys[1].delivered", Value: 4, Rule: Rule{Kind: Exact}})
	b.Metrics = ms

	behind := behindReport()
	bb := capture(t, herdReport())
	bb.Scenario = behind.Scenario

	sweep := sweepReports()
	sb := capture(t, sweep[2])
	sb.FleetCount = 1000

	// The sweep's comparisons across its variants, on its last report.
	sweep[3].Comparisons = []result.Verdict{
		{Name: "reject bounds the wait", Check: `variants["leader.mailbox.policy=reject"].leader.mailbox.wait.p99 < variants["leader.mailbox.policy=unbounded"].leader.mailbox.wait.p99`, Status: result.Pass},
		{Name: "drop-oldest serves as much", Check: `variants["leader.mailbox.policy=drop-oldest"].leader.mailbox.taken >= 0.9 * variants["leader.mailbox.policy=reject"].leader.mailbox.taken`, Status: result.Pass},
	}

	reps := append([]*result.Report{herd, behind, brokenReport()}, sweep...)
	reps = append(reps, stoppedReport())
	cmp := []Comparison{Compare(b, herd), Compare(bb, behind), Compare(sb, sweep[2])}
	return reps, cmp
}

// judged is Judge without options: what sim run and sim check show.
func judged(reps []*result.Report, cmp []Comparison) []Run { return Judge(reps, cmp, Options{}) }

// one is a run judged alone, not compared with a baseline.
func one(r *result.Report) Run { return judged([]*result.Report{r}, nil)[0] }
