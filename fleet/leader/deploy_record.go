package leader

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// A deploy's progress is one record in the outbox (outbox.Records), under
// deployPrefix and its index, so that it survives the leader with the
// updates it counts. The record is JSON; the ids of the updates still
// queued are a list of varint deltas (ascending), a byte or two each.
const deployPrefix = "leader/deploy/"

func deployKey(index int) string { return fmt.Sprintf("%s%010d", deployPrefix, index) }

// deployRecord is the stored form of a deployState.
type deployRecord struct {
	V       int          `json:"v"`
	Index   int          `json:"index"`
	Version string       `json:"version"`
	Kind    wire.Kind    `json:"kind"`
	Targets int          `json:"targets"`
	TTL     int64        `json:"ttl_ns,omitempty"`
	Waves   []waveRecord `json:"waves"`
	// Seq is the sequence number of the deploy's updates, and Dead the
	// wave of each worker whose update is counted as a dead letter: a
	// replayed one delivered later counts as delivered (records saved
	// before they were kept have neither).
	Seq  uint64         `json:"seq,omitempty"`
	Dead map[string]int `json:"dead,omitempty"`
}

// waveRecord is a wave's counts and the ids it still tracks.
type waveRecord struct {
	WaveProgress
	IDs       []byte `json:"ids,omitempty"`       // queued updates
	Overtaken []byte `json:"overtaken,omitempty"` // of those, overtaken (see tracked)
}

const deployRecordVersion = 1

// save writes the deploys that changed since the last save, and deletes
// the records of those forgotten, in one PutRecords. A deploy whose save
// fails stays changed and is tried at the next save.
//
// Between saves the outbox moves on: a leader killed after an update was
// acked and before the next save finds it gone from the queue when it
// starts, and counts it as delivered (see deployTracker).
func (t *deployTracker) save(ctx context.Context, st outbox.Records) error {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	t.mu.Lock()
	type put struct {
		d   *deployState
		ver uint64
	}
	var puts []put
	ids := map[*deployState][][]uint64{}
	over := map[*deployState][][]uint64{}
	for _, d := range t.deploys {
		if d.ver != d.saved {
			puts = append(puts, put{d, d.ver})
			ids[d] = make([][]uint64, len(d.Waves))
			over[d] = make([][]uint64, len(d.Waves))
		}
	}
	dropped := slices.Clone(t.dropped)
	if len(puts) == 0 && len(dropped) == 0 {
		t.mu.Unlock()
		return nil
	}
	if len(puts) > 0 {
		for id, m := range t.byMsg {
			if w := ids[m.d]; w != nil {
				w[m.wave] = append(w[m.wave], id)
				if m.overtaken {
					over[m.d][m.wave] = append(over[m.d][m.wave], id)
				}
			}
		}
	}
	recs := make([]outbox.Record, 0, len(puts)+len(dropped))
	for _, p := range puts {
		r := deployRecord{V: deployRecordVersion, Index: p.d.Index, Version: p.d.Version, Kind: p.d.Kind, Targets: p.d.Targets, TTL: int64(p.d.ttl),
			Seq: p.d.seq, Dead: maps.Clone(p.d.dead)}
		for i, w := range p.d.Waves {
			r.Waves = append(r.Waves, waveRecord{WaveProgress: w, IDs: encodeIDs(ids[p.d][i]), Overtaken: encodeIDs(over[p.d][i])})
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.mu.Unlock()
			return fmt.Errorf("encode deploy %d: %w", p.d.Index, err)
		}
		recs = append(recs, outbox.Record{Key: deployKey(p.d.Index), Value: b})
	}
	t.mu.Unlock()
	for _, idx := range dropped {
		recs = append(recs, outbox.Record{Key: deployKey(idx)})
	}
	if err := st.PutRecords(ctx, recs...); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range puts {
		p.d.saved = max(p.d.saved, p.ver)
	}
	t.dropped = slices.DeleteFunc(t.dropped, func(i int) bool { return slices.Contains(dropped, i) })
	return nil
}

// load takes up the deploys an earlier leader saved in st. A record it
// cannot read is logged and skipped (its index is not reused); the
// deploys it can read are looked up at the next reconcile.
func (t *deployTracker) load(ctx context.Context, st outbox.Records, log *slog.Logger) error {
	recs, err := st.ListRecords(ctx, deployPrefix)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rec := range recs {
		idx, err := strconv.Atoi(strings.TrimPrefix(rec.Key, deployPrefix))
		if err != nil || idx < 0 {
			log.Error("deploy progress: a record with an unknown key is ignored", "key", rec.Key)
			continue
		}
		t.next = max(t.next, idx+1)
		d, err := t.decodeLocked(rec.Value)
		if err == nil && d.Index != idx {
			err = fmt.Errorf("it says index %d", d.Index)
		}
		if err != nil {
			log.Error("deploy progress: an unreadable record is ignored", "key", rec.Key, "err", err)
			continue
		}
		t.deploys = append(t.deploys, d)
	}
	return nil
}

// decodeLocked reads a record and tracks its queued updates, to be looked
// up (they come without their worker: an overwrite of one is not noticed
// until it leaves the queue).
func (t *deployTracker) decodeLocked(b []byte) (*deployState, error) {
	var r deployRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.V != deployRecordVersion {
		return nil, fmt.Errorf("record version %d, this build reads %d", r.V, deployRecordVersion)
	}
	d := &deployState{DeployProgress: DeployProgress{Index: r.Index, Version: r.Version, Kind: r.Kind, Targets: r.Targets}, ttl: time.Duration(r.TTL),
		seq: r.Seq, dead: r.Dead}
	for w, wave := range d.dead {
		if wave < 0 || wave >= len(r.Waves) {
			return nil, fmt.Errorf("dead letter of %q in wave %d, of %d waves", w, wave, len(r.Waves))
		}
	}
	type entry struct {
		id   uint64
		wave int
		over bool
	}
	var entries []entry
	for i, w := range r.Waves {
		ids, err := decodeIDs(w.IDs)
		if err != nil {
			return nil, fmt.Errorf("wave %d ids: %w", i, err)
		}
		over, err := decodeIDs(w.Overtaken)
		if err != nil {
			return nil, fmt.Errorf("wave %d overtaken ids: %w", i, err)
		}
		wp := w.WaveProgress
		wp.Pending = len(ids)
		d.Waves = append(d.Waves, wp)
		d.pending += len(ids)
		for _, id := range ids {
			_, o := slices.BinarySearch(over, id)
			entries = append(entries, entry{id, i, o})
		}
	}
	for _, e := range entries {
		if t.byMsg[e.id] != nil {
			return nil, fmt.Errorf("update %d is another deploy's too", e.id)
		}
	}
	for _, e := range entries {
		t.byMsg[e.id] = &tracked{d: d, wave: e.wave, look: true, overtaken: e.over}
	}
	return d, nil
}

// encodeIDs sorts ids and writes them as varint deltas.
func encodeIDs(ids []uint64) []byte {
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
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
