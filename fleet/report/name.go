package report

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// name is how messages and titles name a report: the scenario, and the
// variant in brackets when there is one.
func name(r *result.Report) string {
	if r.Variant == "" {
		return r.Scenario
	}
	return r.Scenario + " [" + r.Variant + "]"
}

// checkRuns rejects a run without its report, which would otherwise panic
// deep in a template, and one that was never judged (Judge).
func checkRuns(runs []Run) error {
	for i, r := range runs {
		if err := checkRun(r); err != nil {
			return fmt.Errorf("report: runs[%d]: %w", i, err)
		}
	}
	return nil
}

func checkRun(r Run) error {
	switch {
	case r.Report == nil:
		return fmt.Errorf("no report")
	case r.Verdict.Status == "":
		return fmt.Errorf("%s has no verdict: judge it with report.Judge", name(r.Report))
	}
	return nil
}

// maxNamePart bounds each part of a file name: a sweep over several long
// parameters must still fit a file system's 255 bytes.
const maxNamePart = 100

// FileName is the base name (without extension) of a report's or a
// baseline's files: the scenario, and "--" and the variant when there is
// one ("mailbox-policies--leader.mailbox.policy=reject"). Letters, digits
// and . _ - = , + are kept; anything else (a slash, a space, a colon) becomes
// _ and, because two names could then collide, the part gains a short hash
// of its original text. The result is safe as a file name on Linux, macOS
// and Windows and never starts with a dot.
func FileName(scenarioName, variant string) string {
	n := safeName(scenarioName)
	if variant != "" {
		n += "--" + safeName(variant)
	}
	return n
}

func safeName(s string) string {
	if s == "" {
		return "unnamed"
	}
	var b strings.Builder
	lossy := false
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '_', c == '-', c == '=', c == ',', c == '+':
			b.WriteRune(c)
		case c == '.' && i > 0:
			b.WriteRune(c)
		default:
			b.WriteByte('_')
			lossy = true
		}
	}
	out := b.String()
	if len(out) > maxNamePart {
		out, lossy = out[:maxNamePart], true
	}
	// Windows refuses names ending in a dot.
	if strings.HasSuffix(out, ".") {
		out, lossy = strings.TrimRight(out, ".")+"_", true
	}
	if lossy {
		h := fnv.New32a()
		h.Write([]byte(s))
		out = fmt.Sprintf("%s-%08x", out, h.Sum32())
	}
	return out
}
