package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// checkState checks at start that the --state file can be written at
// exit, so that a bad path fails before the workers run, not after. It
// leaves a file already there as it is: that is replaced only at exit,
// by writeState.
func checkState(path string) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return cli.Usagef("--state %s: not a regular file (want a file path in a writable directory)", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".check-*")
	if err != nil {
		return cli.Usagef("--state %s: %v (want a file path in a writable directory)", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// writeState writes the workers' state to path as JSON, atomically
// (writeFileAtomic).
func writeState(path string, ws []*worker.Worker) error {
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
	err := writeFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	})
	if err != nil {
		return cli.Runtime(fmt.Errorf("--state %s: %w", path, err))
	}
	return nil
}

// rename is os.Rename; a test makes it fail.
var rename = os.Rename

// writeFileAtomic replaces the file at path with what write writes, so
// that whoever reads path, at any moment and after a crash at any point,
// finds the old file or the new one whole, never a part: write fills a
// temporary file in path's directory, which is synced to disk and then
// renamed over path (a rename within a directory is atomic), and the
// directory synced so that the rename lasts. On an error path is left
// as it was and the temporary file removed.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	err = f.Chmod(0o644) // a state file is for reading, as os.Create's would be
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // some file systems cannot sync a directory; the rename is done either way
		d.Close()
	}
	return nil
}
