package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

const up = "fleet/w-1/up"
const down = "fleet/w-1/down"

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name, topic, payload string
		dir                  wire.Direction
		check                func(wire.Envelope) bool
	}{
		{"config", down, `{"v":1,"id":"c-1","kind":"config","key":"config","seq":3,"body":{"version":"2.1.0"}}`, wire.Down,
			func(e wire.Envelope) bool { return e.Seq == 3 && e.Key == "config" }},
		{"highest seq", down, `{"v":1,"id":"f-1","kind":"firmware","key":"firmware","seq":9007199254740991,"body":{"version":"2.1.0"}}`, wire.Down,
			func(e wire.Envelope) bool { return e.Seq == wire.MaxSeq }},
		{"ping without body", down, `{"v":1,"id":"p-1","kind":"ping"}`, wire.Down, nil},
		{"ack ok", up, `{"v":1,"kind":"ack","ref":"c-1","result":"ok"}`, wire.Up,
			func(e wire.Envelope) bool { return e.Ref == "c-1" && e.Result == wire.ResultOK }},
		{"ack full", up, `{"v":1,"kind":"ack","ref":"c-1","result":"full","retry_after_ms":250}`, wire.Up,
			func(e wire.Envelope) bool { return e.RetryAfter().Milliseconds() == 250 }},
		{"ack reject", up, `{"v":1,"kind":"ack","ref":"c-1","result":"reject","reason":"bad version"}`, wire.Up, nil},
		{"heartbeat", up, `{"v":1,"id":"hb-9","kind":"heartbeat","key":"hb","seq":9,"body":{"version":"2.0.0","mailbox_depth":3}}`, wire.Up, nil},
		{"telemetry", up, `{"v":1,"id":"t-1","kind":"telemetry","body":{"metrics":{"cpu":0.5}}}`, wire.Up, nil},
		{"request", up, `{"v":1,"id":"r-1","kind":"request","body":{"what":"sync"}}`, wire.Up, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := wire.Decode(tc.topic, []byte(tc.payload), tc.dir, 0)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if tc.check != nil && !tc.check(env) {
				t.Fatalf("decoded %+v", env)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name, payload string
		dir           wire.Direction
		want          error
		mention       string // the error must say this
	}{
		{"not json", `hello`, wire.Up, wire.ErrMalformed, "invalid character"},
		{"unknown field", `{"v":1,"kind":"ack","ref":"x","result":"ok","extra":1}`, wire.Up, wire.ErrMalformed, `unknown field "extra"`},
		{"wrong type", `{"v":1,"kind":"ack","ref":"x","result":"ok","retry_after_ms":"soon"}`, wire.Up, wire.ErrMalformed, `field "retry_after_ms"`},
		{"trailing data", `{"v":1,"kind":"ping","id":"p"} {}`, wire.Down, wire.ErrMalformed, "trailing"},
		{"version", `{"v":2,"kind":"ping","id":"p"}`, wire.Down, wire.ErrVersion, "v = 2"},
		{"no version", `{"kind":"ping","id":"p"}`, wire.Down, wire.ErrVersion, "v = 0"},
		{"unknown kind", `{"v":1,"kind":"reboot","id":"p"}`, wire.Down, wire.ErrUnknownKind, `"reboot"`},
		{"wrong direction", `{"v":1,"kind":"config","id":"c","body":{"version":"1"}}`, wire.Up, wire.ErrWrongTopic, "travels down"},
		{"ack without ref", `{"v":1,"kind":"ack","result":"ok"}`, wire.Up, wire.ErrMalformed, `"ref" is required`},
		{"bad result", `{"v":1,"kind":"ack","ref":"c","result":"maybe"}`, wire.Up, wire.ErrMalformed, "must be ok, full, reject or drained"},
		{"drained without a retry time", `{"v":1,"kind":"reply","ref":"r","result":"drained"}`, wire.Down, wire.ErrMalformed, `drained answer needs "retry_after_ms" above 0`},
		{"drained on an ack", `{"v":1,"kind":"ack","ref":"c","result":"drained","retry_after_ms":5}`, wire.Up, wire.ErrMalformed, "belongs on a reply to a job request"},
		{"job reply without a lease", `{"v":1,"kind":"reply","ref":"r","result":"ok","body":{"id":"q1"}}`, wire.Down, wire.ErrMalformed, `"lease_ms" above 0`},
		{"done on a sync request", `{"v":1,"kind":"request","id":"r","body":{"what":"sync","done":"q1"}}`, wire.Up, wire.ErrMalformed, `"done" belongs on a "job" request`},
		{"reject without reason", `{"v":1,"kind":"ack","ref":"c","result":"reject"}`, wire.Up, wire.ErrMalformed, "reason"},
		{"command without id", `{"v":1,"kind":"ping"}`, wire.Down, wire.ErrMalformed, `"id" is required`},
		{"config without version", `{"v":1,"kind":"config","id":"c","body":{}}`, wire.Down, wire.ErrMalformed, `"version" is required`},
		{"config body unknown field", `{"v":1,"kind":"config","id":"c","body":{"version":"1","x":2}}`, wire.Down, wire.ErrMalformed, `unknown field "x"`},
		{"config without body", `{"v":1,"kind":"config","id":"c"}`, wire.Down, wire.ErrMalformed, `"body" is required`},
		{"seq past 2^53", `{"v":1,"kind":"firmware","id":"f","key":"firmware","seq":9007199254740992,"body":{"version":"1"}}`, wire.Down, wire.ErrMalformed, `"seq" = 9007199254740992, must be at most 2^53-1`},
		{"seq of a wall clock", `{"v":1,"kind":"heartbeat","id":"h","key":"hb","seq":1764633600000000000}`, wire.Up, wire.ErrMalformed, `"seq"`},
		{"request without what", `{"v":1,"kind":"request","id":"r","body":{}}`, wire.Up, wire.ErrMalformed, `"what" is required`},
		{"request of an unknown what", `{"v":1,"kind":"request","id":"r","body":{"what":"reboot-all"}}`, wire.Up, wire.ErrMalformed, `a leader answers "sync" and "job"`},
		{"negative ttl", `{"v":1,"kind":"ping","id":"p","ttl_ms":-1}`, wire.Down, wire.ErrMalformed, "ttl_ms"},
		{"too large", `{"v":1,"kind":"ping","id":"` + strings.Repeat("x", 100) + `"}`, wire.Down, wire.ErrTooLarge, "limit 64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.Decode("fleet/w-1/x", []byte(tc.payload), tc.dir, 64)
			if tc.want != wire.ErrTooLarge {
				_, err = wire.Decode("fleet/w-1/x", []byte(tc.payload), tc.dir, 0)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) || !strings.HasPrefix(err.Error(), "fleet/w-1/x: ") {
				t.Fatalf("error %q should name the topic and say %q", err, tc.mention)
			}
		})
	}
}

