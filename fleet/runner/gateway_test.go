package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// gatewayFile is a fleet of 10: a group of 3, a group of 20% (2) and the
// default group of 5; gw and groupGW are spliced in as written.
func gatewayFile(gw, groupGW string) string {
	return fmt.Sprintf(`name: gateways
duration: 1m
fleet:
  count: 10
  %s
  groups:
    - name: small
      count: 3
      %s
    - {name: fifth, percent: 20}
`, gw, groupGW)
}

// TestGatewaySizeValid loads every kind of bad gateway_size and checks
// that the error names the key at its place and says what is valid.
func TestGatewaySizeValid(t *testing.T) {
	for _, c := range []struct {
		name, gw, group string
		want            []string // each a line of the error
	}{
		{"fleet zero", "gateway_size: 0", "", []string{
			"test.yaml:5:17: fleet.gateway_size: 0 is out of range: want 1 to 10 workers per gateway; leave the key out to give every worker an MQTT session of its own"}},
		{"fleet negative", "gateway_size: -1", "", []string{
			"test.yaml:5:17: fleet.gateway_size: -1 is out of range: want 1 to 10 workers per gateway"}},
		{"fleet larger than the fleet", "gateway_size: 11", "", []string{
			"test.yaml:5:17: fleet.gateway_size: 11 is larger than the fleet (fleet.count 10): want 1 to 10 workers per gateway"}},
		{"fleet wrong type", "gateway_size: ten", "", []string{
			`test.yaml:5:17: fleet.gateway_size: "ten" is not valid here: want a whole number`}},
		{"fleet fraction", "gateway_size: 2.5", "", []string{
			`test.yaml:5:17: fleet.gateway_size: "2.5" is not valid here: want a whole number`}},
		{"fleet no value", "gateway_size:", "", []string{
			"fleet.gateway_size: no value: write a whole number, or leave the key out for the default"}},
		{"group zero", "", "gateway_size: 0", []string{
			"test.yaml:9:21: fleet.groups[0].gateway_size: 0 is out of range: want 1 to 3 workers per gateway; leave the key out for fleet.gateway_size"}},
		{"group negative", "", "gateway_size: -1", []string{
			"test.yaml:9:21: fleet.groups[0].gateway_size: -1 is out of range: want 1 to 3 workers per gateway"}},
		{"group larger than the group", "gateway_size: 2", "gateway_size: 4", []string{
			"test.yaml:9:21: fleet.groups[0].gateway_size: 4 is larger than the group (3 workers): want 1 to 3 workers per gateway"}},
		{"group wrong type", "", "gateway_size: [2]", []string{
			`test.yaml:9:21: fleet.groups[0].gateway_size: a list is not valid here: want a whole number`}},
		{"both wrong", "gateway_size: 0", "gateway_size: 4", []string{
			"test.yaml:5:17: fleet.gateway_size: 0 is out of range",
			"test.yaml:9:21: fleet.groups[0].gateway_size: 4 is larger than the group (3 workers)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse("test.yaml", []byte(gatewayFile(c.gw, c.group)))
			var es scenario.Errors
			if !errors.As(err, &es) {
				t.Fatalf("Parse = %v, want Errors", err)
			}
			if len(es) != len(c.want) {
				t.Errorf("%d errors, want %d:\n%v", len(es), len(c.want), err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks\n%s\ngot:\n%v", w, err)
				}
			}
		})
	}
}

// A group whose size is not known (its count is bad) still has its
// gateway_size checked for what can be checked.
func TestGatewaySizeBadGroup(t *testing.T) {
	_, err := scenario.Parse("test.yaml", []byte(`name: gateways
duration: 1m
fleet:
  count: 10
  groups:
    - {name: a, count: 0, gateway_size: 0}
`))
	want := "fleet.groups[0].gateway_size: 0 is out of range: want at least 1 worker per gateway"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse = %v\nwant %s", err, want)
	}
}

// gatewaysOf lays out s and returns each worker's gateway, "-" for none.
func gatewaysOf(t *testing.T, s *scenario.Scenario) []string {
	t.Helper()
	ws, err := s.Workers()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		if w.ID != scenario.WorkerID(i) {
			t.Errorf("worker %d has id %s", i, w.ID)
		}
		out[i] = w.Gateway
		if out[i] == "" {
			out[i] = "-"
		}
	}
	return out
}

