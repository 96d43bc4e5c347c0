package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// stateFile is what --state writes at exit: each worker's applied state,
// so a test can check exactly-once per worker, not only in total.
type stateFile struct {
	Workers []workerState `json:"workers"`
}

// workerState is one worker's applied state and dedupe counts.
type workerState struct {
	ID string `json:"id"`
	// Version is the version it runs.
	Version string `json:"version"`
	// Applied counts the config and firmware updates it applied, and
	// AppliedVersions how many times it applied each version: more than 1
	// is a version applied twice.
	Applied         uint64         `json:"applied"`
	AppliedVersions map[string]int `json:"applied_versions"`
	// AppliedAt is the wall time each version was first applied, in
	// RFC 3339 with milliseconds (TimeFormat): a rollout's pacing can be
	// checked against the waves' due times.
	AppliedAt map[string]string `json:"applied_at"`
	// Duplicates counts redeliveries it recognised (same key and seq);
	// Stale the commands older than one it applied under their key.
	Duplicates uint64 `json:"duplicates"`
	Stale      uint64 `json:"stale"`
	// AckedOK counts commands it acknowledged ok.
	AckedOK uint64 `json:"acked_ok"`
}

// TimeFormat is how the state file writes times: RFC 3339, UTC, with
// milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// openState creates (or empties) the --state file at start, so that a
// path that cannot be written fails before the workers run, not after.
func openState(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, cli.Usagef("--state %s: %v (want a file path in a writable directory)", path, err)
	}
	return f, nil
}

// writeState writes the workers' state to f as JSON and closes it.
func writeState(f *os.File, ws []*worker.Worker) error {
	out := stateFile{Workers: make([]workerState, len(ws))}
	for i, w := range ws {
		s := w.Stats()
		if s.AppliedVersions == nil {
			s.AppliedVersions = map[string]int{}
		}
		at := make(map[string]string, len(s.FirstApplied))
		for v, t := range s.FirstApplied {
			at[v] = t.UTC().Format(TimeFormat)
		}
		out.Workers[i] = workerState{
			ID: w.ID(), Version: s.Version, Applied: s.Applied, AppliedVersions: s.AppliedVersions, AppliedAt: at,
			Duplicates: s.Duplicates, Stale: s.Stale, AckedOK: s.AckedOK,
		}
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	err := enc.Encode(out)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cli.Runtime(fmt.Errorf("--state %s: %w", f.Name(), err))
	}
	return nil
}
