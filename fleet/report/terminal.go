package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TerminalWidth is the most columns a line of Terminal takes.
const TerminalWidth = 100

// Terminal writes a run's end summary for a terminal, as a load tester
// prints one when its run ends: the distributions a person reads first
// (p50, p90, p99 and max of the leader's and the workers' mailbox wait,
// the ask round trip and the heartbeat age), the counts and their rates,
// each deploy, the relay's limits and what was lost. Every time and every
// rate is in simulated seconds; a relay limit says whether it is one
// partition's or the sum over the partitions. No line is wider than
// TerminalWidth (a scenario's own names aside: a deploy's version).
func Terminal(w io.Writer, r *result.Report) error {
	res := &r.Result
	sim := float64(res.Run.SimSeconds)
	var b strings.Builder
	row := func(label, value string) {
		dots := max(3, terminalLabel-len(label)-2)
		fmt.Fprintf(&b, "  %s %s %s\n", label, strings.Repeat(".", dots), value)
	}
	b.WriteString("  times and rates in simulated seconds\n")
	dist := func(label string, q result.Quantiles, seen bool) {
		if !seen {
			row(label, "none")
			return
		}
		row(label, fmt.Sprintf("%-13s%-13s%-13s%s", "p50 "+secs(q.P50), "p90 "+secs(q.P90), "p99 "+secs(q.P99), "max "+secs(q.Max)))
	}
	dist("leader mailbox wait", res.Leader.Mailbox.Wait, res.Leader.Mailbox.Taken > 0)
	dist("worker mailbox wait", res.Workers.Mailbox.Wait, res.Workers.Mailbox.Taken > 0)
	dist("ask round trip", res.Leader.AskRTT, res.Leader.AsksSent > res.Leader.AsksTimedOut)
	dist("heartbeat age", res.Heartbeat.Age, res.Heartbeat.Processed > 0)
	count := func(label string, n uint64) {
		row(label, fmt.Sprintf("%-13s%s", uthousands(n), perSecond(n, sim)))
	}
	count("requests served", res.Leader.RequestsServed)
	count("requests rejected", res.Leader.Mailbox.Rejected)
	count("commands delivered", res.Relay.Delivered)
	count("relay backpressure", res.Relay.Backpressure)
	count("heartbeats processed", res.Heartbeat.Processed)
	for _, d := range res.Deploys {
		v := deployOutcome(d)
		row("deploy "+d.Version, v)
	}
	if p := res.Relay.Partitions; p > 0 {
		l := res.Relay.Limit
		row("relay limit per partition", limitRange(l, " · "))
		row("relay limit at the end", fmt.Sprintf("%d, the sum of %s", l.Final, plural(p, "partition", "partitions")))
	}
	row("lost", fmt.Sprintf("%s (commands %s, telemetry %s)", thousands(res.Lost), thousands(res.Commands.Lost), thousands(res.Telemetry.Lost)))
	_, err := io.WriteString(w, b.String())
	return err
}

// terminalLabel is the width of a Terminal row's label and its dots.
const terminalLabel = 30

// perSecond is n per simulated second over sim seconds: "12.3/s".
func perSecond(n uint64, sim float64) string {
	if sim <= 0 {
		return "–/s"
	}
	v := float64(n) / sim
	prec := 1
	if v >= 100 {
		prec = 0
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + "/s"
}
