package broker

import (
	"errors"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// hostCred is the credential of a worker host that runs w-0 to w-9.
func hostCred(t testing.TB) wire.Credentials {
	t.Helper()
	c, err := wire.IssueCredentials(testSecret, wire.DeviceRange{Prefix: "w-", First: 0, Last: 9})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// credOpts logs in as username (a worker id or a gateway's username,
// which is also its client id) with c's password for it.
func credOpts(c wire.Credentials, username string) transport.ClientOptions {
	return transport.ClientOptions{ID: username, Username: username, Password: c.Password(username), CleanSession: true}
}

func refused(t *testing.T, b *Broker, o transport.ClientOptions) {
	t.Helper()
	_, err := tryConnect(t, b, o)
	var re *transport.RefusedError
	if !errors.As(err, &re) || re.Code != packets.ErrRefusedNotAuthorised {
		t.Fatalf("connect as %q: %v; want a *RefusedError with CONNACK 5", o.Username, err)
	}
}

// A range credential logs in as the ids of its range, and as a gateway of
// devices of its range named after one of them; nothing else, whatever
// the password names. In particular a gateway of w-{0..9999} (the login
// that once took three live workers offline) is refused to a host of
// w-{0..9}, as is a gateway reaching one device past its range.
func TestRangeCredentialConfinedToItsRange(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	c := hostCred(t)
	for _, user := range []string{"w-0", "w-0009", wire.GatewayUsername("gw-w-0", c.Range),
		wire.GatewayUsername("gw-w-0005", wire.DeviceRange{Prefix: "w-", First: 5, Last: 9})} {
		connect(t, b, credOpts(c, user)).Disconnect(250)
	}
	other, err := wire.IssueCredentials([]byte("another-fleet's-secret-0123"), c.Range)
	if err != nil {
		t.Fatal(err)
	}
	wider, err := wire.IssueCredentials(testSecret, wire.DeviceRange{Prefix: "w-", First: 0, Last: 9999})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name string
		o    transport.ClientOptions
	}{
		{"a worker past the range", credOpts(c, "w-10")},
		{"a worker of another prefix", credOpts(c, "v-1")},
		{"a gateway of w-{0..9999}", credOpts(c, wire.GatewayUsername("gw-evil", wire.DeviceRange{Prefix: "w-", First: 0, Last: 9999}))},
		{"a gateway reaching w-10", credOpts(c, wire.GatewayUsername("gw-w-0", wire.DeviceRange{Prefix: "w-", First: 0, Last: 10}))},
		{"a gateway not named after its devices", credOpts(c, wire.GatewayUsername("gw-evil", c.Range))},
		{"a gateway named after another host's device", credOpts(c, wire.GatewayUsername("gw-w-20", c.Range))},
		{"a credential of another fleet", credOpts(other, "w-1")},
		{"the range widened in the password", func() transport.ClientOptions {
			o := credOpts(c, "w-20")
			o.Password = wider.Range.String() + o.Password[len(c.Range.String()):]
			return o
		}()},
		{"the password of another id", func() transport.ClientOptions {
			o := credOpts(c, "w-1")
			o.Password = c.Password("w-2")
			return o
		}()},
		{"a range password not canonical", func() transport.ClientOptions {
			o := credOpts(c, "w-1")
			o.Password = "w-{00..9}" + o.Password[len(c.Range.String()):]
			return o
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, b, tc.o)
			if got := b.Stats().AuthDenied; got != uint64(i+1) {
				t.Errorf("AuthDenied = %d after %d refusals", got, i+1)
			}
		})
	}
}

// An ack as w-9, from a host whose credential is for w-10 to w-19, never
// reaches the leader: the host cannot log in as w-9.
func TestRangeCredentialCannotAckForAnotherHost(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, 4)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)
	c, err := wire.IssueCredentials(testSecret, wire.DeviceRange{Prefix: "w-", First: 10, Last: 19})
	if err != nil {
		t.Fatal(err)
	}
	refused(t, b, credOpts(c, "w-0009"))
	own := connect(t, b, credOpts(c, "w-0010"))
	publish(t, own, testTopics.Up("w-0009"), 0, "forged ack")
	publish(t, own, testTopics.Up("w-0010"), 1, "own")
	if m := ups.next(t); m.Topic() != testTopics.Up("w-0010") {
		t.Fatalf("leader got %q on %q", m.Payload(), m.Topic())
	}
	if s := b.Stats(); s.AuthDenied != 1 || s.ACLDenied != 1 {
		t.Errorf("AuthDenied %d, ACLDenied %d; want 1 and 1", s.AuthDenied, s.ACLDenied)
	}
}

// A gateway cannot take a worker's session by logging in with the
// worker's id as client id, whatever its password (a range credential's,
// or one from the fleet secret itself), and the worker stays connected;
// nor can a worker take a gateway's. A gateway's client id is its whole
// username, which no worker id can be.
func TestNoTakeoverBetweenWorkersAndGateways(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	c := hostCred(t)
	lost := make(chan string, 2)
	watch := func(o transport.ClientOptions) transport.ClientOptions {
		o.OnConnectionLost = func(_ paho.Client, err error) { lost <- o.ID + ": " + err.Error() }
		return o
	}
	worker := connect(t, b, watch(credOpts(c, "w-1")))
	downs := make(inbox, 4)
	subscribe(t, worker, testTopics.Down("w-1"), 1, downs.handler)
	gwUser := wire.GatewayUsername("gw-w-0", c.Range)
	gw := connect(t, b, watch(credOpts(c, gwUser)))
	gwDowns := make(inbox, 4)
	subscribe(t, gw, testTopics.Down("w-2"), 1, gwDowns.handler)

	// A gateway named as the worker, with the worker's id as client id:
	// the login that once knocked a live worker off, made with the fleet
	// secret itself, and the same with the host's range credential.
	asWorker := wire.GatewayUsername("w-1", c.Range)
	bySecret := gatewayOpts("w-1", c.Range)
	bySecret.ID = "w-1"
	byRange := credOpts(c, asWorker)
	byRange.ID = "w-1"
	// Another host's credential, for the gateway's client id.
	otherHost, err := wire.IssueCredentials(testSecret, wire.DeviceRange{Prefix: "w-", First: 20, Last: 29})
	if err != nil {
		t.Fatal(err)
	}
	asGateway := credOpts(otherHost, "w-20")
	asGateway.ID = gwUser
	for _, o := range []transport.ClientOptions{bySecret, byRange, asGateway, credOpts(otherHost, gwUser)} {
		refused(t, b, o)
	}
	// With its username as client id, the same gateway (fleet secret)
	// logs in, in a namespace of its own: the worker keeps its session.
	connect(t, b, gatewayOpts("w-1", c.Range))
	publish(t, leader, testTopics.Down("w-1"), 1, "to the worker")
	publish(t, leader, testTopics.Down("w-2"), 1, "to the gateway")
	if m := downs.next(t); string(m.Payload()) != "to the worker" {
		t.Fatalf("worker got %q", m.Payload())
	}
	if m := gwDowns.next(t); string(m.Payload()) != "to the gateway" {
		t.Fatalf("gateway got %q", m.Payload())
	}
	select {
	case who := <-lost:
		t.Fatalf("a session was lost: %s", who)
	default:
	}
	if s := b.Stats(); s.AuthDenied != 4 {
		t.Errorf("AuthDenied = %d, want 4", s.AuthDenied)
	}
}
