package runner

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// BenchmarkRunThousand runs 1,000 workers for 60 simulated seconds, as fast
// as the process settles (the scenario's speed is a ceiling the run does not
// set): a deploy in waves of 100, and a tenth of the fleet partitioned from
// 20s to 40s. It reports the run's wall time, its lag (0 on a virtual
// clock) and the process's peak RSS (Linux). Run it alone:
//
//	go test ./fleet/runner/ -run '^$' -bench RunThousand -benchtime 1x
func BenchmarkRunThousand(b *testing.B) {
	for b.Loop() {
		sc := &scenario.Scenario{
			Name: "thousand", Seed: 1, Speed: 10, Duration: rtSec(60),
			Fleet: scenario.Fleet{Count: 1000, Worker: scenario.WorkerProfile{
				KeepAlive: rtPtr(rtSec(2)), Heartbeat: rtPtr(rtSec(5)), Telemetry: rtPtr(rtSec(10)),
			}},
			Timeline: []scenario.Event{
				{At: rtSec(5), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 100, WaveInterval: rtSec(3)}},
				{At: rtSec(20), Partition: &scenario.Targets{Workers: scenario.Selector{Percent: 10, Text: "10%"}}},
				{At: rtSec(40), Heal: &scenario.Targets{Workers: scenario.Selector{Percent: 10, Text: "10%"}}},
			},
		}
		sc.ApplyDefaults()
		start := time.Now()
		rep, err := Run(b.Context(), sc, RunOptions{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		r := rep.Result
		b.ReportMetric(time.Since(start).Seconds(), "wall-s")
		b.ReportMetric(float64(r.Run.LagP99), "lag-p99-sim-s")
		b.ReportMetric(float64(r.Run.LagMax), "lag-max-sim-s")
		b.ReportMetric(float64(r.Run.SimSeconds), "sim-s")
		if rss := peakRSS(); rss > 0 {
			b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MiB")
		}
		if r.Lost != 0 || r.Workers.AtVersion["2.0.0"] != 1000 || !r.Run.KeptUp {
			b.Errorf("lost %d, at 2.0.0 %d, kept up %v", r.Lost, r.Workers.AtVersion["2.0.0"], r.Run.KeptUp)
		}
		b.Logf("wall %.1fs for %.1fs simulated (drain included); lag p99 %.3fs max %.3fs; %d goroutines after; records: %d",
			time.Since(start).Seconds(), r.Run.SimSeconds, r.Run.LagP99, r.Run.LagMax, runtime.NumGoroutine(), len(rep.Records))
		for _, rec := range rep.Records {
			b.Logf("%7.2fs %-8s %s (lag %.3fs)", rec.T, rec.Kind, rec.Text, rec.LagSec)
		}
	}
}

// peakRSS reads the process's peak resident set (VmHWM) on Linux; 0
// elsewhere.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkSnapshot10k: what one Snapshot of a 10,000-worker run costs
// (the dashboard takes ten a second).
func BenchmarkSnapshot10k(b *testing.B) {
	sc := &scenario.Scenario{Name: "snap", Duration: rtSec(60), Fleet: scenario.Fleet{Count: 10_000}}
	sc.ApplyDefaults()
	r, err := NewRunner(sc, RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	r.mu.Lock()
	for i := range 300 {
		r.samples = append(r.samples, result.Sample{T: result.Seconds(i)})
	}
	r.mu.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		if lv := r.Snapshot(); len(lv.Workers) != 10_000 {
			b.Fatal(len(lv.Workers))
		}
	}
}
