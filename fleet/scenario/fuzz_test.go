package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParse feeds Parse arbitrary bytes: it must never panic, and it either
// returns a scenario that lays out, judges, sweeps and scales without
// panicking, or Errors that each name a line.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(sweepFile))
	f.Add([]byte(judgeFile))
	f.Add([]byte(scaleFile))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fuzzer does not notice an input that never returns; a panic
		// makes it save the input as a failure (a self-merging anchor once
		// looped here).
		timer := time.AfterFunc(5*time.Second, func() { panic("Parse has not returned after 5s") })
		defer timer.Stop()
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not Errors: %v", err)
			}
			for _, e := range es {
				if e.Line < 1 || e.Col < 0 || e.Msg == "" {
					t.Fatalf("error without a place: %#v", e)
				}
			}
			_ = err.Error()
			return
		}
		if s.Fleet.Count < 1 || s.Fleet.Count > MaxWorkers || s.Duration <= 0 || s.Speed <= 0 {
			t.Fatalf("loaded an invalid scenario: %+v", s)
		}
		Judge(s, Result{})
		Judge(s, Result{Run: RunInfo{KeptUp: true}})
		if _, err := s.Variants(); err != nil {
			t.Fatalf("Parse accepted a sweep that Variants refuses: %v", err)
		}
		if s.Fleet.Count <= 10_000 {
			ws, err := s.Workers()
			if err != nil {
				t.Fatalf("Workers: %v", err)
			}
			for _, ev := range s.Timeline {
				for _, sel := range ev.selectors() {
					if _, err := sel.Select(ws); err != nil {
						t.Fatalf("a validated selector fails: %v", err)
					}
				}
			}
		}
		_, _ = s.Scale(1)
		_, _ = s.Scale(3)
	})
}
