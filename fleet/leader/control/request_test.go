package control

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestParseDeployRequest: one case per rule. want is "" for a valid
// request; otherwise a substring of the reason, which names the field and
// what is valid. answered says whether the refusal can be answered (the
// request has a valid id).
func TestParseDeployRequest(t *testing.T) {
	long := strings.Repeat("9", 60_000)
	cases := []struct {
		name, payload string
		want          string
		answered      bool
	}{
		{"workers", `{"id":"d1","version":"2.0.0","workers":["w-1","w-2"],"wave_size":1,"wave_interval_ms":1000,"ttl_ms":5000}`, "", true},
		{"all, config", `{"id":"d1","kind":"config","version":"2.1.0-rc.1+b7","all":true}`, "", true},
		{"firmware", `{"id":"d1","kind":"firmware","version":"2","all":true}`, "", true},

		{"too large", `{"id":"d1","version":"` + strings.Repeat("x", MaxRequestSize) + `"}`, "bytes, limit 33554432", false},
		{"not JSON", `{"id":"d1",`, "not JSON: unexpected EOF", false},
		{"not an object", `["d1"]`, "got JSON array, want one JSON object", false},
		{"trailing data", `{"id":"d1","version":"2","all":true} {}`, "trailing data after the JSON object", false},
		{"id missing", `{"version":"2","all":true}`, "id: required", false},
		{"id bad", `{"id":"a/b","version":"2","all":true}`, `id: worker id "a/b": character '/' not allowed`, false},
		{"id reserved", `{"id":"_x","version":"2","all":true}`, "id: worker id \"_x\": must not start with", false},
		{"id a number", `{"id":7,"version":"2","all":true}`, "id: got JSON number, want a request id string", false},

		{"unknown field", `{"id":"d1","version":"2","all":true,"force":true}`, `unknown field "force" (valid: id, kind, version, workers, all, wave_size, wave_interval_ms, ttl_ms, cancel)`, true},
		{"unknown long field", `{"id":"d1","version":"2","all":true,"` + long + `":1}`, `unknown field "99999999999999999999999999999999"… (valid: id,`, true},
		{"version a number", `{"id":"d1","version":2,"all":true}`, "version: got JSON number, want a string of 1 to 64 letters, digits or . _ + -", true},
		{"version missing", `{"id":"d1","all":true}`, "version is empty: want 1 to 64 characters of letters, digits or . _ + -", true},
		{"version with a newline", `{"id":"d1","version":"2.0\n","all":true}`, `version "2.0\n": character '\n' not allowed`, true},
		{"version too long", `{"id":"d1","version":"` + long + `","all":true}`, "is 60000 characters: want 1 to 64", true},
		{"version -1", `{"id":"d1","version":"-1","workers":["w-0003"]}`, `version "-1": starts with '-'`, true},
		{"version with a space", `{"id":"d1","version":"2 0","all":true}`, `character ' ' not allowed`, true},
		{"kind unknown", `{"id":"d1","kind":"job","version":"2","all":true}`, `kind "job": want firmware (the default) or config`, true},
		{"kind a number", `{"id":"d1","kind":1,"version":"2","all":true}`, `kind: got JSON number, want "firmware" or "config"`, true},
		{"no targets", `{"id":"d1","version":"2"}`, `workers: give the workers to update, in wave order, or "all": true`, true},
		{"both targets", `{"id":"d1","version":"2","all":true,"workers":["w-1"]}`, `give either "workers" or "all", not both`, true},
		{"all a string", `{"id":"d1","version":"2","all":"yes"}`, "all: got JSON string, want true or false", true},
		{"workers not an array", `{"id":"d1","version":"2","workers":"w-1"}`, "workers: got JSON string, want an array of worker id strings", true},
		{"worker a number", `{"id":"d1","version":"2","workers":["w-1",2]}`, "workers: got JSON number, want an array of worker id strings", true},
		{"worker bad", `{"id":"d1","version":"2","workers":["w-1","w 2"]}`, `workers[1]: worker id "w 2": character ' ' not allowed`, true},
		{"worker too long", `{"id":"d1","version":"2","workers":["` + long + `"]}`, `workers[0]: worker id "99999999999999999999999999999999"…: must be 1 to 64 characters`, true},
		{"worker twice", `{"id":"d1","version":"2","workers":["w-1","w-2","w-1"]}`, `workers[2]: "w-1" is workers[0] again`, true},
		{"wave size negative", `{"id":"d1","version":"2","all":true,"wave_size":-1}`, "wave_size -1: want 0 (one wave) or more", true},
		{"wave size a fraction", `{"id":"d1","version":"2","all":true,"wave_size":1.5}`, "wave_size: got JSON number 1.5, want a whole number, 0 or more", true},
		{"wave size huge", `{"id":"d1","version":"2","all":true,"wave_size":1e300}`, "wave_size: got JSON number 1e300, want a whole number", true},
		{"wave interval negative", `{"id":"d1","version":"2","all":true,"wave_interval_ms":-1}`, "wave_interval_ms -1: want 0 to 31536000000 (a year)", true},
		{"wave interval too long", `{"id":"d1","version":"2","all":true,"wave_interval_ms":31536000001}`, "wave_interval_ms 31536000001: want 0 to", true},
		{"waves span too long", `{"id":"d1","version":"2","workers":["a","b","c"],"wave_size":1,"wave_interval_ms":20000000000}`, "3 waves of 1 would take more than a year to start", true},
		{"too many waves", `{"id":"d1","version":"2","workers":[` + quotedIDs(100_001) + `],"wave_size":1}`, "wave_size 1: 100001 targets in waves of 1 make 100001 waves, at most 100000: want a wave size of at least 2", true},
		{"ttl negative", `{"id":"d1","version":"2","all":true,"ttl_ms":-5}`, "ttl_ms -5: want 0 (none) to 31536000000 (a year)", true},
		// Each field once, by its exact name, in UTF-8: the decoder alone
		// would keep the last of two, match "ID" to id, and turn bytes
		// that are not UTF-8 into U+FFFD.
		{"version twice", `{"id":"d1","version":"2.0.0","all":true,"version":"9.9.9"}`, `field "version" given twice in one object (at byte 40): say each name once`, true},
		{"version twice, escaped", `{"id":"d1","version":"2.0.0","all":true,"versio\u006e":"9"}`, `field "version" given twice`, true},
		{"id twice", `{"id":"d0","version":"2","all":true,"id":"d1"}`, `field "id" given twice`, false},
		{"field in upper case", `{"id":"d1","VERSION":"2","all":true}`, `unknown field "VERSION" (valid: id, kind,`, true},
		{"id in upper case", `{"ID":"d1","version":"2","all":true}`, `unknown field "ID"`, true},
		{"id not UTF-8", "{\"id\":\"d\xff1\",\"version\":\"2\",\"all\":true}", "byte 8 (0xff) is not UTF-8", false},
		{"id with half a surrogate", `{"id":"d1\udc00","version":"2","all":true}`, `escape \udc00 at byte 9 is half a UTF-16 surrogate pair`, false},
		{"worker not UTF-8", "{\"id\":\"d1\",\"version\":\"2\",\"workers\":[\"w-\xc31\"]}", "byte 39 (0xc3) is not UTF-8", true},
		{"not UTF-8 and a wrong type", "{\"id\":\"d1\",\"version\":2,\"x\":\"\xff\"}", "version: got JSON number", true},
		{"id twice and a wrong type", `{"id":"d0","id":"d1","version":2}`, "version: got JSON number", false},
		{"cancel", `{"id":"d1","cancel":3}`, "", true},
		{"cancel negative", `{"id":"d1","cancel":-1}`, "cancel -1: want the number of a deploy, 0 or more", true},
		{"cancel with a version", `{"id":"d1","cancel":3,"version":"2"}`, `cancel: a cancel request holds id and cancel only, not "version"`, true},
		{"cancel a string", `{"id":"d1","cancel":"3"}`, "cancel: got JSON string, want the number of a deploy to cancel, 0 or more", true},
		{"cancel twice", `{"id":"d1","cancel":3,"cancel":4}`, `field "cancel" given twice`, true},
		{"ttl a string", `{"id":"d1","version":"2","all":true,"ttl_ms":"5s"}`, "ttl_ms: got JSON string, want a whole number of milliseconds", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseRequest([]byte(tc.payload))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if req.ID != "d1" {
					t.Fatalf("id %q, want d1", req.ID)
				}
				return
			}
			re, ok := err.(*RequestError)
			if !ok {
				t.Fatalf("got %v (%T), want a *RequestError containing %q", err, err, tc.want)
			}
			if !strings.Contains(re.Reason, tc.want) {
				t.Errorf("reason %q\nwant it to contain %q", re.Reason, tc.want)
			}
			if len(re.Reason) > MaxReasonLen {
				t.Errorf("reason of %d bytes, limit %d", len(re.Reason), MaxReasonLen)
			}
			if answered := re.ID != ""; answered != tc.answered || answered && re.ID != "d1" {
				t.Errorf("answered to id %q, want answered %v (to d1)", re.ID, tc.answered)
			}
		})
	}
}

