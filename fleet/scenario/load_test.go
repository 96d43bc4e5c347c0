package scenario

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestLoadBad loads every file in testdata/bad and compares the error text
// with its golden file: the whole message a user sees, positions included.
func TestLoadBad(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file)
			if err == nil {
				t.Fatalf("loaded without error: %+v", s)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error is %T, want Errors: %v", err, err)
			}
			for _, e := range es {
				if e.File != file || e.Line < 1 || e.Col < 1 || e.Msg == "" {
					t.Errorf("error without a place: %#v", e)
				}
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("error text differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	_, err := Load("testdata/no-such-file.yaml")
	var es Errors
	if err == nil || errors.As(err, &es) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a not-exist error that is not Errors", err)
	}
}

func TestLoadMinimalDefaults(t *testing.T) {
	s, err := Load("testdata/good/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := s.Fleet.Worker
	l := s.Leader
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"file", s.File, "testdata/good/minimal.yaml"},
		{"seed", s.Seed, uint64(1)},
		{"speed", s.Speed, 1.0},
		{"drain", s.Drain, Duration(time.Minute)},
		{"sample_every", s.SampleEvery, Duration(200 * time.Millisecond)},
		{"worker mailbox", *w.Mailbox, MailboxSpec{Capacity: 16, Policy: mailbox.Reject}},
		{"worker service", *w.Service, dist.Const(time.Millisecond)},
		{"worker heartbeat", w.Heartbeat, (*Duration)(nil)},
		{"worker reconnect", *w.Reconnect, ReconnectSpec{Policy: "backoff", Base: Duration(time.Second), Cap: Duration(time.Minute)}},
		{"worker keepalive", *w.KeepAlive, Duration(5 * time.Second)},
		{"worker ask_timeout", *w.AskTimeout, Duration(5 * time.Second)},
		{"worker version", *w.Version, "1.0.0"},
		{"worker local_outbox", *w.LocalOutbox, 1000},
		{"leader mailbox", l.Mailbox, MailboxSpec{Capacity: 1000, Policy: mailbox.Reject, BlockTimeout: Duration(time.Second)}},
		{"leader service", *l.Service, dist.Const(time.Millisecond)},
		{"leader heartbeat_interval", l.HeartbeatInterval, Duration(30 * time.Second)},
		{"leader ask_timeout", l.AskTimeout, Duration(5 * time.Second)},
		{"outbox", l.Outbox, OutboxSpec{Store: "bolt", Durability: "batch", Partitions: 4, MaxAttempts: 10, LeaseTimeout: Duration(30 * time.Second)}},
		{"relay interval", l.Relay.Interval, Duration(5 * time.Millisecond)},
		{"relay batch", l.Relay.Batch, 20},
		{"relay limit", l.Relay.Limit, LimitSpec{Initial: 10, Min: 1, Max: 50, Strategy: "aimd"}},
		{"relay backoff", l.Relay.Backoff, BackoffSpec{Base: Duration(100 * time.Millisecond), Cap: Duration(30 * time.Second)}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

func TestLoadFull(t *testing.T) {
	s, err := Load("testdata/good/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "full-example" || s.Seed != 42 || s.Speed != 20 || s.Duration != Duration(10*time.Minute) ||
		s.Drain != Duration(2*time.Minute) || s.SampleEvery != Duration(time.Second) || s.Fleet.Ramp != Duration(10*time.Second) {
		t.Errorf("top level: %+v", s)
	}
	if !strings.HasPrefix(s.Description, "Exercises every key of the format. The first") {
		t.Errorf("description %q", s.Description)
	}
	g := s.Fleet.Groups
	if len(g) != 3 {
		t.Fatalf("groups: %+v", g)
	}
	// config-servers sets the capacity only: the policy is the fleet's.
	if *g[0].Mailbox != (MailboxSpec{Capacity: 2, Policy: mailbox.DropOldest}) || g[0].Service != nil {
		t.Errorf("config-servers: %+v", g[0])
	}
	if o := g[1].Offline; g[1].Percent != 10 || o == nil || o.Mode != "disconnect" || o.Every != Duration(5*time.Minute) || o.For.Kind != dist.Exponential {
		t.Errorf("flaky: %+v %+v", g[1], o)
	}
	// herd merges the fleet profile with << and overrides reconnect's policy.
	if r := g[2].Reconnect; r.Policy != "immediate" || r.Base != Duration(500*time.Millisecond) || *g[2].Heartbeat != Duration(5*time.Second) {
		t.Errorf("herd: %+v %+v", g[2], r)
	}
	ws, err := s.Workers()
	if err != nil || len(ws) != 1000 || ws[0].Group != "config-servers" || ws[3].Group != "flaky" || ws[103].Group != "herd" || ws[203].Group != DefaultGroup {
		t.Fatalf("layout: %v", err)
	}
	if ws[0].Profile.Mailbox.Capacity != 2 || ws[203].Profile.Mailbox.Capacity != 8 {
		t.Errorf("profiles: %+v / %+v", ws[0].Profile.Mailbox, ws[203].Profile.Mailbox)
	}
	l := s.Leader
	if l.Mailbox != (MailboxSpec{Capacity: 500, Policy: mailbox.Block, BlockTimeout: Duration(200 * time.Millisecond)}) ||
		l.Outbox != (OutboxSpec{Store: "bolt", Durability: "none", Partitions: 8, MaxAttempts: 5, LeaseTimeout: Duration(10 * time.Second), MaxDepth: 100000}) ||
		l.Relay.Limit != (LimitSpec{Initial: 20, Min: 2, Max: 80, Strategy: "aimd"}) || l.Relay.Batch != 50 {
		t.Errorf("leader: %+v", l)
	}
	// The timeline is sorted by time, stably: the two events at 1m keep
	// their file order.
	var order []string
	for _, ev := range s.Timeline {
		order = append(order, ev.At.String()+" "+actionOf(ev))
	}
	want := "0s crash|1m0s partition|1m0s crash|2m0s heal|3m0s disconnect|4m0s reconnect|5m0s deploy|6m0s leader_crash|7m0s heartbeat_storm|8m0s set_capacity|8m0s set_leader|9m0s poison|9m30s speed"
	if got := strings.Join(order, "|"); got != want {
		t.Errorf("timeline\n got %s\nwant %s", got, want)
	}
	if sel := s.Timeline[0].Crash.Workers; sel.All || sel.Text != "" || sel.String() != "all" {
		t.Errorf("an empty crash: %+v, want the zero selector (all)", sel)
	}
	if sel := s.Timeline[2].Crash.Workers; !reflect.DeepEqual(sel.IDs, []string{"w-00001", "w-00002"}) {
		t.Errorf("ids: %+v", sel)
	}
	if d := s.Timeline[6].Deploy; d.Version != "2.1.0" || d.Kind != "firmware" || d.WaveSize != 100 || !d.WaitForWave || d.TTL != Duration(4*time.Minute) || !d.Workers.All {
		t.Errorf("deploy: %+v", d)
	}
	if p := s.Timeline[11].Poison; p.Count != 3 || p.Workers.Group != DefaultGroup {
		t.Errorf("poison: %+v", p)
	}
	if e := s.Expect[1]; e.Name != "depth bounded" || e.Timing {
		t.Errorf("expect: %+v", e)
	}
}

func actionOf(ev Event) string {
	rv := reflect.ValueOf(ev)
	for _, k := range actions {
		if !rv.FieldByIndex(fieldsOf(rv.Type()).byName[k]).IsNil() {
			return k
		}
	}
	return ""
}

// Merge keys over aliases that expand exponentially are refused before
// the decoder expands them, at the alias that passes the limit.
func TestLoadAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: bomb\nduration: 1m\nfleet: {count: 1}\nleader:\n  m0: &m0 {at: 1s}\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "  m%d: &m%d {<<: [*m%d, *m%d]}\n", i, i, i-1, i-1)
	}
	b.WriteString("timeline:\n  - *m39\n")
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:18:25: more than 50000 keys and list items in the file with its aliases expanded (*m12 repeats 16381)") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadAnchorsAndMerge(t *testing.T) {
	s := loadString(t, `
name: anchors
duration: 1m
fleet:
  count: 10
  worker: {mailbox: &box {capacity: 3, policy: coalesce}}
  groups:
    - {name: a, count: 1, mailbox: *box}
    - name: b
      count: 1
      mailbox:
        <<: *box
        capacity: 5
    - {name: c, count: 1, mailbox: &box {capacity: 7}}
    - {name: d, count: 1, mailbox: *box}
`)
	g := s.Fleet.Groups
	if *g[0].Mailbox != (MailboxSpec{Capacity: 3, Policy: mailbox.Coalesce}) || *g[1].Mailbox != (MailboxSpec{Capacity: 5, Policy: mailbox.Coalesce}) {
		t.Errorf("groups: %+v, %+v", *g[0].Mailbox, *g[1].Mailbox)
	}
	// An anchor defined again: an alias means the latest one before it.
	if g[3].Mailbox.Capacity != 7 {
		t.Errorf("group d: %+v", *g[3].Mailbox)
	}
}

// loadString parses a scenario file given as text.
func loadString(t *testing.T, text string) *Scenario {
	t.Helper()
	s, err := Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// TestLoadVersionRule: a deploy's version follows the rule the leader and
// its workers share, so a version a worker would refuse ("-1") is refused
// at load instead of being dead-lettered mid-run.
func TestLoadVersionRule(t *testing.T) {
	const file = `name: v
duration: 1m
fleet: {count: 10}
timeline:
  - at: 10s
    deploy: {version: "%s", workers: all}
`
	for _, tc := range []struct {
		version string
		ok      bool
	}{{"2.1.0", true}, {"2.1.0-rc.1", true}, {"-1", false}, {".1", false}, {"2 1", false}} {
		_, err := Parse("v.yaml", []byte(fmt.Sprintf(file, tc.version)))
		if tc.ok != (err == nil) {
			t.Errorf("version %q: err %v, want ok=%v", tc.version, err, tc.ok)
		} else if err != nil && !strings.Contains(err.Error(), "deploy.version") {
			t.Errorf("version %q: %v, want the error to name deploy.version", tc.version, err)
		}
	}
}
