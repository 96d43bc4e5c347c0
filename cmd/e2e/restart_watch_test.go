package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// restart is what the test saw of one leader restart after a kill, on the
// wall clock; a zero time was not seen before the next kill.
type restart struct {
	killed  time.Time
	leased  float64   // commands leased at the last scrape before the kill
	running time.Time // the restarted leader logs "leader running"
	// firstOnline and allBack: the leader counts one, and every, worker
	// online again; firstAck: its outbox counts the first command acked.
	firstOnline, allBack, firstAck time.Time
	watched                        time.Time // when the watch ended
}

// scrapeClient bounds a scrape: a leader about to be killed, or just
// killed, must not hold up the kill schedule.
var scrapeClient = &http.Client{Timeout: time.Second}

// scrape reads every series of a /metrics endpoint.
func scrape(addr string) (map[string]float64, error) {
	resp, err := scrapeClient.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); i > 0 && err == nil {
			out[line[:i]] = v
		}
	}
	return out, nil
}

// watch scrapes the leader at addr every 20 ms until the moment until —
// the kill schedule's next kill — recording into r (nil for the first
// leader, which was not restarted) when workers came back and the first
// command was acked. With resumed set it stops as soon as both were seen.
// It returns the commands leased at the last scrape.
func watch(addr string, n int, until time.Time, r *restart, resumed bool) (leased float64) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	if r != nil {
		defer func() { r.watched = time.Now() }()
	}
	for time.Now().Before(until) {
		m, err := scrape(addr)
		now := time.Now()
		if err == nil {
			leased = m["fleetsim_outbox_leased"]
			if r != nil {
				online := m["fleetsim_workers_online"]
				if online > 0 && r.firstOnline.IsZero() {
					r.firstOnline = now
				}
				if online >= float64(n) && r.allBack.IsZero() {
					r.allBack = now
				}
				if m["fleetsim_outbox_acked_total"] > 0 && r.firstAck.IsZero() {
					r.firstAck = now
				}
				if resumed && !r.allBack.IsZero() && !r.firstAck.IsZero() {
					return leased
				}
			}
		}
		<-tick.C
	}
	return leased
}

// stateWorker is one worker's entry in a worker's --state file.
type stateWorker struct {
	ID              string            `json:"id"`
	Version         string            `json:"version"`
	AppliedVersions map[string]int    `json:"applied_versions"`
	AppliedAt       map[string]string `json:"applied_at"`
	Duplicates      int               `json:"duplicates"`
	Stale           int               `json:"stale"`
}

func readState(t *testing.T, path string) []stateWorker {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("worker --state: %v", err)
	}
	var f struct{ Workers []stateWorker }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("worker --state %s: %v", path, err)
	}
	return f.Workers
}

// owedSince returns, for each restart, since when the leader owed its
// workers a delivery: the kill, if a command was leased then (it is
// delivered again), or else the earliest due time of a version a worker
// applied after the kill. Versions overwritten by a newer deploy before
// they went out are not applied; their replacements count.
func owedSince(rs []restart, workers []stateWorker, rollouts []rollout, waveSize int, interval time.Duration) []time.Time {
	byVersion := map[string]rollout{}
	for _, r := range rollouts {
		byVersion[r.version] = r
	}
	owed := make([]time.Time, len(rs))
	for k, r := range rs {
		if r.leased > 0 {
			owed[k] = r.killed
		}
	}
	for _, w := range workers {
		i, _ := strconv.Atoi(strings.TrimPrefix(w.ID, "w-"))
		for v, s := range w.AppliedAt {
			at, err := time.Parse(time.RFC3339, s)
			if err != nil {
				continue // checkPaced reports it
			}
			due := byVersion[v].due(i, waveSize, interval)
			for k, r := range rs {
				if at.After(r.killed) && (owed[k].IsZero() || due.Before(owed[k])) {
					owed[k] = due
				}
			}
		}
	}
	return owed
}

// checkResumed logs, for each restart, when the leader served again, the
// workers were back and the first command was acked, counted from the
// kill; and fails if a deploy went on later than goal after the workers
// were back (or after its next wave was due, if nothing was owed before).
// A restart killed again before every worker was back is not judged.
func checkResumed(t *testing.T, rs []restart, owed []time.Time, goal time.Duration) {
	t.Helper()
	var resume []time.Duration
	since := func(a, b time.Time) string {
		if b.IsZero() {
			return "not seen"
		}
		return b.Sub(a).Round(time.Millisecond).String()
	}
	for i, r := range rs {
		line := fmt.Sprintf("restart %2d (%v leased at the kill): serving %s, first worker online %s, all %s, owed %s, first ack %s",
			i+1, r.leased, since(r.killed, r.running), since(r.killed, r.firstOnline), since(r.killed, r.allBack), since(r.killed, owed[i]), since(r.killed, r.firstAck))
		from := r.allBack
		if owed[i].After(from) {
			from = owed[i]
		}
		switch {
		case r.allBack.IsZero():
			line += ": killed again before every worker was back"
		case !r.firstAck.IsZero():
			d := r.firstAck.Sub(from)
			resume = append(resume, d)
			line += fmt.Sprintf(": resumed %v after the workers were back and a command was due", d.Round(time.Millisecond))
			if d > goal {
				t.Errorf("restart %d: the first ack came %v after the workers were back and a command was due, want at most %v", i+1, d.Round(time.Millisecond), goal)
			}
		case r.watched.Sub(from) > goal:
			t.Errorf("restart %d: no ack in the %v after the workers were back and a command was due, want one within %v", i+1, r.watched.Sub(from).Round(time.Millisecond), goal)
		default:
			line += ": killed again before an ack was due"
		}
		t.Log(line)
	}
	if len(resume) == 0 {
		t.Log("no restart saw every worker back and an ack before the next kill")
		return
	}
	slices.Sort(resume)
	t.Logf("first ack after the workers were back and a command was due, over %d restarts: median %v, max %v (goal %v)",
		len(resume), resume[len(resume)/2].Round(time.Millisecond), resume[len(resume)-1].Round(time.Millisecond), goal)
}