// recLink records what the leader publishes.
type recLink struct {
	mu  sync.Mutex
	pub map[string][]byte
}

func (r *recLink) Publish(_ context.Context, topic string, _ byte, _ bool, p []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pub[topic] = p
	return nil
}
func (r *recLink) Send(topic string, qos byte, p []byte) error {
	return r.Publish(context.Background(), topic, qos, false, p)
}
func (r *recLink) Subscribe(context.Context, string, byte, func(string, []byte)) error { return nil }

// answer returns the answer published to request id, or false.
func (r *recLink) answer(t *testing.T, id string) (Answer, bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pub[wire.Topics{}.LeaderDeployReply(id)]
	if !ok {
		return Answer{}, false
	}
	var a Answer
	if err := json.Unmarshal(p, &a); err != nil {
		t.Fatalf("answer %q: %v", p, err)
	}
	return a, true
}

// TestServeAnswersEveryRefusal: a request with a wrong-typed version, or
// an unknown field, is answered on its answer topic with the reason, and
// a request that has no valid id is counted as unanswered; a valid one
// starts its deploy. Each is counted.
func TestServeAnswersEveryRefusal(t *testing.T) {
	link := &recLink{pub: map[string][]byte{}}
	st, err := outbox.NewMemory(outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := leader.New(leader.Config{Link: link, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	c := NewServer(l, link, wire.Topics{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	for _, p := range []string{
		`{"id":"typed","version":2,"workers":["w-1"]}`,
		`{"id":"unknown","version":"2","workers":["w-1"],"canary":true}`,
		`{"id":7,"version":"2","workers":["w-1"]}`,
		`{"id":"ok","version":"2.0.0","workers":["w-1","w-2"],"wave_size":1}`,
	} {
		c.Serve(ctx, []byte(p))
	}
	for id, want := range map[string]string{
		"typed":   "version: got JSON number, want a string",
		"unknown": `unknown field "canary"`,
	} {
		a, ok := link.answer(t, id)
		if !ok || a.OK || !strings.Contains(a.Error, want) || a.ID != id {
			t.Errorf("answer to %s: %+v (published %v), want a refusal containing %q", id, a, ok, want)
		}
	}
	if a, ok := link.answer(t, "ok"); !ok || !a.OK || a.Targets != 2 || a.Waves != 2 {
		t.Errorf("answer to a valid request: %+v (published %v), want ok, 2 targets in 2 waves", a, ok)
	}
	n := c.Counts()
	if got := fmt.Sprint(n.Started, n.Refused, n.Unanswered); got != "1 2 1" {
		t.Errorf("started, refused, unanswered: %s, want 1 2 1", got)
	}
}

// quotedIDs is n worker ids, quoted and comma-separated.
func quotedIDs(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"w-%06d"`, i)
	}
	return strings.Join(ids, ",")
}
