package promexport

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/leader"
)

// hostileFleet is a source whose workers report versions nobody checked
// and whose deploys are many.
type hostileFleet struct {
	byVersion map[string]int
	deploys   []leader.DeployProgress
}

func (hostileFleet) Stats() leader.Stats                       { return leader.Stats{} }
func (h hostileFleet) Fleet() leader.FleetView                 { return leader.FleetView{ByVersion: h.byVersion} }
func (h hostileFleet) DeploySummaries() []leader.DeploySummary { return summaries(h.deploys) }

// TestLabelsBounded: the version labels /metrics exports are valid
// versions only, and only so many: 100 versions reported by workers (one
// of them a worker on 5 workers' worth of a common version) and two
// invalid ones give the 32 most common, (other) for the rest and
// (invalid) for the two; 300 deploys give the newest --deploy-history +
// 100, an invalid version among them as (invalid).
func TestLabelsBounded(t *testing.T) {
	h := hostileFleet{byVersion: map[string]int{"2.0.0": 50, "2.0.0\nfleetsim_fake 1": 1, strings.Repeat("9", 60_000): 2}}
	for i := range 99 {
		h.byVersion[fmt.Sprintf("x%03d", i)] = 1
	}
	for i := range 300 {
		h.deploys = append(h.deploys, leader.DeployProgress{Index: i, Version: fmt.Sprintf("v%d", i), Targets: 1})
	}
	h.deploys[299].Version = "bad version"
	body := scrape(t, h, Options{DeployHistory: 20})

	versions := grepLines(body, "fleetsim_workers_version{")
	if n := strings.Count(versions, "\n") + 1; n != maxVersionSeries+2 {
		t.Errorf("%d workers_version series, want %d (the bound, other, invalid):\n%s", n, maxVersionSeries+2, versions)
	}
	for _, want := range []string{
		`fleetsim_workers_version{version="2.0.0"} 50`,
		`fleetsim_workers_version{version="x000"} 1`,
		`fleetsim_workers_version{version="(other)"} 68`, // 99 - 31 kept
		`fleetsim_workers_version{version="(invalid)"} 3`,
	} {
		if !strings.Contains(versions, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, versions)
		}
	}
	if strings.Contains(body, "fleetsim_fake") || strings.Contains(body, "99999999999999999999") {
		t.Errorf("an invalid version reached /metrics")
	}

	targets := grepLines(body, "fleetsim_deploy_targets{")
	if n := strings.Count(targets, "\n") + 1; n != 20+DeploySeriesExtra {
		t.Errorf("%d deploy_targets series, want %d (--deploy-history + %d)", n, 20+DeploySeriesExtra, DeploySeriesExtra)
	}
	for _, want := range []string{`{deploy="180",version="v180"} 1`, `{deploy="299",version="(invalid)"} 1`} {
		if !strings.Contains(targets, want) {
			t.Errorf("/metrics lacks fleetsim_deploy_targets%s", want)
		}
	}
	if strings.Contains(targets, `deploy="179"`) {
		t.Errorf("/metrics exports deploy 179, older than the newest %d", 20+DeploySeriesExtra)
	}
}
