package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
)

// runName names a run in a message: scenario, or scenario [variant].
func runName(run report.Run) string {
	if run.Report.Variant == "" {
		return run.Report.Scenario
	}
	return run.Report.Scenario + " [" + run.Report.Variant + "]"
}

// verdict is the command's error: nil when no run failed a gate, else exit
// code 4 naming the runs that failed and those not judged (whose every
// check was not judged: they have shown nothing, and do not pass). A run
// stopped before its end was not judged either way, and is not named.
func verdict(runs []report.Run) error {
	var failed, unjudged []string
	for _, run := range runs {
		switch run.Verdict.Status {
		case report.Failed:
			failed = append(failed, runName(run))
		case report.NotJudged:
			unjudged = append(unjudged, runName(run))
		}
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s failed: %s", len(failed), plural(len(runs), "1 run", fmt.Sprintf("%d runs", len(runs))), strings.Join(failed, ", ")))
	}
	if len(unjudged) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s not judged (no check could be judged): %s", len(unjudged), plural(len(runs), "1 run", fmt.Sprintf("%d runs", len(runs))), strings.Join(unjudged, ", ")))
	}
	if len(parts) == 0 {
		return nil
	}
	return &cli.Error{Code: cli.ExitFailed, Err: errors.New(strings.Join(parts, "; "))}
}
