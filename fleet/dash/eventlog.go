package dash

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Kinds of event log entries beyond the run's own record kinds ("event",
// "control", "warning").
const (
	kindKey     = "key"     // a key press the run has not recorded yet
	kindNote    = "note"    // the dashboard explaining itself
	kindLog     = "log"     // a line from the standard logger
	kindSummary = "summary" // the result at the end
	kindVerdict = "verdict" // an expectation's outcome
)

// maxEntries bounds the event log; the run's report keeps every record.
const maxEntries = 2000

type entry struct {
	t    result.Seconds
	kind string
	text string
	// status is set on verdicts.
	status result.Status
	// level is a log line's ("warn"), when it has one.
	level string
}

// eventLog is the event pane's content: the run's records as they
// arrive, the dashboard's key presses, log lines and, at the end, the
// summary and verdicts.
type eventLog struct {
	entries  []entry
	seen     int // Live.Records consumed
	pending  int // key entries awaiting their control record
	scroll   int // lines up from the newest; 0 follows the newest
	reported bool
	reportAt int // index of the report's first entry, once reported
	dropped  int // entries dropped to stay within maxEntries
	// warned holds the warnings the run recorded: a run logs each one
	// too, and the pane shows it once.
	warned map[string]bool
}

// insert adds en in time order among the entries after the report's
// (a sample's event may come after records newer than it).
func (e *eventLog) insert(en entry) {
	e.add(en)
	floor := 0
	if e.reported {
		floor = e.reportAt
	}
	i := len(e.entries) - 1
	for i > floor && e.entries[i-1].t > en.t && e.entries[i-1].kind != kindKey {
		e.entries[i] = e.entries[i-1]
		i--
	}
	e.entries[i] = en
}

// addRecords appends the records not seen yet. A control record takes
// the place of the oldest pending key press: the run records the keys in
// the order the dashboard called it, so the log shows each once.
func (e *eventLog) addRecords(recs []result.Record) {
	if len(recs) < e.seen { // the source started over
		e.seen = 0
	}
	for _, r := range recs[e.seen:] {
		text := r.Text
		if r.LagSec >= 0.05 {
			text += fmt.Sprintf(" (%s late)", fmtSec(r.LagSec))
		}
		en := entry{t: r.T, kind: r.Kind, text: text}
		if r.Kind == "warning" {
			if e.warned == nil {
				e.warned = map[string]bool{}
			}
			e.warned[r.Text] = true
		}
		if r.Kind == "control" && e.pending > 0 {
			e.replacePending(en)
			continue
		}
		e.add(en)
	}
	e.seen = len(recs)
}

func (e *eventLog) replacePending(en entry) {
	for i := range e.entries {
		if e.entries[i].kind == kindKey {
			e.entries[i] = en
			e.pending--
			return
		}
	}
	e.pending = 0 // trimmed away meanwhile
	e.add(en)
}

func (e *eventLog) addKey(t result.Seconds, text string) {
	e.add(entry{t: t, kind: kindKey, text: text})
	e.pending++
}

func (e *eventLog) addNote(t result.Seconds, text string) {
	e.add(entry{t: t, kind: kindNote, text: text})
}

func (e *eventLog) addLogs(t result.Seconds, lines []string, skipped uint64) {
	if skipped > 0 {
		e.addNote(t, fmt.Sprintf("%d log lines skipped (logged faster than shown)", skipped))
	}
	for _, line := range lines {
		l := parseLog(line)
		if l.level == "warn" && e.warned[l.msg] {
			continue // the run's own warning, shown as its record
		}
		e.add(entry{t: t, kind: kindLog, text: l.text, level: l.level})
	}
}

