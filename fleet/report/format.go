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

// values are a Result's numbers by path ("leader.mailbox.max_depth",
// "deploys[0].delivered"), as result.Walk names them.
type values map[string]result.Leaf

func valuesOf(res *result.Result) values {
	v := values{}
	result.Walk(res, func(l result.Leaf) { v[l.Path] = l })
	return v
}

// num is the number at path (0 for a path the Result lacks).
func (v values) num(path string) float64 { return v[path].Value }

// text is the number at path as the registry says a person reads it
// (result.Metric.Format); "?" for a path that is not a registered
// number, which TestFormatNamesRegistered keeps out.
func (v values) text(path string) string {
	l, ok := v[path]
	if !ok {
		return "?"
	}
	return show(l.Pattern, l.Value)
}

// show formats x as the registry's metric named pattern is shown; "?"
// for a name the registry lacks.
func show(pattern string, x float64) string {
	m, ok := result.Lookup(pattern)
	if !ok {
		return "?"
	}
	switch m.Format {
	case result.FormatCount:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return thousands(int64(x))
		}
	case result.FormatSeconds:
		return secs(result.Seconds(x))
	case result.FormatPercent:
		return percent(x)
	}
	return num(x)
}

// named builds key numbers: each value it shows is a name recorded for
// the row it goes to.
type named struct {
	v     values
	names []string
}

// show is the value at path, named in the next row.
func (n *named) show(path string) string {
	n.names = append(n.names, path)
	return n.v.text(path)
}

// row is a key number of the values shown since the last row.
func (n *named) row(label, value string) keyNumber {
	k := keyNumber{Label: label, Value: value, Names: n.names}
	n.names = nil
	return k
}

// keyRow is a key number of a value built from the Result's fields
// rather than shown by path: names are the paths it comes from.
func keyRow(label, value string, names ...string) keyNumber {
	return keyNumber{Label: label, Value: value, Names: names}
}

// fleetRow is the fleet's size and end state, and how its workers reach
// the broker: a session each, or behind gateways.
func fleetRow(n *named) keyNumber {
	v := n.show("fleet.count") + " " + pluralWord(n.v.num("fleet.count"), "worker", "workers") + ", " +
		n.show("fleet.online") + " online at the end"
	if n.v.num("fleet.gateways") > 0 {
		v += "; behind " + n.show("fleet.gateways") + " " + pluralWord(n.v.num("fleet.gateways"), "gateway", "gateways") +
			" of up to " + n.show("fleet.gateway_size")
	}
	return n.row("fleet", v)
}

// capacity is the leader mailbox's capacity and policy: "unbounded" when
// it has none.
func capacity(n *named, policy string) string {
	c := n.show("leader.mailbox.capacity")
	if n.v.num("leader.mailbox.capacity") <= 0 {
		c = "unbounded"
	}
	if policy != "" && policy != "unbounded" {
		c += " (" + policy + ")"
	}
	return c
}

// keyNumbers are the numbers a person checks first after a run.
func keyNumbers(r *result.Report) []keyNumber {
	res := &r.Result
	n := &named{v: valuesOf(res)}
	rows := []keyNumber{
		n.row("lost", n.show("lost")+" (commands "+n.show("commands.lost")+", telemetry "+n.show("telemetry.lost")+")"),
		fleetRow(n),
		n.row("leader mailbox max depth / capacity", n.show("leader.mailbox.max_depth")+" / "+capacity(n, res.Leader.Mailbox.Policy)),
		n.row("leader mailbox wait p50 / p99", n.show("leader.mailbox.wait.p50")+" / "+n.show("leader.mailbox.wait.p99")),
		n.row("leader mailbox rejected / dropped", n.show("leader.mailbox.rejected")+" / "+n.show("leader.mailbox.dropped")),
		// A partition's limit and the sum over partitions are different
		// units: each row holds one.
		keyRow("relay limit per partition", limitRange(res.Relay.Limit, ", "), "relay.limit.initial", "relay.limit.min", "relay.limit.max"),
		n.row("relay limit at the end: sum of "+plural(res.Relay.Partitions, "partition", "partitions"), n.show("relay.limit.final")),
		n.row("relay delivered", n.show("relay.delivered")),
		n.row("relay backpressure", n.show("relay.backpressure")),
		n.row("dead letters", n.show("outbox.dead_letters")+" (dead-lettered during the run: "+n.show("outbox.dead_lettered")+")"),
		keyRow("workers at version", atVersion(res.Workers.AtVersion), "workers.at_version"),
		n.row("heartbeats coalesced", n.show("heartbeats.coalesced_ratio")+" ("+n.v.text("heartbeats.coalesced")+" of "+n.v.text("heartbeats.received")+" received)"),
	}
	for i, d := range res.Deploys {
		p := fmt.Sprintf("deploys[%d]", i)
		rows = append(rows, keyRow("deploy "+d.Version, deployOutcome(d), p+".delivered", p+".duration"))
	}
	kept := "yes"
	if !res.Run.KeptUp {
		kept = "no: the machine could not keep up at speed " + show("run.speed", res.Run.Speed) + "; timing expectations are not judged"
		if why := res.Run.Behind(); why != "" {
			kept = "no: " + why + "; timing expectations are not judged"
		}
	}
	rows = append(rows,
		n.row("runner lag max / p99", n.show("run.lag_max")+" / "+n.show("run.lag_p99")),
		keyRow("kept up", kept, "run.kept_up"),
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
		"speed "+show("run.speed", run.Speed)+"×",
		show("run.sim_seconds", float64(run.SimSeconds))+" simulated in "+show("run.wall_seconds", run.WallSeconds),
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
			Variant:  r.Variant,
			Offered:  show("leader.mailbox.offered", float64(m.Offered)),
			Served:   show("leader.mailbox.taken", float64(m.Taken)),
			Rejected: show("leader.mailbox.rejected", float64(m.Rejected)),
			Dropped:  show("leader.mailbox.dropped", float64(m.Dropped)),
			Lost:     show("lost", float64(r.Result.Lost)),
			Depth:    show("leader.mailbox.max_depth", float64(m.MaxDepth)),
			P50:      show("leader.mailbox.wait.p50", float64(m.Wait.P50)),
			P99:      show("leader.mailbox.wait.p99", float64(m.Wait.P99)),
			Status:   run.Verdict.Status,
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

// pluralWord is one or many, for n of them.
func pluralWord(n float64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// limitRange is a relay limit per partition: where it started, and the
// range the run saw it in ("initial 4, observed 4–15"), which is not its
// configured min and max.
func limitRange(l result.LimitRange, sep string) string {
	lo, hi := show("relay.limit.min", float64(l.Min)), show("relay.limit.max", float64(l.Max))
	seen := lo + "–" + hi
	if l.Min == l.Max {
		seen = lo + " throughout"
	}
	return "initial " + show("relay.limit.initial", float64(l.Initial)) + sep + "observed " + seen
}

// deployOutcome says how far a deploy got: "950 of 1,000 delivered in
// 12.4 s", ", did not finish" when it did not, and its rejections.
func deployOutcome(d result.DeployResult) string {
	v := show("deploys[*].delivered", float64(d.Delivered)) + " of " + show("deploys[*].targets", float64(d.Targets)) + " delivered"
	if d.Duration != result.Never {
		v += " in " + show("deploys[*].duration", float64(d.Duration))
	} else {
		v += ", did not finish"
	}
	if d.Rejected > 0 {
		v += ", " + show("deploys[*].rejected", float64(d.Rejected)) + " rejected"
	}
	return v
}
