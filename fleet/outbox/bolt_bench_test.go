package outbox_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// Benchmarks of the bbolt store against raw bbolt on the same disk. Run:
//
//	go test -run '^$' -bench . -benchmem -count 3 ./fleet/outbox/
//
// docs/BENCHMARKS.md (outbox store) has the numbers and what they mean.

const (
	benchPayload   = 256
	benchReceivers = 1024 // a mid-sized fleet: most enqueues land behind a head
	// benchParallelism*GOMAXPROCS goroutines enqueue at once in the
	// parallel benchmarks (256 on 2 cores), as a leader fanning commands
	// out to a fleet has; "batch/parallel-1k" uses 4x that, enough for a
	// group commit to gather as many messages as the raw baseline's
	// 1,000-put transaction.
	benchParallelism = 128
)

var payload256 = make([]byte, benchPayload)

func benchStore(b *testing.B, d outbox.Durability) *outbox.Bolt {
	b.Helper()
	s, err := outbox.OpenBolt(filepath.Join(b.TempDir(), "outbox.db"), outbox.Options{Durability: d})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

var receiverNames = func() []string {
	r := make([]string, benchReceivers)
	for i := range r {
		r[i] = fmt.Sprintf("worker-%05d", i)
	}
	return r
}()

func benchMsg(i int) outbox.Message {
	return outbox.Message{Receiver: receiverNames[i%benchReceivers], Kind: "config", Payload: payload256}
}

func reportRate(b *testing.B, msgs int) {
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkRawBoltPut1000 is the baseline: one bbolt transaction (fsynced)
// of 1,000 puts of a 256-byte value under increasing 8-byte keys, the best
// case for bbolt. ns/msg is per put.
func BenchmarkRawBoltPut1000(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ReportAllocs()
	var id uint64
	for b.Loop() {
		err := db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("raw"))
			if err != nil {
				return err
			}
			for range 1000 {
				id++
				if err := bk.Put(binary.BigEndian.AppendUint64(nil, id), payload256); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/msg")
	reportRate(b, b.N*1000)
}

// BenchmarkEnqueue: one message per Enqueue call, as a leader enqueues
// commands one by one.
func BenchmarkEnqueue(b *testing.B) {
	serial := func(d outbox.Durability) func(*testing.B) {
		return func(b *testing.B) {
			s := benchStore(b, d)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.Enqueue(ctx, benchMsg(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportRate(b, b.N)
		}
	}
	parallel := func(d outbox.Durability, parallelism int) func(*testing.B) {
		return func(b *testing.B) {
			s := benchStore(b, d)
			b.ReportAllocs()
			b.SetParallelism(parallelism)
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Enqueue(ctx, benchMsg(int(next.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportRate(b, b.N)
		}
	}
	b.Run("sync/1", serial(outbox.Sync))
	b.Run("sync/parallel", parallel(outbox.Sync, benchParallelism))
	b.Run("batch/1", serial(outbox.Batch))
	b.Run("batch/parallel", parallel(outbox.Batch, benchParallelism))
	b.Run("batch/parallel-1k", parallel(outbox.Batch, 4*benchParallelism))
	b.Run("none/1", serial(outbox.None))
	b.Run("none/parallel", parallel(outbox.None, benchParallelism))
}

// BenchmarkEnqueueMulti1000: 1,000 messages in one Enqueue call (one
// transaction), the same shape as the raw baseline. ns/msg is per message.
func BenchmarkEnqueueMulti1000(b *testing.B) {
	s := benchStore(b, outbox.Sync)
	msgs := make([]outbox.Message, 1000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for j := range msgs {
			msgs[j] = benchMsg(i)
			i++
		}
		if _, err := s.Enqueue(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/msg")
	reportRate(b, b.N*1000)
}

// BenchmarkAck: concurrent settles, as a relay partition's deliveries
// finish (its AIMD limiter allows up to 50 in flight by default; here 32
// goroutines). b.N messages, one per receiver, are enqueued and leased
// untimed; the timed part acks them. One op is one Ack.
func BenchmarkAck(b *testing.B) {
	for _, d := range []outbox.Durability{outbox.Sync, outbox.Batch} {
		b.Run(d.String(), func(b *testing.B) {
			s := benchStore(b, d)
			ids := make(chan uint64, b.N)
			msgs := make([]outbox.Message, 0, 1000)
			for n := 0; n < b.N; n += len(msgs) {
				msgs = msgs[:0]
				for i := n; i < min(b.N, n+cap(msgs)); i++ {
					msgs = append(msgs, outbox.Message{Receiver: fmt.Sprint("r", i), Kind: "job", Payload: payload256})
				}
				if _, err := s.Enqueue(ctx, msgs...); err != nil {
					b.Fatal(err)
				}
				ms, err := s.Dequeue(ctx, 0, len(msgs))
				if err != nil || len(ms) != len(msgs) {
					b.Fatalf("Dequeue = %d, %v", len(ms), err)
				}
				for _, m := range ms {
					ids <- m.ID
				}
			}
			close(ids)
			b.ReportAllocs()
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Ack(ctx, <-ids); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportRate(b, b.N)
		})
	}
}

// BenchmarkFootprint reports what a queued message costs: bytes of bbolt
// file and bytes of Go heap for the memory store, per 256-byte message,
// measured over 20,000 messages for 1,024 receivers.
func BenchmarkFootprint(b *testing.B) {
	const n = 20000
	msgs := make([]outbox.Message, n)
	for i := range msgs {
		msgs[i] = benchMsg(i)
	}
	b.Run("bolt", func(b *testing.B) {
		var file, used float64
		for b.Loop() {
			path := filepath.Join(b.TempDir(), "outbox.db")
			s, err := outbox.OpenBolt(path, outbox.Options{Durability: outbox.None})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i += 1000 {
				if _, err := s.Enqueue(ctx, msgs[i:i+1000]...); err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
			file, used = boltBytes(b, path)
		}
		// file: what ls shows (bbolt grows files in steps); used: pages
		// holding data, free pages left out.
		b.ReportMetric(file/n, "file-B/msg")
		b.ReportMetric(used/n, "used-B/msg")
	})
	b.Run("memory", func(b *testing.B) {
		var perMsg float64
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s, err := outbox.NewMemory(outbox.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Enqueue(ctx, msgs...); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			perMsg = float64(after.HeapAlloc-before.HeapAlloc) / n
			runtime.KeepAlive(s)
		}
		b.ReportMetric(perMsg, "heap-B/msg")
	})
}

// boltBytes returns the size of the bbolt file at path and the bytes of its
// pages in use (below the high-water mark and not free).
func boltBytes(b *testing.B, path string) (file, used float64) {
	b.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		used = float64(tx.Size() - int64(db.Stats().FreePageN*db.Info().PageSize))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return float64(fi.Size()), used
}
