package outbox

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// The bbolt store's on-disk encoding. A message record (the value in the
// msgs and dead buckets) is a fixed header followed by variable fields, so
// the hot paths can read a deadline or a due time without decoding the rest:
//
//	0      format (recVersion)
//	1      flags (flagOverwrite, flagSuperseded, flagParked)
//	2:10   lease deadline, unix ns (0: not leased)
//	10:18  SendAt, unix ns
//	18:26  CreatedAt, unix ns
//	26:34  TTL, ns
//	34:42  Seq
//	42:    uvarint Attempts; uvarint-length-prefixed Receiver, Kind, Key,
//	       LastError; then Payload to the end
//
// All fixed fields are big-endian. The message id is the record's key, not
// part of the value, so a record can be encoded before its id is known
// (outside the write transaction, in the caller's goroutine).

const (
	recVersion    = 1
	recHeaderLen  = 42
	flagOverwrite = 1 << 0
	// flagSuperseded marks a leased message an Overwrite found in flight
	// (see Bolt.Enqueue). A build that predates it ignores the bit, and
	// so requeues such a message as it always did.
	flagSuperseded = 1 << 1
	// flagParked marks a head parked for its offline receiver (Park): its
	// SendAt is a recheck, and Wake makes it due now. A build that
	// predates it ignores the bit and takes the recheck for a due time, as
	// it always did. Files written before it hold no parked messages:
	// what an older build handed back for an offline receiver waits for
	// the recheck it was given (at most the relay's OfflineRecheck),
	// since nothing tells it from a backoff.
	flagParked = 1 << 2
)

// rec is a decoded record. Its byte slices alias the buffer it was decoded
// from: inside a transaction they are valid until the transaction ends.
type rec struct {
	overwrite  bool
	superseded bool
	parked     bool
	leaseUntil int64
	sendAt     int64
	createdAt  int64
	ttl        int64
	seq        uint64
	attempts   uint64
	receiver   []byte
	kind       []byte
	key        []byte
	lastErr    []byte
	payload    []byte
}

// newRec builds the record of a message being enqueued at now: a zero
// SendAt means due at once, and CreatedAt is always the enqueue time.
func newRec(m *Message, now int64) rec {
	r := rec{
		overwrite: m.Conflict == Overwrite,
		sendAt:    now,
		createdAt: now,
		ttl:       int64(m.TTL),
		seq:       m.Seq,
		receiver:  []byte(m.Receiver),
		kind:      []byte(m.Kind),
		key:       []byte(m.Key),
		payload:   m.Payload,
	}
	if !m.SendAt.IsZero() {
		r.sendAt = unixNano(m.SendAt)
	}
	return r
}

// encode returns r as a freshly allocated record. bbolt keeps the slice
// passed to Put until the transaction ends, so records are never reused.
func (r *rec) encode() []byte {
	n := recHeaderLen + binary.MaxVarintLen64*5 +
		len(r.receiver) + len(r.kind) + len(r.key) + len(r.lastErr) + len(r.payload)
	b := make([]byte, recHeaderLen, n)
	b[0] = recVersion
	if r.overwrite {
		b[1] |= flagOverwrite
	}
	if r.superseded {
		b[1] |= flagSuperseded
	}
	if r.parked {
		b[1] |= flagParked
	}
	binary.BigEndian.PutUint64(b[2:], uint64(r.leaseUntil))
	binary.BigEndian.PutUint64(b[10:], uint64(r.sendAt))
	binary.BigEndian.PutUint64(b[18:], uint64(r.createdAt))
	binary.BigEndian.PutUint64(b[26:], uint64(r.ttl))
	binary.BigEndian.PutUint64(b[34:], r.seq)
	b = binary.AppendUvarint(b, r.attempts)
	for _, f := range [...][]byte{r.receiver, r.kind, r.key, r.lastErr} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return append(b, r.payload...)
}

