package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// loadDeploys takes up the deploys an earlier leader saved in the outbox
// and looks up their queued updates, so Deploys shows them, up to date,
// from New on.
func (l *Leader) loadDeploys() error {
	ctx := context.Background()
	if err := l.deploys.load(ctx, l.cfg.Store, l.cfg.Logger); err != nil {
		return fmt.Errorf("leader: read the deploys' progress from the outbox: %w", err)
	}
	if err := l.deploys.reconcile(ctx, l.cfg.Store, l.clk.Now()); err != nil {
		return fmt.Errorf("leader: look up the deploys' updates in the outbox: %w", err)
	}
	return nil
}

// keepProgress reconciles the deploys' progress with the outbox and saves
// it there every Config.ProgressEvery until ctx ends.
func (l *Leader) keepProgress(ctx context.Context) {
	l.every(ctx, l.cfg.ProgressEvery, func() {
		l.saveProgress(ctx, false)
		l.progressRounds.Add(1)
	})
}

// every calls f every d on the leader's clock until ctx ends.
func (l *Leader) every(ctx context.Context, d time.Duration, f func()) {
	t := l.clk.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			f()
		}
	}
}

// saveProgress reconciles and saves once. A failure is logged (unless the
// store is closed: a crash, as a scenario plays it); a deploy it did not
// save is tried again after a backoff (see deployTracker.save), while
// the others are saved. The last save, as the leader stops, tries every
// deploy.
func (l *Leader) saveProgress(ctx context.Context, last bool) {
	now := l.clk.Now()
	err := l.deploys.reconcile(ctx, l.cfg.Store, now)
	if err == nil && last {
		err = l.deploys.saveWhere(ctx, l.cfg.Store, now, func(*deployState) bool { return true })
	} else if err == nil {
		err = l.deploys.save(ctx, l.cfg.Store, now)
	}
	if err != nil && !errors.Is(err, outbox.ErrClosed) {
		l.cfg.Logger.Warn("deploy progress not saved in the outbox", "err", err)
	}
}
