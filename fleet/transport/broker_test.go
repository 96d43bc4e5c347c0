package transport

import (
	"fmt"
	"sync"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// A thousand workers connect over the in-memory listener and exchange a
// message each way with the leader; every message arrives exactly once and
// the counters agree.
func TestThousandClientsExchange(t *testing.T) {
	const n = 1000
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, n)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)

	downs := make(inbox, n)
	workers := make([]paho.Client, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("w%04d", i)
			c, err := tryConnect(t, b, workerOpts(id))
			if err == nil {
				err = Wait(ctxT(t), c.Subscribe(testTopics.Down(id), 1, downs.handler))
			}
			if err == nil {
				err = Wait(ctxT(t), c.Publish(testTopics.Up(id), 1, false, id))
			}
			if err != nil {
				t.Errorf("worker %s: %v", id, err)
			}
			mu.Lock()
			workers[i] = c
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	got := map[string]bool{}
	for range n {
		m := ups.next(t)
		id, ch, err := testTopics.Parse(m.Topic())
		if err != nil || ch != "up" || string(m.Payload()) != id || got[id] {
			t.Fatalf("leader got %q on %q (err %v, duplicate %v)", m.Payload(), m.Topic(), err, got[id])
		}
		got[id] = true
		publish(t, leader, testTopics.Down(id), 1, "for "+id)
	}
	for range n {
		m := downs.next(t)
		id, _, _ := testTopics.Parse(m.Topic())
		if string(m.Payload()) != "for "+id || !got[id] {
			t.Fatalf("worker got %q on %q", m.Payload(), m.Topic())
		}
		delete(got, id)
	}

	s := b.Stats()
	want := Stats{ClientsConnected: n + 1, Connects: n + 1}
	if s != want {
		t.Errorf("Stats = %+v, want %+v", s, want)
	}
}
