package outbox_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// A leader serves one job request per poll of every pulling worker, and
// each request expires the leases that ran out, takes the worker's done
// report and leases its next job. These tests hold that work to what the
// request changes: none of it may grow with the queue or the fleet, or a
// fleet's polling costs the square of its size.

// leasedQueue returns a queue of n jobs, each leased to a worker of its
// own ("w-0".."w-<n-1>"), leases ending a millisecond apart from t0+lease.
func leasedQueue(tb testing.TB, open func(tb testing.TB) outbox.Jobs, n int, lease time.Duration) outbox.Jobs {
	tb.Helper()
	q := open(tb)
	if _, err := q.Add(ctx, t0, make([]time.Duration, n)...); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		if _, ok, _, err := q.Lease(ctx, fmt.Sprintf("w-%d", i), "p1", now, lease); !ok || err != nil {
			tb.Fatalf("lease %d: ok=%v err=%v", i, ok, err)
		}
	}
	return q
}

func openMemoryJobsTB(tb testing.TB) outbox.Jobs {
	j, err := outbox.NewMemoryJobs(0)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

func openBoltJobsTB(tb testing.TB) outbox.Jobs {
	b, err := outbox.OpenBolt(filepath.Join(tb.TempDir(), "outbox.db"), outbox.Options{Durability: outbox.None})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	j, err := b.OpenJobs(0)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

var jobOpeners = []struct {
	name string
	open func(tb testing.TB) outbox.Jobs
}{{"memory", openMemoryJobsTB}, {"bolt", openBoltJobsTB}}

// Expire looks at the leases that ran out, not at every job: with 10,000
// leased, a request that finds none due looks at none, and one that finds
// 10 due looks at those 10.
func TestJobsExpireLooksOnlyAtLeasesDue(t *testing.T) {
	const n, lease = 10_000, time.Minute
	for _, o := range jobOpeners {
		t.Run(o.name, func(t *testing.T) {
			q := leasedQueue(t, o.open, n, lease)
			for i := range 100 {
				if got, err := q.Expire(ctx, t0.Add(time.Duration(i)*time.Millisecond)); got != 0 || err != nil {
					t.Fatalf("Expire before any lease ends: %d, %v", got, err)
				}
			}
			if v := outbox.JobsVisited(q); v != 0 {
				t.Fatalf("100 requests with no lease due looked at %d jobs, want 0", v)
			}
			// The first 10 leases end by t0+lease+9ms.
			if got, _ := q.Expire(ctx, t0.Add(lease+9*time.Millisecond)); got != 10 {
				t.Fatalf("expired %d, want 10", got)
			}
			if v := outbox.JobsVisited(q); v != 10 {
				t.Fatalf("expiring 10 of %d leases looked at %d jobs, want 10", n, v)
			}
			if queued, _ := outbox.JobsQueued(q); !slices.Equal(queued, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
				t.Fatalf("queued after expiry: %v", queued)
			}
		})
	}
}

// The bbolt queue undoes a change the file refused by what the change
// made, not by copying the queue before each one: a request's Expire,
// done report and lease allocate as much with 10,000 workers holding
// leases as with 100.
func TestBoltJobsRequestCostIsFlat(t *testing.T) {
	const lease = time.Minute
	cost := func(n int) (expire, serve float64) {
		q := leasedQueue(t, openBoltJobsTB, n, lease)
		if _, err := q.Add(ctx, t0, make([]time.Duration, 200)...); err != nil {
			t.Fatal(err)
		}
		expire = testing.AllocsPerRun(50, func() {
			if _, err := q.Expire(ctx, t0); err != nil {
				t.Fatal(err)
			}
		})
		i := 0
		serve = testing.AllocsPerRun(50, func() {
			// Worker w-i reports its job done and takes the next.
			w := fmt.Sprintf("w-%d", i)
			if o, err := q.Complete(ctx, w, fmt.Sprintf("q%d", i+1)); o != outbox.JobDone || err != nil {
				t.Fatalf("Complete %s: %v %v", w, o, err)
			}
			if _, ok, _, err := q.Lease(ctx, w, "p2", t0, lease); !ok || err != nil {
				t.Fatalf("Lease %s: %v %v", w, ok, err)
			}
			i++
		})
		return expire, serve
	}
	smallExpire, smallServe := cost(100)
	bigExpire, bigServe := cost(10_000)
	if bigExpire != 0 {
		t.Errorf("Expire with nothing due, 10,000 leases: %.0f allocations, want 0 (100 leases: %.0f)", bigExpire, smallExpire)
	}
	// A bbolt transaction's own allocations grow a little with the
	// depth of its tree; copying the queue would add 10,000 and more.
	if bigServe > smallServe+50 {
		t.Errorf("a done report and a lease allocate %.0f times with 10,000 leases, %.0f with 100: want about the same", bigServe, smallServe)
	}
}

// A change the file refuses (here: the file is closed) leaves the queue
// as it was: its jobs in their order, its leases and their deadlines,
// its counts.
func TestBoltJobsRefusedChangeLeavesQueue(t *testing.T) {
	b, err := outbox.OpenBolt(filepath.Join(t.TempDir(), "outbox.db"), outbox.Options{Durability: outbox.None})
	if err != nil {
		t.Fatal(err)
	}
	q, err := b.OpenJobs(10)
	if err != nil {
		t.Fatal(err)
	}
	const lease = time.Second
	_, _ = q.Add(ctx, t0, 0, 0, 0, 0, 0)
	for i, w := range []string{"w-1", "w-2", "w-3"} {
		_, _, _, _ = q.Lease(ctx, w, "p1", t0.Add(time.Duration(i)*time.Millisecond), lease)
	}
	// w-1's lease ran out; its job q1 waits again, first.
	if n, _ := q.Expire(ctx, t0.Add(lease)); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	stats, wantQueued := q.Stats(t0), []uint64{1, 4, 5}
	if queued, _ := outbox.JobsQueued(q); !slices.Equal(queued, wantQueued) {
		t.Fatalf("queued before: %v, want %v", queued, wantQueued)
	}
	_, wantDue := outbox.JobsQueued(q)
	b.Close()

	if _, err := q.Add(ctx, t0, 0, 0); err == nil {
		t.Fatal("Add on a closed file: no error")
	}
	if o, err := q.Complete(ctx, "w-2", "q2"); err == nil || o != outbox.JobUnknown {
		t.Fatalf("Complete of a leased job on a closed file: %v, %v", o, err)
	}
	if o, err := q.Complete(ctx, "w-1", "q1"); err == nil || o != outbox.JobUnknown {
		t.Fatalf("Complete of a queued job on a closed file: %v, %v", o, err)
	}
	if n, err := q.Expire(ctx, t0.Add(time.Hour)); err == nil || n != 0 {
		t.Fatalf("Expire on a closed file: %d, %v", n, err)
	}
	if _, ok, _, err := q.Lease(ctx, "w-9", "p1", t0, lease); err == nil || ok {
		t.Fatalf("Lease on a closed file: ok=%v, %v", ok, err)
	}
	if got := q.Stats(t0); got != stats {
		t.Errorf("stats after refused changes: %+v, want %+v", got, stats)
	}
	queued, due := outbox.JobsQueued(q)
	if !slices.Equal(queued, wantQueued) {
		t.Errorf("queued after refused changes: %v, want %v", queued, wantQueued)
	}
	// The refused Expire gave q2 and q3 their deadlines back (the refused
	// Lease left one behind, passed over when it comes up).
	if due < wantDue {
		t.Errorf("lease deadlines after refused changes: %d, want at least %d", due, wantDue)
	}
}

// BenchmarkJobsRequest is the leader's work for one job request of a
// worker that finished its job: Expire, Complete, Lease, and a job added
// to keep the queue's size, with 1,000 and 10,000 workers holding leases.
// The two sizes are each other's baseline: the cost per request should
// not grow with the fleet.
//
//	go test -run '^$' -bench JobsRequest -benchmem ./fleet/outbox/
func BenchmarkJobsRequest(b *testing.B) {
	const lease = time.Hour
	for _, o := range jobOpeners {
		for _, n := range []int{1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/%d-leases", o.name, n), func(b *testing.B) {
				q := leasedQueue(b, o.open, n, lease)
				if _, err := q.Add(ctx, t0, 0); err != nil {
					b.Fatal(err)
				}
				workers := make([]string, n)
				for i := range workers {
					workers[i] = fmt.Sprintf("w-%d", i)
				}
				held := make([]string, n) // the job each worker holds
				for i := range held {
					held[i] = fmt.Sprintf("q%d", i+1)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					w := i % n
					now := t0.Add(time.Duration(i) * time.Microsecond)
					if _, err := q.Expire(ctx, now); err != nil {
						b.Fatal(err)
					}
					if o, err := q.Complete(ctx, workers[w], held[w]); o != outbox.JobDone || err != nil {
						b.Fatalf("Complete: %v %v", o, err)
					}
					if _, err := q.Add(ctx, now, 0); err != nil {
						b.Fatal(err)
					}
					j, ok, _, err := q.Lease(ctx, workers[w], fmt.Sprintf("r%d", i), now, lease)
					if !ok || err != nil {
						b.Fatalf("Lease: %v %v", ok, err)
					}
					held[w] = j.ID
					i++
				}
			})
		}
	}
}

