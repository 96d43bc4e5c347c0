package worker

import (
	"cmp"
	"slices"
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
	// arrived holds the commands come at this instant, admitted (or
	// refused) together by admit, in their devices' order: several
	// deliveries of the leader's reach the gateway at one instant in
	// whatever order their goroutines ran, and which of them find the
	// queue full must not depend on that.
	arrived []arrival
	admit   clock.Timer // due at once: the process settles first
}

// arrival is a command come for the radio, with what answering it takes.
type arrival struct {
	downMsg
	device string
	env    wire.Envelope
}

// downlink takes a command for the radio: it is admitted to the queue, or
// answered "full" for its device, together with the others that arrive at
// this instant (see downlinkState.arrived). It reports false for a message
// that is not a command (or cannot be read), which the caller routes at
// once.
func (g *Gateway) downlink(topic string, payload []byte) bool {
	env, err := wire.Decode(topic, payload, wire.Down, wire.DefaultMaxSize)
	if err != nil || env.Kind == wire.KindReply {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.routes[topic]
	if !ok {
		g.st.Unrouted++
		return true
	}
	g.dl.arrived = append(g.dl.arrived, arrival{downMsg: downMsg{topic: topic, payload: payload}, device: r.d.id, env: env})
	if g.dl.admit == nil {
		g.dl.admit = g.cfg.Clock.AfterFunc(0, g.admitArrived)
	}
	return true
}

// admitArrived admits the commands arrived at this instant in their
// devices' order (then their ids'), each to the queue while it has room,
// answering the others "full" with the time the queue takes to drain.
func (g *Gateway) admitArrived() {
	c := g.cfg.Downlink
	g.mu.Lock()
	in := g.dl.arrived
	g.dl.arrived, g.dl.admit = nil, nil
	slices.SortStableFunc(in, func(a, b arrival) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.env.ID, b.env.ID))
	})
	link := g.link
	type refusal struct {
		device string
		ack    wire.Envelope
	}
	var refusals []refusal
	for _, a := range in {
		if len(g.dl.queue) >= c.Capacity {
			g.st.DownlinkRefused++
			wait := g.dl.due.Sub(g.cfg.Clock.Now()) + time.Duration(len(g.dl.queue)-1)*c.Airtime
			ack := wire.Ack(&a.env, wire.ResultFull)
			ack.RetryAfterMs = max(wait.Milliseconds(), 1)
			refusals = append(refusals, refusal{a.device, ack})
			continue
		}
		g.dl.queue = append(g.dl.queue, a.downMsg)
		g.st.DownlinkMaxQueue = max(g.st.DownlinkMaxQueue, len(g.dl.queue))
		if g.dl.timer == nil {
			g.dl.due = g.cfg.Clock.Now().Add(c.Airtime)
			g.dl.timer = g.cfg.Clock.AfterFunc(c.Airtime, g.transmitted)
		}
	}
	g.mu.Unlock()
	if link == nil {
		return
	}
	for _, r := range refusals {
		if b, err := wire.Encode(r.ack); err == nil {
			_ = link.Send(g.cfg.Topics.Up(r.device), 1, b)
		}
	}
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
	if g.dl.admit != nil {
		g.dl.admit.Stop()
		g.dl.admit = nil
	}
	g.st.DownlinkDropped += uint64(len(g.dl.queue) + len(g.dl.arrived))
	clear(g.dl.queue)
	g.dl.queue = g.dl.queue[:0]
	g.dl.arrived = nil
}
