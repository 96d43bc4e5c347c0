// Package control is how an operator commands a running leader over MQTT:
// a deploy of a version to its workers, in waves, or the cancel of one
// (docs/PROTOCOL.md, "Operating a running leader").
//
// The requester publishes a Request on <prefix>/_leader/deploy and waits
// for the Answer on <prefix>/_leader/deploy/<id>; Ask does that, sending
// the request again until the answer comes. The leader's side is a
// Server: it parses each request strictly (ParseRequest: one JSON object,
// no unknown or repeated field, every value checked, every refusal a
// *RequestError naming the field and what would be valid), carries it
// out once per request id, so a copy asked again is answered with the
// deploy the first started, and publishes the answer as hard as it can.
//
//	srv := control.NewServer(l, sess, topics, log)
//	sess.Subscribe(ctx, topics.LeaderDeploy(), 1, srv.Handle)
//	go srv.Run(ctx)
//
//	// elsewhere, 'leader deploy':
//	ans, copies, err := control.Ask(ctx, sess, topics, control.Request{ID: "d1", Version: "2.0.0", All: true})
package control
