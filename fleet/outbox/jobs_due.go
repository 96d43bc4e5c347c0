package outbox

import "time"

// leaseDue is one lease's deadline: job n's lease ends at until.
type leaseDue struct {
	until time.Time
	n     uint64
}

// leaseHeap is a min-heap of lease deadlines, soonest first. A lease
// that ends early (its job done, or leased again after it expired)
// leaves its entry behind, to be passed over when it comes up: each
// lease adds one entry and each entry leaves once, so the heap holds at
// most the leases given in the last lease length.
type leaseHeap []leaseDue

func (h *leaseHeap) push(d leaseDue) {
	*h = append(*h, d)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].until.Before(s[up].until) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

// pop removes and returns the soonest deadline; the heap must not be
// empty.
func (h *leaseHeap) pop() leaseDue {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].until.Before(s[least].until) {
			least = l
		}
		if r < len(s) && s[r].until.Before(s[least].until) {
			least = r
		}
		if least == i {
			break
		}
		s[i], s[least] = s[least], s[i]
		i = least
	}
	*h = s
	return top
}
