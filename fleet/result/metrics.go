package result

import (
	"cmp"
	"slices"
	"strings"
)

// This file is the registry of a run's metrics: each name a Result holds
// is defined once, in registry.go, with its meaning, unit, kind, better
// direction, baseline rule, what a run must send for it to count
// anything (Feeds), how a report shows it (Format), and the leader's
// Prometheus series that counts the same thing, if any, with its help.
// The report's baseline rules and key numbers, the expectations'
// vocabulary, the scenario's vacuity warnings, docs/SCENARIOS.md's tables
// of names, docs/REPORTS.md's table of rules and the leader's /metrics
// (fleet/leader/promexport) are read from it; tests fail when a Result
// field has no entry, an entry names no field, a document drifts from it,
// or a reader spells a name it lacks.
//
// The registry is a Go table rather than a data file: the compiler checks
// its kinds and rules, it needs no parsing (no error path at start-up),
// and it sits beside the types it describes, in the package every reader
// of a Result already imports.

// Kind is what a metric's number is: it decides the unit and, for a
// kept metric, the band a baseline gives it.
type Kind string

const (
	// Count is a number of things (messages, workers, times) that load
	// decides.
	Count Kind = "count"
	// Small is a small number (AIMD limits, attempts) where a step of 1
	// is a large ratio.
	Small Kind = "small number"
	// Ratio is a ratio in [0, 1].
	Ratio Kind = "ratio"
	// Timing is simulated seconds (a Seconds value): an expectation that
	// reads one is a timing check, not judged on a run that fell behind.
	Timing Kind = "timing"
	// Wall is wall-clock seconds: the machine's speed.
	Wall Kind = "wall time"
	// Input is the scenario's input or the run's setting, echoed back.
	Input Kind = "input"
	// Text, Flag and List are not numbers: a setting (a policy, a
	// version), a condition, a list of ids.
	Text Kind = "text"
	Flag Kind = "condition"
	List Kind = "list"
	// Collection is a list or a map of structs (deploys, events,
	// windows), whose items hold metrics of their own.
	Collection Kind = "collection"
)

// Numeric reports whether a metric of kind k is a number.
func (k Kind) Numeric() bool {
	switch k {
	case Count, Small, Ratio, Timing, Wall, Input:
		return true
	}
	return false
}

// Better is the direction in which a metric improves.
type Better string

const (
	Higher Better = "higher"
	Lower  Better = "lower"
	// Neither: a change either way is a regression as much as a gain
	// (how many asks met a full mailbox says little alone).
	Neither Better = ""
)

// Keep is how a baseline compares a metric.
type Keep string

const (
	// Exact: the scenario's timeline decides the number (which version
	// the workers end at, what must be zero).
	Exact Keep = "exact"
	// Band: load decides it; it is compared in a band of its kind's scale.
	Band Keep = "band"
	// Omitted: a baseline leaves the number out (Metric.Why says why).
	Omitted Keep = "omitted"
	// NotKept is the rule of names that are not numbers.
	NotKept Keep = ""
)

// Feed is what a run must send for a metric to count anything: a set of
// the feeds below. A metric fed by several counts when any of them is
// sent; one fed by none (0) counts without any (the fleet's connections
// and syncs, the configuration, the leader's own cadence). Without its
// feed a metric stays 0 (a list stays empty), so a check that reads only
// such metrics is known before the run (fleet/scenario warns of it).
type Feed uint8

const (
	// FeedCommands: commands from the leader to the workers through its
	// relay, which only a timeline's deploy and poison events send, and
	// its jobs events for the pushing workers' share (job commands).
	FeedCommands Feed = 1 << iota
	// FeedTelemetry: a telemetry interval above 0.
	FeedTelemetry
	// FeedHeartbeats: a heartbeat interval above 0, or a heartbeat storm.
	FeedHeartbeats
	// FeedJobs: a timeline's jobs event, whichever way the workers get
	// their share (pushed or pulled).
	FeedJobs
	// FeedJobRequests: pulling workers (delivery: pull), which ask the
	// leader's job queue for work. The queue holds only their share of
	// the jobs, and only they send job requests; a scenario with pulling
	// workers and no jobs event is refused, so this feed comes with
	// FeedJobs.
	FeedJobRequests
)

// Feeds lists every feed, in the order messages name them.
var Feeds = []Feed{FeedCommands, FeedTelemetry, FeedHeartbeats, FeedJobs, FeedJobRequests}

// String names f's feeds ("commands", "commands|telemetry"; "" for none).
func (f Feed) String() string {
	var names []string
	for i, name := range []string{"commands", "telemetry", "heartbeats", "jobs", "job requests"} {
		if f&Feeds[i] != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "|")
}

// Format is how a person reads a metric's value in a report.
type Format uint8

const (
	// FormatCount: a whole number with thousands separators ("12,345").
	FormatCount Format = iota
	// FormatNumber: a plain number ("12", "0.5"): AIMD limits, settings.
	FormatNumber
	// FormatSeconds: a duration ("0.4 ms", "1.24 s", "5m 12s").
	FormatSeconds
	// FormatPercent: a ratio in [0, 1] as a percentage ("75%").
	FormatPercent
)

