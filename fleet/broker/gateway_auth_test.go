package broker

import (
	"errors"
	"testing"

	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// gwRange is the device range of gateway gw-1 in these tests.
var gwRange = wire.DeviceRange{Prefix: "w-", First: 0, Last: 9}

// gatewayOpts logs in as gateway gw carrying devices r.
func gatewayOpts(gw string, r wire.DeviceRange) transport.ClientOptions {
	user := wire.GatewayUsername(gw, r)
	return transport.ClientOptions{ID: user, Username: user, Password: wire.WorkerPassword(testSecret, user), CleanSession: true}
}

func TestPolicyGatewayTopics(t *testing.T) {
	p := newPolicy(&Auth{LeaderPassword: "x", Secret: testSecret, Topics: wire.Topics{Prefix: "fleet"}})
	user := wire.GatewayUsername("gw-1", gwRange)
	for _, tc := range []struct {
		topic       string
		write, want bool
	}{
		{"fleet/w-0/up", true, true},
		{"fleet/w-9/status", true, true},
		{"fleet/w-00009/up", true, true}, // leading zeros: the same number
		{"fleet/w-10/up", true, false},   // outside the range
		{"fleet/w-3/down", true, false},
		{"fleet/x-3/up", true, false},
		{"fleet/w-3/up/x", true, false},
		{"fleet/w-3/upx", true, false},
		{"fleet/+/up", true, false},
		{"fleet/w-+/up", true, false},
		{"fleetx/w-3/up", true, false},
		{"fleet/_gateway/gw-1/status", true, true},
		{"fleet/_gateway/gw-2/status", true, false}, // another gateway's
		{"fleet/_gateway/gw-10/status", true, false},
		{"fleet/_gateway/gw-1/statusx", true, false},
		{"fleet/_gateway/+/status", true, false},
		{"fleet/_leader/status", true, false},
		{"fleet/_control/pool-1", true, false},
		{"fleet/w-3/down", false, true},
		{"fleet/w-10/down", false, false},
		{"fleet/+/down", false, false},
		{"fleet/w-3/up", false, false},
		{"fleet/_gateway/gw-1/status", false, false},
		{"fleet/_control/#", false, true},
		{"fleet/#", false, false},
		{"#", false, false},
	} {
		if got := p.allowed(user, user, tc.topic, tc.write); got != tc.want {
			t.Errorf("gw-1 write=%v %q: allowed %v, want %v", tc.write, tc.topic, got, tc.want)
		}
	}
	// A worker may not speak for a gateway, nor a gateway's rights go
	// with another client id.
	if p.allowed("w-1", "w-1", "fleet/_gateway/w-1/status", true) {
		t.Error("worker w-1 may publish on a gateway status topic")
	}
	for _, id := range []string{"gw-1", "gw-2", wire.GatewayUsername("gw-2", gwRange)} {
		if p.allowed(user, id, "fleet/w-3/up", true) {
			t.Errorf("gw-1's rights hold for client id %q", id)
		}
	}
}

func TestPolicyGatewayAllocatesNothing(t *testing.T) {
	p := newPolicy(testAuth())
	user := wire.GatewayUsername("gw-1", gwRange)
	allocs := testing.AllocsPerRun(100, func() {
		p.allowed(user, user, "fleet/w-3/up", true)
		p.allowed(user, user, "fleet/_gateway/gw-1/status", true)
		p.allowed(user, user, "fleet/w-3/down", false)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per check, want 0", allocs)
	}
}

// Gateway logins the broker must refuse, end to end, each counted once;
// then the right one gets in, its will on its own status topic.
func TestGatewayLoginRefused(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	good := gatewayOpts("gw-1", gwRange)
	wider := wire.DeviceRange{Prefix: "w-", First: 0, Last: 99}
	for i, tc := range []struct {
		name string
		edit func(*transport.ClientOptions)
	}{
		{"a wider range than its password was made for", func(o *transport.ClientOptions) {
			o.ID, o.Username = wire.GatewayUsername("gw-1", wider), wire.GatewayUsername("gw-1", wider)
		}},
		{"another prefix than its password was made for", func(o *transport.ClientOptions) {
			o.Username = wire.GatewayUsername("gw-1", wire.DeviceRange{Prefix: "v-", Last: 9})
			o.ID = o.Username
		}},
		{"another gateway's client id", func(o *transport.ClientOptions) { o.ID = wire.GatewayUsername("gw-2", gwRange) }},
		{"the gateway id alone as client id", func(o *transport.ClientOptions) { o.ID = "gw-1" }},
		{"another gateway's username with its own password", func(o *transport.ClientOptions) {
			o.ID, o.Username = wire.GatewayUsername("gw-2", gwRange), wire.GatewayUsername("gw-2", gwRange)
		}},
		{"the password of its id alone", func(o *transport.ClientOptions) { o.Password = wire.WorkerPassword(testSecret, "gw-1") }},
		{"a username that does not parse", func(o *transport.ClientOptions) {
			o.ID, o.Username = "gateway/gw-1/w-9..0", "gateway/gw-1/w-9..0"
			o.Password = wire.WorkerPassword(testSecret, o.Username)
		}},
		{"will on another gateway's status", func(o *transport.ClientOptions) {
			o.Will = &transport.Will{Topic: testTopics.GatewayStatus("gw-2"), Payload: []byte("offline e1")}
		}},
		{"will on a device's status", func(o *transport.ClientOptions) {
			o.Will = &transport.Will{Topic: testTopics.Status("w-1"), Payload: []byte("offline e1")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			_, err := tryConnect(t, b, o)
			var re *transport.RefusedError
			if !errors.As(err, &re) || re.Code != packets.ErrRefusedNotAuthorised {
				t.Fatalf("connect: %v; want a *RefusedError with CONNACK 5", err)
			}
			if got := b.Stats().AuthDenied; got != uint64(i+1) {
				t.Errorf("AuthDenied = %d after %d refusals", got, i+1)
			}
		})
	}
	o := good
	o.Will = &transport.Will{Topic: testTopics.GatewayStatus("gw-1"), Payload: []byte("offline e1"), Retained: true}
	connect(t, b, o)
	if s := b.Stats(); s.AuthDenied != 9 || s.ACLDenied != 0 {
		t.Errorf("AuthDenied = %d, ACLDenied = %d after the right login; want 9 and 0", s.AuthDenied, s.ACLDenied)
	}
}

// A gateway publishes and subscribes for the devices in its range and on
// its own status topic; for a device outside its range, or as another
// gateway, it is refused and counted, and nothing reaches the leader.
func TestGatewayConfinedToItsDevices(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, 10)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)
	statuses := make(inbox, 10)
	subscribe(t, leader, testTopics.AllGatewayStatus(), 1, statuses.handler)
	gw := connect(t, b, gatewayOpts("gw-1", gwRange))

	// QoS 0 for a device outside the range is dropped; the next message,
	// for a device inside it, arrives first (the broker handles one
	// client's packets in order).
	publish(t, gw, testTopics.Up("w-10"), 0, "outside")
	publish(t, gw, testTopics.Up("w-3"), 1, "inside")
	if m := ups.next(t); m.Topic() != testTopics.Up("w-3") || string(m.Payload()) != "inside" {
		t.Fatalf("leader got %q on %q; the publish for a device outside the range went through", m.Payload(), m.Topic())
	}
	if got := b.Stats().ACLDenied; got != 1 {
		t.Errorf("ACLDenied = %d after one publish outside the range", got)
	}

	publish(t, gw, testTopics.GatewayStatus("gw-2"), 0, "offline e1") // as another gateway
	publish(t, gw, testTopics.GatewayStatus("gw-1"), 1, "online e1")
	if m := statuses.next(t); m.Topic() != testTopics.GatewayStatus("gw-1") {
		t.Fatalf("leader got %q on %q; gw-1 spoke for gw-2", m.Payload(), m.Topic())
	}
	if got := b.Stats().ACLDenied; got != 2 {
		t.Errorf("ACLDenied = %d after publishing on another gateway's status", got)
	}

	// Subscribing to a down topic outside the range: SUBACK failure.
	downs := make(inbox, 10)
	err := transport.Wait(ctxT(t), gw.Subscribe(testTopics.Down("w-10"), 1, downs.handler))
	var re *transport.RefusedError
	if !errors.As(err, &re) || re.Op != "subscribe" || re.Code != 0x80 {
		t.Fatalf("subscribe outside the range: %v, want a *RefusedError with SUBACK 0x80", err)
	}
	subscribe(t, gw, testTopics.Down("w-3"), 1, downs.handler)
	publish(t, leader, testTopics.Down("w-3"), 1, "for w-3")
	if m := downs.next(t); string(m.Payload()) != "for w-3" {
		t.Fatalf("gateway got %q on %q", m.Payload(), m.Topic())
	}
	if s := b.Stats(); s.ACLDenied != 3 || s.AuthDenied != 0 {
		t.Errorf("ACLDenied = %d, AuthDenied = %d; want 3 and 0", s.ACLDenied, s.AuthDenied)
	}
}

// A worker cannot publish on a gateway's status topic: it cannot take a
// gateway's devices offline by faking its will.
func TestWorkerCannotSpeakForAGateway(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	statuses := make(inbox, 10)
	subscribe(t, leader, testTopics.AllGatewayStatus(), 1, statuses.handler)
	w := connect(t, b, workerOpts("w-1"))
	publish(t, w, testTopics.GatewayStatus("gw-1"), 0, "offline e1")
	publish(t, w, testTopics.GatewayStatus("w-1"), 0, "offline e1") // nor one named as itself
	publish(t, w, testTopics.Up("w-1"), 1, "fence")                 // the broker has read both
	gw := connect(t, b, gatewayOpts("gw-1", gwRange))
	publish(t, gw, testTopics.GatewayStatus("gw-1"), 1, "online e2")
	if m := statuses.next(t); string(m.Payload()) != "online e2" {
		t.Fatalf("leader got %q on %q; a worker spoke for a gateway", m.Payload(), m.Topic())
	}
	if got := b.Stats().ACLDenied; got != 2 {
		t.Errorf("ACLDenied = %d, want 2", got)
	}
}

// A gateway's will is published on its own status topic when its session
// dies without a DISCONNECT.
func TestGatewayWillIsPublished(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	statuses := make(inbox, 4)
	subscribe(t, leader, testTopics.AllGatewayStatus(), 1, statuses.handler)
	o := gatewayOpts("gw-1", gwRange)
	o.Broker, o.Will = "mem://", &transport.Will{Topic: testTopics.GatewayStatus("gw-1"), Payload: []byte("offline e1"), QoS: 1, Retained: true}
	s, err := transport.Connect(ctxT(t), o, b)
	if err != nil {
		t.Fatal(err)
	}
	s.Close(false)
	if m := statuses.next(t); m.Topic() != testTopics.GatewayStatus("gw-1") || string(m.Payload()) != "offline e1" {
		t.Errorf("got %q on %q, want the gateway's will", m.Payload(), m.Topic())
	}
}

// BenchmarkPolicyPublish: the topic check of one publish, a worker's on
// its own up topic against a gateway's for a device in its range (its
// username and range parsed again on each check).
func BenchmarkPolicyPublish(b *testing.B) {
	p := newPolicy(testAuth())
	user := wire.GatewayUsername("gw-00001", wire.DeviceRange{Prefix: "w-", First: 1000, Last: 1999})
	b.Run("worker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !p.allowed("w-01500", "w-01500", "fleet/w-01500/up", true) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !p.allowed(user, user, "fleet/w-01500/up", true) {
				b.Fatal("refused")
			}
		}
	})
}
