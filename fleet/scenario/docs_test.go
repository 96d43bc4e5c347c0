package scenario

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestDocsCoverEveryKey keeps docs/SCENARIOS.md from falling behind the
// code: every key a file can hold (from spec.go's yaml tags) and every name
// a check can read (from result.go's expr tags) must appear in it, in
// backquotes. A key under timeline[] is written relative to the event
// (`deploy.version`); a group's profile keys are those of fleet.worker.
func TestDocsCoverEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	profile := map[string]bool{}
	for _, k := range fieldsOf(reflect.TypeFor[WorkerProfile]()).order {
		profile[k] = true
	}
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		fs := fieldsOf(t)
		for _, k := range fs.order {
			if prefix == "fleet.groups[]" && profile[k] {
				continue
			}
			p := join(prefix, k)
			ft := t.FieldByIndex(fs.byName[k]).Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft == selectorType || textual(ft):
				keys = append(keys, p)
			case ft.Kind() == reflect.Struct:
				walk(ft, p)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+"[]")
			default:
				keys = append(keys, p)
			}
		}
	}
	walk(reflect.TypeFor[Scenario](), "")
	keys = append(keys, "sweep")
	if len(keys) < 70 {
		t.Fatalf("only %d keys found: the walk is broken", len(keys))
	}
	for _, k := range keys {
		k = strings.TrimPrefix(k, "timeline[].")
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docs/SCENARIOS.md does not mention the key `%s`", k)
		}
	}
	for _, n := range expect.Names() {
		if expect.NameType(n).Kind() == reflect.Struct {
			continue // its fields are listed
		}
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/SCENARIOS.md does not mention the name `%s`", n)
		}
	}
	if !strings.Contains(doc, "## Reports and baselines\n\nSee docs/REPORTS.md.") {
		t.Error("docs/SCENARIOS.md lost its pointer to docs/REPORTS.md")
	}
}

// TestDocsLoadErrorExample checks that the load error shown in
// docs/SCENARIOS.md is what Parse prints for the file shown there.
func TestDocsLoadErrorExample(t *testing.T) {
	data, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Load errors")
	if !ok {
		t.Fatal("no Load errors section")
	}
	block := func(s, fence string) (string, string) {
		_, rest, ok := strings.Cut(s, fence+"\n")
		if !ok {
			t.Fatalf("no %s block", fence)
		}
		body, rest, _ := strings.Cut(rest, "```\n")
		return body, rest
	}
	file, rest := block(section, "```yaml")
	want, _ := block(rest, "```")
	_, err = Parse("wave-deploy.yaml", []byte(file))
	if err == nil {
		t.Fatal("the example loads without error")
	}
	if got := err.Error() + "\n"; got != want {
		t.Errorf("docs/SCENARIOS.md shows\n%s\nParse prints\n%s", want, got)
	}
}

