package scenario

import (
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The closed sets of words a scenario file takes. Each is a string type,
// spelt in the file as its constants' values; the key table (keys.go)
// lists the valid ones and the loader refuses any other, so a loaded
// Scenario holds only these.

// Store is the leader's outbox store (OutboxSpec.Store).
type Store string

// The values of OutboxSpec.Store.
const (
	StoreBolt   Store = "bolt"   // the durable bbolt file
	StoreMemory Store = "memory" // starts empty at every (re)start
)

// HeartbeatPolicy is how the leader queues heartbeats
// (LeaderSpec.HeartbeatPolicy).
type HeartbeatPolicy string

// The values of LeaderSpec.HeartbeatPolicy.
const (
	HeartbeatCoalesce HeartbeatPolicy = "coalesce" // one waiting per worker
	HeartbeatAppend   HeartbeatPolicy = "append"   // every one in turn
)

// ReconnectPolicy is how a worker comes back (ReconnectSpec.Policy).
type ReconnectPolicy string

// The values of ReconnectSpec.Policy.
const (
	ReconnectBackoff   ReconnectPolicy = "backoff"
	ReconnectImmediate ReconnectPolicy = "immediate"
)

// OfflineMode is how a worker goes away at random (OfflineProfile.Mode).
type OfflineMode string

// The values of OfflineProfile.Mode.
const (
	OfflinePartition  OfflineMode = "partition"  // silent: the broker notices
	OfflineDisconnect OfflineMode = "disconnect" // a clean goodbye
)

// Delivery is how a worker gets its jobs (WorkerProfile.Delivery).
type Delivery string

// The values of WorkerProfile.Delivery.
const (
	DeliveryPush Delivery = "push" // the leader's relay assigns them
	DeliveryPull Delivery = "pull" // the worker asks the leader's job queue
)

// DeployKind is what a deploy updates (Deploy.Kind).
type DeployKind string

// The values of Deploy.Kind.
const (
	DeployFirmware DeployKind = "firmware"
	DeployConfig   DeployKind = "config"
)

// Durability is the outbox's outbox.Durability as a file spells it
// (OutboxSpec.Durability).
type Durability string

// The values of OutboxSpec.Durability.
var (
	DurabilitySync  = Durability(outbox.Sync.String())
	DurabilityBatch = Durability(outbox.Batch.String())
	DurabilityNone  = Durability(outbox.None.String())
)

// Outbox returns d as the outbox's Durability; "" is the scenario's
// default, DurabilityBatch.
func (d Durability) Outbox() (outbox.Durability, error) {
	if d == "" {
		d = keyDefault[Durability]("leader.outbox.durability")
	}
	return outbox.ParseDurability(string(d))
}

// Strategy is the relay limiter's flow.Strategy as a file spells it
// (LimitSpec.Strategy).
type Strategy string

// The values of LimitSpec.Strategy.
var (
	StrategyAIMD   = Strategy(flow.AIMD.String())
	StrategyStatic = Strategy(flow.Static.String())
)

// Flow returns s as the limiter's Strategy; "" is flow's default.
func (s Strategy) Flow() (flow.Strategy, error) {
	if s == "" {
		return flow.DefaultLimiterOptions.Strategy, nil
	}
	return flow.ParseStrategy(string(s))
}

// words lists enum values as text, for the key table.
func words[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func (x Store) String() string { return string(x) }

func (x HeartbeatPolicy) String() string { return string(x) }

func (x ReconnectPolicy) String() string { return string(x) }

func (x OfflineMode) String() string { return string(x) }

func (x DeployKind) String() string { return string(x) }

func (x Durability) String() string { return string(x) }

func (x Strategy) String() string { return string(x) }

func (x ScaleLeader) String() string { return string(x) }

func (x Delivery) String() string { return string(x) }
