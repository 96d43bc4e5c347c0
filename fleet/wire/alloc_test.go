package wire_test

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Decoding the envelopes of a delivery (the command a worker reads, the
// ack the leader reads) allocates only the strings it copies out of the
// payload: the Envelope itself stays on the caller's stack.
func TestDecodeAllocatesOnlyItsStrings(t *testing.T) {
	cmd := wire.Envelope{V: wire.Version, ID: "m42", Kind: wire.KindPing, Attempt: 1, SentMs: 1}
	tests := []struct {
		name   string
		env    wire.Envelope
		dir    wire.Direction
		topic  string
		copies float64 // strings copied out: id, ref
	}{
		{"command", cmd, wire.Down, "fleet/w1/down", 1},
		{"ack", wire.Ack(&cmd, wire.ResultOK), wire.Up, "fleet/w1/up", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			payload, err := wire.Encode(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			var got wire.Envelope
			allocs := testing.AllocsPerRun(100, func() {
				if got, err = wire.Decode(tc.topic, payload, tc.dir, 0); err != nil {
					t.Fatal(err)
				}
			})
			if allocs > tc.copies {
				t.Fatalf("Decode of %s: %v allocations, want at most %v", payload, allocs, tc.copies)
			}
			if got.ID != tc.env.ID || got.Ref != tc.env.Ref {
				t.Fatalf("decoded %+v, want %+v", got, tc.env)
			}
		})
	}
}
