package wire_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// deep nests a telemetry body past encoding/json's limit of 10,000 levels.
func deep(id string) string {
	return `{"v":1,"id":"` + id + `","kind":"telemetry","body":{"metrics":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`
}

// TestDecodeRefusesWhatWouldNotReadAsSent: a name given twice (encoding/json
// would keep the last), and a string that encoding/json would read as
// U+FFFD, are refused, whichever path (fast or encoding/json) the payload
// takes; what is kept raw is not looked into.
func TestDecodeRefusesWhatWouldNotReadAsSent(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		mention       string // "" = accepted
	}{
		{"id twice", `{"v":1,"id":"a","id":"b","kind":"request","body":{"what":"sync"}}`, `field "id" given twice`},
		{"id twice, other case", `{"v":1,"id":"a","ID":"b","kind":"request","body":{"what":"sync"}}`, `field "ID" given twice`},
		{"kind twice, spaced", `{ "v" : 1 , "id" : "a" , "kind" : "heartbeat" , "kind" : "telemetry" , "body" : {"metrics":{}} }`, `field "kind" given twice`},
		{"kind twice, escaped", `{"v":1,"id":"a","kind":"request","\u006bind":"heartbeat","body":{"what":"sync"}}`, `given twice`},
		{"body twice", `{"v":1,"id":"a","kind":"request","body":{"what":"x"},"body":{"what":"sync"}}`, `field "body" given twice`},
		{"heartbeat body field twice", `{"v":1,"id":"h","kind":"heartbeat","body":{"version":"1","version":"2","mailbox_depth":0}}`, `field "version" given twice`},
		{"heartbeat body field twice, escaped", `{"v":1,"id":"h","kind":"heartbeat","body":{"version":"1","vers\u0069on":"2","mailbox_depth":0}}`, `given twice`},
		{"request body field twice", `{"v":1,"id":"r","kind":"request","body":{"what":"a","what":"sync"}}`, `field "what" given twice`},
		{"telemetry metric twice", `{"v":1,"id":"t","kind":"telemetry","body":{"metrics":{"cpu":0.5,"cpu":0.9}}}`, `field "metrics": field "cpu" given twice in one object`},
		{"telemetry metrics in two cases", `{"v":1,"id":"t","kind":"telemetry","body":{"metrics":{"cpu":0.5,"CPU":0.9}}}`, ""}, // two map keys
		{"id not UTF-8", "{\"v\":1,\"id\":\"r-\xff\",\"kind\":\"request\",\"body\":{\"what\":\"sync\"}}", "not valid UTF-8"},
		{"id with a lone surrogate", `{"v":1,"id":"r-\ud800","kind":"request","body":{"what":"sync"}}`, "lone surrogate"},
		{"id with a lone low surrogate", `{"v":1,"id":"r-\udc00x","kind":"request","body":{"what":"sync"}}`, "lone surrogate"},
		{"id with two high surrogates", `{"v":1,"id":"r-\ud800\ud800","kind":"request","body":{"what":"sync"}}`, "lone surrogate"},
		{"id with a surrogate pair", `{"v":1,"id":"r-\ud83d\ude00","kind":"request","body":{"what":"sync"}}`, ""},
		{"id with an escaped backslash and u", `{"v":1,"id":"r-\\ud800","kind":"request","body":{"what":"sync"}}`, ""},
		{"metric name not UTF-8", "{\"v\":1,\"id\":\"t\",\"kind\":\"telemetry\",\"body\":{\"metrics\":{\"c\xc3\":1}}}", "not valid UTF-8"},
		{"nested past the decoder's limit", deep("t-1"), "exceeded max depth"},
		{"an ack's body is not read", `{"v":1,"kind":"ack","ref":"c","result":"ok","body":{"a":1,"a":2}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.Decode("fleet/w-1/up", []byte(tc.payload), wire.Up, 1<<20)
			if tc.mention == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("err = %v; want ErrMalformed saying %q", err, tc.mention)
			}
		})
	}
}

// TestUnmarshalStrictReadsWhatEncodingJSONReads: what it accepts, it
// decodes as encoding/json does; raw values are kept as they are.
func TestUnmarshalStrictReadsWhatEncodingJSONReads(t *testing.T) {
	var j wire.Job
	const data = `{"work_ms":5,"data":{"a":[1,"\ud800",{"a":2,"a":3}],"a":"x\\"}}`
	if err := wire.UnmarshalStrict([]byte(data), &j); err != nil {
		t.Fatalf("refused a job whose data it does not read: %v", err)
	}
	var ref wire.Job
	if err := json.Unmarshal([]byte(data), &ref); err != nil || string(j.Data) != string(ref.Data) || j.WorkMs != 5 {
		t.Fatalf("read %+v, encoding/json %+v (%v)", j, ref, err)
	}
	var v map[string]any
	if err := wire.UnmarshalStrict([]byte(`{"a":[{"b":1},{"b":2}],"c":{"b":{"b":1}}}`), &v); err != nil {
		t.Fatalf("refused an object whose names repeat only in different objects: %v", err)
	}
	if err := wire.UnmarshalStrict([]byte(`{"a":[{"b":1,"b":2}]}`), &v); err == nil || !strings.Contains(err.Error(), `field "a"[0]: field "b" given twice`) {
		t.Fatalf("a name twice in an object inside an array: %v", err)
	}
}

// TestPeekID: the id a reject can answer, and no other.
func TestPeekID(t *testing.T) {
	for _, tc := range []struct {
		name, payload, want string
	}{
		{"valid", `{"v":1,"id":"r-1","kind":"request"}`, "r-1"},
		{"malformed after it", `{"v":1,"id":"r-1","kind":"request","body":{"what":}}`, "r-1"},
		{"nested past the decoder's limit", deep("t-1"), "t-1"},
		{"nested before it", `{"body":` + strings.Repeat(`[{"x":"]}"},`, 20000) + `1` + strings.Repeat("]", 20000) + `,"id":"t-2"}`, "t-2"},
		{"other case", `{"ID":"r-2"}`, "r-2"},
		{"escaped", `{"\u0069d":"r-\u0033"}`, "r-3"},
		{"a surrogate pair", `{"id":"r-\ud83d\ude00"}`, "r-\U0001F600"},
		{"id twice", `{"id":"a","id":"b"}`, ""},
		{"id twice, other case", `{"id":"a","Id":"b"}`, ""},
		{"not UTF-8", "{\"id\":\"r-\xff\"}", ""},
		{"lone surrogate", `{"id":"r-\ud800"}`, ""},
		{"short escape", `{"id":"r-\u12"}`, ""},
		{"not a string", `{"id":12}`, ""},
		{"empty", `{"id":""}`, ""},
		{"too long", `{"id":"` + strings.Repeat("x", 2*wire.MaxIDLen+1) + `"}`, ""},
		{"nested only", `{"body":{"id":"x"}}`, ""},
		{"not closed", `{"id":"r-1","body":[`, ""},
		{"trailing data", `{"id":"r-1"} {}`, ""},
		{"array", `["id","x"]`, ""},
		{"unterminated string", `{"id":"r-1`, ""},
		{"control character", "{\"id\":\"r-\x01\"}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wire.PeekID([]byte(tc.payload), 1<<20); got != tc.want {
				t.Fatalf("PeekID = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzPeekID: no payload crashes PeekID or makes it read past the end, and
// an id it returns is one a reply carries back unchanged.
func FuzzPeekID(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"id":"r-1","kind":"request"}`, `{"ID":"x","body":[[[{"a":"]"}]]]}`, `{"id":"\ud83d\ude00"}`,
		`{"id":"a","id":"b"}`, `{"id":"\u12"}`, `{"id":"x\`, `{`, `"`, `{"a":}`, `{"id":"x",}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		id := wire.PeekID(payload, 0)
		if id == "" {
			return
		}
		b, err := wire.Encode(wire.Envelope{Kind: wire.KindReply, Ref: id, Result: wire.ResultReject, Reason: "x"})
		if err != nil {
			t.Fatalf("PeekID(%q) = %q, which a reply cannot carry: %v", payload, id, err)
		}
		env, err := wire.Decode("fleet/w/down", b, wire.Down, 0)
		if err != nil || env.Ref != id {
			t.Fatalf("PeekID(%q) = %q, read back as %q (%v)", payload, id, env.Ref, err)
		}
	})
}
