package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestGatewaysOverMosquitto: two worker processes of 50 workers each, in
// gateways of 10 (ten MQTT sessions for the hundred workers), against
// Mosquitto and a leader process; every device is announced online via
// its gateway, a deploy reaches every one of them and each acks it, and
// at SIGTERM the devices and then their gateways say offline.
func TestGatewaysOverMosquitto(t *testing.T) {
	const n, size = 100, 10
	conf, addr := mosquittoConf(t)
	m := startMosquitto(t, conf, addr)
	broker := "tcp://" + addr
	l, maddr := startLeader(t, "--outbox", filepath.Join(t.TempDir(), "leader.db"), "--broker", broker, "--durability", "batch")
	var ws []*proc
	for first := 0; first < n; first += n / 2 {
		ws = append(ws, start(t, "worker", append([]string{"--broker", broker, "--count", strconv.Itoa(n / 2), "--start", strconv.Itoa(first),
			"--gateway-size", strconv.Itoa(size)}, workerFast...)...))
	}
	for _, w := range ws {
		if got := num(t, w.log(t, "workers starting", waitLong), "gateways"); got != n/2/size {
			t.Fatalf("a worker process started %d gateways, want %d", got, n/2/size)
		}
	}
	waitMetric(t, maddr, "fleetsim_workers_online", n, waitLong)

	st := watchStatuses(t, broker)
	fleettest.Eventually(t, 10*time.Second, "every device online via its gateway, every gateway online", func() error {
		return st.check(n, size, true)
	})
	deployAndWait(t, broker, maddr, n)

	applied, versions := stopWorkers(t, ws...)
	if applied != n || versions[0] != "2.0.0=50" || versions[1] != "2.0.0=50" {
		t.Errorf("devices applied %d updates, versions %v; want %d, each process 2.0.0=50", applied, versions, n)
	}
	for _, w := range ws {
		if rec := w.log(t, "workers stopped", time.Second); num(t, rec, "gateways") != n/2/size {
			t.Errorf("a worker process stopped with %v; want %d gateways", rec, n/2/size)
		}
	}
	fleettest.Eventually(t, 10*time.Second, "every device and every gateway offline", func() error {
		return st.check(n, size, false)
	})
	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("leader exit code %d, want 0", code)
	}
	if rec := l.log(t, "leader stopped", time.Second); num(t, rec, "acked") != n {
		t.Errorf("leader stopped with %v; want %d acked", rec, n)
	}
	m.stop(t, syscall.SIGTERM)
}

// statuses keeps the latest status on every device and gateway status
// topic.
type statuses struct {
	mu   sync.Mutex
	last map[string]wire.Status
	bad  []string
}

func watchStatuses(t *testing.T, broker string) *statuses {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := transport.Connect(ctx, transport.ClientOptions{ID: "e2e-statuses", Broker: broker, CleanSession: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(true) })
	st := &statuses{last: map[string]wire.Status{}}
	tp := wire.Topics{}
	for _, f := range []string{tp.AllStatus(), tp.AllGatewayStatus()} {
		err := sess.Subscribe(ctx, f, 1, func(topic string, p []byte) {
			s, err := wire.ParseStatus(topic, p)
			st.mu.Lock()
			defer st.mu.Unlock()
			if err != nil {
				st.bad = append(st.bad, err.Error())
				return
			}
			st.last[topic] = s
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// check says what differs from n devices w-0000… in gateways of size, all
// online (or all offline), each device's latest status via its gateway
// gw-<its first device>, and every gateway's own status alike.
func (st *statuses) check(n, size int, online bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.bad) > 0 {
		return fmt.Errorf("malformed statuses: %q", st.bad)
	}
	tp := wire.Topics{}
	wrong := 0
	var example string
	for i := range n {
		id := fmt.Sprintf("w-%04d", i)
		gw := fmt.Sprintf("gw-w-%04d", i/size*size)
		if s, ok := st.last[tp.Status(id)]; !ok || s.Online != online || s.Via != gw {
			wrong++
			example = fmt.Sprintf("%s: %v (seen %v)", id, s, ok)
		}
		if i%size != 0 {
			continue
		}
		if s, ok := st.last[tp.GatewayStatus(gw)]; !ok || s.Online != online || s.Via != "" || s.Epoch == "" {
			wrong++
			example = fmt.Sprintf("%s: %v (seen %v)", gw, s, ok)
		}
	}
	return fleettest.Unless(wrong == 0, "%d statuses not as wanted (online %v), e.g. %s", wrong, online, example)
}