// docs/SCENARIOS.md's table of what each name needs the run to send is
// the registry's feeds (result.Metric.Feeds), and its refused and warned examples are what Parse prints.
func TestDocsRefusedAndWarned(t *testing.T) {
	data, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "What each name needs:\n")
	if !ok {
		t.Fatal("no table of what each name needs")
	}
	feeds := map[string]result.Feed{"commands": result.FeedCommands, "telemetry": result.FeedTelemetry, "heartbeats": result.FeedHeartbeats,
		"jobs": result.FeedJobs, "job requests": result.FeedJobRequests,
		"commands or telemetry": result.FeedCommands | result.FeedTelemetry, "nothing": 0,
		"commands or job requests": result.FeedCommands | result.FeedJobRequests}
	doc := map[string]result.Feed{} // pattern → feed
	rows := 0
	for _, line := range strings.Split(section, "\n")[3:] { // after the blank line and the head
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(line, " | ")
		kind, _, _ := strings.Cut(strings.TrimPrefix(cells[0], "| "), ":")
		f, ok := feeds[kind]
		if !ok {
			t.Fatalf("row %q: unknown feed %q", line, kind)
		}
		rows++
		quoted := strings.Split(cells[1], "`")
		for i := 1; i < len(quoted); i += 2 {
			name := strings.ReplaceAll(quoted[i], `["W"]`, "[]") // a window as expect.ResultNames names it
			doc[strings.TrimSuffix(name, ".*")] = f
		}
	}
	if rows != len(feeds) {
		t.Fatalf("%d rows, want %d", rows, len(feeds))
	}
	for _, n := range expect.ResultNames() {
		// The most specific pattern the doc lists for n.
		want, best := result.Feed(0), -1
		for p, f := range doc {
			if (n == p || expect.Inside(p, n)) && len(p) > best {
				want, best = f, len(p)
			}
		}
		if got, _ := feedsOf(n); got != want {
			t.Errorf("%s: docs/SCENARIOS.md says it needs %v, the registry says %v", n, want, got)
		}
	}

	// The example file and the warning shown after the table.
	_, rest, _ := strings.Cut(section, "```yaml\n")
	file, rest, _ := strings.Cut(rest, "```\n")
	_, rest, _ = strings.Cut(rest, "```\n")
	shown, _, _ := strings.Cut(rest, "```\n")
	s, err := Parse("heartbeats.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Warnings.Error() + "\n"; got != shown {
		t.Errorf("docs/SCENARIOS.md shows\n%s\nParse prints\n%s", shown, got)
	}
	_, err = Parse("my-scenario.yaml", []byte("name: my-scenario\nduration: 1m\nfleet: {count: 10}\ntimeline:\n  - {at: 1s, deploy: {version: 2.0.0}}\nexpect:\n  - lost == 0\n  - workers.applied == fleet.count\n  - lost >= 0\n"))
	if err == nil || !strings.Contains(string(data), "```\n"+err.Error()+"\n```\n") {
		t.Errorf("docs/SCENARIOS.md does not show the error Parse prints:\n%v", err)
	}
}

// docs/SCENARIOS.md's table of limits has the values the code checks, and
// its example is what Parse prints.
func TestDocsLimits(t *testing.T) {
	data, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Limits\n")
	if !ok {
		t.Fatal("no section Limits")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	want := map[string]string{
		"file size":                                 fmt.Sprintf("%d MiB (`--max-file-size` of `sim run`, `check` and `validate` raises it, up to %d MiB", DefaultMaxFileSize>>20, MaxFileSize>>20),
		"nesting":                                   fmt.Sprintf("%d levels", MaxDepth),
		"keys in one mapping":                       fmt.Sprint(MaxKeys),
		"keys and list items in the file":           fmt.Sprint(MaxNodes),
		"length of one check":                       fmt.Sprintf("%d bytes", expect.MaxCheckLength),
		"brackets `(` `[` `{` nested in one check":  fmt.Sprint(expect.MaxCheckDepth),
		"text repeated by aliases":                  fmt.Sprintf("%d MiB", MaxAliasBytes>>20),
		"checks to compile":                         fmt.Sprint(MaxChecks),
		"bytes of those checks":                     fmt.Sprintf("%d KiB", MaxCheckBytes>>10),
		"keys and list items of a sweep's variants": fmt.Sprint(MaxSweepNodes),
	}
	seen := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 3 {
			continue
		}
		for name, value := range want {
			if strings.HasPrefix(cells[0], "| "+name) {
				seen++
				if !strings.HasPrefix(cells[1], value) {
					t.Errorf("docs/SCENARIOS.md gives %s as %q, the code checks %s", name, cells[1], value)
				}
			}
		}
	}
	if seen != len(want) {
		t.Errorf("the table of limits has %d of the %d limits", seen, len(want))
	}
	_, shown, _ := strings.Cut(section, "```\n")
	shown, _, _ = strings.Cut(shown, "```\n")
	var b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	_, err = Parse("hostile.yaml", []byte(b.String()))
	if err == nil || err.Error()+"\n" != shown {
		t.Errorf("docs/SCENARIOS.md shows\n%s\nParse prints\n%v", shown, err)
	}
}
