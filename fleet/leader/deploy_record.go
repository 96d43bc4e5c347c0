package leader

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// A deploy's progress is kept in the outbox (outbox.Records), so that it
// survives the leader with the updates it counts, in parts: part i holds
// the targets at positions i×partTargets to (i+1)×partTargets-1 in the
// plan's order (the ids of their updates still queued, each one's worker
// and position, and which workers' updates went to the dead letters) and
// the counts of the waves whose first target is among them. So every
// record stays far below outbox.MaxRecordValue however large the deploy
// (80,000 waves of one target make 79 parts of about 250 KB), and a save
// rewrites only the parts that changed. Part 0 is in the deploy's head
// record, under deployPrefix and its index, with what the deploy is; the
// others are under the head's key, "/" and the part's number. A deploy's
// changed parts are written in one PutRecords, so what the outbox holds
// of a deploy is always one moment's; each deploy is written on its own,
// so one that cannot be saved does not hold up the others. The ids are
// lists of varint deltas (ascending), a byte or two each.
const deployPrefix = "leader/deploy/"

// partTargets is how many targets a part of a deploy's record holds.
const partTargets = 1024

func deployKey(index int) string { return fmt.Sprintf("%s%010d", deployPrefix, index) }

func partKey(index, part int) string {
	if part == 0 {
		return deployKey(index)
	}
	return fmt.Sprintf("%s/%010d", deployKey(index), part)
}

// partsOf is the number of parts of a deploy of n targets.
func partsOf(n int) int { return max(1, (n+partTargets-1)/partTargets) }

