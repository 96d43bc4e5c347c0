package dash

import (
	"strconv"
	"strings"
)

// logLine is a line from a logger as the event pane shows it: its
// level ("" when it has none) and a readable text.
type logLine struct {
	level string // "debug", "info", "warn", "error"
	msg   string // the message alone, for slog's text format
	text  string
}

// parseLog reads a line a logger wrote into a LogBuffer. slog's text
// format (time=… level=WARN msg="…" k=v …) becomes its level, its
// message and its other fields as k=v (the time is dropped: the pane
// shows the simulated time); a line of slog's default handler through
// the standard logger ("WARN msg k=v") its level and the rest; any other
// line is shown as written.
func parseLog(line string) logLine {
	if kv, ok := parseLogfmt(line); ok {
		var l logLine
		var fields []string
		haveMsg := false
		for _, f := range kv {
			switch f[0] {
			case "time", "source":
			case "level":
				l.level = normLevel(f[1])
			case "msg":
				l.msg, haveMsg = f[1], true
			default:
				fields = append(fields, f[0]+"="+quoteValue(f[1]))
			}
		}
		if haveMsg {
			l.text = l.msg
			if len(fields) > 0 {
				l.text += " · " + strings.Join(fields, " ")
			}
			return l
		}
	}
	if word, rest, ok := strings.Cut(line, " "); ok {
		if lv := normLevel(word); lv != "" {
			return logLine{level: lv, text: rest}
		}
	}
	return logLine{text: line}
}

// normLevel is slog's level name in lower case, an offset dropped
// ("WARN+2" is a warning); "" for a word that is no level.
func normLevel(s string) string {
	base, _, _ := strings.Cut(s, "+")
	base, _, _ = strings.Cut(base, "-")
	switch base {
	case "DEBUG", "INFO", "WARN", "ERROR":
		return strings.ToLower(base)
	}
	return ""
}

// parseLogfmt splits a line of key=value pairs separated by spaces, a
// value quoted as Go quotes strings when it needs to be (as slog's
// TextHandler writes them); false when the line is not that.
func parseLogfmt(s string) ([][2]string, bool) {
	var kv [][2]string
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return kv, len(kv) > 0
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.ContainsAny(s[:eq], " \"") {
			return nil, false
		}
		key := s[:eq]
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, false
			}
			val, _ = strconv.Unquote(q)
			s = s[len(q):]
		} else {
			end := strings.IndexByte(s, ' ')
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		kv = append(kv, [2]string{key, val})
	}
}

// quoteValue quotes v when it would not read as one value.
func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"") || strconv.Quote(v) != `"`+v+`"` {
		return strconv.Quote(v)
	}
	return v
}
