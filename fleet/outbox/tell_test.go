package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

func TestTellPaths(t *testing.T) {
	ctx := context.Background()
	st, err := outbox.NewMemory(outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	teller := outbox.NewTeller(st)
	msg := func(i int) outbox.Message {
		return outbox.Message{Receiver: "collector", Kind: "telemetry", Payload: fmt.Appendf(nil, "seq=%d", i)}
	}
	errOffline := flow.Transient(errors.New("worker offline"))
	tests := []struct {
		name      string
		direct    error
		wantPath  outbox.Path
		wantDepth int
	}{
		{"receiver takes it", nil, outbox.Direct, 0},
		{"mailbox full", flow.Capacity(time.Second, "mailbox full"), outbox.Stored, 1},
		{"receiver offline", errOffline, outbox.Stored, 2},
		{"direct rejects", flow.Permanent(errors.New("malformed")), outbox.Stored, 3},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			called := 0
			path, err := teller.Tell(ctx, msg(i), func(_ context.Context, m outbox.Message) error {
				called++
				return tc.direct
			})
			if err != nil || path != tc.wantPath || called != 1 {
				t.Fatalf("Tell = %v, %v after %d direct calls; want %v, nil after 1", path, err, called, tc.wantPath)
			}
			if d := st.Stats().Depth; d != tc.wantDepth {
				t.Fatalf("store depth %d, want %d", d, tc.wantDepth)
			}
		})
	}
	// The stored ones are what the relay will find, in order.
	queued, _ := st.Dequeue(ctx, 0, 10)
	if len(queued) != 1 || string(queued[0].Payload) != "seq=1" {
		t.Fatalf("head of the outbox %+v, want the first fallback (seq=1)", queued)
	}

	st.Close()
	path, err := teller.Tell(ctx, msg(9), func(context.Context, outbox.Message) error { return errOffline })
	var te *outbox.TellError
	if path != outbox.Failed || !errors.As(err, &te) || te.Receiver != "collector" {
		t.Fatalf("Tell with both paths down = %v, %v; want Failed and a *TellError", path, err)
	}
	if !errors.Is(err, outbox.ErrClosed) || !errors.Is(err, flow.ErrTransient) {
		t.Fatalf("error %v does not match both causes (ErrClosed and the direct failure)", err)
	}
	if got, want := teller.Stats(), (outbox.TellStats{Direct: 1, Stored: 3, Failed: 1}); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
}

func TestPathString(t *testing.T) {
	for p, want := range map[outbox.Path]string{outbox.Direct: "direct", outbox.Stored: "outbox", outbox.Failed: "failed", 7: "Path(7)"} {
		if p.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(p), p.String(), want)
		}
	}
}

// A collector that is full half the time still gets every reading: the
// ones it refuses wait in the outbox for the relay.
func ExampleTeller_Tell() {
	ctx := context.Background()
	st, _ := outbox.NewMemory(outbox.Options{})
	teller := outbox.NewTeller(st)
	ask := func(_ context.Context, m outbox.Message) error {
		if m.Payload[0]%2 == 1 {
			return flow.Capacity(100*time.Millisecond, "mailbox full")
		}
		return nil
	}
	for i := range 4 {
		path, err := teller.Tell(ctx, outbox.Message{Receiver: "collector", Kind: "telemetry", Payload: []byte{byte(i)}}, ask)
		fmt.Println(i, path, err)
	}
	fmt.Printf("%+v\n", teller.Stats())
	// Output:
	// 0 direct <nil>
	// 1 outbox <nil>
	// 2 direct <nil>
	// 3 outbox <nil>
	// {Direct:2 Stored:2 Failed:0}
}
