package outbox_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Jobs contract, run on the memory queue and on the bbolt one.

type jobsOpener func(t *testing.T, capacity int) outbox.Jobs

func openMemoryJobs(t *testing.T, capacity int) outbox.Jobs {
	j, err := outbox.NewMemoryJobs(capacity)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func openBoltJobs(t *testing.T, capacity int) outbox.Jobs {
	b, err := outbox.OpenBolt(filepath.Join(t.TempDir(), "outbox.db"), outbox.Options{Durability: outbox.None})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	j, err := b.OpenJobs(capacity)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestMemoryJobsContract(t *testing.T) { runJobsContract(t, openMemoryJobs) }
func TestBoltJobsContract(t *testing.T)   { runJobsContract(t, openBoltJobs) }

func runJobsContract(t *testing.T, open jobsOpener) {
	const lease = 10 * time.Second
	t.Run("oldest first, one job per request", func(t *testing.T) {
		q := open(t, 10)
		ids, err := q.Add(ctx, t0, time.Second, 2*time.Second)
		if err != nil || len(ids) != 2 {
			t.Fatalf("Add: %v %v", ids, err)
		}
		j, ok, repeat, err := q.Lease(ctx, "w-1", "p1", t0, lease)
		if err != nil || !ok || repeat || j.ID != ids[0] || j.Work != time.Second || j.Worker != "w-1" {
			t.Fatalf("first lease: %+v ok=%v repeat=%v err=%v", j, ok, repeat, err)
		}
		// The same request again (its reply was lost): the same job.
		again, ok, repeat, _ := q.Lease(ctx, "w-1", "p1", t0, lease)
		if !ok || !repeat || again.ID != j.ID {
			t.Fatalf("repeated request got %+v ok=%v repeat=%v, want %s again", again, ok, repeat, j.ID)
		}
		if st := q.Stats(t0); st.Depth != 1 || st.Leased != 1 || st.LeasesGiven != 1 {
			t.Fatalf("stats after a repeat: %+v", st)
		}
		k, ok, _, _ := q.Lease(ctx, "w-2", "p1", t0, lease)
		if !ok || k.ID != ids[1] {
			t.Fatalf("second worker got %+v ok=%v", k, ok)
		}
		if _, ok, _, _ := q.Lease(ctx, "w-3", "p1", t0, lease); ok {
			t.Fatal("a third job from a queue of two")
		}
	})
	t.Run("a lease not reported done expires and the job goes back", func(t *testing.T) {
		q := open(t, 10)
		ids, _ := q.Add(ctx, t0, 0, 0)
		j, _, _, _ := q.Lease(ctx, "w-1", "p1", t0, lease)
		if n, _ := q.Expire(ctx, t0.Add(lease-time.Millisecond)); n != 0 {
			t.Fatalf("expired %d before the lease's end", n)
		}
		if n, err := q.Expire(ctx, t0.Add(lease)); n != 1 || err != nil {
			t.Fatalf("Expire at the lease's end: %d, %v", n, err)
		}
		// It comes back first: before the job added after it.
		k, ok, _, _ := q.Lease(ctx, "w-2", "p9", t0.Add(lease), lease)
		if !ok || k.ID != j.ID || k.Leases != 2 {
			t.Fatalf("after expiry got %+v, want %s leased a second time", k, ids[0])
		}
		// The first holder's late report changes nothing.
		if o, _ := q.Complete(ctx, "w-1", j.ID); o != outbox.JobLate {
			t.Fatalf("late report: %v, want JobLate", o)
		}
		if o, _ := q.Complete(ctx, "w-2", j.ID); o != outbox.JobDone {
			t.Fatalf("holder's report: %v, want JobDone", o)
		}
		if o, _ := q.Complete(ctx, "w-2", j.ID); o != outbox.JobUnknown {
			t.Fatalf("second report: %v, want JobUnknown", o)
		}
		st := q.Stats(t0.Add(lease))
		if st.Expired != 1 || st.Done != 1 || st.Late != 1 || st.Depth != 1 || st.Leased != 0 || st.OldestAge != lease {
			t.Fatalf("stats: %+v", st)
		}
	})
	t.Run("a request answered never gets a second job", func(t *testing.T) {
		q := open(t, 10)
		_, _ = q.Add(ctx, t0, 0, 0)
		j, _, _, _ := q.Lease(ctx, "w-1", "p1", t0, lease)
		_, _ = q.Complete(ctx, "w-1", j.ID)
		// p1 again, after its job is done: a repeat, not a new lease.
		if k, ok, _, _ := q.Lease(ctx, "w-1", "p1", t0, lease); ok && k.ID != j.ID {
			t.Fatalf("request p1 got a second job %s", k.ID)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		q := open(t, 2)
		if _, err := q.Add(ctx, t0, 0, 0, 0); !errors.Is(err, outbox.ErrFull) {
			t.Fatalf("three jobs into two: %v, want ErrFull", err)
		}
		if st := q.Stats(t0); st.Added != 0 || st.Depth != 0 {
			t.Fatalf("a refused Add left %+v", st)
		}
		if _, err := q.Add(ctx, t0, 0, 0); err != nil {
			t.Fatal(err)
		}
	})
}

// A restarted leader carries on with the queue: jobs, leases and their
// deadlines, and the numbering.
func TestBoltJobsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	b, err := outbox.OpenBolt(path, outbox.Options{Durability: outbox.None})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := b.OpenJobs(10)
	ids, _ := q.Add(ctx, t0, time.Second, 0, 0)
	j, _, _, _ := q.Lease(ctx, "w-1", "p1", t0, time.Minute)
	_, _ = q.Complete(ctx, "w-1", j.ID)
	k, _, _, _ := q.Lease(ctx, "w-2", "p1", t0, time.Minute)
	b.Close()

	b, err = outbox.OpenBolt(path, outbox.Options{Durability: outbox.None})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	q, err = b.OpenJobs(10)
	if err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(t0); st.Depth != 1 || st.Leased != 1 {
		t.Fatalf("reopened: %+v, want one queued and one leased", st)
	}
	if again, ok, repeat, _ := q.Lease(ctx, "w-2", "p1", t0, time.Minute); !ok || !repeat || again.ID != k.ID {
		t.Fatalf("w-2's repeated request after the restart got %+v", again)
	}
	if n, _ := q.Expire(ctx, t0.Add(time.Minute)); n != 1 {
		t.Fatalf("the lease from before the restart did not expire: %d", n)
	}
	more, _ := q.Add(ctx, t0, 0)
	if more[0] != "q4" || ids[2] != "q3" {
		t.Fatalf("numbering after the restart: %v after %v", more, ids)
	}
}
