package e2e

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restartSeed draws the kill moments; the test logs it, and
// FLEETSIM_E2E_SEED runs it with another.
const restartSeed = 1

// rollout is one deploy of the test: its version and when the test asked
// for it. The leader stamps the waves' due times a moment later, so
// issued plus a wave's offset is a lower bound of that wave's due time.
type rollout struct {
	version string
	issued  time.Time
}

// due is the earliest moment the wave of the worker with index i may get
// the rollout's version.
func (r rollout) due(i, waveSize int, interval time.Duration) time.Time {
	return r.issued.Add(time.Duration(i/waveSize) * interval)
}

// TestLeaderKilledRepeatedlyDuringDeploys: a leader process (embedded
// broker on TCP, bbolt outbox with fsync) and 1,000 workers in two
// processes. Three deploys overlap, each in ten waves of 100, 1.5 s
// apart; the leader is killed with SIGKILL ten times at seeded random
// moments (while workers reconnect, mid-wave, between waves) and
// restarted on the same outbox file each time. At the end, from the
// workers' --state files: every worker runs the last version and applied
// each version at most once, and none got a version before its wave was
// due; the dead letters are empty. For each restart it logs how soon the
// workers were back and the deploy went on (its first ack), and fails if
// that took more than 2 s after the workers were back.
func TestLeaderKilledRepeatedlyDuringDeploys(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 workers and ten leader kills: about 30 s of both cores; skipped under -short")
	}
	const (
		n, half  = 1000, 500
		waveSize = 100
		interval = 1500 * time.Millisecond
		kills    = 10
		// early is how much sooner than its wave's due time a worker may
		// apply a version: the due time is a lower bound and applied_at
		// is cut to milliseconds, so a correct leader is at most 1 ms early; a
		// leader that loses the pacing releases waves seconds early.
		early = 200 * time.Millisecond
		// resumeGoal: after a restart the deploy goes on within this of
		// the workers being back (or of its next wave, if none was due).
		resumeGoal = 2 * time.Second
	)
	versions := []string{"2.0.0", "3.0.0", "4.0.0"}
	deployInCycle := map[int]string{0: versions[0], 3: versions[1], 6: versions[2]}
	seed := uint64(restartSeed)
	if s := os.Getenv("FLEETSIM_E2E_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FLEETSIM_E2E_SEED=%q: want an unsigned integer", s)
		}
	}
	rnd := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)

	dir := t.TempDir()
	db := filepath.Join(dir, "leader.db")
	l, maddr := startLeader(t, "--outbox", db, "--listen", "127.0.0.1:0") // durability sync
	addr := l.log(t, "broker listening", waitLong)["addr"].(string)
	broker := "tcp://" + addr
	states := []string{filepath.Join(dir, "workers-0.json"), filepath.Join(dir, "workers-1.json")}
	ws := []*proc{
		startWorkersState(t, broker, half, 0, states[0]),
		startWorkersState(t, broker, half, half, states[1]),
	}
	waitMetric(t, maddr, "fleetsim_workers_online", n, waitLong)

	var rollouts []rollout
	var restarts []restart
	started := time.Now()
	for c := 0; ; c++ {
		if v, ok := deployInCycle[c]; ok {
			rollouts = append(rollouts, deployWaves(t, broker, v, n, waveSize, interval))
		}
		if c == kills {
			break
		}
		// The kill comes at a random moment of this leader's life: while
		// workers still reconnect, mid-wave, or between waves.
		killAt := time.Now().Add(time.Duration(200+rnd.IntN(2300)) * time.Millisecond)
		var prev *restart
		if c > 0 {
			prev = &restarts[c-1]
		}
		leased := watch(maddr, n, killAt, prev, false)
		if code := l.stop(t, syscall.SIGKILL); code != -1 {
			t.Fatalf("leader after SIGKILL (kill %d): exit code %d", c+1, code)
		}
		r := restart{killed: time.Now(), leased: leased}
		l, maddr = startLeader(t, "--outbox", db, "--listen", addr)
		r.running = logTime(t, l.log(t, "leader running", waitLong))
		restarts = append(restarts, r)
	}
	last := &restarts[len(restarts)-1]
	watch(maddr, n, time.Now().Add(10*time.Second), last, true)
	schedule := last.killed.Sub(started)
	for i := 1; i < len(rollouts); i++ {
		if prev := rollouts[i-1].due(n-1, waveSize, interval); !rollouts[i].issued.Before(prev) {
			t.Errorf("%s was deployed %v after the last wave of %s was due: the deploys did not overlap (a machine too slow for the kill schedule?)",
				rollouts[i].version, rollouts[i].issued.Sub(prev).Round(time.Millisecond), rollouts[i-1].version)
		}
	}

	final := versions[len(versions)-1]
	waitMetric(t, maddr, fmt.Sprintf("fleetsim_workers_version{version=%q}", final), n, waitLong)
	waitMetric(t, maddr, "fleetsim_outbox_depth", 0, 10*time.Second)
	if dl := metric(t, maddr, "fleetsim_outbox_dead_letters"); dl != 0 {
		t.Errorf("fleetsim_outbox_dead_letters = %v after the deploys, want 0", dl)
	}
	t.Logf("the last of %d kills %v after the first deploy; the last wave of %s was due after %v",
		kills, schedule.Round(time.Millisecond), final, rollouts[len(rollouts)-1].due(n-1, waveSize, interval).Sub(started).Round(time.Millisecond))

	stopWorkers(t, ws...)
	var workers []stateWorker
	for _, p := range states {
		workers = append(workers, readState(t, p)...)
	}
	checkApplied(t, workers, n, final)
	checkPaced(t, workers, rollouts, waveSize, interval, early)
	checkResumed(t, restarts, owedSince(restarts, workers, rollouts, waveSize, interval), resumeGoal)

	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("last leader exit code %d, want 0", code)
	}
	code, out := run(t, "leader", "dlq", "list", "--outbox", db)
	if code != 0 || !strings.Contains(out, "0 dead letters (0 in the file)") {
		t.Errorf("leader dlq list: exit %d, output %q; want 0 and no dead letters", code, out)
	}
}

