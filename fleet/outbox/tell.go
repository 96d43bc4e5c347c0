package outbox

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Path is the way a message left Teller.Tell. Its String is the path label
// of the fleetsim_tell_reliable_total metric.
type Path int

const (
	// Failed: neither path took the message; Tell returned an error.
	Failed Path = iota
	// Direct: the receiver took the message at once; nothing was stored.
	Direct
	// Stored: the direct attempt failed and the message is in the outbox,
	// where a Relay will deliver it.
	Stored
)

func (p Path) String() string {
	switch p {
	case Failed:
		return "failed"
	case Direct:
		return "direct"
	case Stored:
		return "outbox"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// Teller sends with outbox fallback: try the
// receiver directly, which costs nothing extra when it is there and has
// room, and on any failure store the message for the relay. It counts
// which path each message took. Safe for concurrent use.
type Teller struct {
	st Store

	direct, stored, failed atomic.Uint64
}

// NewTeller returns a Teller that falls back to st.
func NewTeller(st Store) *Teller { return &Teller{st: st} }

// Tell tries direct(ctx, m) and, if it returns any error (full, offline,
// timeout, even permanent: the relay then dead-letters it with its cause),
// enqueues m in the store. It returns Direct or Stored with a nil error, or
// Failed with a *TellError when the store refused too. Tell blocks for as
// long as direct and the store's Enqueue do; give direct its own timeout,
// since an ended ctx makes the store refuse as well.
func (t *Teller) Tell(ctx context.Context, m Message, direct DeliveryFunc) (Path, error) {
	derr := direct(ctx, m)
	if derr == nil {
		t.direct.Add(1)
		return Direct, nil
	}
	if _, serr := t.st.Enqueue(ctx, m); serr != nil {
		t.failed.Add(1)
		return Failed, &TellError{Receiver: m.Receiver, Direct: derr, Store: serr}
	}
	t.stored.Add(1)
	return Stored, nil
}

// TellStats counts Tell calls by path since NewTeller
// (fleetsim_tell_reliable_total{path="direct"|"outbox"|"failed"}).
type TellStats struct {
	Direct, Stored, Failed uint64
}

// Stats returns the counters.
func (t *Teller) Stats() TellStats {
	return TellStats{Direct: t.direct.Load(), Stored: t.stored.Load(), Failed: t.failed.Load()}
}

// TellError reports that both paths failed; the message was not sent and
// not stored. errors.Is and errors.As see both causes.
type TellError struct {
	Receiver string
	Direct   error // why the direct attempt failed
	Store    error // why the outbox refused (ErrClosed, ErrFull, ...)
}

func (e *TellError) Error() string {
	return fmt.Sprintf("outbox: tell %q: direct failed (%v), outbox failed too (%v)", e.Receiver, e.Direct, e.Store)
}

// Unwrap returns both causes.
func (e *TellError) Unwrap() []error { return []error{e.Direct, e.Store} }
