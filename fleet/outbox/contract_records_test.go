package outbox_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Records and Locator contract, run against both stores.

func TestMemoryRecordsContract(t *testing.T) { runRecordsContract(t, openMemory) }

func TestBoltRecordsContract(t *testing.T) { runRecordsContract(t, openBolt(outbox.None)) }

func runRecordsContract(t *testing.T, open opener) {
	t.Run("put, get, list by prefix in key order, delete", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		if _, err := e.s.GetRecord(ctx, "a"); !errors.Is(err, outbox.ErrNoRecord) {
			t.Fatalf("GetRecord of an empty table: %v, want ErrNoRecord", err)
		}
		if rs, err := e.s.ListRecords(ctx, ""); err != nil || len(rs) != 0 {
			t.Fatalf("ListRecords of an empty table: %v, %v", rs, err)
		}
		put(t, e.s, outbox.Record{Key: "d/2", Value: []byte("two")}, outbox.Record{Key: "d/10", Value: []byte("ten")},
			outbox.Record{Key: "e", Value: []byte{}}, outbox.Record{Key: "d/1", Value: []byte("one")})
		if got := list(t, e.s, "d/"); got != "d/1=one d/10=ten d/2=two" {
			t.Fatalf("ListRecords(d/) = %s", got)
		}
		if got := list(t, e.s, ""); got != "d/1=one d/10=ten d/2=two e=" {
			t.Fatalf("ListRecords() = %s", got)
		}
		put(t, e.s, outbox.Record{Key: "d/2", Value: []byte("deux")}, outbox.Record{Key: "d/1"}, outbox.Record{Key: "nothing"})
		if got := list(t, e.s, "d/"); got != "d/10=ten d/2=deux" {
			t.Fatalf("after an overwrite and a delete: %s", got)
		}
		v, err := e.s.GetRecord(ctx, "e")
		if err != nil || v == nil || len(v) != 0 {
			t.Fatalf("GetRecord of an empty value: %q, %v; want an empty value", v, err)
		}
		if _, err := e.s.GetRecord(ctx, "d/1"); !errors.Is(err, outbox.ErrNoRecord) {
			t.Fatalf("GetRecord of a deleted key: %v", err)
		}
	})

	t.Run("values are copies", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		b := []byte("abc")
		put(t, e.s, outbox.Record{Key: "k", Value: b})
		b[0] = 'x'
		v, _ := e.s.GetRecord(ctx, "k")
		v[1] = 'y'
		if got := list(t, e.s, ""); got != "k=abc" {
			t.Fatalf("a caller's slice changed the record: %s", got)
		}
	})

	t.Run("a bad record writes nothing", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		for _, bad := range []outbox.Record{
			{Key: "", Value: []byte("x")},
			{Key: strings.Repeat("k", outbox.MaxRecordKey+1), Value: []byte("x")},
			{Key: "big", Value: make([]byte, outbox.MaxRecordValue+1)},
		} {
			err := e.s.PutRecords(ctx, outbox.Record{Key: "ok", Value: []byte("1")}, bad)
			if !errors.Is(err, outbox.ErrInvalid) {
				t.Fatalf("PutRecords with key of %d bytes, value of %d: %v, want ErrInvalid", len(bad.Key), len(bad.Value), err)
			}
		}
		if got := list(t, e.s, ""); got != "" {
			t.Fatalf("a refused PutRecords wrote %s", got)
		}
	})

	t.Run("locate queued, dead and gone", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxAttempts: 1})
		rs := e.enq(msg("a", "a1"), msg("b", "b1"), msg("c", "c1"), over("d", "k", 1, "d1"), msg("e", "e1"))
		ms := e.want(10, "a1", "b1", "c1", "d1", "e1")
		if err := e.s.Ack(ctx, ms[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Nack(ctx, ms[1].ID, 0, "out of attempts"); err != nil {
			t.Fatal(err)
		}
		e.enq(over("d", "k", 2, "d2")) // d1 in flight: superseded
		if err := e.s.Release(ctx, ms[3].ID, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Release(ctx, ms[4].ID, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := e.s.Locate(ctx, rs[0].ID, rs[1].ID, rs[2].ID, rs[3].ID, rs[4].ID, 999)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got); s != "[gone dead leased gone queued gone]" {
			t.Fatalf("Locate(acked, dead-lettered, leased, superseded and released, released, unknown) = %s", s)
		}
	})

	t.Run("closed", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.s.Close()
		if err := e.s.PutRecords(ctx, outbox.Record{Key: "k", Value: []byte("v")}); !errors.Is(err, outbox.ErrClosed) {
			t.Fatalf("PutRecords after Close: %v", err)
		}
		if _, err := e.s.GetRecord(ctx, "k"); !errors.Is(err, outbox.ErrClosed) {
			t.Fatalf("GetRecord after Close: %v", err)
		}
		if _, err := e.s.ListRecords(ctx, ""); !errors.Is(err, outbox.ErrClosed) {
			t.Fatalf("ListRecords after Close: %v", err)
		}
		if _, err := e.s.Locate(ctx, 1); !errors.Is(err, outbox.ErrClosed) {
			t.Fatalf("Locate after Close: %v", err)
		}
	})
}

// TestBoltRecordsSurviveReopen: records are in the file, beside the queue.
func TestBoltRecordsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	s, err := outbox.OpenBolt(path, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, outbox.Record{Key: "leader/deploy/1", Value: []byte("progress")})
	s.Close()
	s = reopen(t, path, outbox.Options{})
	if got := list(t, s, "leader/"); got != "leader/deploy/1=progress" {
		t.Fatalf("after reopen: %s", got)
	}
}

func put(t *testing.T, s outbox.Store, rs ...outbox.Record) {
	t.Helper()
	if err := s.PutRecords(ctx, rs...); err != nil {
		t.Fatalf("PutRecords: %v", err)
	}
}

// list renders ListRecords(prefix) as "key=value key=value".
func list(t *testing.T, s outbox.Store, prefix string) string {
	t.Helper()
	rs, err := s.ListRecords(ctx, prefix)
	if err != nil {
		t.Fatalf("ListRecords(%q): %v", prefix, err)
	}
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", r.Key, r.Value)
	}
	return b.String()
}
