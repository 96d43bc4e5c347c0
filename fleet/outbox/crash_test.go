package outbox_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// crashChildEnv switches TestCrashChild on: its value is
// "path,durability,producers". The parent test runs this test binary again
// with it set.
const crashChildEnv = "FLEETSIM_OUTBOX_CRASH_CHILD"

// Each batch a producer enqueues holds this many messages (one Enqueue).
const crashBatch = 3

// TestCrashChild is the child half of TestCrashKeepsEveryAcknowledgedMessage:
// producers enqueue batches into a bbolt file forever and print
// "ack <id> <payload>" for every message whose Enqueue returned, until the
// parent kills the process.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("runs only as the child of TestCrashKeepsEveryAcknowledgedMessage")
	}
	f := strings.Split(spec, ",")
	d, err := outbox.ParseDurability(f[1])
	if err != nil {
		t.Fatal(err)
	}
	producers, _ := strconv.Atoi(f[2])
	s, err := outbox.OpenBolt(f[0], outbox.Options{Durability: d})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	for p := range producers {
		go func() {
			for i := 0; ; i++ {
				var msgs []outbox.Message
				for j := range crashBatch {
					msgs = append(msgs, msg(fmt.Sprintf("w-%d", (p*7+i)%16), fmt.Sprintf("p%d-%d-%d", p, i, j)))
				}
				rs, err := s.Enqueue(ctx, msgs...)
				if err != nil {
					fmt.Println("enqueue:", err)
					os.Exit(2)
				}
				var b strings.Builder
				for j, r := range rs {
					fmt.Fprintf(&b, "ack %d %s\n", r.ID, msgs[j].Payload)
				}
				mu.Lock()
				os.Stdout.WriteString(b.String()) // one write: lines never interleave
				mu.Unlock()
			}
		}()
	}
	select {}
}

// A kill -9 at a random moment loses no acknowledged message, duplicates
// none, and tears no multi-message Enqueue apart.
func TestCrashKeepsEveryAcknowledgedMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, d := range []outbox.Durability{outbox.Sync, outbox.Batch} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed%d", d, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, uint64(d)))
				path := filepath.Join(t.TempDir(), "outbox.db")
				killAfter := 10 + rng.IntN(200) // acknowledged messages
				acked := crashChild(t, path, d, 4, killAfter)
				checkAfterCrash(t, path, acked)
			})
		}
	}
}

// crashChild runs TestCrashChild on path, SIGKILLs it once it has
// acknowledged killAfter messages, and returns id by payload of every
// message it acknowledged (including lines already in the pipe).
func crashChild(t *testing.T, path string, d outbox.Durability, producers, killAfter int) map[string]uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d", crashChildEnv, path, d, producers))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A hang guard, not a deadline: a child that stops acknowledging for a
	// minute is stuck, and is killed so that the test fails saying so. A
	// slow child (a loaded machine, fsync on a busy disk) is waited for.
	var stalled atomic.Bool
	watchdog := time.AfterFunc(stallTimeout, func() { stalled.Store(true); cmd.Process.Kill() })
	defer watchdog.Stop()
	acked := map[string]uint64{}
	var other []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var id uint64
		var payload string
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %s", &id, &payload); err != nil {
			other = append(other, sc.Text())
			continue
		}
		if _, dup := acked[payload]; dup {
			t.Fatalf("child acknowledged %s twice", payload)
		}
		acked[payload] = id
		watchdog.Reset(stallTimeout)
		if len(acked) == killAfter {
			cmd.Process.Kill() // SIGKILL: no deferred code, no Close
		}
	}
	err = cmd.Wait()
	if len(acked) < killAfter {
		why := "it exited"
		if stalled.Load() {
			why = fmt.Sprintf("it acknowledged nothing for %v and was killed", stallTimeout)
		}
		t.Fatalf("child ended after %d acknowledgements (want %d): %s: %v\n%s\n%s", len(acked), killAfter, why, err, other, stderr.String())
	}
	return acked
}

// checkAfterCrash reopens path and drains it.
func checkAfterCrash(t *testing.T, path string, acked map[string]uint64) {
	t.Helper()
	s := reopen(t, path, outbox.Options{Durability: outbox.None}) // the child ran on the wall clock
	depth := s.Stats().Depth
	found := map[string]uint64{}
	last := map[string]uint64{}
	for ms := drainOnce(t, s); len(ms) > 0; ms = drainOnce(t, s) {
		for _, m := range ms {
			p := string(m.Payload)
			if _, dup := found[p]; dup {
				t.Fatalf("%s stored twice", p)
			}
			found[p] = m.ID
			if m.ID <= last[m.Receiver] {
				t.Fatalf("receiver %s: id %d delivered after %d", m.Receiver, m.ID, last[m.Receiver])
			}
			last[m.Receiver] = m.ID
		}
	}
	if len(found) != depth {
		t.Fatalf("drained %d messages, Stats said %d", len(found), depth)
	}
	for p, id := range acked {
		if got, ok := found[p]; !ok || got != id {
			t.Fatalf("acknowledged %s (id %d) lost after the crash (found id %d, %v)", p, id, got, ok)
		}
	}
	batches := map[string]int{}
	for p := range found {
		batches[p[:strings.LastIndexByte(p, '-')]]++
	}
	for b, n := range batches {
		if n != crashBatch {
			t.Fatalf("batch %s: %d of %d messages survived; Enqueue is not atomic", b, n, crashBatch)
		}
	}
	t.Logf("%d acknowledged, %d stored", len(acked), len(found))
}

