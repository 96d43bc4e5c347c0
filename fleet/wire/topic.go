package wire

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the first topic level of every fleetsim topic.
const DefaultPrefix = "fleet"

// Channels: the last level of a worker's topics.
const (
	ChanDown   = "down"
	ChanUp     = "up"
	ChanStatus = "status"
)

// reserved is the second level used by the leader and control topics;
// worker ids may not start with "_", so they never collide.
const (
	leaderLevel  = "_leader"
	controlLevel = "_control"
)

// Topics builds and parses topic names under one prefix, so that several
// fleets can share a broker. The zero value uses DefaultPrefix.
type Topics struct{ Prefix string }

func (t Topics) prefix() string {
	if t.Prefix == "" {
		return DefaultPrefix
	}
	return t.Prefix
}

// Down is where the leader sends worker's commands.
func (t Topics) Down(worker string) string { return t.prefix() + "/" + worker + "/" + ChanDown }

// Up is where worker sends acks, requests, heartbeats and telemetry.
func (t Topics) Up(worker string) string { return t.prefix() + "/" + worker + "/" + ChanUp }

// Status is worker's retained online/offline topic (and its last will);
// its payload is a [Status].
func (t Topics) Status(worker string) string { return t.prefix() + "/" + worker + "/" + ChanStatus }

// AllUp is the leader's subscription to every worker's up topic.
func (t Topics) AllUp() string { return t.prefix() + "/+/" + ChanUp }

// AllStatus is the leader's subscription to every worker's status.
func (t Topics) AllStatus() string { return t.prefix() + "/+/" + ChanStatus }

// LeaderStatus is the leader's retained online/offline topic.
func (t Topics) LeaderStatus() string { return t.prefix() + "/" + leaderLevel + "/status" }

// LeaderStats carries the leader's periodic stats snapshot.
func (t Topics) LeaderStats() string { return t.prefix() + "/" + leaderLevel + "/stats" }

// LeaderDeploy is where an operator's tool (leader deploy) asks a running
// leader to start a deploy; only the leader's login may publish under
// <prefix>/_leader when the broker checks credentials.
func (t Topics) LeaderDeploy() string { return t.prefix() + "/" + leaderLevel + "/deploy" }

// LeaderDeployReply is where the leader answers the deploy request id.
func (t Topics) LeaderDeployReply(id string) string { return t.LeaderDeploy() + "/" + id }

// Control carries scenario events for the worker pool named pool.
func (t Topics) Control(pool string) string { return t.prefix() + "/" + controlLevel + "/" + pool }

// Announce is the topic on which the leader, once subscribed (at its start
// and after it dialed its broker again), asks the fleet to say again that
// it is online: every worker and gateway subscribed republishes its
// retained status after a random wait (see the protocol's Status). It is a
// control topic, which every login may read.
func (t Topics) Announce() string { return t.Control("announce") }

// Parse splits a worker topic into the worker id and the channel (down, up
// or status). It fails for leader and control topics and anything else.
func (t Topics) Parse(topic string) (worker, channel string, err error) {
	rest, ok := strings.CutPrefix(topic, t.prefix()+"/")
	if !ok {
		return "", "", fmt.Errorf("topic %q: not under prefix %q", topic, t.prefix())
	}
	worker, channel, ok = strings.Cut(rest, "/")
	if !ok || strings.Contains(channel, "/") {
		return "", "", fmt.Errorf("topic %q: want %s/<worker>/<down|up|status>", topic, t.prefix())
	}
	if err := ValidWorkerID(worker); err != nil {
		return "", "", fmt.Errorf("topic %q: %w", topic, err)
	}
	switch channel {
	case ChanDown, ChanUp, ChanStatus:
		return worker, channel, nil
	}
	return "", "", fmt.Errorf("topic %q: channel %q: want down, up or status", topic, channel)
}

// MaxIDLen bounds worker ids (and envelope ids).
const MaxIDLen = 64

// ValidWorkerID checks a worker id: 1 to 64 characters from A-Z a-z 0-9 _ -,
// not starting with "_" (reserved for the leader and control topics). The
// id is the worker's MQTT client id and a topic level, so MQTT's wildcards
// and separators cannot appear in it, nor a "." (see topicIDChar).
func ValidWorkerID(id string) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("worker id %s: must be 1 to %d characters", clipQuote(id), MaxIDLen)
	}
	if id[0] == '_' {
		return fmt.Errorf("worker id %q: must not start with \"_\" (reserved)", id)
	}
	for i := 0; i < len(id); i++ {
		if !topicIDChar(id[i]) {
			return fmt.Errorf("worker id %q: character %q not allowed (%s)", id, id[i], topicIDChars)
		}
	}
	return nil
}
