package leader

import (
	"errors"

	"github.com/fleetsim/fleetsim/fleet/ratelog"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Refusals counts what was refused on its way to the leader, each refusal
// under one reason. The first seven are the embedded broker's
// (Config.BrokerRefusals; zero with an external broker, which keeps its
// own counts), the others the leader's.
type Refusals struct {
	Auth           uint64 // logins refused
	Topic          uint64 // publishes, subscriptions and deliveries outside a client's topics
	PacketTooLarge uint64 // connections closed for a packet over the broker's size limit
	PacketTimeout  uint64 // connections closed for a packet begun and not sent whole in time
	PartialBudget  uint64 // connections closed for a packet the broker had no room to hold while it arrived
	Connections    uint64 // connections closed unread: the broker had its most open
	RateLimited    uint64 // messages dropped over their sender's inbound rate limit
	// PayloadTooLarge counts worker messages over Config.MaxPayload,
	// refused before they are parsed.
	PayloadTooLarge uint64
	// Malformed counts the other worker messages refused: a bad topic,
	// envelope or status.
	Malformed uint64
	// ForgedAck counts acks from a worker other than the one the command
	// went to: ignored, the command waits for its own worker's answer.
	ForgedAck uint64
}

// BrokerRefusals is what a broker in front of the leader refused; see
// Config.BrokerRefusals.
type BrokerRefusals struct {
	Auth, Topic, PacketTooLarge, PacketTimeout, PartialBudget, Connections, RateLimited uint64
}

// ReasonCount is one reason of Refusals and its count.
type ReasonCount struct {
	Reason string // one of RefusalReasons
	Count  uint64
}

// RefusalReasons lists the reasons ByReason names, in its order: the
// label values of fleetsim_refused_total on /metrics.
var RefusalReasons = []string{"auth", "topic", "packet_too_large", "packet_timeout", "partial_budget", "connection_limit",
	"rate_limited", "payload_too_large", "malformed", "forged_ack"}

// ByReason returns r's counts by reason, in the order of RefusalReasons.
func (r Refusals) ByReason() []ReasonCount {
	n := []uint64{r.Auth, r.Topic, r.PacketTooLarge, r.PacketTimeout, r.PartialBudget, r.Connections,
		r.RateLimited, r.PayloadTooLarge, r.Malformed, r.ForgedAck}
	out := make([]ReasonCount, len(n))
	for i, c := range n {
		out[i] = ReasonCount{RefusalReasons[i], c}
	}
	return out
}

// refusals returns Stats.Refused: the broker's counts, and the leader's
// own from s.
func (l *Leader) refusals(s *Stats) Refusals {
	r := Refusals{PayloadTooLarge: s.PayloadTooLarge, Malformed: s.Malformed - s.PayloadTooLarge, ForgedAck: s.AcksForged}
	if f := l.cfg.BrokerRefusals; f != nil {
		b := f()
		r.Auth, r.Topic, r.PacketTooLarge = b.Auth, b.Topic, b.PacketTooLarge
		r.PacketTimeout, r.PartialBudget, r.Connections, r.RateLimited = b.PacketTimeout, b.PartialBudget, b.Connections, b.RateLimited
	}
	return r
}

// refuse counts a worker message the leader refused (err: why, from the
// wire package) and logs it at most once per sender and reason per
// Config.RefusalLogInterval: the reason, the kind of error and the size.
// Never the payload, nor the error's detail, which quotes from it (the
// worker gets the detail in its reject). from is the worker, or the topic
// when it names none.
func (l *Leader) refuse(from string, size int, err error) {
	l.c.malformed.Add(1)
	reason := "malformed"
	if errors.Is(err, wire.ErrTooLarge) {
		l.c.payloadTooLarge.Add(1) // after malformed: Stats reads it first
		reason = "payload_too_large"
	}
	what := "bad topic"
	if de := (*wire.DecodeError)(nil); errors.As(err, &de) {
		what = de.Kind.Error()
	}
	l.refusalLog.Warn(l.cfg.Logger, from+" "+reason, "refused a worker message", "from", ratelog.Brief(from, 128),
		"reason", reason, "error", what, "size", size)
}
