package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// keyNumber is one row of the key numbers a summary shows for a run: a
// label, the value as text, and the expression names it comes from (so a
// reader can write an expectation or find it in a baseline).
type keyNumber struct {
	Label string
	Value string
	Names []string
}

// fleetRow is the fleet's size and end state, and how its workers reach
// the broker: a session each, or behind gateways.
func fleetRow(res *result.Result) keyNumber {
	f := res.Fleet
	k := keyNumber{"fleet", fmt.Sprintf("%s, %s online at the end", howMany(f.Count, "worker", "workers"), thousands(int64(f.Online))),
		[]string{"fleet.count", "fleet.online"}}
	if f.Gateways > 0 {
		k.Value += fmt.Sprintf("; behind %s of up to %s", howMany(f.Gateways, "gateway", "gateways"), thousands(int64(f.GatewaySize)))
		k.Names = append(k.Names, "fleet.gateways", "fleet.gateway_size")
	}
	return k
}

// keyNumbers are the numbers a person checks first after a run.
func keyNumbers(r *result.Report) []keyNumber {
	res := &r.Result
	lm := res.Leader.Mailbox
	capacity := thousands(int64(lm.Capacity))
	if lm.Capacity <= 0 {
		capacity = "unbounded"
	}
	if lm.Policy != "" && lm.Policy != "unbounded" {
		capacity += " (" + lm.Policy + ")"
	}
	rows := []keyNumber{
		{"lost", fmt.Sprintf("%s (commands %s, telemetry %s)", thousands(res.Lost), thousands(res.Commands.Lost), thousands(res.Telemetry.Lost)),
			[]string{"lost", "commands.lost", "telemetry.lost"}},
		fleetRow(res),
		{"leader mailbox max depth / capacity", thousands(int64(lm.MaxDepth)) + " / " + capacity,
			[]string{"leader.mailbox.max_depth", "leader.mailbox.capacity"}},
		{"leader mailbox wait p50 / p99", secs(lm.Wait.P50) + " / " + secs(lm.Wait.P99),
			[]string{"leader.mailbox.wait.p50", "leader.mailbox.wait.p99"}},
		{"leader mailbox rejected / dropped", uthousands(lm.Rejected) + " / " + uthousands(lm.Dropped),
			[]string{"leader.mailbox.rejected", "leader.mailbox.dropped"}},
		// A partition's limit and the sum over partitions are different
		// units: each row holds one.
		{"relay limit per partition", limitRange(res.Relay.Limit, ", "),
			[]string{"relay.limit.initial", "relay.limit.min", "relay.limit.max"}},
		{"relay limit at the end: sum of " + plural(res.Relay.Partitions, "partition", "partitions"),
			strconv.Itoa(res.Relay.Limit.Final), []string{"relay.limit.final"}},
		{"relay delivered", uthousands(res.Relay.Delivered), []string{"relay.delivered"}},
		{"relay backpressure", uthousands(res.Relay.Backpressure), []string{"relay.backpressure"}},
		{"dead letters", fmt.Sprintf("%s (dead-lettered during the run: %s)", thousands(int64(res.Outbox.DeadLetters)), uthousands(res.Outbox.DeadLettered)),
			[]string{"outbox.dead_letters", "outbox.dead_lettered"}},
		{"workers at version", atVersion(res.Workers.AtVersion), []string{"workers.at_version"}},
		{"heartbeats coalesced", fmt.Sprintf("%s (%s of %s received)", percent(res.Heartbeat.CoalescedRatio), uthousands(res.Heartbeat.Coalesced), uthousands(res.Heartbeat.Received)),
			[]string{"heartbeats.coalesced_ratio"}},
	}
	for i, d := range res.Deploys {
		v := deployOutcome(d)
		p := fmt.Sprintf("deploys[%d]", i)
		rows = append(rows, keyNumber{"deploy " + d.Version, v, []string{p + ".delivered", p + ".duration"}})
	}
	kept := "yes"
	if !res.Run.KeptUp {
		kept = fmt.Sprintf("no: the machine could not keep up at speed %s; timing expectations are not judged", num(res.Run.Speed))
		if why := res.Run.Behind(); why != "" {
			kept = "no: " + why + "; timing expectations are not judged"
		}
	}
	rows = append(rows,
		keyNumber{"runner lag max / p99", secs(res.Run.LagMax) + " / " + secs(res.Run.LagP99), []string{"run.lag_max", "run.lag_p99"}},
		keyNumber{"kept up", kept, []string{"run.kept_up"}},
	)
	return rows
}

