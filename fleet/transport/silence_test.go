package transport

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// TestSilenceInMemory: an in-memory session with a keepalive runs no
// keepalive goroutine, and once silenced it is cut exactly 1.5 ×
// KeepAlive later: the session reports the loss and the broker publishes
// its will at that moment, not before.
func TestSilenceInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := broker.StartBroker(broker.BrokerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		watcher, err := Connect(ctx, ClientOptions{ID: "watcher", Broker: "mem://", CleanSession: true}, b)
		if err != nil {
			t.Fatal(err)
		}
		wills := make(chan string, 1)
		if err := watcher.Subscribe(ctx, "fleet/w-1/status", 1, func(_ string, p []byte) { wills <- string(p) }); err != nil {
			t.Fatal(err)
		}
		s, err := Connect(ctx, ClientOptions{ID: "w-1", Broker: "mem://", CleanSession: true, KeepAlive: 2 * time.Second,
			Will: &Will{Topic: "fleet/w-1/status", Payload: []byte("offline"), QoS: 1}}, b)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		buf := make([]byte, 1<<20)
		if st := string(buf[:runtime.Stack(buf, true)]); strings.Contains(st, "paho%2emqtt%2egolang.keepalive") ||
			strings.Contains(st, "paho.mqtt.golang.keepalive") {
			t.Error("an in-memory session runs paho's keepalive goroutine")
		}
		s.Silence()
		time.Sleep(3*time.Second - time.Millisecond)
		synctest.Wait()
		select {
		case <-s.Lost():
			t.Fatal("lost before 1.5 x keepalive")
		case w := <-wills:
			t.Fatalf("will %q published before 1.5 x keepalive", w)
		default:
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		select {
		case <-s.Lost():
		default:
			t.Error("not lost at 1.5 x keepalive")
		}
		select {
		case w := <-wills:
			if w != "offline" {
				t.Errorf("will %q, want offline", w)
			}
		default:
			t.Error("no will at 1.5 x keepalive")
		}
		s.Close(false)
		watcher.Close(true)
		if err := b.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
