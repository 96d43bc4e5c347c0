package scenario

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// TestBoundsEnforced writes, for every row of the key table with a bound
// (Range, Enum, MaxLen), a value just outside it into an otherwise valid
// file, and wants the loader to refuse it naming the key; and the bound's
// own values, where the range includes them, to pass. A fleet.worker row
// is tried in a group too. A new row is tried without being named here,
// and a row whose bound nothing checks (not the bounds walk, not a rule
// of byRule) fails it.
func TestBoundsEnforced(t *testing.T) {
	rows := 0
	for _, tb := range keyTables {
		for i := range tb.Keys {
			k := &tb.Keys[i]
			if !k.bounded() {
				continue
			}
			rows++
			paths := []string{strings.ReplaceAll(k.Path, "[]", "[0]")}
			if rest, ok := strings.CutPrefix(k.Path, "fleet.worker."); ok {
				paths = append(paths, "fleet.groups[0]."+rest)
			}
			out, in := probeValues(k)
			if len(out) == 0 {
				t.Errorf("%s: a bound, but no value outside it to try", k.Path)
			}
			for _, path := range paths {
				for _, x := range out {
					if err := loadWith(t, path, x); !errorAt(err, path) {
						t.Errorf("%s: %v is outside its bound, but the loader does not refuse it there: %v", path, x, err)
					} else if !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), "want") && !strings.Contains(err.Error(), "valid") {
						t.Errorf("%s: %v: the message does not name the key and what is valid: %v", path, x, err)
					}
				}
				for _, x := range in {
					if err := loadWith(t, path, x); errorAt(err, path) {
						t.Errorf("%s: %v is inside its bound, but the loader refuses it: %v", path, x, err)
					}
				}
			}
		}
	}
	if rows < 40 {
		t.Fatalf("only %d rows with a bound: the table walk is broken", rows)
	}
}

// loadWith loads a valid file with v written at path.
func loadWith(t *testing.T, path string, v any) error {
	t.Helper()
	base, ok := baseFor(path)
	if !ok {
		t.Fatalf("%s: no file to write it in", path)
	}
	set(base, path, v)
	data, err := yaml.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse("bounds.yaml", data)
	return err
}

// probeValues returns values just outside k's bound, and the bound's own
// values where they are valid.
func probeValues(k *Key) (out, in []any) {
	r := k.Range
	if r.HasMin || r.HasMax {
		// An integer or a duration steps by one (nanosecond), in int64:
		// a float64 cannot add a nanosecond to a year.
		val := func(x float64, step int64) any {
			switch k.Type {
			case "duration":
				return time.Duration(int64(x) + step).String()
			case "integer":
				return int64(x) + step
			}
			return math.Nextafter(x, x+float64(step))
		}
		switch {
		case r.HasMin && r.Excl:
			out = append(out, val(r.Min, 0))
		case r.HasMin && !(k.Type == "duration" && r.Min == 0): // a negative duration does not decode
			out = append(out, val(r.Min, -1))
		}
		if r.HasMin && !r.Excl {
			in = append(in, val(r.Min, 0))
		}
		if r.HasMax {
			out = append(out, val(r.Max, 1))
			in = append(in, val(r.Max, 0))
		}
	}
	if k.Enum != nil {
		out = append(out, "bogus")
		if strings.HasSuffix(k.Path, "mailbox.policy") {
			for _, p := range policyWords() {
				if !slices.Contains(k.Enum, p) {
					out = append(out, p) // a policy, but not this mailbox's
				}
			}
		}
		for _, w := range k.Enum {
			in = append(in, w)
		}
	}
	if k.MaxLen > 0 {
		out = append(out, strings.Repeat("v", k.MaxLen+1), "two words")
		in = append(in, strings.Repeat("v", k.MaxLen))
	}
	return out, in
}

// TestBoundsMessages pins the text of the bounds walk's messages, one of
// each form and every Key.Want: what the hand-written checks said before
// the walk took them over.
func TestBoundsMessages(t *testing.T) {
	for _, c := range []struct {
		path string
		v    any
		want string
	}{
		{"duration", "0s", "duration: 0s is out of range: want above 0 and at most 8760h0m0s"},
		{"drain", "0s", "drain: 0s is out of range: want above 0 (left out, it is 1m0s)"},
		{"speed", 0, "speed: 0 is out of range: want above 0 and at most 10000 (simulated seconds per wall second)"},
		{"timeline[0].speed", 10001, "timeline[0].speed: 10001 is out of range: want above 0 and at most 10000 (simulated seconds per wall second)"},
		{"fleet.worker.loss", 2, "fleet.worker.loss: 2 is out of range: want a share from 0 (no loss) to 1 (every message lost), as in loss: 0.2"},
		{"fleet.groups[0].loss", -0.5, "fleet.groups[0].loss: -0.5 is out of range: want a share from 0 (no loss) to 1 (every message lost), as in loss: 0.2"},
		{"fleet.groups[0].count", 0, "fleet.groups[0].count: 0 is out of range: want 1 to 1000000"},
		{"fleet.groups[0].percent", 0, "fleet.groups[0].percent: 0 is out of range: want above 0 and at most 100"},
		{"fleet.worker.offline.every", "0s", "fleet.worker.offline.every: 0s is out of range: want above 0"},
		{"fleet.gateway_downlink.airtime", "0s", "fleet.gateway_downlink.airtime: 0s is out of range: want above 0"},
		{"fleet.worker.offline.mode", "away", `fleet.worker.offline.mode: "away" is not valid: want partition or disconnect`},
		{"leader.relay.interval", "2m", "leader.relay.interval: 2m0s is out of range: want above 0 and at most 1m0s"},
		{"leader.relay.limit.min", 0, "leader.relay.limit.min: 0 is out of range: want 1 to 100000"},
		{"leader.outbox.max_depth", -1, "leader.outbox.max_depth: -1 is out of range: want 0 to 1000000000"},
		{"timeline[0].heartbeat_storm.interval", "1ms", "timeline[0].heartbeat_storm.interval: 1ms is too small: want at least 10ms"},
		{"timeline[0].deploy.kind", "os", `timeline[0].deploy.kind: "os" is not valid: want firmware or config`},
		{"timeline[0].poison.count", 0, "timeline[0].poison.count: 0 is out of range: want 1 to 100000"},
	} {
		err := loadWith(t, c.path, c.v)
		if err == nil || !strings.Contains(err.Error(), ": "+c.want+"\n") {
			t.Errorf("%s: %v: got %v\nwant a line ending %q", c.path, c.v, err, c.want)
		}
	}
}
