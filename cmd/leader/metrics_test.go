package main

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
	"github.com/fleetsim/fleetsim/fleet/leader/promexport"
)

// deploysOnly is a source with stats, no fleet and the given deploys.
type deploysOnly []leader.DeployProgress

func (deploysOnly) Stats() leader.Stats     { return leader.Stats{RepliesDroppedFull: 3, AcksForged: 2} }
func (deploysOnly) Fleet() leader.FleetView { return leader.FleetView{} }
func (d deploysOnly) DeploySummaries() []leader.DeploySummary {
	out := make([]leader.DeploySummary, len(d))
	for i, p := range d {
		out[i] = p.Summary()
	}
	return out
}

// scrape returns what /metrics serves for src.
func scrape(t *testing.T, src promexport.Source, ctl *control.Server, deployHistory int) string {
	t.Helper()
	w := httptest.NewRecorder()
	metricsHandler(src, ctl, deployHistory, func() broker.Stats { return broker.Stats{TCPConnections: 4} }).
		ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// grepLines returns body's lines that contain s.
func grepLines(body, s string) string {
	var out []string
	for l := range strings.SplitSeq(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetricsWiring: /metrics serves the leader's series, the control
// topic's request counts, the embedded broker's clients, the newest
// --deploy-history + promexport.DeploySeriesExtra deploys, and the Go
// runtime's and the process's metrics.
func TestMetricsWiring(t *testing.T) {
	ctl := newControl(t)
	ctl.Serve(context.Background(), []byte(`{"id":"ok","version":"2.0.0","workers":["w-1"]}`))
	var deploys deploysOnly
	for i := range 3 + promexport.DeploySeriesExtra {
		deploys = append(deploys, leader.DeployProgress{Index: i, Version: "2.0.0", Targets: 1})
	}
	body := scrape(t, deploys, ctl, 2)
	for _, want := range []string{
		`fleetsim_leader_deploy_requests_total{result="started"} 1`,
		"fleetsim_leader_acks_forged_total 2",
		"fleetsim_broker_tcp_connections 4",
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(body, "\n"+want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if n := strings.Count(body, "\nfleetsim_deploy_targets{"); n != 2+promexport.DeploySeriesExtra {
		t.Errorf("%d deploy_targets series, want %d (--deploy-history 2 + %d)", n, 2+promexport.DeploySeriesExtra, promexport.DeploySeriesExtra)
	}
}
