package wire_test

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// A job request (with the done report) and both answers to it survive an
// encode and a strict decode unchanged.
func TestPullRoundTrip(t *testing.T) {
	cases := []struct {
		dir wire.Direction
		env wire.Envelope
	}{
		{wire.Up, wire.Envelope{ID: "p1", Kind: wire.KindRequest, Body: wire.Body(wire.Request{What: wire.RequestJob, Done: "q7"})}},
		{wire.Down, wire.Envelope{Kind: wire.KindReply, Ref: "p1", Result: wire.ResultOK, Key: "q8", Seq: 1, SentMs: 5, Body: wire.Body(wire.Job{ID: "q8", LeaseMs: 30000, WorkMs: 250})}},
		{wire.Down, wire.Envelope{Kind: wire.KindReply, Ref: "p1", Result: wire.ResultDrained, RetryAfterMs: 1000}},
	}
	for _, tc := range cases {
		b, err := wire.Encode(tc.env)
		if err != nil {
			t.Fatalf("encode %+v: %v", tc.env, err)
		}
		got, err := wire.Decode("fleet/w-1/x", b, tc.dir, 0)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if got.Kind != tc.env.Kind || got.Result != tc.env.Result || got.RetryAfterMs != tc.env.RetryAfterMs || string(got.Body) != string(tc.env.Body) {
			t.Errorf("round trip of %s: got %+v", b, got)
		}
	}
	// A drained answer without its retry time is never sent.
	if _, err := wire.Encode(wire.Envelope{Kind: wire.KindReply, Ref: "p1", Result: wire.ResultDrained}); err == nil {
		t.Error("Encode sent a drained answer without retry_after_ms")
	}
}
