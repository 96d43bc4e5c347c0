package outbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Errors returned by OpenBolt. Each comes wrapped in an error whose text
// names the file and says what to do; test for them with errors.Is.
var (
	// ErrLocked: another process holds the outbox file open (bbolt takes an
	// exclusive lock), and it was not released within Options.OpenTimeout.
	// Usually a second leader started on the same file.
	ErrLocked = errors.New("outbox: file locked")
	// ErrCorrupt: the file is not a bbolt database, or it is one whose
	// pages are damaged. Nothing was changed; move the file aside (or point
	// --outbox at another path) to start with an empty outbox.
	ErrCorrupt = errors.New("outbox: file corrupt")
	// ErrNotOutbox: the file is a healthy bbolt database, but not a
	// fleetsim outbox (another program's, or a format version this build
	// cannot read). Nothing was changed.
	ErrNotOutbox = errors.New("outbox: not a fleetsim outbox")
)

// openError is an OpenBolt failure: a message for a person, and the
// sentinel plus the underlying cause for errors.Is.
type openError struct {
	msg   string
	kind  error
	cause error
}

func (e *openError) Error() string   { return e.msg }
func (e *openError) Unwrap() []error { return []error{e.kind, e.cause} }

func lockedError(path string, cause error) error {
	return &openError{
		msg:   fmt.Sprintf("outbox file %s is locked by another process (is a leader already running with this file?)", path),
		kind:  ErrLocked,
		cause: cause,
	}
}

func corruptError(path string, cause error) error {
	return &openError{
		msg: fmt.Sprintf("outbox file %s is not a bbolt database or is damaged (%v); "+
			"move it aside or point --outbox at another file to start with an empty outbox", path, cause),
		kind:  ErrCorrupt,
		cause: cause,
	}
}

func notOutboxError(path, why string) error {
	return &openError{
		msg: fmt.Sprintf("%s is a bbolt database but not a fleetsim outbox (%s); "+
			"point --outbox at another file", path, why),
		kind:  ErrNotOutbox,
		cause: errors.New(why),
	}
}

// Bucket names. The meta bucket's name is what marks a file as a fleetsim
// outbox; the rest are described in bolt.go.
var (
	bucketMeta  = []byte("fleetsim.outbox")
	bucketMsgs  = []byte("msgs")
	bucketRecv  = []byte("recv")
	bucketNext  = []byte("next")
	bucketReady = []byte("ready")
	bucketLease = []byte("lease")
	bucketKeys  = []byte("keys")
	bucketDead  = []byte("dead")

	metaFormat     = []byte("format")
	metaPartitions = []byte("partitions")
)

// formatVersion is the layout version written to the meta bucket. Bump it
// for any change an older build would misread.
const formatVersion = 1

// openDB opens the bbolt file, turning bbolt's errors and panics into the
// sentinels above. bbolt panics on some damaged pages; the file it opened
// and locked is then unlocked and closed here, since no *bolt.DB is
// returned to close (its memory mapping of the file leaks: the price of a
// damaged file, paid once).
func openDB(path string, o Options) (db *bolt.DB, err error) {
	var f *os.File
	bo := &bolt.Options{
		Timeout:      o.OpenTimeout,
		NoSync:       o.Durability == None,
		FreelistType: bolt.FreelistMapType, // O(1) page allocation in large files
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			var err error
			f, err = os.OpenFile(name, flag, perm)
			return f, err
		},
	}
	defer func() {
		if p := recover(); p != nil {
			if f != nil {
				unlockFile(f)
				f.Close()
			}
			db, err = nil, corruptError(path, fmt.Errorf("bbolt: %v", p))
		}
	}()
	db, err = bolt.Open(path, 0o600, bo)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, lockedError(path, err)
	case f == nil || errors.As(err, new(*fs.PathError)) || errors.As(err, new(syscall.Errno)):
		// Not opened at all, or the OS refused something (permissions,
		// a directory, disk full): the file itself may be fine.
		return nil, fmt.Errorf("outbox: open %s: %w", path, err)
	}
	// bbolt read the file and did not like it: ErrInvalid, ErrChecksum,
	// ErrVersionMismatch, "file size too small", ...
	return nil, corruptError(path, err)
}