func drainOnce(t *testing.T, s outbox.Store) []outbox.Message {
	t.Helper()
	ms, err := s.Dequeue(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if err := s.Ack(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	return ms
}

// stallTimeout is how long a test waits on the wall clock for a child
// process or an open that makes no progress before it calls it stuck.
const stallTimeout = time.Minute

// openFails opens path expecting an error wrapping want that names the
// file and leaves it as it was. An open that does not return within
// stallTimeout hangs on the file, and fails the test saying so.
func openFails(t *testing.T, path string, o outbox.Options, want error, says string) {
	t.Helper()
	before, _ := os.ReadFile(path)
	type opened struct {
		s   *outbox.Bolt
		err error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := outbox.OpenBolt(path, o)
		done <- opened{s, err}
	}()
	var s *outbox.Bolt
	var err error
	select {
	case r := <-done:
		s, err = r.s, r.err
	case <-time.After(stallTimeout):
		t.Fatalf("OpenBolt(%s) did not return within %v: it hangs instead of failing with %v", path, stallTimeout, want)
	}
	if err == nil {
		s.Close()
		t.Fatalf("OpenBolt(%s) succeeded, want %v", path, want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("OpenBolt = %v, want %v", err, want)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), says) {
		t.Fatalf("error %q should name %s and say %q", err, path, says)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a failed OpenBolt changed the file")
	}
}

func TestOpenRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 100, 4096, 64 << 10} {
		path := filepath.Join(t.TempDir(), "junk.db")
		junk := make([]byte, size)
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		if err := os.WriteFile(path, junk, 0o600); err != nil {
			t.Fatal(err)
		}
		openFails(t, path, outbox.Options{}, outbox.ErrCorrupt, "move it aside")
	}
}

// An outbox whose pages are overwritten: bbolt may panic reading them, in
// bolt.Open (a damaged freelist) or in OpenBolt's first read (damaged tree
// pages); OpenBolt must report ErrCorrupt instead, and release the file.
func TestOpenDamagedOutbox(t *testing.T) {
	for _, keepFreelist := range []bool{false, true} {
		for seed := range uint64(4) {
			path := filepath.Join(t.TempDir(), "outbox.db")
			s := reopen(t, path, outbox.Options{Durability: outbox.None})
			var msgs []outbox.Message
			for i := range 2000 {
				msgs = append(msgs, msg(fmt.Sprintf("w-%d", i%50), strings.Repeat("x", 200)))
			}
			if _, err := s.Enqueue(ctx, msgs...); err != nil {
				t.Fatal(err)
			}
			s.Close()
			damage(t, path, seed, keepFreelist)
			o := outbox.Options{OpenTimeout: 200 * time.Millisecond}
			openFails(t, path, o, outbox.ErrCorrupt, "damaged")
			// Again: had the panicking open kept the file locked, this
			// would be ErrLocked.
			openFails(t, path, o, outbox.ErrCorrupt, "damaged")
		}
	}
}

// damage overwrites every page of a bbolt file with random bytes except the
// two meta pages and, if keepFreelist, the freelist pages they name.
func damage(t *testing.T, path string, seed uint64, keepFreelist bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(data[16+8:])) // meta: page header, magic, version, page size
	keep := map[int]bool{0: true, 1: true}
	for m := range 2 {
		if keepFreelist {
			// meta: ..., flags, root bucket (16 bytes), freelist pgid
			fl := int(binary.LittleEndian.Uint64(data[m*ps+16+16+16:]))
			overflow := int(binary.LittleEndian.Uint32(data[fl*ps+12:]))
			for p := fl; p <= fl+overflow; p++ {
				keep[p] = true
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range data {
		if !keep[i/ps] {
			data[i] = byte(rng.Uint32())
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenForeignBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("widgets"))
		if err != nil {
			return err
		}
		return b.Put([]byte("w1"), []byte("blue"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	openFails(t, path, outbox.Options{}, outbox.ErrNotOutbox, "not a fleetsim outbox")

	// A fleetsim outbox of a format this build does not know.
	path = filepath.Join(t.TempDir(), "future.db")
	s := reopen(t, path, outbox.Options{})
	s.Close()
	db, err = bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("fleetsim.outbox")).Put([]byte("format"), []byte{0, 0, 0, 99})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	openFails(t, path, outbox.Options{}, outbox.ErrNotOutbox, "format version 99")
}

// bbolt's lock is flock(2), which is per open file description: a second
// open in the same process conflicts just as another process would.
func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	s := reopen(t, path, outbox.Options{})
	openFails(t, path, outbox.Options{OpenTimeout: 100 * time.Millisecond}, outbox.ErrLocked,
		"locked by another process (is a leader already running with this file?)")
	s.Close()
	reopen(t, path, outbox.Options{OpenTimeout: 100 * time.Millisecond}).Close()
}
