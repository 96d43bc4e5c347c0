package outbox

import (
	"context"
	"slices"
	"strings"
)

// PutRecords writes rs at once (Records). Values are copied.
func (s *Memory) PutRecords(ctx context.Context, rs ...Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validateRecords(rs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.records == nil {
		s.records = make(map[string][]byte)
	}
	for _, r := range rs {
		if r.Value == nil {
			delete(s.records, r.Key)
			continue
		}
		s.records[r.Key] = slices.Clone(r.Value)
	}
	return nil
}

// GetRecord returns a copy of key's value, or ErrNoRecord (Records).
func (s *Memory) GetRecord(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	v, ok := s.records[key]
	if !ok {
		return nil, ErrNoRecord
	}
	return slices.Clone(v), nil
}

// ListRecords returns copies of the records under prefix, in key order
// (Records). It sorts every matching key: the table is small by contract.
func (s *Memory) ListRecords(ctx context.Context, prefix string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	var out []Record
	for k, v := range s.records {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Record{Key: k, Value: slices.Clone(v)})
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Locate reports where each id is (Locator).
func (s *Memory) Locate(ctx context.Context, ids ...uint64) ([]Place, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([]Place, len(ids))
	for i, id := range ids {
		if e, ok := s.msgs[id]; ok {
			out[i] = Queued
			if !e.until.IsZero() {
				out[i] = Leased
			}
		} else if _, ok := s.dead[id]; ok {
			out[i] = Dead
		}
	}
	return out, nil
}