// headRecord is a deploy's head record: what the deploy is, and part 0.
type headRecord struct {
	V       int       `json:"v"`
	Index   int       `json:"index"`
	Version string    `json:"version"`
	Kind    wire.Kind `json:"kind"`
	Targets int       `json:"targets"`
	TTL     int64     `json:"ttl_ns,omitempty"`
	// Seq is the sequence number of the deploy's updates.
	Seq       uint64 `json:"seq,omitempty"`
	WaveSize  int    `json:"wave_size"`
	WaveCount int    `json:"wave_count"`
	Parts     int    `json:"parts"`
	Request   string `json:"request,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Queue     bool   `json:"queue,omitempty"`
	partRecord
}

// partRecord is one part of a deploy's record.
type partRecord struct {
	// Wave is the index of the first wave in Waves: the first that
	// starts in this part.
	Wave  int            `json:"wave"`
	Waves []WaveProgress `json:"waves,omitempty"`
	// IDs are the part's queued updates; Pos (varints, each less the
	// part's first position) and Workers say whose each is, in the same
	// order; Overtaken are those of them a later version was queued
	// behind while they were out for delivery (see tracked).
	IDs       []byte   `json:"ids,omitempty"`
	Pos       []byte   `json:"pos,omitempty"`
	Workers   []string `json:"workers,omitempty"`
	Overtaken []byte   `json:"overtaken,omitempty"`
	// Dead is the target position of each worker of the part whose update
	// went to the dead letters: a replayed one delivered later counts as
	// delivered.
	Dead map[string]int `json:"dead,omitempty"`
}

// deployRecordVersion is the head record's v. Version 1 (one record per
// deploy, without the workers of its queued updates) is still read.
const deployRecordVersion = 2

// firstWave is the first wave whose first target is in part p of a
// deploy of waves waves of size (waves for p past the last part).
func firstWave(p, size, waves int) int {
	return min(waves, (p*partTargets+size-1)/size)
}

// save writes the deploys that changed since their last save, each in
// one PutRecords of its changed parts, and deletes the records of those
// forgotten. A deploy whose save fails is tried again at the save after
// retryAt, which backs off (saveBackoff); the others are saved all the
// same. The error joins every deploy's.
//
// Between saves the outbox moves on: a leader killed after an update was
// acked and before the next save finds it gone from the queue when it
// starts, and counts it as delivered (see deployTracker).
func (t *deployTracker) save(ctx context.Context, st outbox.Records, now time.Time) error {
	return t.saveWhere(ctx, st, now, func(d *deployState) bool { return !now.Before(d.retryAt) })
}

// saveOne saves the deploy with index now, whatever its backoff.
func (t *deployTracker) saveOne(ctx context.Context, st outbox.Records, now time.Time, index int) error {
	return t.saveWhere(ctx, st, now, func(d *deployState) bool { return d.Index == index })
}

// saveBackoff is the wait after a deploy's n-th failed save in a row: 1 s
// doubling to a minute, so that a record the outbox keeps refusing is not
// encoded again every second.
func saveBackoff(n int) time.Duration {
	return min(time.Second<<min(n-1, 6), time.Minute)
}

// deploySave is one deploy's save: its records, and the changes they
// hold.
type deploySave struct {
	d       *deployState
	recs    []outbox.Record
	changes []uint64 // d.changes as encoded
}

func (t *deployTracker) saveWhere(ctx context.Context, st outbox.Records, now time.Time, pick func(*deployState) bool) error {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	saves, dropped, err := t.encode(pick)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, s := range saves {
		err := st.PutRecords(ctx, s.recs...)
		t.mu.Lock()
		d := s.d
		if err == nil {
			for i, c := range s.changes {
				d.saved[i] = max(d.saved[i], c)
			}
			d.saveFailures, d.retryAt = 0, time.Time{}
		} else {
			d.saveFailures++
			d.retryAt = now.Add(saveBackoff(d.saveFailures))
			errs = append(errs, fmt.Errorf("deploy %d (%d parts): %w", d.Index, len(s.recs), err))
		}
		t.mu.Unlock()
	}
	if len(dropped) > 0 {
		var recs []outbox.Record
		for _, dd := range dropped {
			for p := range dd.parts {
				recs = append(recs, outbox.Record{Key: partKey(dd.index, p)})
			}
		}
		if err := st.PutRecords(ctx, recs...); err != nil {
			errs = append(errs, fmt.Errorf("forget %d deploys' records: %w", len(dropped), err))
		} else {
			t.mu.Lock()
			t.dropped = slices.DeleteFunc(t.dropped, func(dd droppedDeploy) bool { return slices.Contains(dropped, dd) })
			t.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// encode builds the records of the changed parts of the deploys pick
// takes, under the lock, and returns them with the deploys to forget.
func (t *deployTracker) encode(pick func(*deployState) bool) ([]deploySave, []droppedDeploy, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// parts[d][p] collects the queued updates of part p of a deploy to
	// save, nil for a part that did not change.
	parts := map[*deployState][][]uint64{}
	for _, d := range t.deploys {
		if !d.dirty() || !pick(d) {
			continue
		}
		ps := make([][]uint64, len(d.changes))
		for i, c := range d.changes {
			if c != d.saved[i] {
				ps[i] = []uint64{}
			}
		}
		parts[d] = ps
	}
	dropped := slices.Clone(t.dropped)
	if len(parts) == 0 {
		return nil, dropped, nil
	}
	for id, m := range t.byMsg {
		if ps := parts[m.d]; ps != nil {
			if p := m.pos / partTargets; ps[p] != nil {
				ps[p] = append(ps[p], id)
			}
		}
	}
	var saves []deploySave
	var errs []error
	for _, d := range t.deploys {
		ps := parts[d]
		if ps == nil {
			continue
		}
		s := deploySave{d: d, changes: slices.Clone(d.changes)}
		dead := make([]map[string]int, len(ps))
		for w, pos := range d.dead {
			if p := pos / partTargets; ps[p] != nil {
				if dead[p] == nil {
					dead[p] = map[string]int{}
				}
				dead[p][w] = pos
			}
		}
		for p, ids := range ps {
			if ids == nil {
				continue
			}
			b, err := t.encodePartLocked(d, p, ids, dead[p])
			if err != nil {
				errs = append(errs, fmt.Errorf("encode deploy %d part %d: %w", d.Index, p, err))
				s.recs = nil
				break
			}
			s.recs = append(s.recs, outbox.Record{Key: partKey(d.Index, p), Value: b})
		}
		if s.recs != nil {
			saves = append(saves, s)
		}
	}
	return saves, dropped, errors.Join(errs...)
}

// encodePartLocked encodes part p of d, whose queued updates are ids.
func (t *deployTracker) encodePartLocked(d *deployState, p int, ids []uint64, dead map[string]int) ([]byte, error) {
	slices.Sort(ids)
	first := p * partTargets
	w0, w1 := firstWave(p, d.size, len(d.Waves)), firstWave(p+1, d.size, len(d.Waves))
	r := partRecord{Wave: w0, Waves: d.Waves[w0:w1], IDs: encodeIDs(ids), Dead: dead}
	var over []uint64
	pos := make([]byte, 0, 2*len(ids))
	for _, id := range ids {
		m := t.byMsg[id]
		pos = binary.AppendUvarint(pos, uint64(m.pos-first))
		r.Workers = append(r.Workers, m.key.receiver)
		if m.overtaken {
			over = append(over, id)
		}
	}
	r.Pos, r.Overtaken = pos, encodeIDs(over)
	if p > 0 {
		return json.Marshal(r)
	}
	return json.Marshal(headRecord{V: deployRecordVersion, Index: d.Index, Version: d.Version, Kind: d.Kind, Targets: d.Targets,
		TTL: int64(d.ttl), Seq: d.seq, WaveSize: d.size, WaveCount: len(d.Waves), Parts: len(d.changes),
		Request: d.Request, Cancelled: d.Cancelled, Queue: d.queue, partRecord: r})
}

// load takes up the deploys an earlier leader saved in st. A deploy it
// cannot read (a record unreadable, a part missing) is logged and skipped
// (its index is not reused); the deploys it can read are looked up at the
// next reconcile.
func (t *deployTracker) load(ctx context.Context, st outbox.Records, log *slog.Logger) error {
	recs, err := st.ListRecords(ctx, deployPrefix)
	if err != nil {
		return err
	}
	// Keys sort a head before its parts, and its parts in order.
	byIndex := map[int][]outbox.Record{}
	var order []int
	for _, rec := range recs {
		head, part, isPart := strings.Cut(strings.TrimPrefix(rec.Key, deployPrefix), "/")
		idx, err := strconv.Atoi(head)
		if err == nil && isPart {
			var p int
			p, err = strconv.Atoi(part)
			if err == nil && p <= 0 {
				err = errors.New("not a part number")
			}
		}
		if err != nil || idx < 0 {
			log.Error("deploy progress: a record with an unknown key is ignored", "key", rec.Key)
			continue
		}
		if _, ok := byIndex[idx]; !ok {
			order = append(order, idx)
		}
		byIndex[idx] = append(byIndex[idx], rec)
	}
	slices.Sort(order)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, idx := range order {
		t.next = max(t.next, idx+1)
		d, err := t.decodeLocked(idx, byIndex[idx])
		if err != nil {
			log.Error("deploy progress: an unreadable deploy is ignored", "key", deployKey(idx), "err", err)
			continue
		}
		t.deploys = append(t.deploys, d)
	}
	return nil
}

// loadedUpdate is a queued update read from a record.
type loadedUpdate struct {
	id     uint64
	pos    int
	worker string
	over   bool
}

// decodeLocked reads a deploy's records (its head first, then its parts
// in order) and tracks its queued updates, to be looked up.
func (t *deployTracker) decodeLocked(idx int, recs []outbox.Record) (*deployState, error) {
	if len(recs) == 0 || recs[0].Key != deployKey(idx) {
		return nil, errors.New("no head record")
	}
	var h headRecord
	if err := json.Unmarshal(recs[0].Value, &h); err != nil {
		return nil, err
	}
	var d *deployState
	var ups []loadedUpdate
	var err error
	switch {
	case h.Index != idx:
		return nil, fmt.Errorf("it says index %d", h.Index)
	case h.V == 1:
		if len(recs) > 1 {
			return nil, fmt.Errorf("a version 1 record with %d parts", len(recs)-1)
		}
		d, ups, err = decodeV1(recs[0].Value)
	case h.V == deployRecordVersion:
		d, ups, err = decodeV2(h, recs)
	default:
		return nil, fmt.Errorf("record version %d, this build reads 1 and %d", h.V, deployRecordVersion)
	}
	if err != nil {
		return nil, err
	}
	for _, u := range ups {
		if t.byMsg[u.id] != nil {
			return nil, fmt.Errorf("update %d is another deploy's too", u.id)
		}
	}
	for _, u := range ups {
		m := &tracked{d: d, wave: u.pos / d.size, pos: u.pos, look: true, overtaken: u.over}
		if u.worker != "" {
			m.key = recvKind{u.worker, d.Kind}
			t.byRecv[m.key] = u.id // deploys load oldest first: the newest stays
		}
		t.byMsg[u.id] = m
		d.Waves[m.wave].Pending++
		d.pending++
	}
	return d, nil
}

// newLoaded returns the state of a deploy read from a record: its counts
// are as saved, its parts as the outbox has them.
func newLoaded(p DeployProgress, seq uint64, ttl time.Duration, size int) *deployState {
	n := partsOf(p.Targets)
	return &deployState{DeployProgress: p, seq: seq, ttl: ttl, size: size, changes: make([]uint64, n), saved: make([]uint64, n)}
}

// decodeV2 reads a head record and its parts.
func decodeV2(h headRecord, recs []outbox.Record) (*deployState, []loadedUpdate, error) {
	switch {
	case h.Targets < 1 || h.WaveSize < 1 || h.WaveSize > h.Targets:
		return nil, nil, fmt.Errorf("%d targets in waves of %d", h.Targets, h.WaveSize)
	case h.WaveCount != (h.Targets+h.WaveSize-1)/h.WaveSize || h.WaveCount > MaxWaves:
		return nil, nil, fmt.Errorf("%d waves of %d targets for %d targets", h.WaveCount, h.WaveSize, h.Targets)
	case h.Parts != partsOf(h.Targets) || len(recs) != h.Parts:
		return nil, nil, fmt.Errorf("%d parts of %d for %d targets", len(recs), h.Parts, h.Targets)
	}
	d := newLoaded(DeployProgress{Index: h.Index, Version: h.Version, Kind: h.Kind, Targets: h.Targets, Request: h.Request, Cancelled: h.Cancelled},
		h.Seq, time.Duration(h.TTL), h.WaveSize)
	d.queue = h.Queue
	d.Waves = make([]WaveProgress, 0, h.WaveCount)
	var ups []loadedUpdate
	for p, rec := range recs {
		r := h.partRecord
		if p > 0 {
			if rec.Key != partKey(h.Index, p) {
				return nil, nil, fmt.Errorf("part %d missing (found %s)", p, rec.Key)
			}
			r = partRecord{}
			if err := json.Unmarshal(rec.Value, &r); err != nil {
				return nil, nil, fmt.Errorf("part %d: %w", p, err)
			}
		}
		w0, w1 := firstWave(p, h.WaveSize, h.WaveCount), firstWave(p+1, h.WaveSize, h.WaveCount)
		if r.Wave != w0 || len(r.Waves) != w1-w0 {
			return nil, nil, fmt.Errorf("part %d: waves %d to %d, want %d to %d", p, r.Wave, r.Wave+len(r.Waves)-1, w0, w1-1)
		}
		for i := range r.Waves {
			r.Waves[i].Pending = 0 // counted from the ids
		}
		d.Waves = append(d.Waves, r.Waves...)
		pu, err := r.updates(p*partTargets, min(h.Targets, (p+1)*partTargets))
		if err != nil {
			return nil, nil, fmt.Errorf("part %d: %w", p, err)
		}
		ups = append(ups, pu...)
		for w, pos := range r.Dead {
			if pos < p*partTargets || pos >= min(h.Targets, (p+1)*partTargets) {
				return nil, nil, fmt.Errorf("part %d: dead letter of %q at position %d, outside the part", p, w, pos)
			}
			if d.dead == nil {
				d.dead = map[string]int{}
			}
			d.dead[w] = pos
		}
	}
	return d, ups, nil
}

// updates decodes a part's queued updates, whose positions must be in
// [first, end).
func (r partRecord) updates(first, end int) ([]loadedUpdate, error) {
	ids, err := decodeIDs(r.IDs)
	if err != nil {
		return nil, fmt.Errorf("ids: %w", err)
	}
	over, err := decodeIDs(r.Overtaken)
	if err != nil {
		return nil, fmt.Errorf("overtaken ids: %w", err)
	}
	if len(r.Workers) != len(ids) {
		return nil, fmt.Errorf("%d workers for %d ids", len(r.Workers), len(ids))
	}
	out := make([]loadedUpdate, len(ids))
	b := r.Pos
	for i, id := range ids {
		off, n := binary.Uvarint(b)
		if n <= 0 || off >= uint64(end-first) {
			return nil, fmt.Errorf("position %d of %d: not in the part", i, len(ids))
		}
		b = b[n:]
		if w := r.Workers[i]; w != "" && wire.ValidWorkerID(w) != nil {
			return nil, fmt.Errorf("worker %d: %w", i, wire.ValidWorkerID(w))
		}
		_, o := slices.BinarySearch(over, id)
		out[i] = loadedUpdate{id: id, pos: first + int(off), worker: r.Workers[i], over: o}
	}
	if len(b) > 0 {
		return nil, errors.New("more positions than ids")
	}
	return out, nil
}

// v1Record is the one record a deploy had before parts: its waves with
// their queued ids, without their workers.
type v1Record struct {
	Index   int       `json:"index"`
	Version string    `json:"version"`
	Kind    wire.Kind `json:"kind"`
	Targets int       `json:"targets"`
	TTL     int64     `json:"ttl_ns,omitempty"`
	Waves   []struct {
		WaveProgress
		IDs       []byte `json:"ids,omitempty"`
		Overtaken []byte `json:"overtaken,omitempty"`
	} `json:"waves"`
	Seq  uint64         `json:"seq,omitempty"`
	Dead map[string]int `json:"dead,omitempty"` // worker -> wave
}

// decodeV1 reads a version 1 record. Its waves are all of the size of
// the first (the last may be smaller); a queued update's position is
// taken as its wave's first positions in turn, which puts it in the
// right wave (and the right part, but for a wave that spans two, where
// it makes no difference).
func decodeV1(b []byte) (*deployState, []loadedUpdate, error) {
	var r v1Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, err
	}
	if len(r.Waves) == 0 || r.Waves[0].Targets < 1 || len(r.Waves) > MaxWaves {
		return nil, nil, fmt.Errorf("%d waves", len(r.Waves))
	}
	size := r.Waves[0].Targets
	if r.Targets < 1 || (r.Targets+size-1)/size != len(r.Waves) {
		return nil, nil, fmt.Errorf("%d targets in %d waves of %d", r.Targets, len(r.Waves), size)
	}
	d := newLoaded(DeployProgress{Index: r.Index, Version: r.Version, Kind: r.Kind, Targets: r.Targets}, r.Seq, time.Duration(r.TTL), size)
	var ups []loadedUpdate
	for i, w := range r.Waves {
		ids, err := decodeIDs(w.IDs)
		if err != nil {
			return nil, nil, fmt.Errorf("wave %d ids: %w", i, err)
		}
		over, err := decodeIDs(w.Overtaken)
		if err != nil {
			return nil, nil, fmt.Errorf("wave %d overtaken ids: %w", i, err)
		}
		wp := w.WaveProgress
		if len(ids) > wp.Targets {
			return nil, nil, fmt.Errorf("wave %d: %d queued of %d targets", i, len(ids), wp.Targets)
		}
		wp.Pending = 0
		d.Waves = append(d.Waves, wp)
		for j, id := range ids {
			_, o := slices.BinarySearch(over, id)
			ups = append(ups, loadedUpdate{id: id, pos: i*size + j, over: o})
		}
	}
	for w, wave := range r.Dead {
		if wave < 0 || wave >= len(r.Waves) {
			return nil, nil, fmt.Errorf("dead letter of %q in wave %d, of %d waves", w, wave, len(r.Waves))
		}
		if d.dead == nil {
			d.dead = map[string]int{}
		}
		d.dead[w] = wave * size
	}
	// Written again in parts at the next save.
	for i := range d.changes {
		d.changes[i] = 1
	}
	return d, ups, nil
}

// encodeIDs writes ids, ascending, as varint deltas.
func encodeIDs(ids []uint64) []byte {
	if len(ids) == 0 {
		return nil
	}
	b := make([]byte, 0, len(ids)+8)
	var last uint64
	for _, id := range ids {
		b = binary.AppendUvarint(b, id-last)
		last = id
	}
	return b
}

var errBadIDs = errors.New("not a list of ascending ids")

func decodeIDs(b []byte) ([]uint64, error) {
	var out []uint64
	var last uint64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || (len(out) > 0 && d == 0) || last+d < last {
			return nil, errBadIDs
		}
		last += d
		out = append(out, last)
		b = b[n:]
	}
	return out, nil
}
