package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// run runs the pool until ctx ends, or until it is clear that it cannot
// connect: the broker refused a login, or no session connected within
// --connect-timeout. With --state it writes the workers' state at exit,
// however the run ends.
func run(ctx context.Context, cfgs []worker.Config, dial worker.MQTTDialer, o options, log *slog.Logger) error {
	watch := newConnWatch(dial, o.broker, log.With("component", "worker"))
	pool, err := worker.NewPool(cfgs, watch, worker.PoolOptions{Ramp: o.ramp})
	if err == nil {
		err = checkGateways(o.credentials, dial.Credentials, pool.Gateways())
	} else {
		err = cli.Usagef("%v", err)
	}
	if err != nil {
		return err
	}
	log.Info("workers starting", "count", len(cfgs), "first", cfgs[0].ID, "last", cfgs[len(cfgs)-1].ID, "broker", o.broker,
		"gateways", len(pool.Gateways()))
	runCtx, stopPool := context.WithCancel(ctx)
	defer stopPool()
	done := make(chan struct{})
	go func() { // owned by run: it waits on done below
		defer close(done)
		_ = pool.Run(runCtx)
	}()
	var tick, deadline <-chan time.Time
	if o.report > 0 {
		t := time.NewTicker(o.report)
		defer t.Stop()
		tick = t.C
	}
	if o.connTimeout > 0 {
		t := time.NewTimer(o.connTimeout)
		defer t.Stop()
		deadline = t.C
	}
	refused := watch.Refused()
	var failure error
	for {
		select {
		case <-tick:
			summary(log, "workers", pool.Stats())
		case <-deadline:
			deadline = nil
			if !watch.Up() {
				failure = unreachable(o, watch)
				stopPool()
			}
		case <-refused:
			refused = nil
			failure = refusedLogin(o, cfgs, dial, watch)
			stopPool()
		case <-done:
			summary(log, "workers stopped", pool.Stats())
			if o.state == "" {
				return failure
			}
			if err := writeState(o.state, pool.Workers()); err != nil {
				if failure == nil {
					return err
				}
				log.Error("write the state file", "err", err)
			}
			return failure
		}
	}
}

// unreachable is the error of a worker none of whose sessions connected
// within --connect-timeout.
func unreachable(o options, w *connWatch) error {
	why := "no connect attempt has finished: the broker does not answer"
	if n, last := w.Last(); last != nil {
		why = fmt.Sprintf("%s (%d connects failed, the last: %v)", reason(last), n, last)
	}
	return cli.Runtime(fmt.Errorf("no session connected to %s within --connect-timeout %v: %s; is the leader (or the broker) running and listening there?",
		o.broker, o.connTimeout, why))
}

// refusedLogin is the error of a worker whose login the broker refused
// before any of its sessions connected: a usage error, since retrying
// with the same flags cannot help.
func refusedLogin(o options, cfgs []worker.Config, dial worker.MQTTDialer, w *connWatch) error {
	id, err := w.Refusal()
	msg := fmt.Sprintf("the broker at %s refused the login of %s: %s", o.broker, id, reason(err))
	switch {
	case !transport.RefusedLogin(err):
		return cli.Usagef("%s; retrying cannot help", msg)
	case dial.Credentials == nil:
		return cli.Usagef("%s: it checks logins and this worker gave none; give --credentials-file, issued on the leader's machine by "+
			"'leader credentials --secret-file FLEET-SECRET --range %s..%s --out host.cred'",
			msg, cfgs[0].ID, cfgs[len(cfgs)-1].ID)
	}
	return cli.Usagef("--credentials-file %s: %s: these credentials are not from this broker's fleet secret, or the broker does not grant their range; "+
		"issue them again on the leader's machine ('leader credentials'); retrying cannot help", o.credentials, msg)
}

// summary logs the pool's counts; the e2e tests read the one at exit.
func summary(log *slog.Logger, msg string, s worker.PoolStats) {
	log.Info(msg, "workers", s.Workers, "online", s.Online, "gateways", s.Gateways, "gateways_online", s.GatewaysOnline, "gateway_logins_refused", s.GatewayLoginsRefused,
		"gateway_subscribes_refused", s.GatewaySubscribesRefused,
		"applied", s.Total.Applied, "duplicates", s.Total.Duplicates, "stale", s.Total.Stale,
		"versions", versions(s.ByVersion), "connects", s.Total.Connects, "reconnects", s.Total.Reconnects,
		"acked_ok", s.Total.AckedOK, "acked_full", s.Total.AckedFull)
}

// versions formats {"2.0.0": 3, "1.0.0": 1} as "1.0.0=1,2.0.0=3".
func versions(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ",")
}
