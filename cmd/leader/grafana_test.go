package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// dashboardMetrics returns the metric names the queries of the Grafana
// dashboard in docs/grafana name, after checking that each panel has a
// title and a query.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../docs/grafana/fleetsim-leader.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type, Title string
			Targets     []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) < 10 {
		t.Fatalf("not a dashboard: title %q, uid %q, %d panels", d.Title, d.UID, len(d.Panels))
	}
	var names []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %q has no title or no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range regexp.MustCompile(`fleetsim_[a-z0-9_]+`).FindAllString(tg.Expr, -1) {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// TestGrafanaDashboard runs a leader with two workers, deploys to them,
// scrapes the leader's /metrics, and requires every metric the dashboard's
// queries name to be there: a metric renamed or dropped in metrics.go
// fails here, not on an operator's blank panel.
func TestGrafanaDashboard(t *testing.T) {
	names := dashboardMetrics(t)
	for _, want := range []string{"fleetsim_leader_mailbox_depth", "fleetsim_outbox_limiter_current_limit", "fleetsim_outbox_dead_letters",
		"fleetsim_workers_online", "fleetsim_workers_version", "fleetsim_deploy_delivered"} {
		if !slices.Contains(names, want) {
			t.Errorf("the dashboard has no panel on %s", want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var logs syncWriter
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--outbox", t.TempDir() + "/leader.db", "--durability", "none", "--heartbeat-interval", "100ms"}, io.Discard, &logs)
	}()
	addrs := map[string]string{}
	fleettest.Eventually(t, 10*time.Second, "the leader's listeners", func() error {
		for _, m := range regexp.MustCompile(`msg="(broker|metrics) listening" addr=(\S+)`).FindAllStringSubmatch(logs.String(), -1) {
			addrs[m[1]] = m[2]
		}
		return fleettest.Unless(len(addrs) == 2 && strings.Contains(logs.String(), "leader running"), "logs:\n%s", logs.String())
	})
	broker := "tcp://" + addrs["broker"]
	cfgs := []worker.Config{{ID: "w-0000", Heartbeat: 50 * time.Millisecond}, {ID: "w-0001", Heartbeat: 50 * time.Millisecond}}
	pool, err := worker.NewPool(cfgs, worker.MQTTDialer{Broker: broker}, worker.PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poolDone := make(chan error, 1)
	go func() { poolDone <- pool.Run(ctx) }()

	scrape := func() string {
		resp, err := http.Get("http://" + addrs["metrics"] + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	fleettest.Eventually(t, 20*time.Second, "both workers online", func() error {
		return fleettest.Unless(strings.Contains(scrape(), "fleetsim_workers_online 2\n"), "not yet")
	})
	var out bytes.Buffer
	if code := Main(ctx, []string{"deploy", "--broker", broker, "--version", "2.0.0", "--workers", "w-0000..w-0001"}, &out, &out); code != 0 {
		t.Fatalf("leader deploy: exit %d: %s", code, out.String())
	}
	var metrics string
	fleettest.Eventually(t, 20*time.Second, "the deploy delivered", func() error {
		metrics = scrape()
		return fleettest.Unless(strings.Contains(metrics, `fleetsim_deploy_delivered{deploy="0",version="2.0.0"} 2`) &&
			strings.Contains(metrics, `fleetsim_workers_version{version="2.0.0"} 2`), "not yet")
	})
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^` + n + `[ {]`).MatchString(metrics) {
			t.Errorf("the dashboard queries %s, which the running leader's /metrics does not have", n)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("leader run: exit %d", code)
	}
	<-poolDone
}