// addReport appends the summary and the verdicts, once.
func (e *eventLog) addReport(r *result.Report) {
	if e.reported {
		return
	}
	e.reported = true
	e.reportAt = len(e.entries)
	res := r.Result
	t := res.Run.SimSeconds
	outcome := "PASSED"
	switch r.Outcome() {
	case result.NotJudged:
		outcome = "NOT JUDGED"
	case result.Fail:
		outcome = "FAILED"
	}
	pass, fail, nj := result.Tally(r.Verdicts)
	sum := func(text string) { e.add(entry{t: t, kind: kindSummary, text: text}) }
	sum(fmt.Sprintf("run %s: %d passed, %d failed, %d not judged", outcome, pass, fail, nj))
	if r.Err != "" {
		sum("error: " + r.Err)
	}
	kept := "kept up"
	if !res.Run.KeptUp {
		kept = fmt.Sprintf("fell behind (lag max %s): timing not judged", fmtSec(res.Run.LagMax))
	}
	sum(fmt.Sprintf("sim %s in %s wall, %s", fmtSec(res.Run.SimSeconds), fmtSec(result.Seconds(res.Run.WallSeconds)), kept))
	sum(fmt.Sprintf("lost %d · delivered %d · dead-lettered %d · leader restarts %d",
		res.Lost, res.Relay.Delivered, res.Relay.DeadLettered, res.Run.LeaderRestarts))
	for _, v := range r.Verdicts {
		text := v.Name
		if v.Check != "" && v.Check != v.Name {
			text += ": " + v.Check
		}
		if v.Detail != "" {
			text += " — " + v.Detail
		}
		e.add(entry{t: t, kind: kindVerdict, text: text, status: v.Status})
	}
}

func (e *eventLog) add(en entry) {
	if len(e.entries) >= maxEntries {
		n := maxEntries / 4
		for _, old := range e.entries[:n] {
			if old.kind == kindKey {
				e.pending--
			}
		}
		e.entries = append(e.entries[:0], e.entries[n:]...)
		e.dropped += n
		e.reportAt = max(0, e.reportAt-n)
	}
	e.entries = append(e.entries, en)
}

// scrollLines scrolls by n lines of entries wrapped to w (up when
// positive), keeping a full pane of h lines in view: at the top, the
// oldest entry is on the first line.
func (e *eventLog) scrollLines(n int, entries []entry, w, h int) {
	s := max(0, e.scroll+n)
	if n > 0 {
		total := 0
		for _, en := range entries {
			total += len(wrapEntry(en, w))
		}
		s = min(s, max(0, total-h))
	}
	e.scroll = s
}

// matching is the entries whose text holds filter (any case), and where
// the report's entries start among them (len when none).
func (e *eventLog) matching(filter string) (out []entry, reportAt int) {
	reportAt = len(e.entries)
	if e.reported {
		reportAt = e.reportAt
	}
	if filter == "" {
		return e.entries, reportAt
	}
	f := strings.ToLower(filter)
	at := -1
	for i, en := range e.entries {
		if i >= reportAt && at < 0 {
			at = len(out)
		}
		if strings.Contains(strings.ToLower(en.plain()), f) {
			out = append(out, en)
		}
	}
	if at < 0 {
		at = len(out)
	}
	return out, at
}

// lines is every entry as plain text.
func (e *eventLog) lines() []string {
	out := make([]string, len(e.entries))
	for i, en := range e.entries {
		out[i] = en.plain()
	}
	return out
}

// plain is the entry's line without styles.
func (en entry) plain() string {
	switch en.kind {
	case kindSummary:
		return en.text
	case kindVerdict:
		return fmt.Sprintf("%-4s %s", verdictTag(en.status), en.text)
	case kindKey:
		return fmt.Sprintf("%7s %-7s %s …", fmtSec(en.t), "control", en.text)
	}
	return fmt.Sprintf("%7s %-7s %s", fmtSec(en.t), en.label(), en.text)
}

// label is the kind column: a log line's level when it has one.
func (en entry) label() string {
	if en.kind == kindLog && en.level != "" {
		return en.level
	}
	return en.kind
}

func verdictTag(s result.Status) string {
	switch s {
	case result.Pass:
		return "PASS"
	case result.Fail:
		return "FAIL"
	}
	return "n/j"
}
