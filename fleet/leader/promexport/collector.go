package promexport

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
)

// Source is what a Collector reads; *leader.Leader provides it.
type Source interface {
	Stats() leader.Stats
	Fleet() leader.FleetView
	DeploySummaries() []leader.DeploySummary
}

// Options are a Collector's sources beyond its leader. The zero value
// exports the leader's own series only.
type Options struct {
	// DeployHistory is the leader's --deploy-history: the newest
	// DeployHistory + DeploySeriesExtra deploys export fleetsim_deploy_*
	// series. 0: every deploy the leader keeps.
	DeployHistory int
	// Requests reads the deploy and cancel requests' counts
	// (fleetsim_leader_deploy_requests_total,
	// fleetsim_leader_deploy_answers_total); nil: no requests taken.
	Requests func() control.Counts
	// Broker reads the embedded broker's stats; nil: no embedded broker.
	Broker func() broker.Stats
}

// Collector is a prometheus.Collector of a leader's fleetsim_* series. It
// keeps no state: each scrape reads its sources, which must be safe for
// concurrent use (the leader's are).
type Collector struct {
	src Source
	o   Options
}

// New returns the Collector of src's series.
func New(src Source, o Options) *Collector { return &Collector{src: src, o: o} }

// Describe sends every series' descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends every series' value now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter(ch)
	s := c.src.Stats()
	e.relay(s)
	e.outbox(s)
	e.leader(s)
	e.session(s)
	if c.o.Broker != nil {
		b := c.o.Broker()
		e.gauge(dTCPConns, float64(b.TCPConnections))
		e.gauge(dPartial, float64(b.PartialBytes))
	}
	e.fleet(c.src.Fleet())
	e.deploys(c.src.DeploySummaries(), c.deploySeries())
	if c.o.Requests != nil {
		e.requests(c.o.Requests())
	}
}

// deploySeries bounds the deploys fleetsim_deploy_* export, newest
// first; 0: no bound.
func (c *Collector) deploySeries() int {
	if c.o.DeployHistory <= 0 {
		return 0
	}
	return c.o.DeployHistory + DeploySeriesExtra
}

// emitter sends one scrape's values.
type emitter chan<- prometheus.Metric

func (e emitter) gauge(d *prometheus.Desc, v float64, l ...string) {
	e <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
}

func (e emitter) counter(d *prometheus.Desc, v uint64, l ...string) {
	e <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
}

// relay sends each relay partition's series.
func (e emitter) relay(s leader.Stats) {
	for i, p := range s.Relay.Partitions {
		part := strconv.Itoa(i)
		e.gauge(dLimit, float64(p.Limit), part)
		e.gauge(dInFlight, float64(p.InFlight), part)
		e.counter(dDelivered, p.Delivered, part)
		e.counter(dBackpressure, p.Backpressure, part)
		e.counter(dRetries, p.Retries, part)
		e.counter(dErrors, p.Errors, part)
		e.counter(dDeadLettered, p.DeadLettered, part)
		e.counter(dOffline, p.OfflineSkips, part)
		e.counter(dSettleRetry, p.SettleRetries, part)
	}
}

// outbox sends the outbox store's series.
func (e emitter) outbox(s leader.Stats) {
	o := s.Outbox
	e.gauge(dDepth, float64(o.Depth))
	e.gauge(dLeased, float64(o.Leased))
	e.gauge(dDeadLetters, float64(o.DeadLetters))
	e.gauge(dOldest, o.OldestAge.Seconds())
	e.counter(dEnqueued, o.Enqueued)
	e.counter(dOverwritten, o.Overwritten)
	e.counter(dExpired, o.Expired)
	e.counter(dAcked, o.Acked)
}

