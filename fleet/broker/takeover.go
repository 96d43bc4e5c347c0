package broker

import (
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// OnConnect runs before mochi looks for an existing session with the new
// connection's client id, and before OnConnectAuthenticate. It decides the
// login here, first: what follows touches the session already registered
// under the same client id, and a connection whose login is refused must
// never touch it (mochi calls OnConnect before authenticating, so a check
// left to OnConnectAuthenticate would come after the wait below has
// stopped the old session: anyone who knew a client id could knock its
// owner off without a password).
//
// Then it works around two races in mochi (v2.7.9) between connections of
// one client id, each of which leaves a client connected that the broker
// silently sends nothing:
//
//   - The goroutine of an old clean session checks "taken over?", then
//     unsubscribes and deletes by client id, without a lock between the
//     two: a new connection arriving in between — a worker reconnecting at
//     once after a crash, a restarted leader — has its subscriptions and
//     its client entry deleted. So when a clean session with the same id
//     is still registered, OnConnect stops it and waits until its
//     goroutine has ended, then lets mochi carry on as for a new id.
//   - Two connections arriving together both find no session, and both
//     register: the second overwrites the first in the client list, and
//     when the first ends, its cleanup deletes the second. A worker does
//     this when a connect attempt times out on its side while the broker
//     still serves it. So the connects of one client id pass one at a
//     time, from OnConnect until the session is registered
//     (OnSessionEstablished), or until the connection ends.
func (h *hook) OnConnect(cl *mqtt.Client, pk packets.Packet) error {
	if err := h.authenticate(cl, pk); err != nil {
		return err
	}
	if h.srv == nil {
		return nil
	}
	ended := connEnded(cl)
	if ended == nil {
		return nil // not one of our listeners' connections: nothing to wait on
	}
	h.gate.enter(cl, ended, h.log)
	old, ok := h.srv.Clients.Get(cl.ID)
	if !ok || old == cl || !old.Properties.Clean {
		return nil // nothing to wait for; persistent sessions take the takeover path
	}
	if !old.Closed() {
		old.Stop(packets.ErrSessionTakenOver)
	}
	if h.testTakeoverWait != nil {
		h.testTakeoverWait(cl.ID)
	}
	if oldEnded := connEnded(old); oldEnded != nil {
		waitOrWarn(oldEnded, h.log, "old session of a reconnecting client not cleaned up in time", cl.ID)
	}
	return nil
}

// takeoverWait bounds each wait above: a safety net far beyond what
// either takes even on a starved machine (the goroutine waited for was
// told to stop, or is a few steps from registering a session).
const takeoverWait = 30 * time.Second

// connEnded returns the channel closed when the broker has finished with
// cl's connection (see firstRead.Ended), or nil for a connection that is
// not one of our listeners'.
func connEnded(cl *mqtt.Client) <-chan struct{} {
	if e, ok := cl.Net.Conn.(interface{ Ended() <-chan struct{} }); ok {
		return e.Ended()
	}
	return nil
}

func waitOrWarn(ch <-chan struct{}, log interface{ Warn(string, ...any) }, msg, clientID string) {
	t := time.NewTimer(takeoverWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		log.Warn(msg, "client", clientID, "waited", takeoverWait)
	}
}

// connectGate lets one connect per client id through at a time.
type connectGate struct {
	mu   sync.Mutex
	busy map[string]chan struct{}       // client id -> closed when its connect is through
	held map[*mqtt.Client]chan struct{} // the connect holding each id
}

// enter waits until no other connect of cl's id is between OnConnect and
// its registration, then holds the id for cl until leave(cl) or ended is
// closed (a connection that ends before it registers: a failed CONNACK).
func (g *connectGate) enter(cl *mqtt.Client, ended <-chan struct{}, log interface{ Warn(string, ...any) }) {
	for {
		g.mu.Lock()
		if g.busy == nil {
			g.busy, g.held = make(map[string]chan struct{}), make(map[*mqtt.Client]chan struct{})
		}
		ch, busy := g.busy[cl.ID]
		if !busy {
			ch = make(chan struct{})
			g.busy[cl.ID], g.held[cl] = ch, ch
			g.mu.Unlock()
			go func() { // released by whichever comes first
				select {
				case <-ch:
				case <-ended:
					g.leave(cl)
				}
			}()
			return
		}
		g.mu.Unlock()
		t := time.NewTimer(takeoverWait)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			log.Warn("connect of a client id held up by another connect of the same id; going on", "client", cl.ID, "waited", takeoverWait)
			return
		}
	}
}

// leave releases the id cl holds, if it holds one.
func (g *connectGate) leave(cl *mqtt.Client) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.held[cl]
	if !ok {
		return
	}
	delete(g.held, cl)
	if g.busy[cl.ID] == ch {
		delete(g.busy, cl.ID)
	}
	close(ch)
}