// Expire by deadline agrees with a scan of every job, whatever the lease
// lengths, the order of leases, done reports and expiries: a model test
// of the memory queue against a reference that keeps each job's holder
// and deadline.
func TestJobsExpireModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		q, err := outbox.NewMemoryJobs(50)
		if err != nil {
			rt.Fatal(err)
		}
		type ref struct {
			worker string
			until  time.Time
		}
		jobs := map[string]*ref{} // job id -> holder ("" waiting)
		now := t0
		for step := range rapid.IntRange(1, 80).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				ids, err := q.Add(ctx, now, 0)
				if err == nil {
					jobs[ids[0]] = &ref{}
				}
			case 1:
				w := rapid.SampledFrom([]string{"w-1", "w-2", "w-3", "w-4"}).Draw(rt, "worker")
				lease := time.Duration(rapid.IntRange(1, 10).Draw(rt, "lease")) * time.Second
				if j, ok, repeat, _ := q.Lease(ctx, w, fmt.Sprintf("r%d", step), now, lease); ok && !repeat {
					jobs[j.ID] = &ref{worker: w, until: now.Add(lease)}
				}
			case 2:
				for id, r := range jobs {
					if r.worker != "" {
						if o, _ := q.Complete(ctx, r.worker, id); o != outbox.JobDone {
							rt.Fatalf("holder's report of %s: %v", id, o)
						}
						delete(jobs, id)
						break
					}
				}
			case 3:
				now = now.Add(time.Duration(rapid.IntRange(0, 4000).Draw(rt, "advance")) * time.Millisecond)
				want := 0
				for _, r := range jobs {
					if r.worker != "" && !now.Before(r.until) {
						r.worker, want = "", want+1
					}
				}
				if got, _ := q.Expire(ctx, now); got != want {
					rt.Fatalf("Expire at %v: %d, the reference expires %d", now.Sub(t0), got, want)
				}
			}
			st := q.Stats(now)
			leased := 0
			for _, r := range jobs {
				if r.worker != "" {
					leased++
				}
			}
			if st.Leased != leased || st.Depth != len(jobs)-leased {
				rt.Fatalf("stats %+v, the reference has %d leased of %d", st, leased, len(jobs))
			}
		}
	})
}

// A leader serves job requests one after another from one loop, so the
// job queue's writes must not wait for company the way concurrent
// enqueues do (DB.Batch waits out a delay for each lone caller). In a
// synctest bubble that delay is fake time, and 100 leases and done
// reports under Durability Batch must take none of it.
func TestBoltJobsWritesDoNotWaitForCompany(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := outbox.OpenBolt(filepath.Join(t.TempDir(), "outbox.db"), outbox.Options{Durability: outbox.Batch})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		q, err := b.OpenJobs(0)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := q.Add(ctx, t0, make([]time.Duration, 50)...); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			w := fmt.Sprintf("w-%d", i)
			j, ok, _, err := q.Lease(ctx, w, "p1", t0, time.Minute)
			if !ok || err != nil {
				t.Fatalf("Lease: %v %v", ok, err)
			}
			if o, err := q.Complete(ctx, w, j.ID); o != outbox.JobDone || err != nil {
				t.Fatalf("Complete: %v %v", o, err)
			}
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("101 job queue writes from one goroutine waited %v for company, want none", waited)
		}
	})
}
