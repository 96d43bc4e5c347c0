package stats

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Buckets are log-linear, as in HdrHistogram: each power of two is split
// into 8 equal sub-buckets, so a bucket's width is at most 1/8 of its lower
// bound and a quantile read from it is within 12.5% of the true value.
// Values from 0 to 7 ns get a bucket each; the last power of two kept is
// 2^47 ns (about 39 hours), and anything larger lands in the last bucket.
// Max is kept exactly. The whole histogram is 368 counters (2.9 KiB).
const (
	subBits    = 3
	subCount   = 1 << subBits
	maxExp     = 48 // values < 2^maxExp ns get their own bucket
	numBuckets = (maxExp-subBits)*subCount + subCount
)

// Histogram records durations. The zero value is ready to use; all methods
// are safe for concurrent use and Record does not allocate. Many recorders
// (for example every worker of a group) may share one Histogram.
type Histogram struct {
	counts [numBuckets]atomic.Uint64
	sum    atomic.Int64
	max    atomic.Int64
}

func bucketOf(v int64) int {
	if v < subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	e := bits.Len64(uint64(v)) // v in [2^(e-1), 2^e)
	if e > maxExp {
		return numBuckets - 1
	}
	sub := int(v>>(e-1-subBits)) & (subCount - 1)
	return (e-subBits)*subCount + sub
}

// bucketUpper returns the largest value that lands in bucket i.
func bucketUpper(i int) int64 {
	if i < subCount {
		return int64(i)
	}
	e := i/subCount + subBits // values have bit length e
	sub := int64(i % subCount)
	lower := int64(1)<<(e-1) + sub<<(e-1-subBits)
	return lower + int64(1)<<(e-1-subBits) - 1
}

// Record adds one observation. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(v)].Add(1)
	h.sum.Add(v)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Snapshot copies the histogram. Under concurrent Records the copy may be a
// few observations apart between fields; each field is itself consistent.
func (h *Histogram) Snapshot() HistogramSnapshot {
	var s HistogramSnapshot
	s.counts = make([]uint64, numBuckets)
	for i := range h.counts {
		c := h.counts[i].Load()
		s.counts[i] = c
		s.Count += c
	}
	s.Sum = time.Duration(h.sum.Load())
	s.Max = time.Duration(h.max.Load())
	return s
}

// Reset clears the histogram. Not atomic with concurrent Records.
func (h *Histogram) Reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.sum.Store(0)
	h.max.Store(0)
}

// HistogramSnapshot is a copy of a Histogram that can be queried.
type HistogramSnapshot struct {
	Count  uint64
	Sum    time.Duration
	Max    time.Duration
	counts []uint64
}

// Since returns the observations recorded between earlier (a snapshot of
// the same histogram) and s. Its Max is not known exactly: it is the upper
// bound of the highest bucket the difference holds, capped by s.Max.
func (s HistogramSnapshot) Since(earlier HistogramSnapshot) HistogramSnapshot {
	d := HistogramSnapshot{Sum: s.Sum - earlier.Sum, counts: make([]uint64, len(s.counts))}
	for i := range s.counts {
		c := s.counts[i]
		if i < len(earlier.counts) {
			c -= min(c, earlier.counts[i])
		}
		d.counts[i] = c
		d.Count += c
		if c > 0 {
			d.Max = min(time.Duration(bucketUpper(i)), s.Max)
			if i == numBuckets-1 {
				d.Max = s.Max
			}
		}
	}
	return d
}

// Mean returns the average, or 0 with no observations.
func (s HistogramSnapshot) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}

// Quantile returns the upper bound of the bucket holding the q-th quantile
// (0 < q <= 1), never more than Max; 0 with no observations. The answer is
// at most 12.5% above the true value.
func (s HistogramSnapshot) Quantile(q float64) time.Duration {
	if s.Count == 0 {
		return 0
	}
	if q <= 0 {
		q = 0
	}
	if q > 1 {
		q = 1
	}
	rank := uint64(q * float64(s.Count))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range s.counts {
		seen += c
		if seen >= rank {
			if i == numBuckets-1 { // the overflow bucket has no upper bound
				return s.Max
			}
			return min(time.Duration(bucketUpper(i)), s.Max)
		}
	}
	return s.Max
}
