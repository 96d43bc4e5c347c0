package scenario

import (
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
