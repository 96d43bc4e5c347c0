package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// lostAnswers carries 'leader deploy”s requests to a running leader's
// control.Server, in process, and loses every answer on its way back, as
// a broker that drops them would.
type lostAnswers struct{ srv *control.Server }

// The requester's side: a control.Session.
func (s lostAnswers) Subscribe(context.Context, string, byte, func(string, []byte)) error {
	return nil
}

func (s lostAnswers) Publish(_ context.Context, topic string, _ byte, _ bool, p []byte) error {
	s.srv.Handle(topic, bytes.Clone(p))
	return nil
}

// dropLink is the leader's side: a leader.Link whose publishes all go
// nowhere.
type dropLink struct{}

func (dropLink) Publish(context.Context, string, byte, bool, []byte) error           { return nil }
func (dropLink) Send(string, byte, []byte) error                                     { return nil }
func (dropLink) Subscribe(context.Context, string, byte, func(string, []byte)) error { return nil }

// startLost starts a leader's control.Server whose answers are all lost;
// it stops when the test does. Run it inside a synctest bubble.
func startLost(t *testing.T) lostAnswers {
	t.Helper()
	st, err := outbox.NewMemory(outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := leader.New(leader.Config{Link: dropLink{}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := control.NewServer(l, dropLink{}, wire.Topics{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { srv.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = st.Close()
	})
	return lostAnswers{srv}
}

// TestNoAnswerIsUnknown: when no answer comes, 'leader deploy' does not
// say that nothing was deployed: it says the outcome is unknown, how to
// look, and how to ask again safely, and exits 5, not 1 (refused).
func TestNoAnswerIsUnknown(t *testing.T) {
	o := deployOptions{timeout: 60 * time.Second, broker: "tcp://127.0.0.1:1883", prefix: "fleet"}
	three := 3
	for _, tc := range []struct {
		name string
		req  control.Request
		want []string
	}{
		{"deploy", control.Request{ID: "d1", Version: "2.0.0", Workers: []string{"w-1"}},
			[]string{"no answer from a leader on fleet/_leader/deploy within 1m0s (asked 9 times)", "the deploy may or may not have started",
				"--request-id d1", "deploys[].Request", "fleet/_leader/stats"}},
		{"cancel", control.Request{ID: "c1", Cancel: &three},
			[]string{"deploy 3 may or may not be cancelled", "leader deploy --cancel 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sess := startLost(t)
				ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
				defer cancel()
				ans, copies, err := control.Ask(ctx, sess, wire.Topics{}, tc.req)
				err = o.outcome(tc.req, wire.Topics{}, ans, copies, err, io.Discard)
				if cli.Code(err) != exitUnknown {
					t.Fatalf("exit %d (%v), want %d", cli.Code(err), err, exitUnknown)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q\nlacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "nothing was deployed") {
					t.Errorf("message %q claims nothing was deployed", err)
				}
			})
		})
	}
	if err := o.outcome(control.Request{ID: "d1"}, wire.Topics{}, control.Answer{ID: "d1", Error: "no"}, 1, nil, io.Discard); cli.Code(err) != cli.ExitRuntime {
		t.Errorf("a refusal exits %d, want %d", cli.Code(err), cli.ExitRuntime)
	}
}

// TestPrintAnswerCounts: a deploy to one worker in one wave says so in
// the singular ("in 1 waves" before); a cancel says what it withdrew.
func TestPrintAnswerCounts(t *testing.T) {
	zero := 0
	for _, tc := range []struct {
		req  control.Request
		ans  control.Answer
		want string
	}{
		{control.Request{ID: "r", Version: "2.0.0"}, control.Answer{OK: true, Targets: 1, Waves: 1}, "to 1 worker in 1 wave (request r)"},
		{control.Request{ID: "r", Version: "2.0.0"}, control.Answer{OK: true, Targets: 40, Waves: 4}, "to 40 workers in 4 waves (request r)"},
		{control.Request{ID: "c1", Cancel: &zero}, control.Answer{OK: true, Withdrawn: 2, InFlight: 1}, "deploy 0 cancelled: 2 updates withdrawn, 1 out for delivery finish (request c1)"},
	} {
		var out strings.Builder
		printAnswer(&out, tc.req, tc.ans)
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("printed %q, want %q", out.String(), tc.want)
		}
	}
}

// newControl is a control.Server on a leader whose publishes go nowhere,
// on an in-memory outbox.
func newControl(t *testing.T) *control.Server {
	t.Helper()
	st, err := outbox.NewMemory(outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l, err := leader.New(leader.Config{Link: dropLink{}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return control.NewServer(l, dropLink{}, wire.Topics{}, nil)
}

// TestDeployRequestMetrics: the requests a leader's control.Server
// refused land in /metrics' result label.
func TestDeployRequestMetrics(t *testing.T) {
	srv := newControl(t)
	for _, p := range []string{
		`{"id":"typed","version":2,"workers":["w-1"]}`,
		`{"id":"unknown","version":"2","workers":["w-1"],"canary":true}`,
		`{"id":7,"version":"2","workers":["w-1"]}`,
		`{"id":"ok","version":"2.0.0","workers":["w-1","w-2"],"wave_size":1}`,
	} {
		srv.Serve(context.Background(), []byte(p))
	}
	body := scrape(t, deploysOnly{}, srv, 20)
	for _, want := range []string{
		`fleetsim_leader_deploy_requests_total{result="refused"} 2`,
		`fleetsim_leader_deploy_requests_total{result="started"} 1`,
		`fleetsim_leader_deploy_requests_total{result="unanswered"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(body, "deploy_requests"))
		}
	}
}
