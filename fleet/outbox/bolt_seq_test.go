package outbox_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// TestBoltSeqAcrossReopen: a reopened file carries on above every number
// it handed out, whatever it holds.
func TestBoltSeqAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	var last uint64
	for round := range 3 {
		s, err := outbox.OpenBolt(path, outbox.Options{Durability: outbox.Batch})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			n, err := s.NextSeq(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != last+1 {
				t.Fatalf("round %d call %d: NextSeq = %d, want %d", round, i, n, last+1)
			}
			last = n
		}
		if _, err := s.Enqueue(ctx, over("w", "firmware", last, fmt.Sprint(round))); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// seqChildEnv switches TestSeqCrashChild on: its value is
// "path,durability".
const seqChildEnv = "FLEETSIM_OUTBOX_SEQ_CHILD"

// TestSeqCrashChild is the child half of TestBoltSeqSurvivesKill: it
// prints "seq N" for every number NextSeq returned, from four goroutines,
// until the parent kills the process.
func TestSeqCrashChild(t *testing.T) {
	spec := os.Getenv(seqChildEnv)
	if spec == "" {
		t.Skip("runs only as the child of TestBoltSeqSurvivesKill")
	}
	path, dname, _ := strings.Cut(spec, ",")
	d, err := outbox.ParseDurability(dname)
	if err != nil {
		t.Fatal(err)
	}
	s, err := outbox.OpenBolt(path, outbox.Options{Durability: d})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for range 4 {
		go func() {
			for {
				n, err := s.NextSeq(ctx)
				if err != nil {
					fmt.Println("next seq:", err)
					os.Exit(2)
				}
				fmt.Printf("seq %d\n", n)
			}
		}()
	}
	select {}
}

// TestBoltSeqSurvivesKill: after a kill -9, the reopened file hands out
// numbers above every one the killed process was given, so a restarted
// leader's commands are never older than those it sent before.
func TestBoltSeqSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, d := range []outbox.Durability{outbox.Sync, outbox.Batch} {
		t.Run(d.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox.db")
			cmd := exec.Command(os.Args[0], "-test.run=^TestSeqCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s", seqChildEnv, path, d))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			seen := map[uint64]bool{}
			var high uint64
			var other []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var n uint64
				if _, err := fmt.Sscanf(sc.Text(), "seq %d", &n); err != nil {
					other = append(other, sc.Text())
					continue
				}
				if seen[n] {
					t.Fatalf("child got %d twice", n)
				}
				seen[n], high = true, max(high, n)
				if len(seen) == 200 {
					cmd.Process.Kill() // SIGKILL: no Close
				}
			}
			_ = cmd.Wait()
			if len(seen) < 200 {
				t.Fatalf("child ended after %d numbers: %v\n%s", len(seen), other, stderr.String())
			}
			s := reopen(t, path, outbox.Options{Durability: d})
			n, err := s.NextSeq(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n <= high {
				t.Fatalf("after the kill NextSeq = %d; the killed process was given up to %d", n, high)
			}
		})
	}
}

// BenchmarkNextSeq is what a sequence number costs a sender, against its
// natural baseline in the same run: an Enqueue of one message, the call
// that follows it. Alone under sync, each is a transaction and an fsync;
// alone under batch, each also waits out the group commit's delay; from
// many goroutines under batch, both share group commits.
//
//	go test -run '^$' -bench NextSeq -benchmem -count 3 ./fleet/outbox/
func BenchmarkNextSeq(b *testing.B) {
	ops := map[string]func(s *outbox.Bolt, i int) error{
		"next-seq": func(s *outbox.Bolt, _ int) error { _, err := s.NextSeq(ctx); return err },
		"enqueue":  func(s *outbox.Bolt, i int) error { _, err := s.Enqueue(ctx, benchMsg(i)); return err },
	}
	for _, name := range []string{"enqueue", "next-seq"} {
		op := ops[name]
		b.Run("sync/"+name, func(b *testing.B) {
			s := benchStore(b, outbox.Sync)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := op(s, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run("batch/lone/"+name, func(b *testing.B) {
			s := benchStore(b, outbox.Batch)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := op(s, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run("batch/parallel/"+name, func(b *testing.B) {
			s := benchStore(b, outbox.Batch)
			b.ReportAllocs()
			b.SetParallelism(benchParallelism)
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if err := op(s, i); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}
