package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Two leaders (two fleets under their own prefixes) share one broker: each
// has a client id of its own, so the second one's login does not take the
// first one's session over. The first goes on publishing its stats after
// the second is online, and both stop with exit 0.
func TestTwoLeadersShareABroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	obs, err := transport.Connect(ctx, transport.ClientOptions{ID: "observer", Broker: "mem://", CleanSession: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close(true)
	aStats := make(chan struct{}, 100)
	bOnline := make(chan struct{}, 1)
	ta, tb := wire.Topics{Prefix: "a"}, wire.Topics{Prefix: "b"}
	if err := obs.Subscribe(ctx, ta.LeaderStats(), 0, func(string, []byte) {
		select {
		case aStats <- struct{}{}:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := obs.Subscribe(ctx, tb.LeaderStatus(), 1, func(_ string, p []byte) {
		if string(p) == "online" {
			bOnline <- struct{}{}
		}
	}); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	dir := t.TempDir()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	stderrs := make([]strings.Builder, 2)
	start := func(i int, prefix string, extra ...string) {
		args := append([]string{"run", "--broker", "tcp://" + b.Addr(), "--topic-prefix", prefix,
			"--outbox", filepath.Join(dir, prefix+".db"), "--durability", "none", "--stats-interval", "20ms"}, extra...)
		wg.Go(func() { codes[i] = Main(runCtx, args, &strings.Builder{}, &stderrs[i]) })
	}
	next := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			stop()
			wg.Wait()
			t.Fatalf("%s: timed out; leader a: exit %d\n%s\nleader b: exit %d\n%s", what, codes[0], stderrs[0].String(), codes[1], stderrs[1].String())
		}
	}
	start(0, "a")
	next(aStats, "leader a's first stats")
	start(1, "b", "--client-id", "_leader-b")
	next(bOnline, "leader b online")
	for len(aStats) > 0 { // reports a published before b logged in
		<-aStats
	}
	next(aStats, "leader a's stats after b logged in")
	next(aStats, "leader a's stats after b logged in")
	stop()
	wg.Wait()
	for i, code := range codes {
		if code != 0 {
			t.Errorf("leader %d: exit %d\n%s", i, code, stderrs[i].String())
		}
	}
	if !strings.Contains(stderrs[1].String(), "client_id=_leader-b") {
		t.Errorf("leader b did not log its --client-id:\n%s", stderrs[1].String())
	}
	if !strings.Contains(stderrs[0].String(), "client_id=_leader-") {
		t.Errorf("leader a did not log a generated client id:\n%s", stderrs[0].String())
	}
}

func TestClientIDs(t *testing.T) {
	a, b := newClientID(), newClientID()
	if a == b || validClientID(a) != nil || len(a) != len("_leader-")+16 {
		t.Errorf("generated ids %q and %q: want two different valid _leader-<16 hex> ids", a, b)
	}
	for _, id := range []string{"w-1", "leader", "_a b", "_x/y", "_" + strings.Repeat("x", maxClientIDLen)} {
		if err := validClientID(id); err == nil || !strings.Contains(err.Error(), "--client-id") {
			t.Errorf("--client-id %q: %v, want an error naming the flag", id, err)
		}
	}
}