func TestEncodeRoundTripAndRefusal(t *testing.T) {
	cmd := wire.Envelope{ID: "c-7", Kind: wire.KindFirmware, Key: "fw", Seq: 2, TTLMs: 60000, Attempt: 1,
		Body: wire.Body(wire.Apply{Version: "2.1.0"})}
	b, err := wire.Encode(cmd)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wire.Decode(down, b, wire.Down, 0)
	if err != nil || got.ID != "c-7" || got.Seq != 2 || got.V != wire.Version {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	ack := wire.Ack(&got, wire.ResultOK)
	if ack.Kind != wire.KindAck || ack.Ref != "c-7" {
		t.Fatalf("Ack = %+v", ack)
	}
	if _, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Result: wire.ResultOK}); err == nil {
		t.Fatal("Encode sent an ack without ref")
	}
	if _, err := wire.Encode(wire.Envelope{Kind: "reboot", ID: "x"}); err == nil {
		t.Fatal("Encode sent an unknown kind")
	}
}

func TestTopics(t *testing.T) {
	var tp wire.Topics
	if got := tp.Down("w-1"); got != "fleet/w-1/down" {
		t.Fatalf("Down = %q", got)
	}
	w, ch, err := tp.Parse("fleet/w-1/up")
	if err != nil || w != "w-1" || ch != "up" {
		t.Fatalf("Parse = %q %q %v", w, ch, err)
	}
	for _, bad := range []string{"other/w-1/up", "fleet/w-1/up/x", "fleet/_leader/status", "fleet/w 1/up", "fleet/w-1/sideways", "fleet/w-1"} {
		if _, _, err := tp.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	custom := wire.Topics{Prefix: "plant7"}
	if custom.AllUp() != "plant7/+/up" || custom.LeaderStats() != "plant7/_leader/stats" {
		t.Fatal("custom prefix not used")
	}
	if got := custom.LeaderDeployReply("r1"); got != "plant7/_leader/deploy/r1" || custom.LeaderDeploy() != "plant7/_leader/deploy" {
		t.Fatalf("LeaderDeployReply = %q", got)
	}
	if _, _, err := tp.Parse(tp.LeaderDeploy()); err == nil {
		t.Error("Parse accepted the leader's deploy topic as a worker topic")
	}
}

func TestValidWorkerID(t *testing.T) {
	for _, ok := range []string{"w-1", "sensor_17", "A_b-9"} {
		if err := wire.ValidWorkerID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// "sensor.17": a broker that maps MQTT topics to AMQP routing keys
	// (RabbitMQ) turns the "." into a topic level.
	for _, bad := range []string{"", "_leader", "a/b", "a+b", "a#", strings.Repeat("x", 65), "ü", "sensor.17", "dev.site-a.1"} {
		if err := wire.ValidWorkerID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