func TestGatewayLayout(t *testing.T) {
	for _, c := range []struct {
		name, gw, group string
		want            string // the gateways' numbers per worker, "-" for none
		gateways, size  int
	}{
		// small (3), fifth (2), default (5); no gateway spans two groups.
		{"none", "", "", "- - - - - - - - - -", 0, 0},
		{"fleet 2", "gateway_size: 2", "", "0 0 1 2 2 3 3 4 4 5", 6, 2},
		{"fleet 4", "gateway_size: 4", "", "0 0 0 1 1 2 2 2 2 3", 4, 4},
		{"fleet 10", "gateway_size: 10", "", "0 0 0 1 1 2 2 2 2 2", 3, 5},
		{"fleet 1", "gateway_size: 1", "", "0 1 2 3 4 5 6 7 8 9", 10, 1},
		{"group only", "", "gateway_size: 2", "0 0 1 - - - - - - -", 2, 2},
		{"group over fleet", "gateway_size: 5", "gateway_size: 1", "0 1 2 3 3 4 4 4 4 4", 5, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := rtLoad(t, gatewayFile(c.gw, c.group))
			got := gatewaysOf(t, s)
			for i, g := range got {
				if g != "-" {
					got[i] = strings.TrimLeft(strings.TrimPrefix(g, "gw-"), "0")
					if got[i] == "" {
						got[i] = "0"
					}
				}
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("gateways %s, want %s", strings.Join(got, " "), c.want)
			}
			ws, _ := s.Workers()
			if n, size := scenario.GatewayShape(ws); n != c.gateways || size != c.size {
				t.Errorf("gatewayShape = %d gateways of at most %d, want %d of %d", n, size, c.gateways, c.size)
			}
		})
	}
}

func TestGatewayIDs(t *testing.T) {
	s := rtLoad(t, gatewayFile("gateway_size: 2", ""))
	ws, _ := s.Workers()
	if ws[0].Gateway != "gw-00000" || ws[9].Gateway != "gw-00005" {
		t.Errorf("gateways %s … %s, want gw-00000 … gw-00005", ws[0].Gateway, ws[9].Gateway)
	}
	if scenario.GatewayID(123456) != "gw-123456" {
		t.Errorf("GatewayID(123456) = %s", scenario.GatewayID(123456))
	}
}

func TestScaleGatewaySize(t *testing.T) {
	s := rtLoad(t, gatewayFile("gateway_size: 4", "gateway_size: 3"))
	for _, c := range []struct {
		n, fleet, group int
	}{
		{100, 4, 3}, // kept: more gateways, not larger ones
		{10, 4, 3},
		{5, 4, 2}, // the group scales to 2: clamped
		{3, 3, 1}, // the fleet scales below its gateway size: clamped
	} {
		sc, err := s.Scale(c.n)
		if err != nil {
			t.Fatalf("Scale(%d): %v", c.n, err)
		}
		if *sc.Fleet.GatewaySize != c.fleet || *sc.Fleet.Groups[0].GatewaySize != c.group {
			t.Errorf("Scale(%d): gateway sizes %d and %d, want %d and %d", c.n, *sc.Fleet.GatewaySize, *sc.Fleet.Groups[0].GatewaySize, c.fleet, c.group)
		}
		ws, err := sc.Workers()
		if err != nil {
			t.Fatal(err)
		}
		if _, size := scenario.GatewayShape(ws); size > max(c.fleet, c.group) {
			t.Errorf("Scale(%d): a gateway carries %d", c.n, size)
		}
	}
	if *s.Fleet.GatewaySize != 4 || *s.Fleet.Groups[0].GatewaySize != 3 {
		t.Error("Scale changed its receiver's gateway sizes")
	}
	// Without gateways, scaling adds none.
	sc, err := rtLoad(t, gatewayFile("", "")).Scale(50)
	if err != nil || sc.Fleet.GatewaySize != nil || sc.Fleet.Groups[0].GatewaySize != nil {
		t.Errorf("Scale(50) without gateways: %v, %+v", err, sc.Fleet)
	}
}

