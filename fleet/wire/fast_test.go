package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// canonical is one envelope of each kind as the leader and workers send
// them: the fast path must take every one, or the speed it was built for
// is lost without a test noticing.
func canonical() []Envelope {
	return []Envelope{
		{V: Version, ID: "h-w-00042-17", Kind: KindHeartbeat, Key: "hb", Seq: 17, SentMs: 1767225600123, Body: Body(Heartbeat{Version: "1.4.2", MailboxDepth: 3, Busy: true})},
		{V: Version, ID: "h-1", Kind: KindHeartbeat, Key: "hb", Seq: 1, SentMs: 1, Body: Body(Heartbeat{})},
		{V: Version, ID: "s-w-1-1", Kind: KindRequest, SentMs: 1767225600123, Body: Body(Request{What: "sync"})},
		{V: Version, ID: "t-1", Kind: KindTelemetry, SentMs: 5, Body: Body(Telemetry{Metrics: map[string]float64{"cpu": 0.5}})},
		{V: Version, Kind: KindAck, Ref: "c-9", Result: ResultOK},
		{V: Version, Kind: KindAck, Ref: "c-9", Result: ResultFull, RetryAfterMs: 250},
		{V: Version, Kind: KindAck, Ref: "c-9", Result: ResultReject, Reason: "stale version"},
		{V: Version, Kind: KindReply, Ref: "s-1", Result: ResultFull, RetryAfterMs: 1000},
		{V: Version, ID: "c-3", Kind: KindConfig, Key: "config", Seq: 3, TTLMs: 60000, Attempt: 2, SentMs: 9, Body: Body(Apply{Version: "2.0.0"})},
		{V: Version, ID: "f-3", Kind: KindFirmware, Key: "firmware", Seq: MaxSeq, Body: Body(Apply{Version: "2.0.0"})},
		{V: Version, ID: "j-1", Kind: KindJob, Body: Body(Job{WorkMs: 5})},
		{V: Version, ID: "p-1", Kind: KindPing},
	}
}

// TestFastPathTakesCanonicalForms: what Encode writes for every kind, the
// fast path writes and reads back, with encoding/json's result; so do the
// bodies it knows.
func TestFastPathTakesCanonicalForms(t *testing.T) {
	for _, env := range canonical() {
		want, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeFast(&env)
		if !ok || string(got) != string(want) {
			t.Errorf("encodeFast(%s): %q, %v; want %q", env.Kind, got, ok, want)
		}
		var fast Envelope
		if !decodeFast(want, &fast) {
			t.Errorf("decodeFast refused %s", want)
			continue
		}
		if !reflect.DeepEqual(fast, env) {
			t.Errorf("decodeFast(%s) = %+v, want %+v", want, fast, env)
		}
	}
	for _, body := range []any{Heartbeat{Version: "1.0.0", MailboxDepth: 2, Busy: true}, Heartbeat{}, Apply{Version: "2.0.0"}, Request{What: "sync"}} {
		want, _ := json.Marshal(body)
		got, ok := bodyFast(body)
		if !ok || string(got) != string(want) {
			t.Errorf("bodyFast(%#v) = %q, %v; want %q", body, got, ok, want)
		}
		into := reflect.New(reflect.TypeOf(body))
		if !decodeBodyFast(want, into.Interface()) || !reflect.DeepEqual(into.Elem().Interface(), body) {
			t.Errorf("decodeBodyFast(%s) refused it or read %+v", want, into.Elem().Interface())
		}
	}
}

