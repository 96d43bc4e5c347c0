package expect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/expect"
)

// Every name of Result can be read by a check, with its type: a check over
// each leaf compiles.
func TestEveryNameCompiles(t *testing.T) {
	for _, p := range expect.Names() {
		if strings.Contains(p, "[]") {
			continue
		}
		typ := expect.NameType(p)
		var check string
		switch typ.Kind().String() {
		case "struct", "slice":
			continue
		case "map":
			check = `len(` + p + `) >= 0`
		case "string":
			check = p + ` != ""`
		case "bool":
			check = p
		default:
			check = p + ` >= 0`
		}
		c, err := expect.Compile(check)
		if err != nil {
			t.Errorf("%s: %v", check, err)
			continue
		}
		if want := typ == expect.SecondsType; c.Timing != want {
			t.Errorf("%s: timing = %v, want %v", check, c.Timing, want)
		}
	}
}

// A misspelt name gets the valid names next to it, wherever it is.
func TestCheckSuggestions(t *testing.T) {
	for check, want := range map[string]string{
		"lsot == 0":                       `unknown name "lsot" (did you mean lost?); the names are lost, run, fleet,`,
		"leader.mailbox.wait.p98 < 1":     `leader.mailbox.wait has no "p98" (did you mean p90 or p99?); it has p50, p90, p99, max, mean`,
		`deploys[0].versoin == "x"`:       `deploys[] has no "versoin" (did you mean version?); it has version, targets,`,
		`all(deploys, .versoin == "2")`:   `deploys[] has no "versoin" (did you mean version?)`,
		"relay.limit.minimum < 3":         `relay.limit has no "minimum" (did you mean min?)`,
		"heartbeats.coalesced_ration > 0": `heartbeats has no "coalesced_ration" (did you mean coalesced_ratio?)`,
		"run.kept_up == 1":                "invalid operation: == (mismatched types bool and int)",
		"lost":                            "expected bool, but got int64: a check must be true or false, as in lost == 0",
	} {
		_, err := expect.Compile(check)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", check, err, want)
		}
	}
}

// A duration written as Go writes one ("1s") is not a number in a check:
// the error says that durations are seconds and what to write, at the
// literal's column; a number followed by another word is left to expr.
func TestCheckDurationHint(t *testing.T) {
	for _, c := range []struct {
		check, want string
		col         int
	}{
		{"leader.mailbox.wait.p99 < 1s", "write 1, not 1s: durations in checks are seconds", 26},
		{"leader.mailbox.wait.p99<500ms && lost == 0", "write 0.5, not 500ms: durations in checks are seconds", 24},
		{"deploys[0].duration < 1m30s", "write 90, not 1m30s: durations in checks are seconds", 22},
		{"deploys[0].duration < 2 m", "write 120, not 2 m: durations in checks are seconds", 22},
		{"lost == 0 &&\n  heartbeats.age.max <= 1.5s", "write 1.5, not 1.5s: durations in checks are seconds", 24},
		{"lost < 1x", `bad number syntax: "1x"`, -1},
		{"lost < 1 and lost s", "", -1},
	} {
		_, err := expect.Compile(c.check)
		var ce *expect.Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: %v, want an *expect.Error", c.check, err)
			continue
		}
		if c.want == "" {
			if strings.Contains(ce.Msg, "durations") {
				t.Errorf("%q: %s: no duration in it", c.check, ce.Msg)
			}
			continue
		}
		if ce.Msg != c.want || (c.col >= 0 && ce.Col != c.col) {
			t.Errorf("%q: %d:%d %s\nwant col %d: %s", c.check, ce.Line, ce.Col, ce.Msg, c.col, c.want)
		}
	}
}
