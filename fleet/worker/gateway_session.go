package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Dial attaches a device to the gateway and returns its virtual session
// on the gateway's one MQTT session. It fails, naming the gateway and the
// device, for a device outside the gateway's range and while the gateway
// is offline (ErrGatewayOffline); the device retries by its own policy. A
// device that dials again while attached replaces its old session, which
// is lost.
//
// The virtual session: Subscribe subscribes the gateway's session to the
// topic and routes its messages to the device; Publish and Send go out on
// the gateway's session; none of them waits for the broker (the broker
// takes the gateway's packets in order, so a device's SUBSCRIBE is in
// place before its "online" that follows it, and a device on a loop must
// never hold the loop up); Close(true) unsubscribes; Close(false) and
// Silence also publish o.WillPayload (retained) on o.WillTopic for the
// device, as the broker would publish the will of a session of its own,
// and Lost fires. When the gateway's own session is lost, every device's
// virtual session is lost with it.
func (g *Gateway) Dial(_ context.Context, o DialOptions) (Session, error) {
	if !g.cfg.Range.Contains(o.ID) {
		return nil, fmt.Errorf("gateway %s: device %q is outside its range %s", g.cfg.ID, o.ID, g.cfg.Range)
	}
	g.mu.Lock()
	if g.link == nil {
		g.mu.Unlock()
		return nil, fmt.Errorf("gateway %s: device %s: %w", g.cfg.ID, o.ID, ErrGatewayOffline)
	}
	old := g.devices[o.ID]
	var unsub []string
	if old != nil {
		unsub = g.detachLocked(old)
	}
	d := &deviceSession{g: g, link: g.link, id: o.ID, willTopic: o.WillTopic, will: o.WillPayload, notify: o.lost, taken: o.taken}
	g.devices[o.ID] = d
	g.mu.Unlock()
	if old != nil {
		old.unsubscribe(unsub)
		old.drop()
	}
	return d, nil
}

// deviceSession is a device's virtual session on its gateway's session.
type deviceSession struct {
	g         *Gateway
	link      GatewayLink // the gateway's session it was dialed on
	id        string
	willTopic string
	will      []byte
	notify    func(Session) // DialOptions.lost: called once, when lost
	taken     func()        // DialOptions.taken; nil once called or handed on; guarded by mu

	mu      sync.Mutex
	lost    chan struct{} // made by Lost, closed when lost
	dropped bool

	filters []string // subscribed; guarded by g.mu
}

// shared marks a session other workers' messages travel on too.
func (d *deviceSession) shared() {}

// Subscribe routes messages on topic filter (an exact topic: a device
// subscribes to its own) to h. h runs on the gateway's delivery goroutine,
// shared by all its devices: it must not block. Subscribe hands the
// SUBSCRIBE to the gateway's session and returns without waiting for the
// broker's answer: a device needs no more (what it publishes after it
// reaches the broker after it), and the broker grants the gateway its
// devices' topics at its login. The answer is read later; a refusal ends
// the device's session (see refused).
func (d *deviceSession) Subscribe(_ context.Context, filter string, qos byte, h func(topic string, payload []byte)) error {
	if strings.ContainsAny(filter, "+#") {
		return fmt.Errorf("gateway %s: device %s: subscribe %q: a device behind a gateway subscribes to exact topics", d.g.cfg.ID, d.id, filter)
	}
	g := d.g
	g.mu.Lock()
	if g.devices[d.id] != d {
		g.mu.Unlock()
		return fmt.Errorf("gateway %s: device %s: %w", g.cfg.ID, d.id, errDeviceLost)
	}
	g.routes[filter] = route{d: d, h: h}
	d.filters = append(d.filters, filter)
	g.mu.Unlock()
	if err := d.link.SubscribeNoWait(filter, qos, func(err error) { d.refused(filter, err) }); err != nil {
		g.mu.Lock()
		if r := g.routes[filter]; r.d == d {
			delete(g.routes, filter)
		}
		g.mu.Unlock()
		return fmt.Errorf("gateway %s: device %s: %w", g.cfg.ID, d.id, err)
	}
	return nil
}

