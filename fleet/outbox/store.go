package outbox

import (
	"context"
	"errors"
	"time"
)

// Store is a durable (bbolt) or in-memory queue of messages for many
// receivers, with per-receiver order, due-time backoff, leases, overwrite
// by key, TTL and dead letters. Both implementations pass the same contract
// tests. All methods are safe for concurrent use.
//
// Ordering and leases. Per receiver, messages are delivered in enqueue order
// and at most one is out at a time: Dequeue hands out only a receiver's head
// message, and only when it is due (SendAt <= now) and not already leased.
// While the head backs off, the receiver's later messages wait; other
// receivers are not held up. A dequeued message is leased until it is
// settled with Ack, Nack, Release, Park or DeadLetter (or Settle, which does any
// mix of them for many messages at once); a lease not settled within
// Options.LeaseTimeout (the relay crashed or hung) expires and the message
// is handed out again. Reopening a bbolt store expires every lease at once,
// since the process that held them is gone.
//
// Waiting and parking. A queued message that is not due waits for one of
// two things, and the store records which. Most wait for their due time:
// the SendAt they were enqueued with (a deploy's wave), or the one a Nack
// or Release gave them (a backoff, a retry-after). A message handed back
// with Park waits for its receiver instead: the relay parks a receiver's
// head when it knows the receiver is offline. Wake(receiver) releases only
// a parked message, making it due now; it never brings forward a message
// waiting for its due time, so a reconnecting receiver cannot jump its
// wave or cut a backoff short. A parked message also comes due at the
// recheck time Park gave it, in case no Wake ever comes. Only heads are
// ever parked (only heads are leased), and leasing a message unparks it.
// An Overwrite that replaces a parked message in place keeps it parked
// if the new version is due by then, and otherwise waits for the new
// version's SendAt, unparked.
//
// Overwrite. An Overwrite replaces the newest queued message with the same
// (Receiver, Key) in place, unless its Seq is lower (then it is Stale). If
// that message is in flight (leased), the receiver may already have it, so
// the new version is appended behind it instead and the one in flight is
// superseded. Acked, it was delivered, and the new version follows (the
// receiver dedupes by key and Seq). Dead-lettered (DeadLetter, or Nack at
// MaxAttempts), it goes to the dead letters as usual and the new version
// follows with a fresh attempt count. But handed back undelivered (Nack,
// Release, Park, its lease running out, a reopen) it is dropped and
// counted as Overwritten, as if the new version had replaced it in place:
// the new version takes over its Attempts and LastError, and the
// receiver's next message is due no sooner than the dropped one would
// have been (handed back parked, the dropped one passes its parking on to
// the receiver's next message if that one is due by then). So a receiver
// that was away gets the newest version only, never an older version
// after a newer one.
type Store interface {
	Records // named records kept beside the queue
	Locator // where a message is now

	// Enqueue adds messages atomically (all or none; a validation error or
	// ErrFull stores nothing): when it returns nil every message is
	// stored (and, for a bbolt store with durability sync or batch, on disk).
	// Receipts are in the order of msgs.
	Enqueue(ctx context.Context, msgs ...Message) ([]Receipt, error)

	// Dequeue leases up to max due head messages whose receivers hash to
	// partition (see PartitionOf and Partitions), oldest SendAt first (equal
	// SendAts: lower ID first). Heads whose TTL has run out are dropped and
	// counted as expired on the way, and the receiver's next message is
	// considered in their place.
	Dequeue(ctx context.Context, partition, max int) ([]Message, error)

	// Settle settles leased messages in one go: for a bbolt store one
	// write transaction (and, with durability sync or batch, on disk when
	// it returns), which is what makes a busy relay fast. Each Settlement
	// is applied in order as the matching single call below would be
	// (SettleAck as Ack, and so on), so the same id twice settles once and
	// the second gets ErrNotLeased. Results are in the order of ss. A
	// message that is not leased gets a result whose Err wraps
	// ErrNotLeased and does not stop the others. A returned error means
	// nothing was settled: ErrClosed, ctx done, ErrInvalid for an unknown
	// SettleOp, or a failed write.
	Settle(ctx context.Context, ss ...Settlement) ([]SettleResult, error)

	// SettleAndDequeue is Settle(ctx, ss...) followed by Dequeue(ctx,
	// partition, max) as one step: for a bbolt store one write transaction
	// and one commit instead of two. It is a relay partition's turn:
	// settle what finished, lease what is due (which may be a receiver's
	// next message after an Ack, or a message just released due now).
	// The results are those the two calls would return; a returned error
	// means neither happened.
	SettleAndDequeue(ctx context.Context, partition, max int, ss ...Settlement) ([]SettleResult, []Message, error)

	// Ack removes a leased message: it was delivered.
	Ack(ctx context.Context, id uint64) error

	// Nack records a failed delivery of a leased message: Attempts+1,
	// LastError = cause, SendAt = now+delay. At Options.MaxAttempts it goes to
	// the dead letters instead (DeadLettered); superseded by an Overwrite
	// while leased, it is dropped instead (Superseded).
	Nack(ctx context.Context, id uint64, delay time.Duration, cause string) (NackResult, error)

	// Release returns a leased message without counting an attempt, due
	// again at sendAt (zero: now). Superseded by an Overwrite while
	// leased, it is dropped instead.
	Release(ctx context.Context, id uint64, sendAt time.Time) error

	// Park returns a leased message without counting an attempt, parked
	// for its receiver, who is offline: it waits until Wake(receiver), or
	// until recheck if no Wake has come by then (zero: no recheck, only
	// Wake releases it). Superseded by an Overwrite while leased, it is
	// dropped instead (see Overwrite above).
	Park(ctx context.Context, id uint64, recheck time.Time) error

	// DeadLetter moves a leased message to the dead letters at once (a
	// permanent error).
	DeadLetter(ctx context.Context, id uint64, cause string) error

	// Wake makes receiver's head message due now if it is parked (the
	// receiver has just come back online). A message waiting for its due
	// time (a future wave, a backoff), a leased one, or a receiver with
	// nothing queued is left alone.
	Wake(ctx context.Context, receiver string) error

	// DeadLetters lists up to max dead letters (max <= 0: all), oldest
	// first, with Attempts and LastError.
	DeadLetters(ctx context.Context, max int) ([]Message, error)

	// Replay moves the given dead letters (none given: all) back to the
	// queue with Attempts reset and due at once. Each gets a new ID at the
	// tail of its receiver's queue (per-receiver order is the order of
	// enqueue and replay). It returns how many moved.
	Replay(ctx context.Context, ids ...uint64) (int, error)

	// Purge deletes the given dead letters (none given: all) and returns how
	// many were deleted.
	Purge(ctx context.Context, ids ...uint64) (int, error)

	// Partitions is the number of partitions Dequeue divides receivers into.
	Partitions() int

	// NextSeq hands out the store's next sequence number: each number
	// once, each above every number handed out before it (for a bbolt
	// store, before it in the file's life: across reopens and crashes).
	// Senders stamp a Message's Seq with it, so versions of a key are
	// ordered by the store, never by a clock that can be wrong. A
	// returned error hands out nothing: ErrClosed, ctx done, or a failed
	// write.
	NextSeq(ctx context.Context) (uint64, error)

	// Stats returns the store's depth and counters.
	Stats() Stats

	// Close releases the store. Further calls return ErrClosed.
	Close() error
}

