package worker

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Downlink is a gateway's radio towards its devices, the resource its
// devices share: it forwards the leader's commands one at a time, each
// taking Airtime, and holds at most Capacity waiting. A command that
// finds the queue full is answered "full" for its device, the time the
// queue takes to drain as the retry-after hint, as a LoRaWAN network
// server refuses a downlink its gateway has no airtime for. Replies to
// the devices' own requests are forwarded at once (they are few, and
// cannot be refused). The zero Downlink forwards everything at once.
type Downlink struct {
	// Capacity is the most commands waiting for the radio (the one being
	// sent included); 0: no queue.
	Capacity int
	// Airtime is the time one command takes to send.
	Airtime time.Duration
}

// downMsg is a command waiting for the gateway's radio.
type downMsg struct {
	topic   string
	payload []byte
}

// downlinkState is the gateway's queue of commands for its radio, guarded
// by Gateway.mu.
type downlinkState struct {
	queue []downMsg
	timer clock.Timer // fires when the head has been sent; nil when idle
	due   time.Time   // when the head will have been sent
}

// downlink queues a command for the radio, or answers "full" for its
// device if the queue is full; it reports false for a message that is not
// a command (or cannot be read), which the caller routes at once.
func (g *Gateway) downlink(topic string, payload []byte) bool {
	env, err := wire.Decode(topic, payload, wire.Down, wire.DefaultMaxSize)
	if err != nil || env.Kind == wire.KindReply {
		return false
	}
	c := g.cfg.Downlink
	g.mu.Lock()
	r, ok := g.routes[topic]
	switch {
	case !ok:
		g.st.Unrouted++
		g.mu.Unlock()
		return true
	case len(g.dl.queue) >= c.Capacity:
		g.st.DownlinkRefused++
		wait := g.dl.due.Sub(g.cfg.Clock.Now()) + time.Duration(len(g.dl.queue)-1)*c.Airtime
		link := g.link
		g.mu.Unlock()
		ack := wire.Ack(&env, wire.ResultFull)
		ack.RetryAfterMs = max(wait.Milliseconds(), 1)
		if b, err := wire.Encode(ack); err == nil && link != nil {
			_ = link.Send(g.cfg.Topics.Up(r.d.id), 1, b)
		}
		return true
	}
	g.dl.queue = append(g.dl.queue, downMsg{topic: topic, payload: payload})
	g.st.DownlinkMaxQueue = max(g.st.DownlinkMaxQueue, len(g.dl.queue))
	if g.dl.timer == nil {
		g.dl.due = g.cfg.Clock.Now().Add(c.Airtime)
		g.dl.timer = g.cfg.Clock.AfterFunc(c.Airtime, g.transmitted)
	}
	g.mu.Unlock()
	return true
}

// transmitted hands the command at the head of the queue to its device
// (it has been sent) and starts sending the next.
func (g *Gateway) transmitted() {
	g.mu.Lock()
	if len(g.dl.queue) == 0 {
		g.dl.timer = nil
		g.mu.Unlock()
		return
	}
	m := g.dl.queue[0]
	g.dl.queue[0] = downMsg{}
	g.dl.queue = g.dl.queue[1:]
	r, ok := g.routes[m.topic]
	if ok {
		g.st.DownlinkForwarded++
	} else {
		g.st.Unrouted++
	}
	g.dl.timer = nil
	if len(g.dl.queue) > 0 {
		a := g.cfg.Downlink.Airtime
		g.dl.due = g.cfg.Clock.Now().Add(a)
		g.dl.timer = g.cfg.Clock.AfterFunc(a, g.transmitted)
	}
	g.mu.Unlock()
	if ok {
		r.h(m.topic, m.payload)
	}
}

// dropDownlink empties the queue when the gateway's session goes: the
// commands in it are lost with the radio's state, and the leader's asks
// for them time out. Called under g.mu.
func (g *Gateway) dropDownlink() {
	if g.dl.timer != nil {
		g.dl.timer.Stop()
		g.dl.timer = nil
	}
	g.st.DownlinkDropped += uint64(len(g.dl.queue))
	clear(g.dl.queue)
	g.dl.queue = g.dl.queue[:0]
}
