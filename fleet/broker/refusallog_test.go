package broker

import (
	"net"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Topic refusals are logged at most once per client per LogInterval,
// across its connections, and the next line says how many were held back;
// every one is counted.
func TestTopicRefusalsRateLimitedPerClient(t *testing.T) {
	var logs syncBuffer
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := startBroker(t, BrokerOptions{Auth: testAuth(), Logger: slogTo(&logs), Clock: clk, LogInterval: time.Minute})
	a := connect(t, b, workerOpts("w-a"))
	for range 5 {
		publish(t, a, testTopics.Up("w-b"), 0, "forged")
	}
	// QoS 0 publishes still in paho's queue at Disconnect are never sent:
	// a QoS 1 publish after them proves the broker has read all five.
	publish(t, a, testTopics.Up("w-a"), 1, "fence")
	a.Disconnect(250)
	a = connect(t, b, workerOpts("w-a")) // a new connection: still w-a's quota
	publish(t, a, testTopics.Up("w-b"), 0, "forged")
	publish(t, a, testTopics.Up("w-a"), 1, "fence") // the broker has seen the six
	if n := strings.Count(logs.String(), "topic refused"); n != 1 {
		t.Fatalf("%d refusal lines for 6 refusals within the interval, want 1:\n%s", n, logs.String())
	}
	clk.Advance(time.Minute)
	publish(t, a, testTopics.Up("w-b"), 0, "forged")
	publish(t, a, testTopics.Up("w-a"), 1, "fence")
	l := logs.String()
	if n := strings.Count(l, "topic refused"); n != 2 || !strings.Contains(l, "suppressed=5") {
		t.Errorf("after the interval: %d lines, want 2, the second with suppressed=5:\n%s", n, l)
	}
	if got := b.Stats().ACLDenied; got != 7 {
		t.Errorf("ACLDenied = %d, want 7", got)
	}
}

// Refused logins are logged at most once per remote host per interval,
// whatever client id they claim.
func TestLoginRefusalsRateLimitedPerHost(t *testing.T) {
	var logs syncBuffer
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), Logger: slogTo(&logs), Clock: clk, LogInterval: time.Minute})
	for i, id := range []string{"x-1", "x-2", "x-3"} {
		o := workerOpts(id)
		o.Broker, o.Password = "tcp://"+b.Addr(), "guess"
		if _, err := tryConnect(t, b, o); err == nil {
			t.Fatalf("login %d with a wrong password accepted", i)
		}
	}
	if n := strings.Count(logs.String(), "login refused"); n != 1 {
		t.Fatalf("%d lines for 3 refused logins from one host, want 1:\n%s", n, logs.String())
	}
	if got := b.Stats().AuthDenied; got != 3 {
		t.Errorf("AuthDenied = %d, want 3", got)
	}
}

// mochi's warning about a packet it refused after reading it names the
// packet's type, topic and size, never its bytes (a second CONNECT would
// otherwise log its password); a publish refused for its topic is logged
// once, by the hook, without its payload.
func TestPacketWarningsCarryNoPayload(t *testing.T) {
	var logs syncBuffer
	b := startBroker(t, BrokerOptions{Auth: testAuth(), Logger: slogTo(&logs)})
	// A QoS 1 publish to another worker's topic: refused, the client
	// disconnected (MQTT 3.1.1).
	lost := make(chan error, 1)
	o := workerOpts("w-a")
	o.OnConnectionLost = func(_ paho.Client, err error) { lost <- err }
	a := connect(t, b, o)
	a.Publish(testTopics.Up("w-b"), 1, false, strings.Repeat("payload-bytes", 1000))
	select { // the hook logs before mochi disconnects the client
	case <-lost:
	case <-ctxT(t).Done():
		t.Fatal("not disconnected after a refused QoS 1 publish")
	}
	// A second CONNECT on an established connection: a protocol
	// violation mochi warns about, packet attached.
	conn := rawConnect(t, b, "w-c", wire.WorkerPassword(testSecret, "w-c"), testTopics.Status("w-c"))
	cp := packets.NewControlPacket(packets.Connect).(*packets.ConnectPacket)
	cp.ProtocolName, cp.ProtocolVersion, cp.ClientIdentifier = "MQTT", 4, "w-c"
	cp.UsernameFlag, cp.Username, cp.PasswordFlag, cp.Password = true, "w-c", true, []byte("hunter2-password")
	if err := cp.Write(conn); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, conn) // mochi warns before it closes the connection
	l := logs.String()
	if strings.Contains(l, "payload-bytes") || strings.Contains(l, "hunter2") || strings.Contains(l, "112 97 121") ||
		strings.Contains(l, "Payload:") {
		t.Fatalf("payload bytes in the log:\n%s", l)
	}
	if !strings.Contains(l, `msg="error processing packet"`) || !strings.Contains(l, "packet=CONNECT") ||
		strings.Count(l, "error processing packet") != 1 || strings.Count(l, "topic refused") != 1 {
		t.Fatalf("want one topic refusal and one brief CONNECT warning:\n%s", l)
	}
}

// waitClosed waits until the broker has closed conn.
func waitClosed(t *testing.T, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(patience))
	buf := make([]byte, 64)
	for {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}