// decodeRec parses a record. A record it cannot parse means the file was
// damaged (or written by a different program), so the error wraps
// ErrCorrupt.
func decodeRec(b []byte) (rec, error) {
	var r rec
	if len(b) < recHeaderLen || b[0] != recVersion {
		return r, fmt.Errorf("%w: bad message record (%d bytes, format %d)", ErrCorrupt, len(b), firstByte(b))
	}
	r.overwrite = b[1]&flagOverwrite != 0
	r.superseded = b[1]&flagSuperseded != 0
	r.parked = b[1]&flagParked != 0
	r.leaseUntil = int64(binary.BigEndian.Uint64(b[2:]))
	r.sendAt = int64(binary.BigEndian.Uint64(b[10:]))
	r.createdAt = int64(binary.BigEndian.Uint64(b[18:]))
	r.ttl = int64(binary.BigEndian.Uint64(b[26:]))
	r.seq = binary.BigEndian.Uint64(b[34:])
	rest := b[recHeaderLen:]
	var n int
	if r.attempts, n = binary.Uvarint(rest); n <= 0 {
		return r, fmt.Errorf("%w: bad attempts in message record", ErrCorrupt)
	}
	rest = rest[n:]
	for _, f := range [...]*[]byte{&r.receiver, &r.kind, &r.key, &r.lastErr} {
		l, n := binary.Uvarint(rest)
		if n <= 0 || l > uint64(len(rest)-n) {
			return r, fmt.Errorf("%w: bad field length in message record", ErrCorrupt)
		}
		*f = rest[n : n+int(l) : n+int(l)]
		rest = rest[n+int(l):]
	}
	r.payload = rest
	return r, nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// recSendAt reads only the due time of an encoded record (a head being
// promoted needs nothing else).
func recSendAt(b []byte) (int64, error) {
	if len(b) < recHeaderLen || b[0] != recVersion {
		return 0, fmt.Errorf("%w: bad message record", ErrCorrupt)
	}
	return int64(binary.BigEndian.Uint64(b[10:])), nil
}

// expired reports whether r's TTL has run out at now (as Message.Expired).
func (r *rec) expired(now int64) bool {
	return r.ttl > 0 && now >= addNano(r.createdAt, time.Duration(r.ttl))
}

// message copies r out of the transaction's memory into a Message.
func (r *rec) message(id uint64) Message {
	m := Message{
		ID:        id,
		Receiver:  string(r.receiver),
		Kind:      string(r.kind),
		Key:       string(r.key),
		Seq:       r.seq,
		TTL:       time.Duration(r.ttl),
		SendAt:    fromUnixNano(r.sendAt),
		Attempts:  int(r.attempts),
		LastError: string(r.lastErr),
		CreatedAt: fromUnixNano(r.createdAt),
	}
	if r.overwrite {
		m.Conflict = Overwrite
	}
	if len(r.payload) > 0 {
		m.Payload = append([]byte(nil), r.payload...)
	}
	return m
}

// unixNano is t in unix nanoseconds, clamped to the int64 range (about
// years 1678..2262) so that absurd SendAt values still order correctly.
func unixNano(t time.Time) int64 {
	switch {
	case t.Before(minNanoTime):
		return math.MinInt64
	case t.After(maxNanoTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

func fromUnixNano(ns int64) time.Time { return time.Unix(0, ns) }

// addNano is a+d without wrapping past the int64 range.
func addNano(a int64, d time.Duration) int64 {
	s := a + int64(d)
	if d > 0 && s < a {
		return math.MaxInt64
	}
	if d < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// Index keys. Times in keys are unix ns with the sign bit flipped, so that
// the bytes sort as the times do.

func orderedNano(ns int64) uint64 { return uint64(ns) ^ 1<<63 }

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id) }

func keyID(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-8:]) }

// queueVal is the value of a receiver's entry in the recv bucket: the ids
// of its first (head) and last (tail) queued messages.
func queueVal(head, tail uint64) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, head)
	binary.BigEndian.PutUint64(v[8:], tail)
	return v
}

func queueEnds(v []byte) (head, tail uint64, err error) {
	if len(v) != 16 {
		return 0, 0, fmt.Errorf("%w: bad receiver queue entry (%d bytes)", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), nil
}

// keyIndexKey is receiver+0x00+key; its value is id(8)+seq(8) of the
// newest message queued with that key. Receivers hold no NUL, so the key
// is unambiguous.
func keyIndexKey(receiver, key []byte) []byte {
	p := make([]byte, 0, len(receiver)+1+len(key))
	return append(append(append(p, receiver...), 0), key...)
}

func keyIndexVal(id, seq uint64) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, id)
	binary.BigEndian.PutUint64(v[8:], seq)
	return v
}

// readyKey is partition(2)+sendAt(8)+id(8): a cursor seek to the partition
// finds its earliest-due head; ties go to the older id.
func readyKey(partition int, sendAt int64, id uint64) []byte {
	k := make([]byte, 18)
	binary.BigEndian.PutUint16(k, uint16(partition))
	binary.BigEndian.PutUint64(k[2:], orderedNano(sendAt))
	binary.BigEndian.PutUint64(k[10:], id)
	return k
}

func partitionPrefix(partition int) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(partition))
}

// readyDue reads partition and due time from a ready key.
func readyDue(k []byte) (partition int, sendAt int64) {
	return int(binary.BigEndian.Uint16(k)), int64(binary.BigEndian.Uint64(k[2:]) ^ 1<<63)
}

// leaseKey is deadline(8)+id(8): a cursor from the start finds the leases
// that have run out.
func leaseKey(deadline int64, id uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, orderedNano(deadline))
	binary.BigEndian.PutUint64(k[8:], id)
	return k
}

func leaseDeadline(k []byte) int64 { return int64(binary.BigEndian.Uint64(k) ^ 1<<63) }
