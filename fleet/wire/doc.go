// Package wire is fleetsim's protocol between the leader and its workers:
// the MQTT topics and the JSON envelope carried on them. docs/PROTOCOL.md is
// the same contract written for someone implementing a worker in another
// language (or with mosquitto_pub alone).
//
// Topics, with the default prefix "fleet":
//
//	fleet/<worker>/down     leader -> worker: commands (config, firmware, job, ping) and replies
//	fleet/<worker>/up       worker -> leader: acks, requests, heartbeats, telemetry
//	fleet/<worker>/status   retained "online <epoch>" / "offline <epoch>" (a Status; ParseEpochStatus); the last will is "offline <epoch>"
//	fleet/_leader/status    retained "online" / "offline" for the leader
//	fleet/_leader/stats     the leader's periodic stats snapshot (JSON)
//	fleet/_control/<pool>   scenario events for a worker pool
//
// Delivery is an application-level ack: the leader's command is delivered
// when the worker answers on its up topic with an ack whose "ref" is the
// command's "id" — "ok", "full" (with retry_after_ms) or "reject" (with a
// reason). MQTT's own acknowledgements do not prove it.
//
// Decoding is strict: an unknown field, a missing required field, a wrong
// type, an unknown kind or a payload over the size limit is a *DecodeError
// naming the topic and what would be valid.
//
//	env, err := wire.Decode(topic, payload, wire.Up, wire.DefaultMaxSize)
//	if err != nil { /* count it; answer reject if there is someone to answer */ }
//
// A status is plain text, parsed as strictly by ParseStatus. Its epoch names
// the connection that published it, so that the leader can ignore the late
// last will of a connection the worker has already replaced.
//
// Decoding refuses, too, what a JSON reader could read otherwise than it
// was meant (UnmarshalStrict): a name given twice, a string that is not
// valid UTF-8. PeekID finds the id of a refused payload to answer.
//
// Logins are part of the contract too: a worker logs in with its id as
// username, a gateway with GatewayUsername as username and client id, the
// leader as LeaderUsername. A worker host holds Credentials for its range
// of ids (never the fleet secret) and presents Credentials.Password; the
// broker, which holds the secret, checks it (RangeKey, DeviceRange.Admits).
// A process holding the secret itself may present WorkerPassword.
package wire
