package broker

import (
	"fmt"
	"sync"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// TestRetainedPublishesDuringWildcardSubscribes: clients keep publishing
// retained statuses while another subscribes to them over and over with a
// wildcard, as a restarted leader does while its workers announce
// themselves. Each subscription gets every status there is (they were all
// published before the rounds began), and under -race the broker's write
// of a retained topic and its scan of the retained topics for a new
// subscription never overlap: mochi writes a topic's retained path under
// its index locks but scans without them.
func TestRetainedPublishesDuringWildcardSubscribes(t *testing.T) {
	const publishers, rounds = 8, 40
	b := startBroker(t, BrokerOptions{})
	defer retainedPublishers(t, b, publishers)()
	for round := range rounds {
		s, err := transport.Connect(ctxT(t), transport.ClientOptions{ID: fmt.Sprintf("sub-%d", round), Broker: "mem://", CleanSession: true}, b)
		if err != nil {
			t.Fatal(err)
		}
		// The handler must never block: a client that stops reading
		// stalls mochi's writes to it with its client lock held, and
		// every publisher's next delivery to it waits for that lock.
		got := make(chan string, 4*publishers)
		if err := s.Subscribe(ctxT(t), "guard/+/status", 1, func(topic string, _ []byte) {
			select {
			case got <- topic:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for len(seen) < publishers {
			select {
			case topic := <-got:
				seen[topic] = true
			case <-ctxT(t).Done():
				t.Fatalf("round %d: %d of %d statuses", round, len(seen), publishers)
			}
		}
		s.Close(true)
	}
}

// retainedPublishers connects n sessions to b, each publishing its
// retained status (guard/<i>/status) once before it returns and then
// again and again until the returned stop is called, which waits for
// them.
func retainedPublishers(t *testing.T, b *Broker, n int) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		s, err := transport.Connect(ctxT(t), transport.ClientOptions{ID: fmt.Sprintf("pub-%d", i), Broker: "mem://", CleanSession: true}, b)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(true) })
		topic := fmt.Sprintf("guard/%d/status", i)
		if err := s.Publish(ctxT(t), topic, 1, true, []byte("online")); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := s.Publish(ctxT(t), topic, 1, true, []byte("online")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
