// Package stats holds fleetsim's measuring instruments. Every counter, gauge
// and histogram a mechanism keeps is one of these (or a plain atomic), so the
// dashboard, the reports, scenario expectations and the Prometheus endpoint
// all read the same values.
//
// Histogram is a fixed-memory, lock-free latency histogram:
//
//	var h stats.Histogram
//	h.Record(3 * time.Millisecond)
//	s := h.Snapshot()
//	fmt.Println(s.Quantile(0.99), s.Max)
package stats
