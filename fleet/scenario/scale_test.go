package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const scaleFile = `
name: scaled
duration: 10m
fleet:
  count: 1000
  groups:
    - {name: config-servers, count: 3}
    - {name: edge, count: 500}
    - {name: tenth, percent: 10}
timeline:
  - at: 1m
    partition: {workers: 0-499}
  - at: 2m
    crash: {workers: 900-999}
  - at: 3m
    deploy: {version: 2.0.0, wave_size: 100, workers: 10%}
  - at: 4m
    heal: {workers: group:edge}
  - at: 5m
    disconnect: {workers: [w-00005]}
expect:
  - workers.at_version["2.0.0"] == fleet.count / 10
`

func TestScale(t *testing.T) {
	s := loadString(t, scaleFile)
	for _, c := range []struct {
		n                  int
		groups             []int
		partition, crash   string
		wave               int
		deployPct, healGrp string
	}{
		{n: 100, groups: []int{1, 50, 0}, partition: "0-49", crash: "90-99", wave: 10},
		{n: 10, groups: []int{1, 5, 0}, partition: "0-4", crash: "9-9", wave: 1},
		{n: 5000, groups: []int{15, 2500, 0}, partition: "0-2499", crash: "4500-4999", wave: 500},
	} {
		sc, err := s.Scale(c.n)
		if err != nil {
			t.Fatalf("Scale(%d): %v", c.n, err)
		}
		if sc.Fleet.Count != c.n {
			t.Errorf("Scale(%d): count %d", c.n, sc.Fleet.Count)
		}
		for i, g := range sc.Fleet.Groups {
			if g.Count != c.groups[i] {
				t.Errorf("Scale(%d): group %s count %d, want %d", c.n, g.Name, g.Count, c.groups[i])
			}
		}
		if sc.Fleet.Groups[2].Percent != 10 {
			t.Errorf("Scale(%d): percent group changed: %+v", c.n, sc.Fleet.Groups[2])
		}
		if got := sc.Timeline[0].Partition.Workers; got.Text != c.partition || got.String() != c.partition {
			t.Errorf("Scale(%d): partition %+v, want %s", c.n, got, c.partition)
		}
		if got := sc.Timeline[1].Crash.Workers.Text; got != c.crash {
			t.Errorf("Scale(%d): crash %s, want %s", c.n, got, c.crash)
		}
		if d := sc.Timeline[2].Deploy; d.WaveSize != c.wave || d.Workers.Percent != 10 {
			t.Errorf("Scale(%d): deploy %+v, want wave size %d, 10%%", c.n, d, c.wave)
		}
		if sc.Timeline[3].Heal.Workers.Group != "edge" {
			t.Errorf("Scale(%d): heal %+v", c.n, sc.Timeline[3].Heal.Workers)
		}
		// The layout and every selector work on the scaled fleet.
		ws, err := sc.Workers()
		if err != nil || len(ws) != c.n {
			t.Fatalf("Scale(%d): Workers: %d, %v", c.n, len(ws), err)
		}
		for _, ev := range sc.Timeline {
			for _, sel := range ev.selectors() {
				if _, err := sel.Select(ws); err != nil {
					t.Errorf("Scale(%d): %v", c.n, err)
				}
			}
		}
		if !reflect.DeepEqual(sc.Expect, s.Expect) || len(sc.checks) != 1 {
			t.Errorf("Scale(%d): expectations changed", c.n)
		}
	}
	// s itself is unchanged.
	if s.Fleet.Count != 1000 || s.Timeline[0].Partition.Workers.Text != "0-499" || s.Timeline[2].Deploy.WaveSize != 100 {
		t.Errorf("Scale changed its receiver")
	}
}

func TestScaleErrors(t *testing.T) {
	s := loadString(t, scaleFile)
	_, err := s.Scale(5)
	want := `test.yaml:20:27: timeline[4].disconnect.workers: no worker "w-00005" in this fleet: its ids run w-00000 to w-00004 (with --workers 5)`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Scale(5) = %v\nwant %s", err, want)
	}
	_, err = s.Scale(2) // three groups of at least one worker each, or the percent one's
	if err == nil || !strings.Contains(err.Error(), "fleet.groups: the groups hold 3 workers but fleet.count is 2") {
		t.Errorf("Scale(2) = %v", err)
	}
	for _, n := range []int{0, -1, MaxWorkers + 1} {
		if _, err := s.Scale(n); err == nil || !strings.Contains(err.Error(), "want 1 to 1000000") {
			t.Errorf("Scale(%d) = %v", n, err)
		}
	}
}

func TestClone(t *testing.T) {
	s, err := Load("testdata/good/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	if !reflect.DeepEqual(c, s) {
		t.Fatal("clone differs")
	}
	*c.Fleet.Worker.Mailbox = MailboxSpec{}
	c.Fleet.Groups[0].Name = "x"
	c.Timeline[2].Crash.Workers.IDs[0] = "w-09999"
	c.Expect[0].Check = "x"
	*c.Fleet.Worker.Version = "9"
	if s.Fleet.Worker.Mailbox.Capacity != 8 || s.Fleet.Groups[0].Name != "config-servers" ||
		s.Timeline[2].Crash.Workers.IDs[0] != "w-00001" || s.Expect[0].Check != "lost == 0" || *s.Fleet.Worker.Version != "1.0.0" {
		t.Error("changing the clone changed the original")
	}
}

