package control

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

var (
	fuzzID      = regexp.MustCompile(`^[A-Za-z0-9.-][A-Za-z0-9._-]{0,63}$`)
	fuzzVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)
)

// FuzzDeployRequest: no payload crashes the deploy request decoder; a
// refusal has a reason of bounded length and is answered only to a valid
// id; and a request it accepts is strict JSON (UTF-8, each key once) and
// keeps every rule (a cancel request: a deploy number and nothing else) (checked here apart from
// the decoder's own code) and decodes again, re-encoded, to itself. The
// seed corpus is in testdata/fuzz/FuzzDeployRequest.
func FuzzDeployRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		req, err := ParseRequest(payload)
		if err != nil {
			re, ok := err.(*RequestError)
			switch {
			case !ok:
				t.Fatalf("refused %q with %T, want *RequestError", payload, err)
			case re.Reason == "" || len(re.Reason) > MaxReasonLen:
				t.Fatalf("refused %q with a reason of %d bytes: %q", payload, len(re.Reason), re.Reason)
			case re.ID != "" && !fuzzID.MatchString(re.ID):
				t.Fatalf("refused %q, answering to the invalid id %q", payload, re.ID)
			}
			return
		}
		if _, err := wire.CheckStrict(payload); err != nil || !utf8.Valid(payload) {
			t.Fatalf("accepted %q, which is not strict JSON: %v", payload, err)
		}
		if !fuzzID.MatchString(req.ID) {
			t.Fatalf("accepted %q with id %q", payload, req.ID)
		}
		if req.Cancel != nil {
			if *req.Cancel < 0 || req.Version != "" || req.Kind != "" || req.All || len(req.Workers) > 0 || req.WaveSize != 0 || req.WaveIntervalMs != 0 || req.TTLMs != 0 {
				t.Fatalf("accepted %q as a cancel of %d with other fields: %+v", payload, *req.Cancel, req)
			}
			roundTrip(t, payload, req)
			return
		}
		switch {
		case req.Kind != "" && req.Kind != "firmware" && req.Kind != "config":
			t.Fatalf("accepted %q with kind %q", payload, req.Kind)
		case !fuzzVersion.MatchString(req.Version):
			t.Fatalf("accepted %q with version %q", payload, req.Version)
		case req.All == (len(req.Workers) > 0):
			t.Fatalf("accepted %q with all %v and %d workers", payload, req.All, len(req.Workers))
		case req.WaveSize < 0 || req.WaveIntervalMs < 0 || req.WaveIntervalMs > MaxSpanMs || req.TTLMs < 0 || req.TTLMs > MaxSpanMs:
			t.Fatalf("accepted %q with wave size %d, interval %d ms, ttl %d ms", payload, req.WaveSize, req.WaveIntervalMs, req.TTLMs)
		}
		seen := map[string]bool{}
		for _, w := range req.Workers {
			if !fuzzID.MatchString(w) || seen[w] {
				t.Fatalf("accepted %q with worker %q (invalid or twice)", payload, w)
			}
			seen[w] = true
		}
		if n, size := len(req.Workers), req.WaveSize; n > 0 && size > 0 && req.WaveIntervalMs > 0 {
			if waves := (n + size - 1) / size; int64(waves-1)*req.WaveIntervalMs > MaxSpanMs {
				t.Fatalf("accepted %q whose %d waves take more than a year to start", payload, waves)
			}
		}
		roundTrip(t, payload, req)
	})
}

// roundTrip checks that req, accepted from payload, decodes again,
// re-encoded, to itself.
func roundTrip(t *testing.T, payload []byte, req Request) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseRequest(b)
	if err != nil {
		t.Fatalf("accepted %q, but not its re-encoding %q: %v", payload, b, err)
	}
	if c, _ := json.Marshal(again); string(c) != string(b) {
		t.Fatalf("re-encoding %q decodes to %q", b, c)
	}
}
