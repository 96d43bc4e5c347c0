package scenario

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

const sweepFile = `
name: policies
duration: 1m
fleet:
  count: 10
  groups:
    - name: small
      count: 2
      mailbox: {policy: coalesce}
leader:
  mailbox: {capacity: 50}
sweep:
  leader.mailbox.policy: [reject, drop-oldest, unbounded]
  fleet.worker.mailbox.capacity: [4, 64]
expect:
  - lost == 0
`

func TestVariants(t *testing.T) {
	s := loadString(t, sweepFile)
	if len(s.Sweep) != 2 || s.Sweep[0].Path != "leader.mailbox.policy" || s.Sweep[1].Path != "fleet.worker.mailbox.capacity" {
		t.Fatalf("Sweep = %+v", s.Sweep)
	}
	if got := s.Sweep[1].Values; len(got) != 2 || got[0] != int64(4) || got[1] != int64(64) {
		t.Errorf("capacity values = %#v, want int64 4 and 64", got)
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{
		"leader.mailbox.policy=reject,fleet.worker.mailbox.capacity=4",
		"leader.mailbox.policy=reject,fleet.worker.mailbox.capacity=64",
		"leader.mailbox.policy=drop-oldest,fleet.worker.mailbox.capacity=4",
		"leader.mailbox.policy=drop-oldest,fleet.worker.mailbox.capacity=64",
		"leader.mailbox.policy=unbounded,fleet.worker.mailbox.capacity=4",
		"leader.mailbox.policy=unbounded,fleet.worker.mailbox.capacity=64",
	}
	if len(vs) != len(wantNames) {
		t.Fatalf("%d variants, want %d", len(vs), len(wantNames))
	}
	policies := []mailbox.Policy{mailbox.Reject, mailbox.DropOldest, mailbox.Unbounded}
	for i, v := range vs {
		if v.Name != wantNames[i] {
			t.Errorf("variant %d: Name %q, want %q", i, v.Name, wantNames[i])
		}
		sc := v.Scenario
		wantCap := []int{4, 64}[i%2]
		wantParams := map[string]string{"leader.mailbox.policy": policies[i/2].String(), "fleet.worker.mailbox.capacity": []string{"4", "64"}[i%2]}
		if !maps.Equal(v.Params, wantParams) {
			t.Errorf("variant %d: Params %v, want %v", i, v.Params, wantParams)
		}
		if sc.Sweep != nil {
			t.Errorf("variant %d has a sweep of its own", i)
		}
		if got := sc.Leader.Mailbox; got.Policy != policies[i/2] || got.Capacity != 50 {
			t.Errorf("variant %d: leader mailbox %+v, want %v with capacity 50 kept", i, got, policies[i/2])
		}
		if got := sc.Fleet.Worker.Mailbox.Capacity; got != wantCap {
			t.Errorf("variant %d: worker capacity %d, want %d", i, got, wantCap)
		}
		// The group sets its policy only: it inherits the swept capacity.
		if g := sc.Fleet.Groups[0].Mailbox; g.Capacity != wantCap || g.Policy != mailbox.Coalesce {
			t.Errorf("variant %d: group mailbox %+v, want capacity %d, coalesce", i, g, wantCap)
		}
		if len(sc.checks) != 1 || sc.Expect[0].Name != "lost == 0" {
			t.Errorf("variant %d: expectations not compiled: %+v", i, sc.Expect)
		}
	}
	// The base scenario is untouched.
	if s.Leader.Mailbox.Policy != mailbox.Reject || s.Fleet.Worker.Mailbox.Capacity != 16 {
		t.Errorf("base changed: leader %+v, worker %+v", s.Leader.Mailbox, *s.Fleet.Worker.Mailbox)
	}
}

func TestVariantsNoSweep(t *testing.T) {
	s := loadString(t, "name: one\nduration: 1m\nfleet: {count: 1}\n")
	vs, err := s.Variants()
	if err != nil || len(vs) != 1 || vs[0].Name != "" || vs[0].Params != nil || vs[0].Scenario != s {
		t.Fatalf("Variants = %+v, %v; want one variant, s itself", vs, err)
	}
}

// A swept path the file does not write, below structs it leaves out, and a
// value that replaces a whole mapping.
func TestVariantsAbsentPathsAndMappings(t *testing.T) {
	s := loadString(t, `
name: deep
duration: 1m
fleet:
  count: 4
  worker:
    reconnect: {policy: immediate, base: 2s}
sweep:
  fleet.worker.reconnect: [{policy: backoff}]
  fleet.worker.offline.every: [10m]
  speed: [2.5]
`[1:]+"  fleet.worker.offline.for: [1m]\n")
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	sc := vs[0].Scenario
	// The swept mapping replaces the file's: base falls back to the default.
	if r := *sc.Fleet.Worker.Reconnect; r != (ReconnectSpec{Policy: "backoff", Base: Duration(1e9), Cap: Duration(60e9)}) {
		t.Errorf("reconnect = %+v", r)
	}
	if o := sc.Fleet.Worker.Offline; o == nil || o.Every != Duration(600e9) || o.Mode != "partition" {
		t.Errorf("offline = %+v", o)
	}
	if sc.Speed != 2.5 {
		t.Errorf("speed = %v", sc.Speed)
	}
	if vs[0].Params["fleet.worker.reconnect"] != "{policy: backoff}" {
		t.Errorf("params = %v", vs[0].Params)
	}
}

// A sweep in a Scenario built in code takes Values.
func TestVariantsInCode(t *testing.T) {
	s := &Scenario{Name: "code", Duration: Duration(60e9), Fleet: Fleet{Count: 3},
		Sweep: []SweepParam{{Path: "leader.outbox.partitions", Values: []any{1, 8}}}}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[1].Scenario.Leader.Outbox.Partitions != 8 || vs[1].Name != "leader.outbox.partitions=8" {
		t.Fatalf("variants = %+v", vs)
	}
	s.Sweep[0].Values = []any{1000}
	_, err = s.Variants()
	var es Errors
	if !errors.As(err, &es) || !strings.Contains(err.Error(), "sweep.leader.outbox.partitions[0]: 1000 is out of range: want 1 to 256") {
		t.Fatalf("err = %v", err)
	}
}

// Variants follow a Scale of the base.
func TestVariantsAfterScale(t *testing.T) {
	s := loadString(t, sweepFile)
	big, err := s.Scale(100)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := big.Variants()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Scenario.Fleet.Count != 100 || v.Scenario.Fleet.Groups[0].Count != 20 {
			t.Errorf("%s: count %d, group %d; want 100 and 20", v.Name, v.Scenario.Fleet.Count, v.Scenario.Fleet.Groups[0].Count)
		}
	}
}

func TestSweepTooLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: big\nduration: 1m\nfleet: {count: 1}\nsweep:\n")
	for _, p := range []string{"seed", "speed", "leader.relay.batch", "leader.outbox.max_attempts"} {
		b.WriteString("  " + p + ": [1, 2, 3, 4, 5, 6]\n")
	}
	_, err := Parse("big.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "big.yaml:4:1: sweep: the sweep makes more than 1000 variants") {
		t.Fatalf("err = %v", err)
	}
}
