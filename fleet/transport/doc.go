// Package transport is fleetsim's MQTT plumbing: the embedded mochi broker
// (in-memory and TCP/TLS listeners, the fleet's login and topic policy,
// exact counters) and the paho client factory the leader and the workers
// share. The actors use paho's own API for Publish and Subscribe.
//
// A whole fleet in one process talks over in-memory connections (MemPipe:
// buffered, with deadlines, no goroutine per connection). Workers on other
// machines reach the same broker over TCP, with the same credentials: a
// worker's password is WorkerPassword(secret, id).
//
//	b, err := transport.StartBroker(transport.BrokerOptions{
//		TCPAddr: transport.DefaultTCPAddr, // "" for in-memory only
//		Auth:    &transport.Auth{LeaderPassword: pw, Secret: secret},
//	})
//	defer b.Close(ctx)
//
//	c, err := transport.NewClient(transport.ClientOptions{
//		ID: id, Username: id, Password: transport.WorkerPassword(secret, id),
//		Broker: "mem://", CleanSession: true, // or "tcp://leader-host:1883"
//		Will: &transport.Will{Topic: topics.Status(id), Payload: []byte("offline"), Retained: true},
//		OnConnectionLost: func(paho.Client, error) { /* wake the actor: reconnect with backoff */ },
//	}, b)
//	if err := transport.Wait(ctx, c.Connect()); errors.Is(err, transport.ErrRefused) {
//		// credentials or will refused: retrying will not help
//	}
//	err = transport.Wait(ctx, c.Subscribe(topics.Down(id), 1, handler)) // handler must not block
//	defer c.Disconnect(250)
//
// The leader connects the same way with Username LeaderUsername, and over
// mem:// with a deep WriteQueue and MemBuffer, since every worker's
// messages funnel into its one connection.
//
// What the callers must handle (mochi 2.7.9, paho 1.5.1):
//   - a message the broker cannot queue for a slow subscriber is dropped
//     and counted (Stats.PublishDropped), whatever its QoS;
//   - a login is checked before anything touches the session connected
//     with the same client id: a refused one leaves it up, an accepted one
//     takes it over, so every process needs a client id of its own;
//   - a TCP client that announces a packet over BrokerOptions.MaxPacketSize
//     (its CONNECT: MaxConnectSize) is disconnected before the packet is
//     read (Stats.PacketTooLarge); in-memory clients are not limited;
//   - a refused QoS 0 publish vanishes; a refused QoS 1/2 publish gets the
//     MQTT 3.1.1 client disconnected; a refused subscription completes
//     paho's token without error (Wait reports it);
//   - a QoS 0 Publish token completes once the bytes are written, a QoS 1
//     token at the broker's PUBACK: neither proves delivery;
//   - paho calls OnConnect and OnConnectionLost in goroutines of its own,
//     and does not reconnect: the worker does, with its own backoff;
//   - Broker.Close drops every connection (OnConnectionLost fires).
package transport
