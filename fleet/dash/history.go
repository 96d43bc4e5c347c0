package dash

import (
	"math"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// metric is one series the charts draw from the run's history.
type metric int

const (
	mDepth     metric = iota // leader mailbox depth
	mAccepted                // leader mailbox accepted per second
	mRejected                // leader mailbox rejected (and dropped) per second
	mWait                    // leader mailbox wait p99 over the sample interval
	mOutbox                  // outbox depth
	mDelivered               // relay deliveries per second
	mPolls                   // job requests the leader received per second
	numMetrics
)

// maxBuckets bounds the history: however long the run, the charts keep
// this many buckets, each two merged into one when the run outgrows them.
// A chart is at most a few hundred braille dots wide, so 512 buckets draw
// the whole run at full detail on any terminal.
const maxBuckets = 512

// firstSpan is a bucket's width until the run outgrows maxBuckets of it:
// fine enough that a short run keeps every sample.
const firstSpan result.Seconds = 0.05

// agg is one series over a bucket: enough to draw its envelope (lo to
// hi) and to join it to its neighbours (first, last).
type agg struct {
	first, last, lo, hi float64
}

func (a *agg) add(v float64, first bool) {
	if first {
		*a = agg{v, v, v, v}
		return
	}
	a.last, a.lo, a.hi = v, min(a.lo, v), max(a.hi, v)
}

func (a *agg) merge(b agg) {
	a.last, a.lo, a.hi = b.last, min(a.lo, b.lo), max(a.hi, b.hi)
}

// bucket is the samples of one span of simulated time.
type bucket struct {
	idx    int64 // floor(T / span)
	t0, t1 result.Seconds
	n      int
	m      [numMetrics]agg
	limits []agg // per relay partition
	down   bool  // the leader was down at a sample of it
}

// history is the whole run's samples, downsampled into at most
// maxBuckets buckets of equal span, oldest first, so the end screen can
// show the whole run in bounded memory.
type history struct {
	span    result.Seconds
	buckets []bucket
	prev    result.Sample // for the rates
	have    bool
	parts   int // the most relay partitions seen
	// polled is set once the leader has received a job request: the
	// run has pulling workers, and the leader pane charts their polls.
	polled bool
}

// add folds in s, which must be newer than every sample added before.
func (h *history) add(s result.Sample) {
	if h.span == 0 {
		h.span = firstSpan
	}
	var v [numMetrics]float64
	v[mDepth] = float64(s.LeaderDepth)
	v[mWait] = float64(s.LeaderWaitP99Interval)
	v[mOutbox] = float64(s.OutboxDepth)
	if h.have && s.T > h.prev.T {
		dt := float64(s.T - h.prev.T)
		per := func(now, before uint64) float64 {
			if now < before { // a counter restarted with the leader
				return 0
			}
			return float64(now-before) / dt
		}
		v[mAccepted] = per(s.LeaderAccepted, h.prev.LeaderAccepted)
		v[mRejected] = per(s.LeaderRejected+s.LeaderDropped, h.prev.LeaderRejected+h.prev.LeaderDropped)
		v[mDelivered] = per(s.Delivered, h.prev.Delivered)
		v[mPolls] = per(s.JobRequests, h.prev.JobRequests)
	}
	h.polled = h.polled || s.JobRequests > 0
	h.prev, h.have = s, true
	h.parts = max(h.parts, len(s.Limits))

	idx := int64(math.Floor(float64(s.T / h.span)))
	for idx >= int64(maxBuckets) && h.span > 0 && h.spanNeeded(idx) {
		h.coarsen()
		idx = int64(math.Floor(float64(s.T / h.span)))
	}
	n := len(h.buckets)
	if n == 0 || h.buckets[n-1].idx != idx {
		h.buckets = append(h.buckets, bucket{idx: idx, t0: s.T})
		n++
	}
	b := &h.buckets[n-1]
	first := b.n == 0
	for i := range v {
		b.m[i].add(v[i], first)
	}
	for len(b.limits) < len(s.Limits) {
		b.limits = append(b.limits, agg{lo: math.NaN()})
	}
	for p, l := range s.Limits {
		f := float64(l)
		if math.IsNaN(b.limits[p].lo) {
			b.limits[p] = agg{f, f, f, f}
		} else {
			b.limits[p].add(f, false)
		}
	}
	b.t1 = s.T
	b.n++
	b.down = b.down || !s.LeaderUp
}

// spanNeeded reports whether idx lies past what maxBuckets of the
// current span cover from the first bucket on.
func (h *history) spanNeeded(idx int64) bool {
	if len(h.buckets) == 0 {
		return idx >= maxBuckets
	}
	return idx-h.buckets[0].idx >= maxBuckets
}

// coarsen doubles the span, merging each two neighbouring buckets.
func (h *history) coarsen() {
	h.span *= 2
	out := h.buckets[:0]
	for _, b := range h.buckets {
		b.idx /= 2
		if k := len(out); k > 0 && out[k-1].idx == b.idx {
			a := &out[k-1]
			for i := range a.m {
				a.m[i].merge(b.m[i])
			}
			for p, l := range b.limits {
				switch {
				case p >= len(a.limits):
					a.limits = append(a.limits, l)
				case math.IsNaN(a.limits[p].lo):
					a.limits[p] = l
				case !math.IsNaN(l.lo):
					a.limits[p].merge(l)
				}
			}
			a.t1, a.n, a.down = b.t1, a.n+b.n, a.down || b.down
			continue
		}
		out = append(out, b)
	}
	h.buckets = out
}

// end is the time of the newest sample (0 with none).
func (h *history) end() result.Seconds {
	if n := len(h.buckets); n > 0 {
		return h.buckets[n-1].t1
	}
	return 0
}

// start is the time of the oldest sample.
func (h *history) start() result.Seconds {
	if len(h.buckets) > 0 {
		return h.buckets[0].t0
	}
	return 0
}

// in returns the buckets that overlap [from, to].
func (h *history) in(from, to result.Seconds) []bucket {
	lo, hi := 0, len(h.buckets)
	for lo < hi && h.buckets[lo].t1 < from {
		lo++
	}
	for hi > lo && h.buckets[hi-1].t0 > to {
		hi--
	}
	return h.buckets[lo:hi]
}

// view is the window of simulated time the charts show: the whole run
// unless zoomed in, at its newest end unless panned back.
type view struct {
	zoom   int            // the window is the run's length / 2^zoom
	offset result.Seconds // how far before the newest sample it ends
}

// maxZoom bounds zooming in: 1/256 of the run.
const maxZoom = 8

// window is [from, to] over history h.
func (v view) window(h *history) (from, to result.Seconds) {
	start, end := h.start(), h.end()
	length := (end - start) / result.Seconds(math.Pow(2, float64(v.zoom)))
	to = max(start+length, end-v.offset)
	from = max(start, to-length)
	if to <= from {
		to = from + 1
	}
	return from, to
}

// pan moves the window by frac of its length: back (negative) or
// forward, within the run.
func (v *view) pan(h *history, frac float64) {
	from, to := v.window(h)
	length := to - from
	v.offset -= result.Seconds(frac) * length
	v.offset = min(max(0, v.offset), max(0, h.end()-h.start()-length))
}

// zoomBy zooms in (+1) or out (-1), keeping the window's end.
func (v *view) zoomBy(h *history, step int) {
	v.zoom = min(max(0, v.zoom+step), maxZoom)
	if v.zoom == 0 {
		v.offset = 0
	}
	v.pan(h, 0) // clamp the offset to the new length
}

// whole reports whether the window shows the whole run.
func (v view) whole() bool { return v.zoom == 0 }