// leader sends the leader's mailbox, heartbeats and counters.
func (e emitter) leader(s leader.Stats) {
	m := s.Mailbox
	e.gauge(dMbDepth, float64(m.Depth))
	e.gauge(dMbCap, float64(m.Capacity))
	e.counter(dMbRejected, m.Rejected())
	e.counter(dMbDropped, m.Dropped())
	e <- prometheus.MustNewConstSummary(dMbWait, m.Wait.Count, m.Wait.Sum.Seconds(), map[float64]float64{
		0.5: m.Wait.Quantile(0.5).Seconds(), 0.99: m.Wait.Quantile(0.99).Seconds(), 1: m.Wait.Max.Seconds(),
	})
	e.counter(dHbReceived, s.HeartbeatsReceived)
	e.counter(dHbDone, s.HeartbeatsProcessed)
	e.counter(dHbCoalesce, s.Heartbeats.DroppedCoalesced)
	e.counter(dRequests, s.RequestsReceived)
	e.counter(dTelemetry, s.TelemetryReceived)
	e.counter(dFull, s.AnsweredFull)
	e.counter(dAcks, s.AcksOK, "ok")
	e.counter(dAcks, s.AcksFull, "full")
	e.counter(dAcks, s.AcksReject, "reject")
	e.counter(dForged, s.AcksForged)
	e.counter(dTimeouts, s.AsksTimedOut)
	e.counter(dMalformed, s.Malformed)
	e.counter(dReconnects, s.Reconnects)
	e.counter(dStale, s.StatusStale)
	e.counter(dHeardBack, s.HeardBack)
	e.counter(dSuspected, s.Suspected)
	e.gauge(dGwOnline, float64(s.GatewaysOnline))
	e.counter(dGwOfflines, s.GatewayOfflines)
	e.counter(dGwDevices, s.GatewayDevicesOffline)
	e.counter(dRepDropped, s.RepliesDroppedFull, "queue_full")
	e.counter(dRepDropped, s.RepliesDroppedStopping, "stopping")
	for _, r := range s.Refused.ByReason() { // a fixed set of labels
		e.counter(dRefused, r.Count, r.Reason)
	}
}

// session sends the leader's session with its broker.
func (e emitter) session(s leader.Stats) {
	up := 0.0
	if s.Broker.Connected {
		up = 1
	}
	e.gauge(dBrokerUp, up)
	e.counter(dBrokerReconnects, s.Broker.Reconnects)
	e <- prometheus.MustNewConstMetric(dBrokerDown, prometheus.CounterValue, s.Broker.Downtime.Seconds())
}

// fleet sends the fleet as the leader sees it, its versions bounded.
func (e emitter) fleet(f leader.FleetView) {
	e.gauge(dOnline, float64(f.Online))
	e.gauge(dOfflineW, float64(f.Offline))
	e.gauge(dSuspect, float64(f.Suspect))
	for _, v := range versionSeries(f.ByVersion, maxVersionSeries) {
		e.gauge(dByVersion, float64(v.n), v.label)
	}
}

// deploys sends the newest max deploys' series (0: all). Bounded: the
// leader keeps its newest deploys (and those still in flight), not every
// deploy it ever made.
func (e emitter) deploys(deploys []leader.DeploySummary, max int) {
	if max > 0 && len(deploys) > max {
		deploys = deploys[len(deploys)-max:]
	}
	for _, d := range deploys {
		idx, ver := strconv.Itoa(d.Index), versionLabel(d.Version)
		e.gauge(dDeployTargets, float64(d.Targets), idx, ver)
		e.gauge(dDeployDelivered, float64(d.Totals.Delivered), idx, ver)
		e.gauge(dDeployRejected, float64(d.Totals.Rejected), idx, ver)
	}
}

// requests sends the deploy requests' counts.
func (e emitter) requests(n control.Counts) {
	e.counter(dDeployReqs, n.Started, "started")
	e.counter(dDeployReqs, n.Repeated, "repeated")
	e.counter(dDeployReqs, n.Cancelled, "cancelled")
	e.counter(dDeployReqs, n.Refused, "refused")
	e.counter(dDeployReqs, n.Unanswered, "unanswered")
	e.counter(dDeployReqs, n.Dropped, "dropped")
	e.counter(dDeployAnswers, n.AnsweredQoS1, "qos1")
	e.counter(dDeployAnswers, n.AnsweredQoS0, "qos0")
	e.counter(dDeployAnswers, n.AnswersLost, "lost")
}