// Stats is a point-in-time view of a Store. Depth, Leased, DeadLetters and
// OldestAge describe the store now; the counters count events since the
// store was opened (a bbolt store's start at zero however much its file
// holds).
//
// The counters balance, which is what lets a caller prove nothing was
// lost. Every message an Enqueue accepted, and every dead letter replayed,
// is still queued or has left the queue exactly once, as one of Acked,
// Overwritten, Stale, Expired or DeadLettered:
//
//	Enqueued + Replayed = Acked + Overwritten + Stale + Expired + DeadLettered + Depth - Depth₀
//	DeadLetters = DeadLetters₀ + DeadLettered - Replayed - Purged
//
// where Depth₀ and DeadLetters₀ are what the store held once opened (zero
// for a new one; a bbolt store drops superseded leases while opening,
// before Depth₀ is counted). An Overwrite that replaces a queued version
// in place is one Enqueued, and the version it replaced one Overwritten;
// an Overwrite appended behind a version in flight is one Enqueued, and
// that version, if it comes back undelivered, one Overwritten; a stale
// Overwrite is one Enqueued and one Stale. Nacked, Released and Parked
// count events, not fates: a requeued message still counts in Depth.
type Stats struct {
	// Depth is the number of messages queued now, leased ones included.
	Depth int
	// PeakDepth is the most messages queued at once since the store was
	// opened (at first, the depth it opened with): the high-water mark
	// that Depth, read now and then, can miss. A Bolt store counts it
	// per commit.
	PeakDepth int
	// Leased is the number of queued messages handed out by Dequeue and
	// not yet settled (a lease past its deadline counts until a Dequeue
	// takes it back).
	Leased int
	// DeadLetters is the number of messages in the dead letters now.
	DeadLetters int
	// OldestAge is the age of the first queued message in enqueue order (0
	// if none). An overwrite refreshes its age, so after overwrites this
	// can read young.
	OldestAge time.Duration
	// Enqueued counts the messages Enqueue accepted, one per Receipt:
	// appended, replaced in place, or stale. A failed Enqueue counts none;
	// a replayed dead letter counts in Replayed instead.
	Enqueued uint64
	// Overwritten counts versions dropped for a newer one of their key:
	// replaced in place by an Overwrite (or a replayed one), or superseded
	// while in flight and then handed back undelivered (Nack, Release,
	// Park, lease expiry; see Store).
	Overwritten uint64
	// Stale counts Overwrites, enqueued or replayed, dropped on arrival
	// because a version with a higher Seq is queued.
	Stale uint64
	// Acked counts messages removed as delivered (Ack).
	Acked uint64
	// Nacked counts failed attempts whose message was requeued (a Nack
	// that neither dead-lettered nor dropped it).
	Nacked uint64
	// Released counts leases handed back without an attempt whose message
	// was requeued (a Release that did not drop it). A lease that runs out
	// is not counted.
	Released uint64
	// Parked counts leases handed back parked for an offline receiver
	// whose message was requeued (a Park that did not drop it).
	Parked uint64
	// Expired counts messages dropped at Dequeue because their TTL had run
	// out.
	Expired uint64
	// DeadLettered counts messages moved to the dead letters: DeadLetter,
	// or a Nack at MaxAttempts.
	DeadLettered uint64
	// Replayed counts dead letters moved back to the queue (Replay).
	Replayed uint64
	// Purged counts dead letters deleted (Purge).
	Purged uint64
}

// Errors returned by Store methods.
var (
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("outbox: store closed")
	// ErrNotLeased: Ack, Nack, Release, Park, DeadLetter or one Settlement of
	// Settle named a message that is not currently leased (unknown, already settled, or its lease
	// expired and it was handed out again).
	ErrNotLeased = errors.New("outbox: message not leased")
	// ErrFull: a bounded store (Options.MaxDepth) has no room.
	ErrFull = errors.New("outbox: store full")
	// ErrInvalid: a message lacks a required field (Receiver, Kind, or Key
	// for Overwrite).
	ErrInvalid = errors.New("outbox: invalid message")
)

// PartitionOf returns the partition of receiver among n: FNV-1a of the
// receiver id, modulo n. A receiver's messages always land in one
// partition, so its order is kept.
func PartitionOf(receiver string, n int) int {
	if n <= 1 {
		return 0
	}
	// FNV-1a, 32 bit, inline so the hot path does not allocate.
	h := uint32(2166136261)
	for i := 0; i < len(receiver); i++ {
		h ^= uint32(receiver[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}
