package outbox

import "context"

// NextSeq hands out the memory store's next sequence number: 1, 2, 3, …
// in call order, each once. The count lives as long as the store: a new
// Memory starts again at 1 (a bbolt store keeps counting across reopens).
func (s *Memory) NextSeq(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.lastSeq++
	return s.lastSeq, nil
}