func TestWithGatewaySize(t *testing.T) {
	s := rtLoad(t, gatewayFile("", "gateway_size: 1"))
	sc, err := s.WithGatewaySize(4)
	if err != nil {
		t.Fatal(err)
	}
	// Every group fills gateways of 4, the group's own size included.
	if got := strings.Join(gatewaysOf(t, sc), " "); got != "gw-00000 gw-00000 gw-00000 gw-00001 gw-00001 gw-00002 gw-00002 gw-00002 gw-00002 gw-00003" {
		t.Errorf("gateways %s", got)
	}
	if s.Fleet.GatewaySize != nil || *s.Fleet.Groups[0].GatewaySize != 1 {
		t.Error("WithGatewaySize changed its receiver")
	}
	for _, n := range []int{0, -1, 11} {
		_, err := s.WithGatewaySize(n)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("gateway size %d: want 1 to 10 (fleet.count) workers per gateway", n)) {
			t.Errorf("WithGatewaySize(%d) = %v", n, err)
		}
	}
}

func TestSweepGatewaySize(t *testing.T) {
	_, err := scenario.Parse("test.yaml", []byte(gatewayFile("", "")+"sweep:\n  fleet.gateway_size: [2, 11]\n"))
	want := "test.yaml:12:27: sweep.fleet.gateway_size[1]: 11 is larger than the fleet (fleet.count 10)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Parse = %v\nwant %s", err, want)
	}
	s := rtLoad(t, gatewayFile("", "")+"sweep:\n  fleet.gateway_size: [2, 10]\n")
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{6, 3} {
		ws, _ := vs[i].Scenario.Workers()
		if n, _ := scenario.GatewayShape(ws); n != want {
			t.Errorf("variant %s: %d gateways, want %d", vs[i].Name, n, want)
		}
	}
}

// TestRunnerGateways: the runner hands each worker its gateway, and the
// Result says how many gateways the fleet used, without running anything.
func TestRunnerGateways(t *testing.T) {
	sc := rtLoad(t, gatewayFile("gateway_size: 4", ""))
	r, err := NewRunner(sc, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, ws := range r.specs {
		if got := r.workerConfig(ws, r.clk).Gateway; got != ws.Gateway || got == "" {
			t.Errorf("worker %d: Config.Gateway %q, want %q", i, got, ws.Gateway)
		}
	}
	res := r.result(&finalState{})
	if res.Fleet.Gateways != 4 || res.Fleet.GatewaySize != 4 {
		t.Errorf("fleet.gateways %d, fleet.gateway_size %d: want 4 and 4", res.Fleet.Gateways, res.Fleet.GatewaySize)
	}
	r, err = NewRunner(rtLoad(t, gatewayFile("", "")), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.workerConfig(r.specs[0], r.clk); c.Gateway != "" {
		t.Errorf("without gateway_size, Config.Gateway %q", c.Gateway)
	}
	if res := r.result(&finalState{}); res.Fleet.Gateways != 0 || res.Fleet.GatewaySize != 0 {
		t.Errorf("without gateway_size: %+v", res.Fleet)
	}
}

// TestRunBehindGateways plays a deploy to a fleet behind gateways on the
// real stack: every device takes it, nothing is lost, and the devices
// reached the broker through their gateways' sessions, not their own.
func TestRunBehindGateways(t *testing.T) {
	sc := rtFleet(20, 6)
	sc.Fleet.GatewaySize = rtPtr(5)
	sc.Timeline = []scenario.Event{{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0"}}}
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	if got := rep.Result.Workers.AtVersion["2.0.0"]; got != 20 {
		t.Errorf("%d of 20 devices at 2.0.0", got)
	}
	gws := r.pool.Gateways()
	if len(gws) != 4 {
		t.Fatalf("%d gateways, want 4", len(gws))
	}
	for _, g := range gws {
		if s := g.Stats(); s.Connects == 0 {
			t.Errorf("gateway %s never connected: %+v", g.ID(), s)
		}
	}
}
