package dash

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	flowctl "github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// staticFloor is the relay of wave-deploy's static-floor variant.
var staticFloor = flowctl.LimiterOptions{Initial: 1, Min: 1, Max: 1, Strategy: flowctl.Static}

// sweepVariant is midRun as the first of a sweep's three variants, a
// static relay limit.
func sweepVariant(l result.Live) (Source, Options) {
	l.Variant = "leader.relay.limit=static-floor"
	return runSource{fixedSource{l}, staticFloor}, Options{Sweep: Sweep{Variant: 1, Variants: 3, Label: "static-floor"}}
}

// TestGoldenSweep is a sweep's variant on the dashboard: the header
// says which variant of how many, the relay pane that its limit is
// static, and the footer what q does (mid-run: stop the sweep; on the
// end screen: the next variant, and ctrl+c stops the sweep).
func TestGoldenSweep(t *testing.T) {
	for _, tc := range []struct {
		name string
		live result.Live
		want []string
	}{
		{"running", midRun(), []string{"q stop sweep"}},
		{"done", finished(), []string{"q next variant", "ctrl+c stop sweep"}},
	} {
		for _, sz := range [][2]int{{80, 24}, {140, 40}} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz[0], sz[1]), func(t *testing.T) {
				src, o := sweepVariant(tc.live)
				m := screenOf(t, src, &fakeControls{}, o, sz[0], sz[1])
				ls := lines(m)
				want := append([]string{"variant 1 of 3", "Relay: static limit 1 per partition"}, tc.want...)
				if sz[0] >= 140 {
					want = append(want, "variant 1 of 3: leader.relay.limit=static-floor")
				}
				for _, w := range want {
					if !strings.Contains(strings.Join(ls, "\n"), w) {
						t.Errorf("screen lacks %q:\n%s", w, strings.Join(ls, "\n"))
					}
				}
				if strings.Contains(ls[len(ls)-1], "q quit") || strings.Contains(strings.Join(ls, "\n"), "AIMD") {
					t.Errorf("a static variant's screen says AIMD, or q quits:\n%s", strings.Join(ls, "\n"))
				}
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}

// The relay pane is named after the runner's limiter, as each variant
// of wave-deploy's sweep sets it; a source that does not know its
// limiter (a remote leader) claims neither.
func TestRelayTitleFromRunner(t *testing.T) {
	sc, err := scenario.Parse("sweep.yaml", []byte(smallScenario+`
sweep:
  leader.relay.limit:
    aimd: {initial: 1, min: 1, max: 50, strategy: aimd}
    static-ceiling: {initial: 50, min: 50, max: 50, strategy: static}
`))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Relay: AIMD limit per partition", "Relay: static limit 50 per partition"}
	for i, v := range vs {
		r, err := runner.NewRunner(v.Scenario, runner.RunOptions{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		m := New(r, r, Options{})
		if got := m.relayTitle(); got != want[i] {
			t.Errorf("%s: relay pane %q, want %q", v.Label, got, want[i])
		}
	}
	plain := New(fixedSource{}, nil, Options{})
	if got := plain.relayTitle(); got != "Relay: limit per partition" {
		t.Errorf("a source without a limiter: %q", got)
	}
}

// On a variant's end screen with variants after it, q goes on (Run
// returns nil) and ctrl+c stops the sweep (ErrStopSweep), in the filter
// too; before the end, and on the last variant's end screen, both quit.
func TestSweepQuitKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		live  result.Live
		sweep Sweep
		key   string
		stop  bool
	}{
		{"q at the end goes on", finished(), Sweep{1, 3, ""}, "q", false},
		{"ctrl+c at the end stops", finished(), Sweep{1, 3, ""}, "ctrl+c", true},
		{"ctrl+c in the filter stops", finished(), Sweep{2, 3, ""}, "/ctrl+c", true},
		{"q mid-run stops", midRun(), Sweep{1, 3, ""}, "q", false},
		{"ctrl+c at the last end quits", finished(), Sweep{3, 3, ""}, "ctrl+c", false},
		{"no sweep", finished(), Sweep{}, "ctrl+c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := screenOf(t, sourceOf(tc.live), &fakeControls{}, Options{Sweep: tc.sweep}, 100, 30)
			keys := []string{tc.key}
			if k, ok := strings.CutPrefix(tc.key, "/"); ok {
				keys = []string{"/", k}
			}
			m, cmd := press(t, m, keys...)
			if !isQuit(cmd) || !m.Quitting() || m.StoppedSweep() != tc.stop {
				t.Errorf("quit %v, stopped the sweep %v; want quit, %v", isQuit(cmd), m.StoppedSweep(), tc.stop)
			}
		})
	}
	// Run says which to its caller.
	for key, want := range map[string]error{"q": nil, "\x03": ErrStopSweep} {
		in, keys := io.Pipe()
		done := make(chan error, 1)
		src := &polledSource{fixedSource: fixedSource{finished()}, polled: make(chan struct{})}
		go func() {
			done <- Run(context.Background(), src, &fakeControls{}, Options{Input: in, Output: io.Discard, Refresh: MinRefresh,
				Sweep: Sweep{Variant: 1, Variants: 2}})
		}()
		<-src.polled // the end screen is up before the key: one event loop
		if _, err := keys.Write([]byte(key)); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != want {
			t.Errorf("Run after %q = %v, want %v", key, err, want)
		}
		keys.Close()
	}
}

// polledSource closes polled at its first snapshot.
type polledSource struct {
	fixedSource
	once   sync.Once
	polled chan struct{}
}

func (s *polledSource) Snapshot() result.Live {
	defer s.once.Do(func() { close(s.polled) })
	return s.fixedSource.Snapshot()
}
