package promexport

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
)

// scrape returns what /metrics serves for a Collector of src.
func scrape(t *testing.T, src Source, o Options) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(src, o))
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 {
		t.Fatalf("/metrics: %d %s", w.Code, w.Body)
	}
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

// deploysOnly is a source with stats, no fleet and the given deploys.
type deploysOnly []leader.DeployProgress

func (deploysOnly) Stats() leader.Stats                       { return leader.Stats{RepliesDroppedFull: 3, AcksForged: 2} }
func (deploysOnly) Fleet() leader.FleetView                   { return leader.FleetView{} }
func (d deploysOnly) DeploySummaries() []leader.DeploySummary { return summaries(d) }

// summaries sums each deploy's waves, as the leader's DeploySummaries.
func summaries(ds []leader.DeployProgress) []leader.DeploySummary {
	out := make([]leader.DeploySummary, len(ds))
	for i, d := range ds {
		out[i] = d.Summary()
	}
	return out
}

// TestDeployMetrics: the per-deploy series are the deploys the leader
// keeps, labelled by their index, which is stable across a restart and
// across the deploys the leader has forgotten; the oldest forgotten
// leave no series behind.
func TestDeployMetrics(t *testing.T) {
	src := deploysOnly{
		{Index: 7, Version: "2.0.0", Targets: 3, Waves: []leader.WaveProgress{{Targets: 3, Delivered: 2, Rejected: 1}}},
		{Index: 9, Version: "2.1.0", Targets: 1, Waves: []leader.WaveProgress{{Targets: 1, Pending: 1}}},
	}
	body := scrape(t, src, Options{DeployHistory: 20})
	for _, want := range []string{
		`fleetsim_deploy_delivered{deploy="7",version="2.0.0"} 2`,
		`fleetsim_deploy_rejected{deploy="7",version="2.0.0"} 1`,
		`fleetsim_deploy_targets{deploy="9",version="2.1.0"} 1`,
		`fleetsim_leader_replies_dropped_total{reason="queue_full"} 3`,
		`fleetsim_leader_acks_forged_total 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if n := strings.Count(body, "\nfleetsim_deploy_targets{"); n != 2 {
		t.Errorf("%d deploy_targets series, want 2 (one per deploy kept)", n)
	}
}

// brokerDown is a source whose leader has lost its broker twice, and is
// without it now.
type brokerDown struct{ deploysOnly }

func (brokerDown) Stats() leader.Stats {
	return leader.Stats{Broker: leader.BrokerStats{Connected: false, Disconnects: 3, Reconnects: 2, Downtime: 1500 * time.Millisecond}}
}

// TestBrokerMetrics: /metrics says whether the leader's session with its
// broker is up, how often it was dialed again and how long the leader
// went without it.
func TestBrokerMetrics(t *testing.T) {
	body := scrape(t, brokerDown{}, Options{DeployHistory: 20})
	for _, want := range []string{
		"fleetsim_leader_broker_connected 0",
		"fleetsim_leader_broker_reconnects_total 2",
		"fleetsim_leader_broker_disconnected_seconds_total 1.5",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// gatewaysSource is a source whose leader follows gateways.
type gatewaysSource struct{ deploysOnly }

func (gatewaysSource) Stats() leader.Stats {
	return leader.Stats{GatewaysOnline: 3, GatewayOfflines: 2, GatewayDevicesOffline: 40, StatusStale: 5}
}

// TestGatewayMetrics: /metrics says how many gateways are online, how
// many died, how many devices their deaths took offline, and how many
// statuses were ignored as stale.
func TestGatewayMetrics(t *testing.T) {
	body := scrape(t, gatewaysSource{}, Options{DeployHistory: 20})
	for _, want := range []string{
		"fleetsim_leader_gateways_online 3",
		"fleetsim_leader_gateway_offlines_total 2",
		"fleetsim_leader_gateway_devices_offline_total 40",
		"fleetsim_leader_status_stale_total 5",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestRequestsAndBroker: the deploy requests' counts and the embedded
// broker's clients are exported when their sources are given, and absent
// when they are not.
func TestRequestsAndBroker(t *testing.T) {
	body := scrape(t, deploysOnly{}, Options{
		Requests: func() control.Counts { return control.Counts{Refused: 2, AnswersLost: 1} },
		Broker:   func() broker.Stats { return broker.Stats{TCPConnections: 7, PartialBytes: 300} },
	})
	for _, want := range []string{
		`fleetsim_leader_deploy_requests_total{result="refused"} 2`,
		`fleetsim_leader_deploy_answers_total{via="lost"} 1`,
		"fleetsim_broker_tcp_connections 7",
		"fleetsim_broker_partial_bytes 300",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	body = scrape(t, deploysOnly{}, Options{})
	for _, absent := range []string{"fleetsim_leader_deploy_requests_total", "fleetsim_broker_tcp_connections"} {
		if strings.Contains(body, absent) {
			t.Errorf("/metrics has %s without its source", absent)
		}
	}
}
