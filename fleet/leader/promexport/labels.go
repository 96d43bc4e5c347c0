package promexport

import (
	"cmp"
	"slices"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Label values on /metrics that come from outside the leader (the
// versions workers report and deploy requests name) are bounded: only
// values wire.ValidVersion accepts are exported as they are, and only so
// many of them; every series costs the scraper memory for as long as it
// keeps it.
const (
	// maxVersionSeries bounds fleetsim_workers_version: the versions
	// with the most workers, the rest summed as versionOther.
	maxVersionSeries = 32
	// DeploySeriesExtra is how many deploys beyond --deploy-history (the
	// older ones still in flight) fleetsim_deploy_* export at most.
	DeploySeriesExtra = 100
	// versionInvalid stands for a version wire.ValidVersion refuses (a
	// worker's heartbeat may say anything; an outbox file may hold a
	// deploy an older leader took unchecked), and versionOther for the
	// valid ones past the bound. Neither can be a valid version.
	versionInvalid = "(invalid)"
	versionOther   = "(other)"
)

// versionLabel is the label value for a version.
func versionLabel(v string) string {
	if wire.ValidVersion(v) != nil {
		return versionInvalid
	}
	return v
}

// versionCount is one fleetsim_workers_version series.
type versionCount struct {
	label string
	n     int
}

// versionSeries bounds the workers-per-version counts to at most max
// valid versions, those with the most workers (ties by version), plus
// versionOther for the other valid ones and versionInvalid for the
// invalid ones, each only when it counts any worker.
func versionSeries(byVersion map[string]int, max int) []versionCount {
	var valid []versionCount
	invalid, other := 0, 0
	for v, n := range byVersion {
		if versionLabel(v) == versionInvalid {
			invalid += n
			continue
		}
		valid = append(valid, versionCount{v, n})
	}
	slices.SortFunc(valid, func(a, b versionCount) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.label, b.label))
	})
	if len(valid) > max {
		for _, c := range valid[max:] {
			other += c.n
		}
		valid = valid[:max]
	}
	if other > 0 {
		valid = append(valid, versionCount{versionOther, other})
	}
	if invalid > 0 {
		valid = append(valid, versionCount{versionInvalid, invalid})
	}
	return valid
}
