package main

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestGatewaySizeRefused: a gateway size that is not 1 to the (scaled)
// fleet's size is exit code 2 naming the flag and what would be valid,
// before anything runs.
func TestGatewaySizeRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "no-such-file.yaml", "--gateway-size", "0"}, "--gateway-size 0: want 1 to fleet.count workers per gateway"},
		{[]string{"check", "no-such-file.yaml", "--gateway-size", "-3"}, "--gateway-size -3: want 1 to fleet.count workers per gateway"},
		{[]string{"run", "no-such-file.yaml", "--gateway-size", "ten"}, `invalid argument "ten" for "--gateway-size" flag: want a whole number`},
		{[]string{"run", "testdata/tiny.yaml", "--gateway-size", "21"}, "--gateway-size 21: testdata/tiny.yaml has 20 workers: want 1 to 20 workers per gateway"},
		{[]string{"check", "testdata/tiny.yaml", "--workers", "10", "--gateway-size", "11"}, "--gateway-size 11: testdata/tiny.yaml has 10 workers (with --workers): want 1 to 10 workers per gateway"},
	} {
		code, stdout, stderr := sim(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "no-such-file") {
			t.Errorf("sim %s: exit %d, stderr:\n%s\nwant exit 2 saying %q (and nothing about the file)", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if strings.Contains(stdout, "PASS") || strings.Contains(stdout, "FAIL") {
			t.Errorf("sim %s ran:\n%s", strings.Join(tc.args, " "), stdout)
		}
	}
}

// TestGatewaySizeFlag: the flag reaches the scenario (every group, after
// --workers), and its help says what it does.
func TestGatewaySizeFlag(t *testing.T) {
	var f runFlags
	if err := f.gateway.Set("4"); err != nil {
		t.Fatal(err)
	}
	f.workers = 10
	sc, err := scenario.Parse("gw.yaml", []byte(`name: gw
duration: 1m
fleet:
  count: 20
  groups:
    - {name: small, count: 4, gateway_size: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fleet.Count != 10 || got.Fleet.GatewaySize == nil || *got.Fleet.GatewaySize != 4 || got.Fleet.Groups[0].GatewaySize != nil {
		t.Errorf("prepared fleet %+v, want 10 workers behind gateways of 4 in every group", got.Fleet)
	}
	ws, err := got.Workers()
	if err != nil || ws[0].Gateway != "gw-00000" || ws[1].Gateway != "gw-00000" || ws[2].Gateway != "gw-00001" {
		t.Errorf("layout: %v %+v", err, ws[:3])
	}
	for _, cmd := range []string{"run", "check"} {
		_, stdout, _ := sim(t, cmd, "--help")
		if !strings.Contains(stdout, "--gateway-size") {
			t.Errorf("sim %s --help does not mention --gateway-size", cmd)
		}
	}
}
