package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Seconds is a time in seconds (simulated unless noted). Expectations that
// read a Seconds value are timing expectations: a run that fell behind its
// schedule does not judge them.
//
// Never is a time that did not come (a deploy that did not finish): +Inf
// in expressions, so that it fails "at most" and passes "at least", and
// null in JSON, which has no infinity.
type Seconds float64

// Never is the Seconds of what did not happen within the run.
var Never = Seconds(math.Inf(1))

// MarshalJSON writes Never as null, any other value as a number.
func (s Seconds) MarshalJSON() ([]byte, error) {
	if s == Never {
		return []byte("null"), nil
	}
	return json.Marshal(float64(s))
}

// UnmarshalJSON reads null as Never.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = Never
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*s = Seconds(f)
	return nil
}

// Result is what a run measured, at its end (after the drain). It is the
// environment of the expect: expressions (the expr tags are the names) and
// the "result" object of the JSON report (the json tags). Every number comes
// from the mechanisms' own stats (fleet/stats, mailbox.Stats, outbox.Stats,
// leader.Stats, worker.Stats): nothing here is counted twice.
type Result struct {
	// Lost is every message neither delivered nor counted as dropped,
	// rejected, expired, overwritten or dead-lettered: Commands.Lost +
	// Telemetry.Lost. A correct run has 0.
	Lost int64 `expr:"lost" json:"lost"`

	Run       RunInfo         `expr:"run" json:"run"`
	Fleet     FleetResult     `expr:"fleet" json:"fleet"`
	Workers   WorkersResult   `expr:"workers" json:"workers"`
	Gateways  GatewaysResult  `expr:"gateways" json:"gateways"`
	Leader    LeaderResult    `expr:"leader" json:"leader"`
	Heartbeat HeartbeatResult `expr:"heartbeats" json:"heartbeats"`
	Relay     RelayResult     `expr:"relay" json:"relay"`
	Outbox    OutboxResult    `expr:"outbox" json:"outbox"`
	Commands  CommandResult   `expr:"commands" json:"commands"`
	Telemetry TelemetryResult `expr:"telemetry" json:"telemetry"`
	Deploys   []DeployResult  `expr:"deploys" json:"deploys"`
	Jobs      JobsResult      `expr:"jobs" json:"jobs"`
	// Events are the timeline's named events, by name.
	Events map[string]EventResult `expr:"events" json:"events,omitempty"`
	// Windows are the scenario's windows, by name: what happened between
	// their edges.
	Windows map[string]WindowResult `expr:"windows" json:"windows,omitempty"`
}

// RunInfo is about the run itself.
type RunInfo struct {
	Seed uint64 `expr:"seed" json:"seed"`
	// Speed is the ceiling the run started with, simulated seconds per
	// wall second (0: none, as fast as the process settled).
	Speed float64 `expr:"speed" json:"speed"`
	// SimSeconds is the simulated time run, drain included.
	SimSeconds Seconds `expr:"sim_seconds" json:"sim_seconds"`
	// WallSeconds is the wall time the run took.
	WallSeconds float64 `expr:"wall_seconds" json:"wall_seconds"`
	// LagMax and LagP99 are the timer lag: how far (simulated seconds)
	// the runner's timeline events and samples fired behind their
	// schedule.
	LagMax Seconds `expr:"lag_max" json:"lag_max"`
	LagP99 Seconds `expr:"lag_p99" json:"lag_p99"`
	// ServiceLagMax and ServiceLagP99 are the service lag: how late the
	// leader's and the workers' loops completed what they served against
	// their service times; of the leader's and the workers' figures, the
	// larger.
	ServiceLagMax Seconds `expr:"service_lag_max" json:"service_lag_max"`
	ServiceLagP99 Seconds `expr:"service_lag_p99" json:"service_lag_p99"`
	// DeliveryLagMax and DeliveryLagP99 are the delivery lag: the time
	// from a message's publish (its sent_ms) to its receiver's handler,
	// for the workers' messages to the leader and the leader's commands to
	// the workers; the larger of the two.
	DeliveryLagMax Seconds `expr:"delivery_lag_max" json:"delivery_lag_max"`
	DeliveryLagP99 Seconds `expr:"delivery_lag_p99" json:"delivery_lag_p99"`
	// LagThreshold is the simulated time each lag's p99 may reach for
	// the run to count as having kept up (runner.RunOptions.LagThreshold).
	LagThreshold Seconds `expr:"lag_threshold" json:"lag_threshold"`
	// KeptUp is false when the p99 of any of the three lags passed the
	// threshold (Behind says which): timing expectations are then
	// reported as not judged.
	KeptUp bool `expr:"kept_up" json:"kept_up"`
	// ForcedAdvances counts the times simulated time was moved on before
	// the process had settled (it did not settle within the stall
	// timeout, nothing in it moving): the run's timings may be wrong
	// from there on, and it fails.
	ForcedAdvances uint64 `expr:"forced_advances" json:"forced_advances"`
	// Events is the timeline events fired.
	Events int `expr:"events" json:"events"`
	// LeaderRestarts counts leader crashes and restarts.
	LeaderRestarts int `expr:"leader_restarts" json:"leader_restarts"`
}

// Behind says how the run fell behind its schedule: each lag whose 99th
// percentile passed the threshold ("service lag p99 2.3s > threshold 1s"),
// then the speed ("at speed 50"). It is "" when none did, and when the
// threshold is not known (0: a report from before it was recorded). The
// runner sets KeptUp to Behind() == "".
func (r RunInfo) Behind() string {
	if r.LagThreshold <= 0 {
		return ""
	}
	var parts []string
	for _, l := range []struct {
		name string
		p99  Seconds
	}{{"timer lag", r.LagP99}, {"service lag", r.ServiceLagP99}, {"delivery lag", r.DeliveryLagP99}} {
		if l.p99 > r.LagThreshold {
			parts = append(parts, fmt.Sprintf("%s p99 %s > threshold %s", l.name, secText(l.p99), secText(r.LagThreshold)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " at speed " + strconv.FormatFloat(r.Speed, 'g', -1, 64)
}

// secText formats s for a message, to the millisecond: "2.3s", "0.004s".
func secText(s Seconds) string {
	return strconv.FormatFloat(math.Round(float64(s)*1000)/1000, 'f', -1, 64) + "s"
}
