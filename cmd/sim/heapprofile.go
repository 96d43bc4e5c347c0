package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
)

// heapProfile writes a heap profile of the process to path once the run
// has played its timeline (the drain begins, or the run is done): the
// whole fleet is still up then, which is where a large run's memory goes
// (go tool pprof -sample_index=inuse_space). A run that finishes before
// it looked is profiled as it ends. It returns once it has written the
// profile, or when ctx ends first.
func heapProfile(ctx context.Context, r *runner.Runner, path string, finished <-chan struct{}) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-finished:
			return writeHeapProfile(path)
		case <-t.C:
		}
		if _, _, phase := r.Position(); phase == result.PhaseDraining || phase == result.PhaseDone {
			return writeHeapProfile(path)
		}
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--heap-profile: %w", err)
	}
	// The profile shows what was live at the last collection but one: two
	// make it now.
	runtime.GC()
	runtime.GC()
	err = pprof.WriteHeapProfile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--heap-profile %s: %w", path, err)
	}
	return nil
}

// withCPUProfile runs run under a CPU profile of the process written to
// path (no profile for an empty path). run's error comes first; then the
// profile's.
func withCPUProfile(path string, run func() error) error {
	if path == "" {
		return run()
	}
	f, err := os.Create(path)
	if err != nil {
		return cli.Runtime(fmt.Errorf("--cpu-profile: %w", err))
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return cli.Runtime(fmt.Errorf("--cpu-profile %s: %w", path, err))
	}
	err = run()
	pprof.StopCPUProfile()
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cli.Runtime(fmt.Errorf("--cpu-profile %s: %w", path, cerr))
	}
	return err
}