// TestFastPathLeavesTheRestToEncodingJSON: forms outside the canonical
// one go the slow way, where encoding/json decides (some it accepts, some
// it refuses with its own message).
func TestFastPathLeavesTheRestToEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"v":1,"ID":"x","kind":"ping"}`,             // another case of a name
		`{"v":1,"id":"x","id":"y","kind":"ping"}`,    // a name twice
		`{"v":1,"id":"x\u0041","kind":"ping"}`,       // an escape
		`{"v":1,"id":null,"kind":"ping"}`,            // a null
		`{"v":1.0,"id":"x","kind":"ping"}`,           // a fraction
		`{"v":01,"id":"x","kind":"ping"}`,            // not JSON
		`{"v":1,"id":"x","kind":"ping","extra":1}`,   // unknown
		`{"v":1,"id":"x","kind":"ping"} {}`,          // trailing data
		`{"v":1,"id":"x","kind":"ping","body":null}`, // a null body
		`{"v":1,"id":"x","kind":"ping","body":{"a":}}`,
		`{"v":1,"id":"x","kind":"ping","seq":-1}`,
		`{"v":1,"id":"x","kind":"ping","seq":18446744073709551616}`,
		`{"v":1,"id":"\xff","kind":"ping"}`,
		`{"v":1,"id":"- 1","kind":"ping","ttl_ms":- 1}`,
		// Nested past encoding/json's limit of 10,000 levels, the
		// envelope's own included: the fast path must not judge it.
		`{"v":1,"id":"x","kind":"ping","body":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	} {
		var env Envelope
		if decodeFast([]byte(s), &env) {
			t.Errorf("decodeFast took %.100s", s)
		}
	}
	for _, env := range []Envelope{
		{V: 1, ID: "<x>", Kind: KindPing},
		{V: 1, ID: "é", Kind: KindPing},
		{V: 1, ID: "x", Kind: KindJob, Body: json.RawMessage(`{ "work_ms": 1 }`)},
	} {
		if b, ok := encodeFast(&env); ok {
			t.Errorf("encodeFast took %+v: %s", env, b)
		}
	}
}

// TestFastBodyKeepsWhatIsAbsent: as encoding/json, a body decoded into a
// value already filled sets only the fields it has.
func TestFastBodyKeepsWhatIsAbsent(t *testing.T) {
	body := []byte(`{"mailbox_depth":3}`)
	fast := Heartbeat{Version: "1.0.0", Busy: true}
	ref := fast
	if !decodeBodyFast(body, &fast) {
		t.Fatal("decodeBodyFast refused it")
	}
	if err := strictUnmarshal(body, &ref); err != nil {
		t.Fatal(err)
	}
	if fast != ref {
		t.Fatalf("fast path made %+v, encoding/json %+v", fast, ref)
	}
}

