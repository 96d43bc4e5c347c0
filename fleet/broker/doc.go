// Package broker is fleetsim's embedded MQTT broker: mochi with an
// in-memory listener and an optional TCP (or TLS) listener, the fleet's
// login and topic policy (Auth), per-connection write queues, packet size
// limits, bounds on what TCP clients can make it hold (a packet
// deadline, a budget for partial packets, a connection cap), per-login
// inbound rate limits, a rate-limited refusal log and exact counters
// (Stats).
//
// A whole fleet in one process talks over in-memory connections (MemPipe:
// buffered, with deadlines, no goroutine per connection), dialled with
// Broker.DialMem; fleet/transport's clients use a *Broker as their
// MemDialer for "mem://". The process's own leader needs no connection:
// InlineSubscribe and InlinePublish (mochi's inline client) reach the
// broker directly, and fleet/transport's Inline link is built on them. Workers on other machines reach the same broker
// over TCP, logged in with the credentials of their host's range
// (fleet/wire: Credentials, LeaderUsername).
//
// fleet/transport's ExampleConnect starts one with Auth and connects a
// worker and the leader to it. BrokerOptions.TCPAddr adds a TCP listener:
// DefaultTCPAddr is loopback; any other address needs Auth (or
// AllowInsecure).
//
// It imports mochi, fleet/wire (the credentials it checks and the topics
// its policy allows), fleet/ratelog and fleet/clock; never the
// client side, fleet/transport, which only its tests use.
//
// What its clients see (mochi 2.7.9):
//   - a message the broker cannot queue for a slow subscriber is dropped
//     and counted (Stats.PublishDropped), whatever its QoS;
//   - a subscriber that stops reading altogether stalls the broker's write
//     to it with that client's lock held, and every publisher's next
//     delivery to it waits on the lock (mochi takes it for each QoS 1
//     packet id): a client's message handler must never block;
//   - a login is checked before anything touches the session connected
//     with the same client id: a refused one leaves it up, an accepted one
//     takes it over, so every process needs a client id of its own;
//   - a TCP client that announces a packet over BrokerOptions.MaxPacketSize
//     (its CONNECT: MaxConnectSize) is disconnected before the packet is
//     read (Stats.PacketTooLarge);
//   - a TCP client that begins a packet and does not send the rest of it
//     within PacketReadTimeout, whatever its keepalive, is disconnected
//     (Stats.PacketTimeouts); one whose packet's body would take the bytes
//     held for the partial packets of all TCP clients over
//     MaxPartialBytes is disconnected before the body is read or
//     allocated (Stats.PartialBudget);
//   - a TCP connection made while MaxConnections are open is closed as it
//     is accepted, unread (Stats.ConnectionsRefused);
//   - a TCP login publishing faster than its RateLimit (a worker's; a
//     gateway's times the devices in its range; the leader's login is not
//     limited) has the excess dropped, a QoS 1 publish acknowledged all
//     the same (Stats.RateLimited), so that one client's flood cannot
//     fill the leader's write queue and have the others' messages
//     dropped behind it. The buckets are per client id, kept across
//     reconnects, and timed on BrokerOptions.Clock;
//   - in-memory clients (the process's own: the leader, the simulator's
//     workers) are not limited in any of these ways;
//   - a refused QoS 0 publish vanishes; a refused QoS 1/2 publish gets the
//     MQTT 3.1.1 client disconnected; a refused subscription gets SUBACK
//     failure 0x80 (Stats.ACLDenied counts each);
//   - Broker.Close drops every connection.
package broker
