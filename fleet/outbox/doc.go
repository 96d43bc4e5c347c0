// Package outbox is fleetsim's store-and-forward: a queue of messages for
// many receivers that survives the receiver being away (and, on bbolt, the
// sender crashing), and a partitioned relay that drains it at the rate each
// receiver can take.
//
// The pieces:
//
//   - Store: one contract, two implementations side by side. OpenBolt keeps
//     messages in a bbolt file (the leader's durable outbox); NewMemory keeps
//     them in memory (a worker's local store-and-forward, and tests).
//   - Relay: N partitions (FNV-1a of the receiver), each with its own AIMD
//     limiter and loop; delivers through a Delivery, maps the typed errors of
//     fleet/flow to ack, nack-with-backoff or dead letters. Receivers that
//     answered "full" lately go through the partition's slow lane, a second
//     AIMD limiter under the first, so they do not throttle the others.
//     A Delivery runs on a pool of goroutines per partition; one that is
//     also a Starter (it hands a message over without waiting, and
//     reports the outcome later through a Finish) is started on the
//     partition's loop, with no goroutine between.
//
// A queued message waits either for its due time (a wave, a backoff, a
// retry-after) or, parked, for its receiver: the relay parks the head of
// a receiver it knows to be offline (Store.Park), and the receiver's
// return (Relay.Wake, Store.Wake) releases what is parked and nothing
// else, so a reconnect never brings a wave or a backoff forward. A relay
// with RelayOptions.AssumeOffline (a leader that has just restarted)
// parks for every receiver it has not yet been told is online.
//   - Records and Locate, on every Store: a few named values kept with
//     the queue (a leader's deploy progress survives it in the same
//     file), and where a message is now (queued, leased, dead or gone),
//     for a caller that tracks what it enqueued.
//
// ExampleOpenBolt puts a command in a bbolt outbox and lets a relay
// deliver and ack it; the Memory examples show coalescing, a nack's
// backoff and a relay's settle-and-dequeue turn.
package outbox
