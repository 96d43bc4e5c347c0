package outbox

import (
	"context"
	"errors"
	"fmt"
)

// Records is a small table of named values a store keeps beside its queue,
// in the same file for a bbolt store: state that must survive a restart
// with the messages it describes (a leader keeps its deploys' progress
// there). It is not a second queue: records are few and small, and every
// write is one transaction. Methods are safe for concurrent use, and
// return ErrClosed once the store is closed.
type Records interface {
	// PutRecords writes rs atomically (all or none): a Record with a nil
	// Value deletes its key (a key that is not there is no error). A
	// record with an empty key, or a key or value past MaxRecordKey or
	// MaxRecordValue, is ErrInvalid and writes nothing.
	PutRecords(ctx context.Context, rs ...Record) error

	// GetRecord returns the value of key, or ErrNoRecord.
	GetRecord(ctx context.Context, key string) ([]byte, error)

	// ListRecords returns every record whose key starts with prefix
	// ("": all), in key order.
	ListRecords(ctx context.Context, prefix string) ([]Record, error)
}

// Record is one named value of Records.
type Record struct {
	Key   string
	Value []byte
}

// Limits on a Record.
const (
	MaxRecordKey   = 1 << 10
	MaxRecordValue = 16 << 20
)

// ErrNoRecord: GetRecord found no record with the key.
var ErrNoRecord = errors.New("outbox: no such record")

// validateRecords checks what PutRecords refuses before it writes.
func validateRecords(rs []Record) error {
	for i, r := range rs {
		switch {
		case r.Key == "":
			return fmt.Errorf("%w: record %d: empty key", ErrInvalid, i)
		case len(r.Key) > MaxRecordKey:
			return fmt.Errorf("%w: record %d: key of %d bytes, at most %d", ErrInvalid, i, len(r.Key), MaxRecordKey)
		case len(r.Value) > MaxRecordValue:
			return fmt.Errorf("%w: record %q: value of %d bytes, at most %d", ErrInvalid, r.Key, len(r.Value), MaxRecordValue)
		}
	}
	return nil
}

// Place is where a message is now, as Locate reports it.
type Place int

const (
	// Gone: neither queued nor a dead letter. Acked, dropped (expired,
	// overwritten, stale), replayed under a new id, purged — or never
	// enqueued.
	Gone Place = iota
	// Queued: waiting, backing off or parked.
	Queued
	// Leased: handed out by Dequeue and not yet settled (a lease past its
	// deadline counts until a Dequeue takes it back): its current attempt
	// may still requeue, drop or dead-letter it.
	Leased
	// Dead: in the dead letters.
	Dead
)

func (p Place) String() string {
	switch p {
	case Gone:
		return "gone"
	case Queued:
		return "queued"
	case Leased:
		return "leased"
	case Dead:
		return "dead"
	}
	return fmt.Sprintf("Place(%d)", int(p))
}

// Locator finds messages by id.
type Locator interface {
	// Locate reports where each of ids is now, in the order of ids. It
	// reads only: a caller that tracks messages (a leader's deploy
	// progress) learns from it which ones left the queue without the
	// caller seeing their delivery: expired, overwritten while in flight,
	// or dead-lettered out of attempts.
	Locate(ctx context.Context, ids ...uint64) ([]Place, error)
}
