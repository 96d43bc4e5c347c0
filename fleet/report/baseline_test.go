package report

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// small is a run of ten workers that kept up.
func small() *result.Report {
	return &result.Report{
		Scenario: "s",
		Result: result.Result{
			Run:   result.RunInfo{Seed: 1, KeptUp: true},
			Fleet: result.FleetResult{Count: 10},
		},
	}
}

// capture is Capture for a test: its error fails the test.
func capture(t testing.TB, reps ...*result.Report) Baseline {
	t.Helper()
	b, err := Capture(reps...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCaptureThenCompare(t *testing.T) {
	r := herdReport()
	b := capture(t, r)
	if b.Scenario != r.Scenario || b.FleetCount != 1000 || b.Seed != 42 || !b.KeptUp || !b.Captured.Equal(r.Started) {
		t.Errorf("header = %+v", b)
	}
	c := Compare(b, r)
	if c.Skipped != "" || len(c.Diffs) != 0 || len(c.New) != 0 || len(c.Notes) != 0 {
		t.Fatalf("a run compared with its own baseline differs: %+v", c)
	}
	if c.Compared != len(b.Metrics) || c.Compared < 75 {
		t.Errorf("Compared = %d of %d metrics", c.Compared, len(b.Metrics))
	}

	// The rules Capture chose: from one run, each kind's default band.
	want := map[string]Rule{
		"lost":                        {Kind: Exact, Better: Lower},
		"commands.lost":               {Kind: Exact, Better: Lower},
		"telemetry.lost":              {Kind: Exact, Better: Lower},
		`workers.at_version["2.1.0"]`: {Kind: Exact},
		"workers.applied_twice":       {Kind: Exact, Better: Lower},
		"outbox.dead_letters":         {Kind: Exact},
		"deploys[0].delivered":        {Kind: Exact, Better: Higher},
		"relay.backpressure":          {Kind: Band, Factor: 3, Abs: 5},
		"leader.mailbox.max_depth":    {Kind: Band, Factor: 3, Abs: 5, Better: Lower},
		"relay.limit.min":             {Kind: Band, Factor: 2, Abs: 2},
		"heartbeats.coalesced_ratio":  {Kind: Band, Factor: 1.25, Abs: 0.05, Better: Higher},
		"leader.mailbox.wait.p99":     {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"deploys[0].duration":         {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"run.sim_seconds":             {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"heartbeats.age.p50":          {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"outbox.oldest_max":           {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
	}
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
		if m.Spread != (Spread{}) {
			t.Errorf("%s: spread %+v from one run; want none (not measured)", m.Name, m.Spread)
		}
	}
	for n, rule := range want {
		if got[n].Rule != rule {
			t.Errorf("%s: rule %+v, want %+v", n, got[n].Rule, rule)
		}
	}
	if got["leader.mailbox.max_depth"].Value != 500 || got[`workers.at_version["2.1.0"]`].Value != 1000 {
		t.Errorf("values not captured: %+v %+v", got["leader.mailbox.max_depth"], got[`workers.at_version["2.1.0"]`])
	}
	for _, n := range []string{"run.wall_seconds", "run.lag_max"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s captured; it measures the machine, not the system", n)
		}
	}
	for _, n := range []string{"run.seed", "run.speed", "fleet.count", `fleet.groups["default"]`, "leader.mailbox.capacity",
		"workers.mailbox.capacity", "relay.partitions", "relay.limit.initial", "commands.poisoned", "deploys[0].targets", "run.events"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s captured; it echoes the scenario's input", n)
		}
	}
	if !slices.Contains(b.Help, helpRuns(1)) || !strings.Contains(helpRuns(1), "not measured") {
		t.Errorf("a baseline of one run does not say its bands were not measured: %q", b.Help)
	}

	// A later run that grew: new metrics are named, not compared.
	r2 := herdReport()
	r2.Result.Deploys = append(r2.Result.Deploys, result.DeployResult{Version: "2.2.0", Targets: 4, Delivered: 4, Duration: 3})
	r2.Result.Run.Seed = 43
	c = Compare(b, r2)
	if !slices.Equal(c.New, []string{"deploys[1].delivered", "deploys[1].rejected", "deploys[1].early", "deploys[1].duration"}) {
		t.Errorf("New = %v", c.New)
	}
	if !slices.Equal(c.Notes, []string{"baseline seed 42, run seed 43"}) {
		t.Errorf("Notes = %v", c.Notes)
	}
}

// herdCounts is herdReport with the counts of four mechanisms at values
// measured in the shipped scenarios' runs: the leader's "full" answers,
// coalesced heartbeats, the relay's backpressure and its skips of offline
// workers.
func herdCounts() *result.Report {
	r := herdReport()
	r.Result.Leader.AnsweredFull = 260
	r.Result.Heartbeat.Coalesced = 8610
	r.Result.Relay.Backpressure = 132
	r.Result.Relay.OfflineSkips = 129
	return r
}

// noisyRuns is n runs of herdCounts whose load-dependent counts differ:
// run i scales them by spread^(i - n/2), so the median run is the herd's
// own and the others stray by up to spread^(n/2) either way.
func noisyRuns(n int, spread float64) []*result.Report {
	reps := make([]*result.Report, n)
	for i := range reps {
		r := herdCounts()
		f := math.Pow(spread, float64(i-n/2))
		scale := func(v *uint64) { *v = uint64(math.Round(float64(*v) * f)) }
		scale(&r.Result.Relay.Backpressure)
		scale(&r.Result.Relay.OfflineSkips)
		scale(&r.Result.Leader.AnsweredFull)
		scale(&r.Result.Heartbeat.Coalesced)
		scale(&r.Result.Relay.Retries)
		r.Result.Leader.Mailbox.Wait.P99 *= result.Seconds(f)
		reps[i] = r
	}
	return reps
}

// TestMeasuredBand: from several runs the value is the median, the spread
// is recorded, and factor and abs follow the documented formula.
func TestMeasuredBand(t *testing.T) {
	runs := noisyRuns(5, 1.2) // backpressure 132 × 1.2^-2 … 1.2^2: 92, 110, 132, 158, 190
	b := capture(t, runs...)
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
	}
	bp := got["relay.backpressure"]
	// r = max((190+3)/(132+3), (132+3)/(92+3)) = 1.4296; p = 1 + 25/5 = 6;
	// factor = 1.4296^6 = 8.536 → 8.54 (3 digits, up); abs = 3 × 8.54.
	want := Metric{Name: "relay.backpressure", Value: 132, Rule: Rule{Kind: Band, Factor: 8.54, Abs: 25.7}, Spread: Spread{Runs: 5, Min: 92, Max: 190}}
	if bp != want {
		t.Errorf("relay.backpressure = %+v\nwant %+v", bp, want)
	}
	if m := got["lost"]; m.Rule != (Rule{Kind: Exact, Better: Lower}) || m.Spread != (Spread{Runs: 5}) {
		t.Errorf("lost = %+v: an exact rule records its spread, and takes no band", m)
	}
	// A steady metric gets the narrowest band of its kind.
	if m := got["relay.limit.min"]; m.Factor != smalls.MinFactor || m.Abs != smalls.Slack*smalls.MinFactor {
		t.Errorf("relay.limit.min = %+v: want k_min %v and abs s × k_min", m, smalls.MinFactor)
	}
	if len(b.Warnings()) != 0 {
		t.Errorf("warnings %v", b.Warnings())
	}

	for _, tc := range []struct {
		name string
		vals []float64
		sc   *scale
		n    int
		k    float64
		abs  float64
	}{
		{"one run: the default", []float64{100}, &counts, 1, 3, 5},
		{"zeros", []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, &counts, 10, 1.1, 3.3},
		{"a count of 0 to 3", []float64{0, 0, 0, 1, 3}, &counts, 5, 64, 192},
		// r = 123/103 = 1.194, p = 3.5
		{"ten runs", []float64{90, 95, 100, 100, 100, 100, 102, 105, 110, 120}, &counts, 10, 1.87, 5.61},
		// r = 103/83 = 1.241, p = 2.67
		{"fifteen runs: p = 2.67", []float64{80, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}, &counts, 15, 1.78, 5.34},
		// r = 0.62/0.52 = 1.192, p = 6
		{"seconds", []float64{0.5, 0.55, 0.6, 0.65, 0.7}, &timings, 5, 2.88, 0.0576},
		// one slow run in five: r = 0.22/0.032 = 6.875, p = 6: a timing
		// that strays so far is no baseline (the capture warns about it)
		{"seconds, an outlier", []float64{0.01, 0.012, 0.011, 0.2, 0.013}, &timings, 5, 106000, 2120},
	} {
		m := median(tc.vals)
		k, abs := tc.sc.band(m, slices.Min(tc.vals), slices.Max(tc.vals), len(tc.vals))
		if math.Abs(k-tc.k) > 0.011 || math.Abs(abs-tc.abs) > 0.011*tc.abs {
			t.Errorf("%s: band %g× ± %g, want %g× ± %g", tc.name, k, abs, tc.k, tc.abs)
		}
	}
}

// TestCaptureRuns: the runs of a baseline are repeats of one run; a
// metric some run lacks is not kept; an exact metric the runs disagree on
// and a band too wide to catch a tenfold change are warned about.
func TestCaptureRuns(t *testing.T) {
	if _, err := Capture(); err == nil {
		t.Error("a baseline of no runs")
	}
	other := herdReport()
	other.Result.Fleet.Count = 300
	if _, err := Capture(herdReport(), other); err == nil || !strings.Contains(err.Error(), "run 2 of 2") {
		t.Errorf("runs of two sizes: err = %v", err)
	}

	runs := noisyRuns(5, 1.05)
	runs[1].Result.Lost = 2
	runs[2].Result.Relay.Retries = 100 * runs[2].Result.Relay.Retries
	runs[3].Result.Run.KeptUp = false
	runs[3].Result.Leader.Mailbox.Wait.P99 = 100 // a stalled run's timing
	runs[4].Result.Workers.AtVersion["9.9.9"] = 1
	b := capture(t, runs...)
	if !b.KeptUp {
		t.Error("kept_up false though four runs of five kept up")
	}
	for _, m := range b.Metrics {
		if m.Name == "leader.mailbox.wait.p99" && (m.Runs != 4 || m.Max == 100) {
			t.Errorf("%s measured from %d runs up to %g: want the 4 that kept up", m.Name, m.Runs, m.Max)
		}
	}
	behind := noisyRuns(5, 1.05)
	for _, r := range behind[:3] {
		r.Result.Run.KeptUp = false
	}
	if capture(t, behind...).KeptUp {
		t.Error("kept_up true though three runs of five fell behind: its timings would be compared")
	}
	for _, m := range b.Metrics {
		if strings.Contains(m.Name, "9.9.9") {
			t.Errorf("%s kept: one run of five has it", m.Name)
		}
	}
	w := strings.Join(b.Warnings(), "\n")
	for _, want := range []string{
		"lost: rule exact, but its 5 runs ranged from 0 to 2: find out why, or make it a band",
		"relay.retries: its 5 runs ranged from",
		"it cannot catch a tenfold change",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
}

// TestRecaptureKeepsEdits: updating a baseline refreshes its values and
// measures its bands, but keeps what a user edited: a deleted metric stays
// deleted, a direction or a choice of exact stays. A band is measured, not
// kept: a band widened by hand is sized from the runs again. A baseline of
// another size is captured afresh.
func TestRecaptureKeepsEdits(t *testing.T) {
	old := capture(t, herdReport())
	var kept []Metric
	for _, m := range old.Metrics {
		switch m.Name {
		case "relay.backpressure":
			continue // deleted by the user
		case "leader.mailbox.max_depth":
			m.Factor, m.Value = 10, 1 // widened, and a stale value
		case "relay.retries":
			m.Rule = Rule{Kind: Exact} // the user holds it exact
		case "leader.malformed":
			m.Rule = Rule{Kind: Band, Factor: 2, Abs: 1} // the user lets it move
		case "relay.delivered":
			m.Better = Higher
		}
		kept = append(kept, m)
	}
	old.Metrics = kept
	runs := noisyRuns(5, 1.1)
	b, err := Recapture(old, runs...)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
	}
	if _, ok := got["relay.backpressure"]; ok {
		t.Error("a deleted metric came back")
	}
	if m := got["leader.mailbox.max_depth"]; m.Value != 500 || m.Factor != counts.MinFactor || m.Better != Lower || m.Runs != 5 {
		t.Errorf("max_depth = %+v, want the runs' value 500 with a measured band", m)
	}
	if m := got["relay.retries"]; m.Kind != Exact || m.Factor != 0 || m.Runs != 5 {
		t.Errorf("retries = %+v, want exact as the user made it", m)
	}
	if m := got["leader.malformed"]; m.Kind != Band || m.Factor != counts.MinFactor || math.Abs(m.Abs-counts.Slack*counts.MinFactor) > 1e-9 {
		t.Errorf("leader.malformed = %+v, want a band measured as a count", m)
	}
	if m := got["relay.delivered"]; m.Better != Higher {
		t.Errorf("relay.delivered = %+v, want the user's direction", m)
	}
	if len(b.Metrics) != len(kept) {
		t.Errorf("%d metrics, want the %d the file kept", len(b.Metrics), len(kept))
	}
	old.FleetCount++
	fresh, err := Recapture(old, runs...)
	if err != nil || len(fresh.Metrics) != len(capture(t, runs...).Metrics) {
		t.Errorf("a baseline of another size was not captured afresh: %d metrics, %v", len(fresh.Metrics), err)
	}
}

// TestCaptureGateways: a baseline records the runs' gateway layout, writes
// it to the file, and does not compare a run of another layout; a run of
// its own layout is compared.
func TestCaptureGateways(t *testing.T) {
	r := small()
	r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 2, 5
	b := capture(t, r)
	if b.Gateways != 2 || b.GatewaySize != 5 {
		t.Fatalf("captured gateways %d of %d, want 2 of 5", b.Gateways, b.GatewaySize)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := SaveBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBaseline(path)
	if err != nil || got.Gateways != 2 || got.GatewaySize != 5 {
		t.Fatalf("read back: %v, gateways %d of %d", err, got.Gateways, got.GatewaySize)
	}
	if c := Compare(got, r); c.Skipped != "" || c.Compared == 0 {
		t.Errorf("same layout: %+v", c)
	}
	if c := Compare(got, small()); !strings.Contains(c.Skipped, "this run has a session per worker") {
		t.Errorf("a run without gateways compared: %+v", c)
	}
	if other := capture(t, small()); other.Gateways != 0 {
		t.Errorf("no gateways captured as %d", other.Gateways)
	}
}
