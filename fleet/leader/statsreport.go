package leader

import (
	"context"
	"encoding/json"
	"time"
)

// StatsReport is the JSON object PublishStats sends on
// <prefix>/_leader/stats, and what a remote dashboard reads (the schema is
// in docs/PROTOCOL.md). Stats keeps its Go field names; durations are
// nanoseconds.
type StatsReport struct {
	At    time.Time `json:"at"`
	Stats Stats     `json:"stats"`
	// MailboxWaitP99 is the 99th percentile of Stats.Mailbox.Wait: the
	// histogram's buckets are not in its JSON form, so the quantile is
	// computed here, where they are.
	MailboxWaitP99 time.Duration `json:"mailbox_wait_p99"`
	Fleet          FleetSummary  `json:"fleet"`
	// Deploys are the deploys the leader keeps, each summed over its
	// waves: a report's size does not grow with a deploy's waves or
	// targets (Leader.Progress has the waves).
	Deploys []DeploySummary `json:"deploys"`
}

// FleetSummary is FleetView's counts without the per-worker list, which
// would make every stats message as long as the fleet is large.
type FleetSummary struct {
	Online    int            `json:"online"`
	Offline   int            `json:"offline"`
	ByVersion map[string]int `json:"by_version"`
}

// StatsReport returns the leader's stats, fleet counts and deploys now.
// The relay partitions' LimitHistory is left out: it is bounded, but
// resending thousands of moves every interval is not worth it; a reader
// charts the limits from successive reports instead.
func (l *Leader) StatsReport() StatsReport {
	s := l.Stats()
	for i := range s.Relay.Partitions {
		s.Relay.Partitions[i].LimitHistory = nil
	}
	f := l.Fleet()
	return StatsReport{
		At: l.clk.Now(), Stats: s, MailboxWaitP99: s.Mailbox.Wait.Quantile(0.99),
		Fleet:   FleetSummary{Online: f.Online, Offline: f.Offline, ByVersion: f.ByVersion},
		Deploys: l.DeploySummaries(),
	}
}

// PublishStats publishes a StatsReport on the stats topic every interval
// (QoS 0, not retained: a stale report is worse than none) over the
// leader's Link until ctx ends. It does not wait for the broker, so a slow
// broker cannot hold it up; a report the client refuses is logged at debug
// level and the next one tried.
func (l *Leader) PublishStats(ctx context.Context, every time.Duration) {
	t := l.clk.NewTicker(every)
	defer t.Stop()
	topic := l.cfg.Topics.LeaderStats()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			b, err := json.Marshal(l.StatsReport())
			if err != nil {
				l.cfg.Logger.Error("encode stats", "err", err)
				continue
			}
			if err := l.cfg.Link.Send(topic, 0, b); err != nil {
				l.cfg.Logger.Debug("stats not published", "err", err)
			}
		}
	}
}