// load prepares an opened file: it creates the buckets of a new file,
// checks the format of an old one, expires every lease (their holder is
// gone), rebuilds the ready index if Partitions changed, and counts the
// messages for Stats. Counting walks every page of the msgs and dead
// buckets, which is also the first read: damage that makes bbolt panic
// is reported as ErrCorrupt here rather than crashing a later call.
func (b *Bolt) load() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = corruptError(b.path, fmt.Errorf("bbolt: %v", p))
		}
	}()
	var c counters
	err = b.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			if err := b.create(tx); err != nil {
				return err
			}
			meta = tx.Bucket(bucketMeta)
		}
		if v := meta.Get(metaFormat); len(v) != 4 || binary.BigEndian.Uint32(v) != formatVersion {
			return notOutboxError(b.path, fmt.Sprintf("format version %s, this build reads %d", versionOf(v), formatVersion))
		}
		bk, err := bucketsOf(tx)
		if err != nil {
			return corruptError(b.path, err)
		}
		old := 0
		if v := meta.Get(metaPartitions); len(v) == 4 {
			old = int(binary.BigEndian.Uint32(v))
		}
		rebuild := old != b.o.Partitions
		dropped, err := b.expireAllLeases(bk, !rebuild)
		if err != nil {
			return corruptError(b.path, err)
		}
		if rebuild {
			if err := b.rebuildReady(tx); err != nil {
				return corruptError(b.path, err)
			}
			if err := meta.Put(metaPartitions, binary.BigEndian.AppendUint32(nil, uint32(b.o.Partitions))); err != nil {
				return err
			}
		}
		bk, _ = bucketsOf(tx) // rebuildReady replaced the ready bucket
		// Stats reads the pages as committed, before this transaction's
		// drops.
		c.depth = int64(bk.msgs.Stats().KeyN - dropped)
		c.peak = c.depth
		c.dead = int64(bk.dead.Stats().KeyN)
		return nil
	})
	if err != nil {
		var oe *openError
		if !errors.As(err, &oe) {
			err = fmt.Errorf("outbox: open %s: %w", b.path, err)
		}
		return err
	}
	b.w.cur, b.w.base, b.pub = c, c, c
	return nil
}

func versionOf(v []byte) string {
	if len(v) != 4 {
		return "missing"
	}
	return fmt.Sprint(binary.BigEndian.Uint32(v))
}

// create lays out a new outbox in tx. A file that already holds buckets
// but no fleetsim meta bucket belongs to another program and is left alone.
func (b *Bolt) create(tx *bolt.Tx) error {
	var other []byte
	_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		other = append([]byte(nil), name...)
		return errors.New("stop")
	})
	if other != nil {
		return notOutboxError(b.path, fmt.Sprintf("it holds bucket %q and no %q bucket", other, bucketMeta))
	}
	for _, name := range [][]byte{bucketMeta, bucketMsgs, bucketRecv, bucketNext, bucketReady, bucketLease, bucketKeys, bucketDead} {
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(metaFormat, binary.BigEndian.AppendUint32(nil, formatVersion)); err != nil {
		return err
	}
	return meta.Put(metaPartitions, binary.BigEndian.AppendUint32(nil, uint32(b.o.Partitions)))
}

// expireAllLeases returns every leased message to its receiver's head,
// due at its old SendAt (a superseded one is dropped instead, as Release
// would), and empties the lease index. With ready false the ready index is
// about to be rebuilt, so it is left alone (a drop's promotion writes to
// it, which the rebuild replaces). It returns how many it dropped, which
// no counter counts: counters start once the store is open.
func (b *Bolt) expireAllLeases(bk buckets, ready bool) (dropped int, err error) {
	var ids []uint64
	err = bk.lease.ForEach(func(k, _ []byte) error {
		ids = append(ids, keyID(k))
		return nil
	})
	if err != nil {
		return 0, err
	}
	now := unixNano(b.o.Clock.Now())
	for _, id := range ids {
		r, err := bk.get(id)
		if err != nil {
			return dropped, err
		}
		if r.superseded {
			if err := bk.dropSuperseded(id, &r, b.o.Partitions, now); err != nil {
				return dropped, err
			}
			dropped++
			continue
		}
		r.leaseUntil = 0
		if err := bk.msgs.Put(idKey(id), r.encode()); err != nil {
			return dropped, err
		}
		if ready {
			if err := bk.ready.Put(readyKey(PartitionOf(string(r.receiver), b.o.Partitions), r.sendAt, id), nil); err != nil {
				return dropped, err
			}
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if err := bk.tx.DeleteBucket(bucketLease); err != nil {
		return dropped, err
	}
	_, err = bk.tx.CreateBucket(bucketLease)
	return dropped, err
}

// rebuildReady recreates the ready index from the receivers' heads: one
// entry per receiver, so it costs O(receivers), not O(messages). Called
// when the file was last opened with another Partitions count, and after
// all leases have expired (so every head is ready).
func (b *Bolt) rebuildReady(tx *bolt.Tx) error {
	if err := tx.DeleteBucket(bucketReady); err != nil {
		return err
	}
	ready, err := tx.CreateBucket(bucketReady)
	if err != nil {
		return err
	}
	msgs := tx.Bucket(bucketMsgs)
	return tx.Bucket(bucketRecv).ForEach(func(receiver, v []byte) error {
		head, _, err := queueEnds(v)
		if err != nil {
			return err
		}
		sendAt, err := recSendAt(msgs.Get(idKey(head)))
		if err != nil {
			return fmt.Errorf("head %d of %q: %w", head, receiver, err)
		}
		return ready.Put(readyKey(PartitionOf(string(receiver), b.o.Partitions), sendAt, head), nil)
	})
}
