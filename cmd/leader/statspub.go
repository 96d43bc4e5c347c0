package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// statsMessage is the JSON published on <prefix>/_leader/stats: the
// leader's Stats (Go field names; durations in nanoseconds), the fleet's
// counts and this process's deploys. For dashboards; not yet a frozen
// schema.
type statsMessage struct {
	At      time.Time               `json:"at"`
	Stats   leader.Stats            `json:"stats"`
	Fleet   fleetSummary            `json:"fleet"`
	Deploys []leader.DeployProgress `json:"deploys"`
}

type fleetSummary struct {
	Online    int            `json:"online"`
	Offline   int            `json:"offline"`
	ByVersion map[string]int `json:"by_version"`
}

func snapshot(src source, now time.Time) statsMessage {
	s := src.Stats()
	for i := range s.Relay.Partitions {
		s.Relay.Partitions[i].LimitHistory = nil // bounded, but not worth resending every time
	}
	f := src.Fleet()
	return statsMessage{At: now, Stats: s, Fleet: fleetSummary{Online: f.Online, Offline: f.Offline, ByVersion: f.ByVersion}, Deploys: src.Deploys()}
}

// publishStats publishes a snapshot every interval (QoS 0, not retained)
// until ctx ends.
func publishStats(ctx context.Context, src source, link leader.Link, topics wire.Topics, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			b, err := json.Marshal(snapshot(src, now))
			if err != nil {
				log.Error("encode stats", "err", err)
				continue
			}
			if err := link.Send(topics.LeaderStats(), 0, b); err != nil {
				log.Debug("stats not published", "err", err)
			}
		}
	}
}
