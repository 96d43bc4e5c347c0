package scenarios_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestSameSeedSameResult runs shipped scenarios twice with their seed:
// once on a quiet machine and once starved of CPU by busy processes,
// several for each core. Simulated time waits for the process, not the
// wall clock, so every number of the two results is the same, counts
// and timings alike (wall time aside), and so is every verdict.
func TestSameSeedSameResult(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scenarios on the real stack, one of them starved")
	}
	for _, tc := range []struct{ file, variant string }{
		{"leader-crash.yaml", ""},
		{"wave-deploy.yaml", "aimd"},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			sc := load(t, tc.file)
			vs, err := sc.Variants()
			if err != nil {
				t.Fatal(err)
			}
			v := vs[0]
			for _, x := range vs {
				if x.Label == tc.variant {
					v = x
				}
			}
			quiet := run(t, v)
			stop := starve(t, 3*runtime.NumCPU())
			starved := run(t, v)
			stop()
			t.Logf("quiet %.1fs, starved %.1fs of wall time", quiet.Result.Run.WallSeconds, starved.Result.Run.WallSeconds)
			if d := result.Differences(&quiet.Result, &starved.Result); len(d) > 0 {
				t.Errorf("the starved run measured otherwise:\n%s", strings.Join(d, "\n"))
			}
			if len(quiet.Verdicts) != len(starved.Verdicts) {
				t.Fatalf("verdicts: %d quiet, %d starved", len(quiet.Verdicts), len(starved.Verdicts))
			}
			for i, q := range quiet.Verdicts {
				if s := starved.Verdicts[i]; s.Status != q.Status || s.Detail != q.Detail {
					t.Errorf("verdict %q: quiet %s %q, starved %s %q", q.Name, q.Status, q.Detail, s.Status, s.Detail)
				}
			}
		})
	}
}

// starve starts n processes that spin until stopped: this test binary,
// running only TestSpin.
func starve(t *testing.T, n int) (stop func()) {
	t.Helper()
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	for range n {
		c := exec.Command(os.Args[0], "-test.run=^TestSpin$")
		c.Env = append(os.Environ(), "FLEETSIM_SPIN=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return stop
}

// TestSpin burns a core until killed, when FLEETSIM_SPIN is set (starve
// starts it); otherwise it returns at once.
func TestSpin(t *testing.T) {
	if os.Getenv("FLEETSIM_SPIN") == "" {
		return
	}
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); {
	}
}
