package broker

import (
	"strings"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// retainGuard keeps the broker's writes of retained messages apart from
// its scans for them. mochi 2.7.9 records a retained topic in its topic
// index under the index's locks (TopicsIndex.RetainMessage), but reads
// those records without them when it collects the retained messages a new
// wildcard subscription must be sent (TopicsIndex.Messages). A retained
// publish on one connection racing a wildcard subscribe on another was a
// data race inside the broker: a restarted leader subscribing to every
// worker's status while the workers announced themselves.
//
// No hook pair brackets mochi's scan alone, so the guard brackets a little
// more, in the goroutine that does each side:
//
//   - a subscription: from the SUBACK written (OnPacketSent), which mochi
//     does just before the scan, to the SUBSCRIBE processed
//     (OnPacketProcessed), just after it and the retained messages queued
//     to the client. Only subscriptions that scan take it: granted, not
//     shared, with a wildcard (an exact filter looks its one message up
//     under the retained store's own lock);
//   - a retained write: from OnPublish, or OnWill for a retained will
//     sent at once, to OnRetainMessage, which mochi calls right after the
//     write.
//
// Scans share the guard; a write has it alone. Neither side blocks on
// anything while it holds it: mochi queues the retained messages to the
// subscriber without waiting.
//
// Two writes stay outside: a will sent after a delay (an MQTT 5 client's
// will delay interval; fleetsim's clients use MQTT 3.1.1 and none), and
// mochi's own $SYS topics, which fleetsim does not subscribe to (with Auth
// on, nobody may). For the OnPublish bracket to close, the fleetsim hook
// must be the last (here the only) hook with OnPublish, and must not
// reject or ignore a packet there once it has taken the guard.
type retainGuard struct {
	rw sync.RWMutex

	mu    sync.Mutex
	state map[*mqtt.Client]guardState
}

// guardState is where one client's subscribe or retained write is.
type guardState uint8

const (
	scanDue  guardState = iota + 1 // a subscription that will scan: SUBACK not yet written
	scanning                       // SUBACK written: holds the guard shared
	writing                        // a retained write: holds the guard alone
)

func (g *retainGuard) set(cl *mqtt.Client, s guardState) {
	g.mu.Lock()
	if g.state == nil {
		g.state = make(map[*mqtt.Client]guardState)
	}
	g.state[cl] = s
	g.mu.Unlock()
}

// take removes cl's state and returns it (0 if there was none).
func (g *retainGuard) take(cl *mqtt.Client) guardState {
	g.mu.Lock()
	s := g.state[cl]
	delete(g.state, cl)
	g.mu.Unlock()
	return s
}

// subscribed marks a subscription whose SUBACK mochi is about to write and
// whose filters it will then scan for retained messages.
func (g *retainGuard) subscribed(cl *mqtt.Client, pk packets.Packet, codes []byte) {
	if cl.Net.Inline {
		return // an inline subscription has no SUBACK and no OnPacketProcessed to bracket it
	}
	for i, sub := range pk.Filters {
		if i < len(codes) && codes[i] < packets.ErrUnspecifiedError.Code &&
			sub.RetainHandling != 2 && !mqtt.IsSharedFilter(sub.Filter) &&
			strings.ContainsAny(sub.Filter, "+#") {
			g.set(cl, scanDue)
			return
		}
	}
}

// sent takes the guard shared once a scanning subscription's SUBACK is
// written: mochi scans next, in this goroutine.
func (g *retainGuard) sent(cl *mqtt.Client, pk packets.Packet) {
	if pk.FixedHeader.Type != packets.Suback {
		return
	}
	g.mu.Lock()
	due := g.state[cl] == scanDue
	g.mu.Unlock()
	if due {
		g.rw.RLock()
		g.set(cl, scanning)
	}
}

// processed gives the guard back once a SUBSCRIBE is processed, scan and
// all (or its SUBACK could not be written, and nothing was scanned).
func (g *retainGuard) processed(cl *mqtt.Client, pk packets.Packet) {
	if pk.FixedHeader.Type != packets.Subscribe {
		return
	}
	if g.take(cl) == scanning {
		g.rw.RUnlock()
	}
}

// write takes the guard alone for a retained message mochi is about to
// record; retained gives it back.
func (g *retainGuard) write(cl *mqtt.Client) {
	g.rw.Lock()
	g.set(cl, writing)
}

func (g *retainGuard) retained(cl *mqtt.Client) {
	if g.take(cl) == writing {
		g.rw.Unlock()
	}
}

func (h *hook) OnSubscribed(cl *mqtt.Client, pk packets.Packet, codes []byte) {
	h.retain.subscribed(cl, pk, codes)
}

func (h *hook) OnPacketSent(cl *mqtt.Client, pk packets.Packet, _ []byte) { h.retain.sent(cl, pk) }

func (h *hook) OnPacketProcessed(cl *mqtt.Client, pk packets.Packet, _ error) {
	h.retain.processed(cl, pk)
}

// OnPublish has mochi ignore a packet over its client's inbound rate
// limit (a QoS 1 one is still acknowledged), and passes every other on
// unchanged: mochi records a retained one next, under the guard. An
// ignored packet is never recorded, so it must not take the guard.
func (h *hook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if h.rates != nil && !h.rates.allow(cl, &pk) {
		return pk, packets.CodeSuccessIgnore
	}
	if pk.FixedHeader.Retain && h.retainAvailable {
		h.retain.write(cl)
	}
	return pk, nil
}

// OnWill passes the will on unchanged: mochi records a retained will sent
// at once next, under the guard.
func (h *hook) OnWill(cl *mqtt.Client, will mqtt.Will) (mqtt.Will, error) {
	if will.Retain && will.WillDelayInterval == 0 && h.retainAvailable {
		h.retain.write(cl)
	}
	return will, nil
}

func (h *hook) OnRetainMessage(cl *mqtt.Client, _ packets.Packet, _ int64) { h.retain.retained(cl) }