// Unit of a metric's value.
const (
	UnitSeconds     = "s"         // simulated seconds
	UnitWallSeconds = "s of wall" // wall-clock seconds
)

// Metric is one name of a Result, as every reader of a run sees it.
type Metric struct {
	// Name is the metric's pattern: its expression path with every list
	// index or map key as [*] ("leader.mailbox.max_depth",
	// "windows[*].relay.delivered", "workers.at_version[*]").
	Name string
	Kind Kind
	// Unit is "" for counts and other plain numbers.
	Unit   string
	Better Better
	Keep   Keep
	// Why is the reason an Omitted metric is left out of baselines.
	Why string
	// Prom is the leader's Prometheus series (fleet/leader/promexport,
	// the leader's /metrics) that counts the same thing over one leader
	// process ("" when none does); a run's number sums it over the
	// leader's restarts and partitions.
	Prom string
	// Help is the Prom series' help text where the series is another
	// shape of the number (one partition's, now rather than at the end);
	// "" when the Meaning reads right for it (PromHelp).
	Help string
	// Feeds is what a run must send for the metric to count anything (0:
	// it counts without any).
	Feeds Feed
	// Format is how a report shows the value: by its kind and unit unless
	// the entry says otherwise.
	Format Format
	// Meaning is the sentence docs/SCENARIOS.md gives the name.
	Meaning string
	// Item is how the docs write one item of a Collection: `[]` for a
	// list, `["E"]` for a map by name.
	Item string
}

// Metrics lists the registry in its order (the order of the docs'
// tables).
func Metrics() []Metric { return slices.Clone(registry) }

var byName = func() map[string]int {
	m := make(map[string]int, len(registry))
	for i, e := range registry {
		m[e.Name] = i
	}
	return m
}()

// Lookup returns the metric named pattern ("deploys[*].duration").
func Lookup(pattern string) (Metric, bool) {
	i, ok := byName[pattern]
	if !ok {
		return Metric{}, false
	}
	return registry[i], true
}

// Prom returns the Prometheus name registered for the metric named
// pattern; it panics when there is none, which the leader's tests
// catch at once: a program's metric names are fixed, not input.
func Prom(pattern string) string {
	m, ok := Lookup(pattern)
	if !ok || m.Prom == "" {
		panic("result: no Prometheus name registered for " + pattern)
	}
	return m.Prom
}

// PromHelp is the help text of the metric's Prom series: its Help, or
// its Meaning.
func (m Metric) PromHelp() string { return cmp.Or(m.Help, m.Meaning) }

// DocName is how docs/SCENARIOS.md writes a name: an item of a
// collection as the collection's Item (`deploys[].version`,
// `windows["W"].relay.delivered`), a map or list of numbers by its own
// name (`workers.at_version`).
func DocName(pattern string) string {
	name := strings.TrimSuffix(pattern, "[*]")
	for {
		i := strings.Index(name, "[*]")
		if i < 0 {
			return name
		}
		item := "[]"
		if c, ok := Lookup(name[:i]); ok && c.Item != "" {
			item = c.Item
		}
		name = name[:i] + item + name[i+3:]
	}
}

// The constructors of registry.go's entries.

func exact(k Kind, name string, better Better, meaning string) Metric {
	return unit(Metric{Name: name, Kind: k, Better: better, Keep: Exact, Meaning: meaning})
}

func band(k Kind, name string, better Better, meaning string) Metric {
	return unit(Metric{Name: name, Kind: k, Better: better, Keep: Band, Meaning: meaning})
}

func omit(k Kind, name, why, meaning string) Metric {
	return unit(Metric{Name: name, Kind: k, Keep: Omitted, Why: why, Meaning: meaning})
}

func other(k Kind, name, meaning string) Metric {
	return Metric{Name: name, Kind: k, Meaning: meaning}
}

func collection(name, item, meaning string) Metric {
	return Metric{Name: name, Kind: Collection, Item: item, Meaning: meaning}
}

func unit(m Metric) Metric {
	switch m.Kind {
	case Timing:
		m.Unit, m.Format = UnitSeconds, FormatSeconds
	case Wall:
		m.Unit, m.Format = UnitWallSeconds, FormatSeconds
	case Small:
		m.Format = FormatNumber
	case Ratio:
		m.Format = FormatPercent
	}
	return m
}

// exports records the leader's Prometheus series of the same number,
// and its help text when the Meaning does not read right for it.
func (m Metric) exports(prom, help string) Metric { m.Prom, m.Help = prom, help; return m }

// fed records what a run must send for the metric to count anything.
func (m Metric) fed(f Feed) Metric { m.Feeds = f; return m }

// in sets the unit of an Input.
func (m Metric) in(unit string) Metric {
	m.Unit = unit
	if unit == UnitSeconds {
		m.Format = FormatSeconds
	}
	return m
}

// shown sets how a report shows the value.
func (m Metric) shown(f Format) Metric { m.Format = f; return m }