// FuzzFastDecode: whatever the fast path accepts, encoding/json accepts
// with the same result, for the envelope and for each body it knows.
func FuzzFastDecode(f *testing.F) {
	for _, env := range canonical() {
		b, _ := json.Marshal(env)
		f.Add(b)
		f.Add([]byte(env.Body))
	}
	for _, s := range []string{
		`{"v":1,"id":"x","kind":"ping","body":{"a":[1,{"b":"}"}],"c":"\"]"}}`,
		` { "v" : -0 , "seq" : 0 , "body" : "x" } `,
		`{"v":9223372036854775807,"ttl_ms":-9223372036854775808}`,
		`{"v":1,"body":{"version":"1","mailbox_depth":-3,"busy":false}}`,
		`{"version":"1","mailbox_depth":-3,"busy":false}`, `{"what":"ünïcode"}`, `{}`, `{"body":1e3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var fast Envelope
		if decodeFast(payload, &fast) {
			var ref Envelope
			if err := strictUnmarshal(payload, &ref); err != nil {
				t.Fatalf("fast path took %q, encoding/json refuses it: %v", payload, err)
			}
			if !reflect.DeepEqual(fast, ref) {
				t.Fatalf("%q: fast path read %+v, encoding/json %+v", payload, fast, ref)
			}
		}
		// Into values already filled, since encoding/json keeps the fields
		// a body does not have.
		for _, filled := range []any{Heartbeat{Version: "0.9", MailboxDepth: 7, Busy: true}, Apply{Version: "0.9"}, Request{What: "x"}} {
			typ := reflect.TypeOf(filled)
			fast, ref := reflect.New(typ), reflect.New(typ)
			fast.Elem().Set(reflect.ValueOf(filled))
			ref.Elem().Set(reflect.ValueOf(filled))
			if !decodeBodyFast(payload, fast.Interface()) {
				continue
			}
			if err := strictUnmarshal(payload, ref.Interface()); err != nil {
				t.Fatalf("fast path took %q as a %v, encoding/json refuses it: %v", payload, typ, err)
			}
			if !reflect.DeepEqual(fast.Interface(), ref.Interface()) {
				t.Fatalf("%q: fast path read %+v, encoding/json %+v", payload, fast.Elem(), ref.Elem())
			}
		}
	})
}

// FuzzFastEncode: whatever the fast path writes, json.Marshal writes byte
// for byte.
func FuzzFastEncode(f *testing.F) {
	f.Add("h-1", "heartbeat", "", "hb", uint64(3), int64(0), 1, int64(17), "", int64(0), "", []byte(`{"mailbox_depth":0}`), "1.0.0", -1, true)
	f.Add("", "ack", "c-1", "", uint64(0), int64(-5), 0, int64(-1), "full", int64(250), "a <b> & c", []byte(nil), "", 0, false)
	f.Add("x", "job", "", "", uint64(1<<63), int64(1), 2, int64(3), "", int64(0), "é", []byte(`{"data":[1, 2]}`), "<", 5, false)
	f.Fuzz(func(t *testing.T, id, kind, ref, key string, seq uint64, ttl int64, attempt int, sent int64, result string, retry int64, reason string, body []byte, version string, depth int, busy bool) {
		env := Envelope{V: Version, ID: id, Kind: Kind(kind), Ref: ref, Key: key, Seq: seq, TTLMs: ttl, Attempt: attempt, SentMs: sent, Result: Result(result), RetryAfterMs: retry, Reason: reason, Body: body}
		if b, ok := encodeFast(&env); ok {
			want, err := json.Marshal(env)
			if err != nil {
				t.Fatalf("fast path wrote %q for %+v, json.Marshal refuses it: %v", b, env, err)
			}
			if string(b) != string(want) {
				t.Fatalf("fast path wrote %q, json.Marshal %q", b, want)
			}
		}
		for _, v := range []any{Heartbeat{Version: version, MailboxDepth: depth, Busy: busy}, Apply{Version: version}, Request{What: version}} {
			if b, ok := bodyFast(v); ok {
				if want, _ := json.Marshal(v); string(b) != string(want) {
					t.Fatalf("fast path wrote %q, json.Marshal %q", b, want)
				}
			}
		}
	})
}

// BenchmarkCodec: a heartbeat through Encode and Decode (with its body,
// as the leader reads it), against the same through encoding/json alone,
// which is what both did before the fast path: a strict json.Decoder for
// the envelope and again for the body, and json.Marshal.
func BenchmarkCodec(b *testing.B) {
	env := canonical()[0]
	payload, _ := json.Marshal(env)
	b.Run("decode/fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e, err := Decode("fleet/w/up", payload, Up, 0)
			var hb Heartbeat
			if err != nil || e.BodyInto(&hb) != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var e Envelope
			var hb Heartbeat
			if strictUnmarshal(payload, &e) != nil || strictUnmarshal(e.Body, &hb) != nil || strictUnmarshal(e.Body, &hb) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encode/fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e := env
			e.Body = Body(Heartbeat{Version: "1.4.2", MailboxDepth: 3, Busy: true})
			if _, err := Encode(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e := env
			e.Body, _ = json.Marshal(Heartbeat{Version: "1.4.2", MailboxDepth: 3, Busy: true})
			var hb Heartbeat
			if strictUnmarshal(e.Body, &hb) != nil {
				b.Fatal("refused")
			}
			if _, err := json.Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
