// Package transport is fleetsim's MQTT client: the paho client factory
// (NewClient) and Session, the connection the leader and the workers share
// (publish, subscribe, abrupt close, go silent, redial), with Wait and the
// typed refusals (ErrRefused, RefusedError) for paho's tokens. The actors
// use paho's own API or a Session for Publish and Subscribe.
//
// Inline is the leader's other link: the same calls made directly on the
// broker it embeds (an InlineBroker, which fleet/broker's *Broker is),
// with no connection, packets or client goroutines between; its will is
// published when it is closed without a goodbye. sim and leader run use
// it whenever the broker runs in their process; a leader on an external
// broker uses a Session. Both satisfy leader.Link, and the link tests run
// on both.
//
// It connects to any MQTT broker over TCP or TLS, and to fleetsim's
// embedded broker over "mem://" through a MemDialer, an interface it
// declares and fleet/broker's *Broker implements; so it imports paho,
// fleet/wire (for LeaderWill) and nothing of the broker. Logins use the
// credentials of fleet/wire.
//
// ExampleConnect connects a worker and the leader to the embedded broker
// and shows a refused login (errors.Is(err, ErrRefused): retrying will not
// help). A session whose connection is lost closes Lost; the caller then
// calls Redial with its own backoff, and Close(true) ends it.
//
// The leader logs in with Username wire.LeaderUsername, and connects
// over mem:// with a deep WriteQueue and MemBuffer, since every worker's
// messages funnel into its one connection.
//
// What the callers must handle (paho 1.5.1; the broker's side is in
// fleet/broker's package doc):
//   - a refused subscription completes paho's token without error (Wait
//     and Session.Subscribe report it);
//   - a QoS 0 Publish token completes once the bytes are written, a QoS 1
//     token at the broker's PUBACK: neither proves delivery;
//   - paho calls OnConnect and OnConnectionLost in goroutines of its own,
//     and does not reconnect: the caller does, with its own backoff;
//   - a broker that closes drops the connection (OnConnectionLost fires,
//     Session.Lost is closed).
package transport
