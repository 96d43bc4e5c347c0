package transport

import (
	"context"
	"runtime"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// patience bounds every wait in these tests; nothing should come close.
const patience = 20 * time.Second

var testTopics = wire.Topics{}

var testSecret = []byte("0123456789abcdef-test-secret")

func testAuth() *broker.Auth {
	return &broker.Auth{LeaderPassword: "leader-pw", Secret: testSecret}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// startBroker starts a broker that the test's cleanup closes (after the
// clients, which were registered later).
func startBroker(t testing.TB, o broker.BrokerOptions) *broker.Broker {
	t.Helper()
	b, err := broker.StartBroker(o)
	if err != nil {
		t.Fatalf("StartBroker: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(ctxT(t)); err != nil {
			buf := make([]byte, 1<<20)
			t.Errorf("broker Close: %v\n%s", err, buf[:runtime.Stack(buf, true)])
		}
	})
	return b
}

// connect connects a client and registers its Disconnect for cleanup.
func connect(t testing.TB, b *broker.Broker, o ClientOptions) paho.Client {
	t.Helper()
	c, err := tryConnect(t, b, o)
	if err != nil {
		t.Fatalf("connect %q: %v", o.ID, err)
	}
	return c
}

func tryConnect(t testing.TB, b *broker.Broker, o ClientOptions) (paho.Client, error) {
	t.Helper()
	if o.Broker == "" {
		o.Broker = "mem://"
	}
	c, err := NewClient(o, b)
	if err != nil {
		return nil, err
	}
	if err := Wait(ctxT(t), c.Connect()); err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Disconnect(1000) })
	return c, nil
}

func workerOpts(id string) ClientOptions {
	return ClientOptions{ID: id, Username: id, Password: wire.WorkerPassword(testSecret, id), CleanSession: true}
}

func leaderOpts() ClientOptions {
	return ClientOptions{ID: "the-leader", Username: wire.LeaderUsername, Password: "leader-pw", CleanSession: true,
		MemBuffer: 4 << 20, WriteQueue: 1 << 16}
}

// inbox collects the messages a subscription receives.
type inbox chan paho.Message

func (in inbox) handler(_ paho.Client, m paho.Message) { in <- m }

func (in inbox) next(t testing.TB) paho.Message {
	t.Helper()
	select {
	case m := <-in:
		return m
	case <-time.After(patience):
		t.Fatal("no message within the patience")
		return nil
	}
}

// nextOther returns the payload of the next message that is not skip. A
// subscriber that subscribed just before a retained publish may get it
// twice: live, and again as the retained message the broker sends after
// its SUBACK.
func (in inbox) nextOther(t testing.TB, skip string) string {
	t.Helper()
	for {
		if p := string(in.next(t).Payload()); p != skip {
			return p
		}
	}
}

func subscribe(t testing.TB, c paho.Client, filter string, qos byte, h paho.MessageHandler) {
	t.Helper()
	if err := Wait(ctxT(t), c.Subscribe(filter, qos, h)); err != nil {
		t.Fatalf("subscribe %q: %v", filter, err)
	}
}

func publish(t testing.TB, c paho.Client, topic string, qos byte, payload string) {
	t.Helper()
	if err := Wait(ctxT(t), c.Publish(topic, qos, false, payload)); err != nil {
		t.Fatalf("publish %q: %v", topic, err)
	}
}