// startWorkersState starts count workers from index first that write
// their state to path at exit. Heartbeats come every second, not every
// 200 ms: a thousand workers at 200 ms would keep a core busy.
func startWorkersState(t *testing.T, broker string, count, first int, path string) *proc {
	t.Helper()
	args := []string{"--broker", broker, "--count", strconv.Itoa(count), "--start", strconv.Itoa(first), "--state", path}
	args = append(args, workerFast...)
	args = append(args, "--heartbeat", "1s")
	return start(t, "worker", args...)
}

// deployWaves asks the leader to roll version out to w-0000..w-(n-1) in
// waves and returns when it asked.
func deployWaves(t *testing.T, broker, version string, n, waveSize int, interval time.Duration) rollout {
	t.Helper()
	r := rollout{version: version, issued: time.Now()}
	code, out := run(t, "leader", "deploy", "--broker", broker, "--version", version,
		"--workers", fmt.Sprintf("w-0000..w-%04d", n-1), "--wave-size", strconv.Itoa(waveSize), "--wave-interval", interval.String())
	if want := fmt.Sprintf("to %d workers in %d waves", n, (n+waveSize-1)/waveSize); code != 0 || !strings.Contains(out, want) {
		t.Fatalf("leader deploy %s: exit %d, output %q; want 0 and %q", version, code, out, want)
	}
	return r
}

// logTime reads a log record's time.
func logTime(t *testing.T, rec map[string]any) time.Time {
	t.Helper()
	s, _ := rec["time"].(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("log record %v: time: %v", rec, err)
	}
	return at
}

// checkApplied: every worker runs the final version and applied no
// version twice.
func checkApplied(t *testing.T, workers []stateWorker, n int, final string) {
	t.Helper()
	if len(workers) != n {
		t.Fatalf("the state files hold %d workers, want %d", len(workers), n)
	}
	var twice, behind []string
	var dups, stale int
	for _, w := range workers {
		dups, stale = dups+w.Duplicates, stale+w.Stale
		for v, k := range w.AppliedVersions {
			if k > 1 {
				twice = append(twice, fmt.Sprintf("%s applied %s %d times", w.ID, v, k))
			}
		}
		if w.Version != final {
			behind = append(behind, fmt.Sprintf("%s at %q", w.ID, w.Version))
		}
	}
	t.Logf("the workers skipped %d redeliveries (duplicates) and %d older versions (stale)", dups, stale)
	if len(twice) > 0 {
		t.Errorf("%d applications twice or more, e.g. %s", len(twice), strings.Join(twice[:min(5, len(twice))], "; "))
	}
	if len(behind) > 0 {
		t.Errorf("%d workers not at %s, e.g. %s", len(behind), final, strings.Join(behind[:min(5, len(behind))], "; "))
	}
}

// checkPaced: no worker applied a version sooner than early before its
// wave was due. It logs the smallest margin seen.
func checkPaced(t *testing.T, workers []stateWorker, rollouts []rollout, waveSize int, interval, tolerance time.Duration) {
	t.Helper()
	byVersion := map[string]rollout{}
	for _, r := range rollouts {
		byVersion[r.version] = r
	}
	type early struct {
		by   time.Duration
		what string
	}
	var violations []early
	margin, applied := time.Duration(1<<62), 0
	for _, w := range workers {
		i, err := strconv.Atoi(strings.TrimPrefix(w.ID, "w-"))
		if err != nil {
			t.Fatalf("worker id %q: want w-NNNN", w.ID)
		}
		for v, s := range w.AppliedAt {
			r, ok := byVersion[v]
			if !ok {
				t.Errorf("%s applied %s, which no deploy sent", w.ID, v)
				continue
			}
			at, err := time.Parse(time.RFC3339, s)
			if err != nil {
				t.Fatalf("%s applied_at[%s] = %q: %v", w.ID, v, s, err)
			}
			applied++
			due := r.due(i, waveSize, interval)
			m := at.Sub(due)
			margin = min(margin, m)
			if m < -tolerance {
				violations = append(violations, early{-m, fmt.Sprintf("%s got %s at %s, %v before its wave %d was due",
					w.ID, v, at.Format("15:04:05.000"), -m.Round(time.Millisecond), i/waveSize)})
			}
		}
	}
	if len(violations) > 0 {
		slices.SortFunc(violations, func(a, b early) int { return cmp.Compare(b.by, a.by) })
		var worst []string
		for _, v := range violations[:min(10, len(violations))] {
			worst = append(worst, v.what)
		}
		t.Errorf("%d applications came before their wave was due (more than %v early), the earliest:\n  %s",
			len(violations), tolerance, strings.Join(worst, "\n  "))
	}
	t.Logf("%d applications; the earliest came %v after its wave was due", applied, margin.Round(time.Millisecond))
}
