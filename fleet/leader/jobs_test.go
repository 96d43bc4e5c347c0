package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// pull sends worker's job request id (reporting done) and returns the answer.
func (r *rig) pull(t *testing.T, worker, id, done string) wire.Envelope {
	t.Helper()
	b, err := wire.Encode(wire.Envelope{ID: id, Kind: wire.KindRequest, Body: wire.Body(wire.Request{What: wire.RequestJob, Done: done})})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(worker), b)
	env := fleettest.Receive(t, 10*time.Second, "the answer to "+id, r.link.out, r.seen)
	if env.Ref != id {
		t.Fatalf("answer to %q, want to %q", env.Ref, id)
	}
	return env
}

func jobOf(t *testing.T, env wire.Envelope) wire.Job {
	t.Helper()
	if env.Result != wire.ResultOK {
		t.Fatalf("answer %s (%s), want a job", env.Result, env.Reason)
	}
	var j wire.Job
	if err := env.BodyInto(&j); err != nil || j.ID == "" {
		t.Fatalf("job body %s: %v", env.Body, err)
	}
	if env.Key != j.ID || env.Seq != 1 {
		t.Fatalf("job %s travels with key %q seq %d, want its id and 1 (the duplicate guard's)", j.ID, env.Key, env.Seq)
	}
	return j
}

// TestPullOneJobPerRequest: each job request gets exactly one job, the
// same one when the request comes again; an empty queue answers drained
// with a retry time; a job not reported done goes back to the queue when
// its lease ends, and a report completes it.
func TestPullOneJobPerRequest(t *testing.T) {
	jobs, _ := outbox.NewMemoryJobs(10)
	r := startLeader(t, leader.Config{Jobs: jobs, JobLease: 10 * time.Second, JobRetry: 750 * time.Millisecond, Service: dist.Const(time.Microsecond)})
	if _, err := r.l.AddJobs(context.Background(), 250*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	a := jobOf(t, r.pull(t, "w-1", "p1", ""))
	if a.LeaseMs != 10_000 || a.WorkMs != 250 {
		t.Fatalf("first job %+v, want lease 10000 ms and work 250 ms", a)
	}
	if again := jobOf(t, r.pull(t, "w-1", "p1", "")); again.ID != a.ID {
		t.Fatalf("request p1 again got job %s, want %s again", again.ID, a.ID)
	}
	b := jobOf(t, r.pull(t, "w-2", "p1", ""))
	if b.ID == a.ID {
		t.Fatal("two workers got the same job")
	}
	d := r.pull(t, "w-3", "p1", "")
	if d.Result != wire.ResultDrained || d.RetryAfterMs != 750 {
		t.Fatalf("empty queue answered %s retry %d ms, want drained retry 750", d.Result, d.RetryAfterMs)
	}
	// w-1 goes silent: its lease runs out and w-3 gets its job.
	r.clk.Advance(10 * time.Second)
	if c := jobOf(t, r.pull(t, "w-3", "p2", "")); c.ID != a.ID {
		t.Fatalf("after w-1's lease ran out w-3 got %s, want %s", c.ID, a.ID)
	}
	// w-2's lease ran out too, but nobody took its job since: its report
	// (with its next request) still completes it.
	if e := r.pull(t, "w-2", "p2", b.ID); e.Result != wire.ResultDrained {
		t.Fatalf("after its report w-2 got %s, want drained", e.Result)
	}
	st := r.l.Stats()
	if st.Jobs.Done != 1 || st.Jobs.Expired != 2 || st.Jobs.LeasesGiven != 3 || st.JobsDrained != 2 || st.Jobs.Leased != 1 {
		t.Fatalf("stats %+v drained %d", st.Jobs, st.JobsDrained)
	}
}

// TestPullRefusesUnknownWorkers: a job request from a worker that may not
// pull, or to a leader without a queue, is refused and counted.
func TestPullRefusesUnknownWorkers(t *testing.T) {
	jobs, _ := outbox.NewMemoryJobs(10)
	r := startLeader(t, leader.Config{Service: dist.Const(time.Microsecond), Jobs: jobs, JobWorkers: func(w string) bool { return w == "w-1" }})
	_, _ = r.l.AddJobs(context.Background(), 0)
	if e := r.pull(t, "w-9", "p1", ""); e.Result != wire.ResultReject || e.Reason == "" {
		t.Fatalf("w-9 got %s, want reject with a reason", e.Result)
	}
	if st := r.l.Stats(); st.JobsRefused != 1 || st.Jobs.LeasesGiven != 0 {
		t.Fatalf("refused %d, leases %d; want 1 and 0", st.JobsRefused, st.Jobs.LeasesGiven)
	}
	none := startLeader(t, leader.Config{})
	if e := none.pull(t, "w-1", "p1", ""); e.Result != wire.ResultReject {
		t.Fatalf("a leader without a queue answered %s, want reject", e.Result)
	}
}