// refused is the broker's refusal of the device's subscription to filter,
// read after Subscribe returned: a device that cannot hear its commands
// has lost its session. It leaves the gateway as a crashed device does
// (the gateway publishes its will) and its loop reconnects it.
func (d *deviceSession) refused(filter string, err error) {
	g := d.g
	g.mu.Lock()
	mine := g.routes[filter].d == d
	g.mu.Unlock()
	if !mine {
		return // it left meanwhile
	}
	g.cfg.Logger.Warn("gateway: the broker refused a device's subscription; the device reconnects",
		"gateway", g.cfg.ID, "device", d.id, "err", err)
	g.update(func(s *GatewayStats) { s.SubscribesRefused++ })
	d.leave(true)
}

// Publish goes out on the gateway's session without waiting for the
// broker (see Dial): ctx is not used.
func (d *deviceSession) Publish(_ context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if d.isLost() {
		return fmt.Errorf("gateway %s: device %s: %w", d.g.cfg.ID, d.id, errDeviceLost)
	}
	if !retained {
		return d.link.Send(topic, qos, payload)
	}
	taken := d.takeTaken()
	if taken == nil {
		return d.link.SendRetained(topic, qos, payload)
	}
	done, err := d.link.SendRetainedDone(topic, qos, payload)
	if err != nil {
		taken()
		return err
	}
	d.g.whenTaken(d.link, done, taken)
	return nil
}

// Send goes out on the gateway's session without waiting.
func (d *deviceSession) Send(topic string, qos byte, payload []byte) error {
	if d.isLost() {
		return fmt.Errorf("gateway %s: device %s: %w", d.g.cfg.ID, d.id, errDeviceLost)
	}
	return d.link.Send(topic, qos, payload)
}

// SendRetained goes out on the gateway's session without waiting.
func (d *deviceSession) SendRetained(topic string, qos byte, payload []byte) error {
	if d.isLost() {
		return fmt.Errorf("gateway %s: device %s: %w", d.g.cfg.ID, d.id, errDeviceLost)
	}
	return d.link.SendRetained(topic, qos, payload)
}

// Close detaches the device. Unclean, the gateway publishes the device's
// will for it. Neither waits for the broker.
func (d *deviceSession) Close(clean bool) { d.leave(!clean) }

// Silence is a device cut off from its gateway: the gateway notices at
// once (it is the device's broker, as far as the device can tell),
// publishes the device's will and drops the session.
func (d *deviceSession) Silence() { d.leave(true) }

// Lost is closed when the device's session is gone.
func (d *deviceSession) Lost() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lost == nil {
		d.lost = make(chan struct{})
		if d.dropped {
			close(d.lost)
		}
	}
	return d.lost
}

func (d *deviceSession) leave(will bool) {
	g := d.g
	g.mu.Lock()
	attached := g.devices[d.id] == d
	var unsub []string
	if attached {
		unsub = g.detachLocked(d)
	}
	g.mu.Unlock()
	if attached {
		d.unsubscribe(unsub)
		if will {
			_ = d.link.SendRetained(d.willTopic, 1, d.will)
			g.update(func(s *GatewayStats) { s.Wills++ })
		}
	}
	d.drop()
}

// detachLocked takes d off the gateway (g.mu held) and returns the
// filters to unsubscribe.
func (g *Gateway) detachLocked(d *deviceSession) []string {
	delete(g.devices, d.id)
	for _, f := range d.filters {
		if r := g.routes[f]; r.d == d {
			delete(g.routes, f)
		}
	}
	fs := d.filters
	d.filters = nil
	return fs
}

func (d *deviceSession) unsubscribe(filters []string) {
	for _, f := range filters {
		_ = d.link.Unsubscribe(f)
	}
}

// takeTaken returns the taken hook, once.
func (d *deviceSession) takeTaken() func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.taken
	d.taken = nil
	return t
}

// drop marks the session lost, once: it closes Lost's channel and tells
// the device's loop. A first announcement never made frees what waited
// for it.
func (d *deviceSession) drop() {
	if t := d.takeTaken(); t != nil { // lost before its first announcement
		t()
	}
	d.mu.Lock()
	if d.dropped {
		d.mu.Unlock()
		return
	}
	d.dropped = true
	if d.lost != nil {
		close(d.lost)
	}
	d.mu.Unlock()
	if d.notify != nil {
		d.notify(d)
	}
}

func (d *deviceSession) isLost() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}
