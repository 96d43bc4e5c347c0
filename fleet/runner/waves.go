package runner

import (
	"fmt"
	"time"
)

// waveKey names one wave of one leader deploy: the deploy, which of its
// leader deploys (deployRef), and the wave in that one's progress.
type waveKey struct {
	d         *deployRun
	ref, wave int
}

// waveState is what the records have said of a wave.
type waveState struct{ started, done bool }

// deployRefs is a deploy's leader deploys as they stand, for waveNews.
type deployRefs struct {
	d    *deployRun
	refs []deployRef
}

// waveRefs copies every deploy's refs. Called with r.mu held.
func (r *Runner) waveRefs() []deployRefs {
	out := make([]deployRefs, 0, len(r.deploys))
	for _, d := range r.deploys {
		// A deploy's targets may all run it before the leader's progress
		// says its last wave is delivered: it is followed until then.
		if !d.wavesDone {
			out = append(out, deployRefs{d: d, refs: append([]deployRef(nil), d.refs...)})
		}
	}
	return out
}

// waveNews is a record text for each wave that has started or been
// delivered since the last call, as the serving leader's deploy progress
// says (a crashed leader's progress is gone with it: its waves are not
// reported). A wave the runner paces itself (wait_for_wave) has its
// start recorded where it is enqueued; here only its delivery.
func (r *Runner) waveNews(all []deployRefs) []string {
	cur, _ := r.current()
	if cur == nil || len(all) == 0 {
		return nil
	}
	now := r.clk.Now()
	r.sampleMu.Lock()
	defer r.sampleMu.Unlock()
	if r.waveSeen == nil {
		r.waveSeen = make(map[waveKey]waveState)
	}
	var news []string
	for _, dr := range all {
		d := dr.d
		delivered := d.done
		for ri, ref := range dr.refs {
			if ref.lr != cur {
				continue
			}
			p, ok := cur.l.Progress(ref.idx)
			if !ok {
				continue
			}
			for wi, w := range p.Waves {
				k := waveKey{d: d, ref: ri, wave: wi}
				seen := r.waveSeen[k]
				num, of := wi+1, len(p.Waves)
				if d.paced {
					num, of = ri+1, wavesOf(d, ref)
				}
				if !seen.started && !d.paced && !w.Start.IsZero() && !w.Start.After(now) {
					seen.started = true
					news = append(news, fmt.Sprintf("deploy %s: wave %d of %d started (%d workers)", d.version, num, of, w.Targets))
				}
				if !seen.done && !w.Done.IsZero() {
					seen.started, seen.done = true, true
					news = append(news, fmt.Sprintf("deploy %s: wave %d of %d delivered in %s", d.version, num, of, fmtDur(w.Duration)))
				}
				r.waveSeen[k] = seen
				delivered = delivered && seen.done
			}
		}
		if delivered {
			r.mu.Lock()
			d.wavesDone = true
			r.mu.Unlock()
		}
	}
	return news
}

// wavesOf is how many waves a paced deploy has, from the size of one.
func wavesOf(d *deployRun, ref deployRef) int {
	size := max(1, ref.to-ref.from)
	return (len(d.targets) + size - 1) / size
}

// fmtDur is a simulated duration for a record: "1.2s".
func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}
