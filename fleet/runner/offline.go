package runner

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// offlineSalt separates the offline schedule's random stream from the
// worker's own (PCG(seed, index)): the same worker, a different stream.
const offlineSalt = 0x0ff1_1e00_0000_0000

// offlineTurn is a worker going away or coming back at a simulated time.
type offlineTurn struct {
	at   time.Duration
	i    int
	away bool
}

type offlineHeap []offlineTurn

func (h offlineHeap) Len() int { return len(h) }
func (h offlineHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].i < h[j].i
}
func (h offlineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *offlineHeap) Push(x any)   { *h = append(*h, x.(offlineTurn)) }
func (h *offlineHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// startOffline takes the workers with an offline profile away and back
// at seeded random times: gaps exponential with mean Every, periods drawn
// from For. One goroutine drives every worker's schedule from a queue
// ordered by time, so a large fleet costs no goroutine per worker. It
// returns nil when no worker has an offline profile. The drain brings
// everyone back; an offline period's end heals a worker that a timeline
// event partitioned too.
func (r *Runner) startOffline() *ownedLoop {
	h := &offlineHeap{}
	rngs := make(map[int]*rand.Rand)
	for i, ws := range r.specs {
		p := ws.Profile.Offline
		if p == nil || p.Every <= 0 {
			continue
		}
		rngs[i] = rand.New(rand.NewPCG(r.sc.Seed, uint64(i)|offlineSalt))
		heap.Push(h, offlineTurn{at: expGap(rngs[i], p.Every.D()), i: i, away: true})
	}
	if h.Len() == 0 {
		return nil
	}
	return goLoop(func(ctx context.Context) {
		for h.Len() > 0 {
			next := (*h)[0]
			if wait := r.untilSim(next.at); wait > 0 {
				if clock.Sleep(ctx, r.own, wait) != nil {
					return
				}
				continue
			}
			heap.Pop(h)
			p, w, rng := r.specs[next.i].Profile.Offline, r.workers[next.i], rngs[next.i]
			now := r.simNow()
			disconnect := p.Mode == scenario.OfflineDisconnect
			switch {
			case next.away && disconnect:
				r.disc[next.i].Store(true)
				w.Disconnect()
			case next.away:
				r.partition(next.i)
			case disconnect:
				r.disc[next.i].Store(false)
				w.Reconnect()
			default:
				r.heal(next.i)
			}
			if next.away {
				heap.Push(h, offlineTurn{at: now + max(p.For.Sample(rng), time.Millisecond), i: next.i})
			} else {
				heap.Push(h, offlineTurn{at: now + expGap(rng, p.Every.D()), i: next.i, away: true})
			}
		}
	})
}

// expGap draws an exponential gap with the given mean (a Poisson process).
func expGap(rng *rand.Rand, mean time.Duration) time.Duration {
	return max(time.Duration(rng.ExpFloat64()*float64(mean)), time.Millisecond)
}
