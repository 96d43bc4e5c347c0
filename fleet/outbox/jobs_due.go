package outbox

import (
	"container/heap"
	"time"
)

// leaseDue is one lease's deadline: job n's lease ends at until.
type leaseDue struct {
	until time.Time
	n     uint64
}

// leaseHeap is a min-heap of lease deadlines, soonest first (on
// container/heap, as the store's memHeap). A lease that ends early (its
// job done, or leased again after it expired) leaves its entry behind,
// to be passed over when it comes up: each lease adds one entry and each
// entry leaves once, so the heap holds at most the leases given in the
// last lease length.
type leaseHeap []leaseDue

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h leaseHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *leaseHeap) Push(x any)        { *h = append(*h, x.(leaseDue)) }
func (h *leaseHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

// push adds a deadline.
func (h *leaseHeap) push(d leaseDue) { heap.Push(h, d) }

// pop removes and returns the soonest deadline; the heap must not be
// empty.
func (h *leaseHeap) pop() leaseDue { return heap.Pop(h).(leaseDue) }