// TestScaleRange: a size outside scale.min to scale.max is refused,
// placed at the bound it passes, naming the range and the size; the
// bounds are included.
func TestScaleRange(t *testing.T) {
	s := loadString(t, `
name: ranged
duration: 1m
# Holds from 200 workers.
scale: {min: 200, max: 5000}
fleet:
  count: 300
`)
	for _, n := range []int{200, 300, 5000} {
		if sc, err := s.Scale(n); err != nil || sc.Fleet.Count != n {
			t.Errorf("Scale(%d): %v", n, err)
		}
	}
	for _, n := range []int{1, 199, 5001} {
		_, err := s.Scale(n)
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Fatalf("Scale(%d) = %v, want one placed error", n, err)
		}
		want := fmt.Sprintf("test.yaml:5:14: scale.min: the scenario holds at 200 to 5000 workers, not %d (--workers)", n)
		if n > 5000 {
			want = fmt.Sprintf("test.yaml:5:24: scale.max: the scenario holds at 200 to 5000 workers, not %d (--workers)", n)
		}
		if got := es[0].Error(); !strings.HasPrefix(got, want) {
			t.Errorf("Scale(%d) = %s\nwant %s...", n, got, want)
		}
	}
	// Left out, the range is every size.
	if _, err := loadString(t, "name: any\nduration: 1m\nfleet: {count: 300}\n").Scale(1); err != nil {
		t.Errorf("without scale: Scale(1): %v", err)
	}
}

const proportionalFile = `
name: proportional
duration: 1m
scale: {leader: %s}
fleet:
  count: 300
leader:
  mailbox: {capacity: 200}
  service: "lognormal(10ms, 0.5)"
timeline:
  - at: 10s
    set_leader: {capacity: 5, service: "uniform(30ms, 60ms)"}
  - at: 20s
    set_leader: {service: 3ms}
`

// TestScaleLeader: a proportional leader grows with the fleet — capacity
// in proportion (rounded, at least 1), service time in inverse proportion
// keeping its shape, set_leader's values too — and a fixed one stays as
// written.
func TestScaleLeader(t *testing.T) {
	prop := loadString(t, fmt.Sprintf(proportionalFile, "proportional"))
	for _, c := range []struct {
		n                 int
		capacity, setCap  int
		service, setServe string
		later             string
	}{
		{n: 300, capacity: 200, setCap: 5, service: "lognormal(10ms, 0.5)", setServe: "uniform(30ms, 60ms)", later: "3ms"},
		{n: 3000, capacity: 2000, setCap: 50, service: "lognormal(1ms, 0.5)", setServe: "uniform(3ms, 6ms)", later: "300µs"},
		{n: 50, capacity: 33, setCap: 1, service: "lognormal(60ms, 0.5)", setServe: "uniform(180ms, 360ms)", later: "18ms"},
	} {
		sc, err := prop.Scale(c.n)
		if err != nil {
			t.Fatalf("Scale(%d): %v", c.n, err)
		}
		l, set, later := sc.Leader, sc.Timeline[0].SetLeader, sc.Timeline[1].SetLeader
		if l.Mailbox.Capacity != c.capacity || l.Service.String() != c.service ||
			*set.Capacity != c.setCap || set.Service.String() != c.setServe ||
			later.Capacity != nil || later.Service.String() != c.later {
			t.Errorf("Scale(%d): leader %d %v, set_leader %d %v, then %v %v; want %d %s, %d %s, then nil %s", c.n,
				l.Mailbox.Capacity, l.Service, *set.Capacity, set.Service, later.Capacity, later.Service,
				c.capacity, c.service, c.setCap, c.setServe, c.later)
		}
	}
	// Scaled twice, it grows from where the first left it.
	twice, err := prop.Scale(600)
	if err == nil {
		twice, err = twice.Scale(3000)
	}
	if err != nil || twice.Leader.Mailbox.Capacity != 2000 || twice.Leader.Service.String() != "lognormal(1ms, 0.5)" {
		t.Errorf("Scale(600).Scale(3000): %v, %+v", err, twice.Leader)
	}
	// Growth past the largest capacity is an error at the key.
	huge := loadString(t, "name: huge\nduration: 1m\nscale: {leader: proportional}\nfleet: {count: 1}\nleader: {mailbox: {capacity: 5000000}}\n")
	if _, err := huge.Scale(3); err == nil || !strings.Contains(err.Error(), "test.yaml:5:30: leader.mailbox.capacity: 15000000 is out of range: want 1 to 10000000 (with --workers 3)") {
		t.Errorf("Scale(3) of a capacity of 5,000,000: %v", err)
	}
	fixed := loadString(t, fmt.Sprintf(proportionalFile, "fixed"))
	sc, err := fixed.Scale(3000)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Leader.Mailbox.Capacity != 200 || sc.Leader.Service.String() != "lognormal(10ms, 0.5)" || *sc.Timeline[0].SetLeader.Capacity != 5 {
		t.Errorf("a fixed leader changed: %+v, %+v", sc.Leader, sc.Timeline[0].SetLeader)
	}
}

// TestScaleLeaderSweep: leader values a sweep sets come as written and are
// grown as the file's are, in every variant.
func TestScaleLeaderSweep(t *testing.T) {
	s := loadString(t, fmt.Sprintf(proportionalFile, "proportional")+`
sweep:
  leader.service: [10ms, 20ms]
  leader.mailbox: [{capacity: 100}, {capacity: 400, policy: drop-oldest}]
`)
	sc, err := s.Scale(3000)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		l := v.Scenario.Leader
		got = append(got, fmt.Sprintf("%v/%d", l.Service, l.Mailbox.Capacity))
	}
	want := []string{"1ms/1000", "1ms/4000", "2ms/1000", "2ms/4000"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("variants at 3000 workers: %v, want %v", got, want)
	}
	// Unscaled, the variants are as written.
	vs, err = s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	if l := vs[3].Scenario.Leader; l.Service.String() != "20ms" || l.Mailbox.Capacity != 400 {
		t.Errorf("unscaled variant: %+v", l)
	}
}