// runLine is the line under a run's heading: file, seed, speed, times.
func runLine(r *result.Report) string {
	run := r.Result.Run
	parts := []string{}
	if r.File != "" {
		parts = append(parts, r.File)
	}
	parts = append(parts,
		fmt.Sprintf("seed %d", run.Seed),
		fmt.Sprintf("speed %s×", num(run.Speed)),
		fmt.Sprintf("%s simulated in %s", secs(run.SimSeconds), secs(result.Seconds(run.WallSeconds))),
	)
	if !r.Started.IsZero() {
		parts = append(parts, "started "+r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return strings.Join(parts, " · ")
}

// outcomeText is a difference's outcome with its mark.
func outcomeText(o Outcome) string {
	switch o {
	case Regression:
		return "✗ regression"
	case Better:
		return "✓ better"
	}
	return "– not compared"
}

// find returns the comparison of r's scenario and variant, or nil.
func find(cmp []Comparison, r *result.Report) *Comparison {
	for i := range cmp {
		if cmp[i].Scenario == r.Scenario && cmp[i].Variant == r.Variant {
			return &cmp[i]
		}
	}
	return nil
}

// sweep is the variants of one scenario, in the order given, and the
// comparisons across them (judged once the last has run, and carried by
// its report).
type sweep struct {
	Scenario    string
	Description string
	Runs        []Run
	Comparisons []result.Verdict
}

// sweeps groups the runs that have a variant by scenario, in order of
// first appearance.
func sweeps(runs []Run) []sweep {
	var out []sweep
	at := map[string]int{}
	for _, run := range runs {
		r := run.Report
		if r.Variant == "" {
			continue
		}
		i, ok := at[r.Scenario]
		if !ok {
			i = len(out)
			at[r.Scenario] = i
			out = append(out, sweep{Scenario: r.Scenario, Description: r.Description})
		}
		out[i].Runs = append(out[i].Runs, run)
		out[i].Comparisons = append(out[i].Comparisons, r.Comparisons...)
	}
	return out
}

// sweepRow is a variant's row of a sweep's table: the leader mailbox's
// accounting, each column named for what it counts.
type sweepRow struct {
	Variant                                   string
	Offered, Served, Rejected, Dropped, Depth string
	Lost                                      string // the run's lost: unaccounted, not refused
	P50, P99                                  string
	Status                                    Status
}

// sweepRows builds a sweep's table from the leader mailbox's accounting.
func sweepRows(s sweep) []sweepRow {
	rows := make([]sweepRow, 0, len(s.Runs))
	for _, run := range s.Runs {
		r := run.Report
		m := r.Result.Leader.Mailbox
		rows = append(rows, sweepRow{
			Variant: r.Variant, Offered: uthousands(m.Offered), Served: uthousands(m.Taken),
			Rejected: uthousands(m.Rejected), Dropped: uthousands(m.Dropped),
			Lost: thousands(r.Result.Lost), Depth: thousands(int64(m.MaxDepth)),
			P50: secs(m.Wait.P50), P99: secs(m.Wait.P99), Status: run.Verdict.Status,
		})
	}
	return rows
}

// atVersion lists workers by version, sorted by version.
func atVersion(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, v+": "+thousands(int64(m[v])))
	}
	return strings.Join(parts, ", ")
}

// thousands formats n with thousands separators.
func thousands(n int64) string {
	if n < 0 {
		return "-" + uthousands(uint64(-n))
	}
	return uthousands(uint64(n))
}

func uthousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// secs formats simulated seconds for a person: "0.4 ms", "12 ms", "1.24 s",
// "31.4 s", "5m 12s".
func secs(s result.Seconds) string {
	v := float64(s)
	switch a := math.Abs(v); {
	case v == 0:
		return "0 s"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case a < 0.01:
		return strconv.FormatFloat(v*1000, 'f', 1, 64) + " ms"
	case a < 1:
		return strconv.FormatFloat(v*1000, 'f', 0, 64) + " ms"
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64) + " s"
	case a < 600:
		return strconv.FormatFloat(v, 'f', 1, 64) + " s"
	}
	m := math.Floor(v / 60)
	return fmt.Sprintf("%.0fm %02.0fs", m, math.Floor(v-m*60))
}

// percent formats a ratio in [0, 1].
func percent(r float64) string {
	return strconv.FormatFloat(r*100, 'f', 0, 64) + "%"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// howMany is plural with thousands separators: "1 worker", "1,000 workers".
func howMany(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(int64(n)) + " " + many
}

// limitRange is a relay limit per partition: where it started, and the
// range the run saw it in ("initial 4, observed 4–15"), which is not its
// configured min and max.
func limitRange(l result.LimitRange, sep string) string {
	seen := fmt.Sprintf("%d–%d", l.Min, l.Max)
	if l.Min == l.Max {
		seen = fmt.Sprintf("%d throughout", l.Min)
	}
	return fmt.Sprintf("initial %d%sobserved %s", l.Initial, sep, seen)
}

// deployOutcome says how far a deploy got: "950 of 1,000 delivered in
// 12.4 s", ", did not finish" when it did not, and its rejections.
func deployOutcome(d result.DeployResult) string {
	v := fmt.Sprintf("%s of %s delivered", thousands(int64(d.Delivered)), thousands(int64(d.Targets)))
	if d.Duration != result.Never {
		v += " in " + secs(d.Duration)
	} else {
		v += ", did not finish"
	}
	if d.Rejected > 0 {
		v += fmt.Sprintf(", %s rejected", thousands(int64(d.Rejected)))
	}
	return v
}
