package scenario

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/fleetsim/fleetsim/docs"
)

// keyDoc is one key's row of docs/SCENARIOS.md: the document is the one
// place a key's meaning, default and valid values are written by hand, and
// the schema (Schema) carries them from there. Tests check that the rows
// agree with what the loader does.
type keyDoc struct {
	Type, Default, Valid, Meaning string
}

// Required reports whether the row says the key must be written.
func (k keyDoc) Required() bool {
	return k.Default == "required" || strings.HasPrefix(k.Meaning, "Required.")
}

var (
	keyDocsOnce sync.Once
	keyDocsMap  map[string]keyDoc
)

// keyDocs returns the key tables of docs/SCENARIOS.md by full path
// ("fleet.worker.mailbox.capacity", "timeline[].deploy.version"). The
// Timeline section writes its keys relative to the event, and each action
// is described by the paragraph that introduces it ("**`deploy`** — ...").
func keyDocs() map[string]keyDoc {
	keyDocsOnce.Do(func() { keyDocsMap = parseKeyTables(docs.Scenarios) })
	return keyDocsMap
}

var actionIntro = regexp.MustCompile("^\\*\\*`([a-z_]+)`\\*\\* — (.*)$")

func parseKeyTables(text string) map[string]keyDoc {
	out := map[string]keyDoc{}
	lines := strings.Split(text, "\n")
	section := ""
	var header []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "## "):
			section, header = strings.TrimPrefix(line, "## "), nil
			continue
		case strings.HasPrefix(line, "| Key |"):
			header = cells(line, 0)
			i++ // the |---| line
			continue
		case header != nil && strings.HasPrefix(line, "| `"):
			row := cells(line, len(header))
			key, ok := backquoted(row[0])
			if !ok {
				continue
			}
			if section == "Timeline" {
				key = "timeline[]." + key
			}
			var k keyDoc
			for j, h := range header[1:] {
				v := row[j+1]
				switch h {
				case "Type":
					k.Type = v
				case "Default":
					k.Default = v
				case "Valid":
					k.Valid = v
				case "Meaning":
					k.Meaning = v
				}
			}
			out[key] = k
			continue
		case section == "Timeline" && actionIntro.MatchString(line):
			m := actionIntro.FindStringSubmatch(line)
			para := []string{m[2]}
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
				i++
				para = append(para, lines[i])
			}
			meaning := strings.Join(para, " ")
			out["timeline[]."+m[1]] = keyDoc{Meaning: strings.ToUpper(meaning[:1]) + meaning[1:]}
		}
		if !strings.HasPrefix(line, "|") {
			header = nil
		}
	}
	return out
}

// cells splits a table row into its cells, at the bars outside code
// spans; with n > 0 into n at most, the last taking the rest.
func cells(line string, n int) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	code, start := false, 0
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '`':
			code = !code
		case line[i] == '|' && !code && (n <= 0 || len(out) < n-1):
			out = append(out, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	out = append(out, strings.TrimSpace(line[start:]))
	for len(out) < n {
		out = append(out, "")
	}
	return out
}

// backquoted returns s's text if s is one `code` span.
func backquoted(s string) (string, bool) {
	if len(s) < 2 || s[0] != '`' || s[len(s)-1] != '`' || strings.Count(s, "`") != 2 {
		return "", false
	}
	return s[1 : len(s)-1], true
}

// enum returns the values a Valid cell lists ("`reject`, `drop-oldest` or
// `coalesce`"), or nil when the cell is not such a list.
func (k keyDoc) enum() []string {
	v := strings.ReplaceAll(k.Valid, " or ", ", ")
	if v == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(v, ", ") {
		s, ok := backquoted(strings.TrimSpace(part))
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// numRange is what a Valid cell says of a number: bounds, each possibly
// absent or exclusive.
type numRange struct {
	min, max         *float64
	exclusiveMin     bool
	minLen, maxLen   int // for text: "1 to 64 characters"
	noSpaces, absent bool
}

var (
	rangeTo      = regexp.MustCompile(`^(?:from )?(\S+) to ([0-9][0-9,]*)\b`)
	rangeFrom    = regexp.MustCompile(`^([0-9][0-9,]*) to \S`)
	rangeAbove   = regexp.MustCompile(`^above ([0-9][0-9,]*)(?:, at most ([0-9][0-9,]*))?$`)
	rangeAtLeast = regexp.MustCompile(`^([0-9][0-9,]*) or more\b`)
	rangeChars   = regexp.MustCompile(`^([0-9]+) to ([0-9]+) characters(, no spaces)?$`)
)

// number reads a Valid cell's bounds: "1 to 10,000,000", "above 0, at most
// 100", "0 or more", "1 to `fleet.count`" (a lower bound: the upper one
// depends on another key), "from `min` to 100,000", "1 to 64 characters,
// no spaces", "not allowed".
func (k keyDoc) number() numRange {
	var r numRange
	v := k.Valid
	num := func(s string) *float64 {
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if err != nil {
			return nil
		}
		return &f
	}
	switch {
	case v == "not allowed":
		r.absent = true
	case rangeChars.MatchString(v):
		m := rangeChars.FindStringSubmatch(v)
		r.minLen, _ = strconv.Atoi(m[1])
		r.maxLen, _ = strconv.Atoi(m[2])
		r.noSpaces = m[3] != ""
	case rangeTo.MatchString(v):
		m := rangeTo.FindStringSubmatch(v)
		r.min, r.max = num(m[1]), num(m[2])
	case rangeFrom.MatchString(v):
		r.min = num(rangeFrom.FindStringSubmatch(v)[1])
	case rangeAbove.MatchString(v):
		m := rangeAbove.FindStringSubmatch(v)
		r.min, r.exclusiveMin = num(m[1]), true
		if m[2] != "" {
			r.max = num(m[2])
		}
	case rangeAtLeast.MatchString(v):
		r.min = num(rangeAtLeast.FindStringSubmatch(v)[1])
	}
	return r
}

// defaultValue is a Default cell that is one `value`: the value as text.
func (k keyDoc) defaultValue() (string, bool) {
	d := k.Default
	if i := strings.Index(d, "` ("); i > 0 {
		d = d[:i+1] // "`0s` (off)"
	}
	if i := strings.Index(d, "`, or "); i > 0 {
		return "", false // "`50`, or `initial` if that is higher"
	}
	v, ok := backquoted(d)
	if v == `""` {
		v = ""
	}
	return v, ok
}
