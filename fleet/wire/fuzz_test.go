package wire_test

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// FuzzDecode: no payload crashes the decoder, and whatever it accepts
// encodes and decodes again to the same envelope.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"id":"c-1","kind":"config","key":"config","seq":3,"body":{"version":"2.1.0"}}`,
		`{"v":1,"kind":"ack","ref":"c-1","result":"full","retry_after_ms":250}`,
		`{"v":1,"id":"t","kind":"telemetry","body":{"metrics":{"cpu":0.5}}}`,
		`{"v":1,"id":"j","kind":"job","body":{"work_ms":5,"data":[1,2]}}`,
		`{}`, `null`, `[`, "\x00",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, payload []byte, isUp bool) {
		dir := wire.Down
		if isUp {
			dir = wire.Up
		}
		env, err := wire.Decode("fleet/w/x", payload, dir, 4096)
		if err != nil {
			return
		}
		b, err := wire.Encode(env)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", payload, err)
		}
		again, err := wire.Decode("fleet/w/x", b, dir, 0)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", b, err)
		}
		if again.ID != env.ID || again.Kind != env.Kind || again.Ref != env.Ref || again.Seq != env.Seq || again.Result != env.Result {
			t.Fatalf("round trip changed %+v to %+v", env, again)
		}
	})
}

// FuzzParseStatus: no payload crashes the status parser, and whatever it
// accepts is canonical: String gives the payload back byte for byte, with
// a valid epoch or none.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{
		"online", "offline", "online 9f2c4e1a7b3d5e60-1", "offline 9f2c4e1a7b3d5e60-1",
		"", " ", "online ", "online  x", "online\n", "offline a b", "online \x00", "ONLINE 1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		s, err := wire.ParseStatus("fleet/w-1/status", payload)
		if err != nil {
			return
		}
		if got := s.String(); got != string(payload) {
			t.Fatalf("accepted %q but it formats as %q", payload, got)
		}
		if s.Epoch != "" {
			if err := wire.ValidEpoch(s.Epoch); err != nil {
				t.Fatalf("accepted %q with an invalid epoch: %v", payload, err)
			}
		}
	})
}
