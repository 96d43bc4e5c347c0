package dash

import (
	"log"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestParseLog(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     logLine
	}{
		{"slog text", `time=2026-12-05T02:21:11.744Z level=WARN msg="the machine could not keep up" lag=2.1s scenario=wave-deploy`,
			logLine{"warn", "the machine could not keep up", "the machine could not keep up · lag=2.1s scenario=wave-deploy"}},
		{"quoted field", `time=x level=ERROR msg=failed err="open /tmp/a b: no such file"`,
			logLine{"error", "failed", `failed · err="open /tmp/a b: no such file"`}},
		{"level offset", `level=INFO+2 msg=hello`, logLine{"info", "hello", "hello"}},
		{"no level", `msg=hello k=v`, logLine{"", "hello", "hello · k=v"}},
		{"default handler", `WARN leader restarted after=3s`, logLine{level: "warn", text: "leader restarted after=3s"}},
		{"plain", `snapshot taken`, logLine{text: "snapshot taken"}},
		{"not logfmt", `a=b c`, logLine{text: "a=b c"}},
		{"bad quote", `level=WARN msg="unended`, logLine{text: `level=WARN msg="unended`}},
		{"no message", `level=WARN k=v`, logLine{text: `level=WARN k=v`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseLog(tc.in); got != tc.want {
				t.Errorf("parseLog(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// A log line in the event pane reads as its level, its message and its
// fields, not as slog's text format; a warning the run recorded and
// logged shows once, as its record.
func TestLogEventLine(t *testing.T) {
	l := midRun()
	l.Now = 60
	l.Records = append(l.Records, result.Record{T: 59, Kind: "warning", Text: "the machine could not keep up at speed 4"})
	logs := NewLogBuffer(50)
	lg := slog.New(slog.NewTextHandler(logs, nil))
	lg.Warn("the machine could not keep up at speed 4", "t", "59s")
	lg.Warn("a worker answered late", "worker", "w-0007", "late", "1.5s")
	lg.Error("outbox write failed", "err", "disk full")
	log.New(logs, "", 0).Print("a plain line")

	var tm = New(sourceOf(l), &fakeControls{}, Options{Logs: logs})
	m, _ := tm.Update(tickMsg{})
	ev := m.(Model).Events()
	for _, want := range []string{
		"  1m00s warn    a worker answered late · worker=w-0007 late=1.5s",
		"  1m00s error   outbox write failed · err=\"disk full\"",
		"  1m00s log     a plain line",
	} {
		if !slices.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, strings.Join(ev, "\n"))
		}
	}
	n := 0
	for _, e := range ev {
		if strings.Contains(e, "level=") || strings.Contains(e, "time=") || strings.Contains(e, "msg=") {
			t.Errorf("a raw log line: %q", e)
		}
		if strings.Contains(e, "could not keep up") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the run's warning shows %d times, want once:\n%s", n, strings.Join(ev, "\n"))
	}
	golden.RequireEqual(t, []byte(strings.Join(ev, "\n")+"\n"))
}
