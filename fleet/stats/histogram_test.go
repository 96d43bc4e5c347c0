package stats

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestBucketsAreContiguousAndOrdered(t *testing.T) {
	prev := int64(-1)
	for i := 0; i < numBuckets; i++ {
		up := bucketUpper(i)
		if up <= prev {
			t.Fatalf("bucket %d upper %d <= previous %d", i, up, prev)
		}
		if i < numBuckets-1 {
			if got := bucketOf(up); got != i {
				t.Fatalf("bucketOf(upper(%d)=%d) = %d", i, up, got)
			}
			if got := bucketOf(up + 1); got != i+1 {
				t.Fatalf("bucketOf(upper(%d)+1) = %d, want %d", i, got, i+1)
			}
		}
		prev = up
	}
}

func TestQuantileWithinRelativeError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	vals := make([]time.Duration, 10000)
	for i := range vals {
		vals[i] = time.Duration(r.ExpFloat64() * float64(time.Millisecond))
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	s := h.Snapshot()
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := vals[int(q*float64(len(vals)))-1]
		got := s.Quantile(q)
		if got < want || float64(got) > float64(want)*1.125+1 {
			t.Errorf("p%v = %v, true %v: outside [true, true×1.125]", q*100, got, want)
		}
	}
	if s.Max != vals[len(vals)-1] {
		t.Errorf("Max = %v, want %v", s.Max, vals[len(vals)-1])
	}
	if s.Count != 10000 {
		t.Errorf("Count = %d", s.Count)
	}
}

func TestEmptyAndHugeValues(t *testing.T) {
	var h Histogram
	if q := h.Snapshot().Quantile(0.99); q != 0 {
		t.Fatalf("empty p99 = %v", q)
	}
	h.Record(-5)
	h.Record(1000 * time.Hour)
	s := h.Snapshot()
	if s.Quantile(1) != 1000*time.Hour || s.Quantile(0.5) != 0 {
		t.Fatalf("p100 = %v p50 = %v", s.Quantile(1), s.Quantile(0.5))
	}
}

func BenchmarkRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(0)
		for pb.Next() {
			d += 977
			h.Record(d % time.Second)
		}
	})
}

// TestSince: the difference of two snapshots holds what was recorded in
// between, and its quantiles are those of that part alone.
func TestSince(t *testing.T) {
	var h Histogram
	for range 100 {
		h.Record(time.Second)
	}
	before := h.Snapshot()
	for range 10 {
		h.Record(time.Millisecond)
	}
	d := h.Snapshot().Since(before)
	if d.Count != 10 || d.Sum != 10*time.Millisecond || d.Mean() != time.Millisecond {
		t.Fatalf("count %d sum %v mean %v; want 10, 10ms, 1ms", d.Count, d.Sum, d.Mean())
	}
	if q := d.Quantile(0.99); q < time.Millisecond || q > time.Millisecond*9/8 {
		t.Errorf("p99 %v, want 1ms within 12.5%% (the seconds before are not in it)", q)
	}
	if d.Max < time.Millisecond || d.Max > time.Millisecond*9/8 {
		t.Errorf("max %v, want the upper bound of the 1ms bucket", d.Max)
	}
	if e := before.Since(before); e.Count != 0 || e.Quantile(0.99) != 0 {
		t.Errorf("empty difference: count %d p99 %v", e.Count, e.Quantile(0.99))
	}
}
