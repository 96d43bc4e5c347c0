package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yamlast "github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario/internal/yamlshape"
)

// FuzzParse feeds Parse arbitrary bytes: it must never panic nor take
// long (the limits hold the parsers' work down), and it either returns a
// scenario that lays out, judges, sweeps and scales without panicking, or
// Errors that each name a line. Its corpus (testdata/fuzz/FuzzParse) holds
// files past each limit.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(sweepFile))
	f.Add([]byte(fuzzJudgeFile))
	f.Add([]byte(scaleFile))
	for _, seed := range budgetSeeds() {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fuzzer does not notice an input that never returns; a panic
		// makes it save the input as a failure (a self-merging anchor once
		// looped here).
		timer := time.AfterFunc(5*time.Second, func() { panic("Parse has not returned after 5s") })
		defer timer.Stop()
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not Errors: %v", err)
			}
			for _, e := range es {
				if e.Line < 1 || e.Col < 0 || e.Msg == "" {
					t.Fatalf("error without a place: %#v", e)
				}
			}
			_ = err.Error()
			return
		}
		if s.Fleet.Count < 1 || s.Fleet.Count > MaxWorkers || s.Duration <= 0 || s.Speed <= 0 {
			t.Fatalf("loaded an invalid scenario: %+v", s)
		}
		judgeAll(s, result.Result{})
		judgeAll(s, result.Result{Run: result.RunInfo{KeptUp: true}})
		if _, err := s.Variants(); err != nil {
			t.Fatalf("Parse accepted a sweep that Variants refuses: %v", err)
		}
		if s.Fleet.Count <= 10_000 {
			ws, err := s.Workers()
			if err != nil {
				t.Fatalf("Workers: %v", err)
			}
			for _, ev := range s.Timeline {
				for _, sel := range ev.selectors() {
					if _, err := sel.Select(ws); err != nil {
						t.Fatalf("a validated selector fails: %v", err)
					}
				}
			}
		}
		_, _ = s.Scale(1)
		_, _ = s.Scale(3)
	})
}

// FuzzLimits: the scan that enforces MaxDepth and MaxKeys never counts
// less than the YAML parser builds. For any input the scan lets through
// and the parser accepts, the parser's tree nests no deeper, and has no
// mapping with more keys, than the scan counted; so a file within the
// limits cannot cost the parser more than they allow.
func FuzzLimits(f *testing.F) {
	for _, s := range limitSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimPrefix(data, []byte("\ufeff")) // as Parse does
		problem, depth, keys := yamlshape.Measure(data)
		if problem != nil {
			return
		}
		file, err := parseYAML(data)
		if err != nil {
			return
		}
		var tr treeShape
		for _, doc := range file.Docs {
			tr.walk(doc.Body, 0)
		}
		if tr.depth > depth || tr.keys > keys {
			t.Fatalf("the parser built %d levels and %d keys in a mapping; the scan counted %d and %d", tr.depth, tr.keys, depth, keys)
		}
	})
}

// budgetSeeds are files just past each limit of what a file makes once
// parsed (aliases, checks, a sweep's variants) and of its text (UTF-8),
// and smaller ones within each (TestLoadBudget has those just within: at
// the limit, a load takes too long for the race detector's five seconds).
func budgetSeeds() []string {
	checks := func(n int, f func(i int) string) string { return minimal + "expect:\n" + repeat(n, f) }
	small := func(i int) string { return fmt.Sprintf("  - lost == %d\n", i) }
	big := func(i int) string { return "  - " + bigCheck(580) + fmt.Sprintf(" + %d\n", i) }
	text := strings.Repeat("x", 64<<10)
	return []string{
		minimal + "description: &d " + text + "\nsweep:\n  description: [" + strings.Repeat("*d, ", 15) + "*d]\n",
		minimal + "description: &d " + text + "\nsweep:\n  description: [" + strings.Repeat("*d, ", 16) + "*d]\n",
		minimal + "leader: &l {mailbox: *l}\n",
		minimal + "leader:\n  mailbox: &m {capacity: 5}\n  outbox: {<<: *m}\n",
		checks(100, small),
		checks(MaxChecks+1, small),
		checks(4, big),
		checks(17, big),
		checks(2, func(int) string { return "  - lost == 0\n" }),
		checks(20, small) + sweepOf(100),
		checks(245, small) + sweepOf(1000),
		minimal + "description: caf\xe9\n",
		"\xff\xfen\x00a\x00",
	}
}

// limitSeeds are the shapes the scan reads: indentation, lists, flow
// collections, quotes, block scalars, comments, anchors, documents.
var limitSeeds = []string{
	minimal,
	"a:\n  b:\n    c: 1\n  d: [1, {e: 2, f: [3]}]\n",
	"- - - a\n- b: 1\n  c: 2\n-\n  - d\n",
	"a:\n- 1\n- k: v\n  l: w\nb: 2\n",
	"a: |\n  x: 1\n    y: 2\nb: >-\n  z\nc: |2+\n   w\n",
	"a: \"x: [1\n  b: 2\"\nc: 'it''s [{'\nd: x \"y\ne: [\"a\", 'b']\n",
	"# c: [\na: 1 # b: {\nb: x#y\n",
	"a: &x {b: 1}\nc: *x\nd: !!str e\n<<: *x\n",
	"? a\n: b\n? [c, d]\n: e\n",
	"--- \na: 1\n...\n---\nb: [1,\n 2,\n  {c: 3}]\n",
	"{\"a\":1, \"b\":[2,{\"c\":3}]}",
	"a: [b: 1, c]\n",
	"\ufeffa: 1\n",
	"a:\tb\n\tc: d\n",
	"a: b\n  c\n  - d\n",
}

// parseYAML is goccy's parse, a panic in it an error.
func parseYAML(data []byte) (f *yamlast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

// treeShape is the deepest nesting of collections in a parsed tree and
// the most keys of one of its mappings.
type treeShape struct{ depth, keys int }

func (s *treeShape) walk(n yamlast.Node, depth int) {
	switch m := n.(type) {
	case *yamlast.MappingNode:
		depth++
		s.keys = max(s.keys, len(m.Values))
		for _, v := range m.Values {
			s.walk(v.Key, depth)
			s.walk(v.Value, depth)
		}
	case *yamlast.MappingValueNode: // a mapping of one key
		depth++
		s.keys = max(s.keys, 1)
		s.walk(m.Key, depth)
		s.walk(m.Value, depth)
	case *yamlast.SequenceNode:
		depth++
		for _, v := range m.Values {
			s.walk(v, depth)
		}
	case *yamlast.AnchorNode:
		s.walk(m.Value, depth)
	case *yamlast.TagNode:
		s.walk(m.Value, depth)
	case *yamlast.MappingKeyNode:
		s.walk(m.Value, depth)
	}
	s.depth = max(s.depth, depth)
}

// FuzzExpectation compiles any text as an expectation, as a comparison and
// as a file's check: it never panics nor overflows the stack (the limits
// MaxCheckLength and MaxCheckDepth stop what expr's parser would recurse
// on without end); what does not compile is a located error with a
// message; what compiles is judged on results without panicking. Its
// corpus (testdata/fuzz/FuzzExpectation) holds checks past each limit.
func FuzzExpectation(f *testing.F) {
	for _, c := range expectationSeeds {
		f.Add(c)
	}
	for _, n := range expect.Names() {
		f.Add(n + " > 0")
	}
	host, err := Parse("fuzz.yaml", []byte(minimal+"expect:\n  - lost == 0\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		timer := time.AfterFunc(5*time.Second, func() { panic("the check has not compiled after 5s") })
		defer timer.Stop()
		for i, compile := range []func(string) (*expect.Check, error){expect.Compile, expect.CompileComparison} {
			c, err := compile(text)
			if err != nil {
				ce, ok := err.(*expect.Error)
				if !ok || ce.Msg == "" || ce.Line < 0 || ce.Col < 0 {
					t.Fatalf("compile (%d): error %T %#v, want a *checkError with a place and a message", i, err, err)
				}
				continue
			}
			if i == 0 {
				c.Judge(result.Result{}, false)
				c.Judge(result.Result{Run: result.RunInfo{KeptUp: true, Speed: 1}}, c.Timing)
			} else {
				c.JudgeComparison(expect.Comparison{Variant: map[string]result.Result{"a": {}}})
			}
		}
		// As a file's expectation: the constant and vacuous checks, the
		// unknown keys, the place in the file.
		s := *host
		s.Expect = []Expect{{Check: text}}
		src := *host.src
		src.checks = &compiled{} // each input on a budget of its own
		for _, e := range compileChecks(&s, &src) {
			if e.Msg == "" {
				t.Fatalf("an error without a message: %#v", e)
			}
			_ = e.Error()
		}
		judgeAll(&s, result.Result{})
	})
}

// judgeAll evaluates every expectation of s on r, as fleet/judge does
// (which imports this package): none may panic.
func judgeAll(s *Scenario, r result.Result) {
	for i, e := range s.Expect {
		if c, err := s.Check(i); err == nil {
			c.Judge(r, c.Timing || e.Timing)
		}
	}
}

// expectationSeeds are checks of each kind: metric names, lists, maps,
// functions, operators, strings and comments, and past each limit.
var expectationSeeds = []string{
	"lost == 0",
	"leader.mailbox.max_depth <= leader.mailbox.capacity",
	"workers.at_version[\"2.0.0\"] == fleet.count",
	"all(deploys, .duration < 60) && len(deploys) > 0",
	"max(leader.mailbox.wait.p99, 1) < 2 ? true : false",
	"heartbeats.processed / heartbeats.rounds <= fleet.count",
	"events[\"away\"].workers > 0 || windows[\"herd\"].workers.sync_ok >= 1",
	"variant[\"a\"].lost <= variant[\"b\"].lost",
	"lost == 0 // a comment with ( [ {\n && fleet.count > 0",
	"lost == 0 /* ) ] } */",
	"len(\"((((\") == 4 && lost == 0",
	"lost in 0..10",
	"fleet.count % 0 == 1",
	strings.Repeat("(", expect.MaxCheckDepth) + "lost" + strings.Repeat(")", expect.MaxCheckDepth) + " == 0",
	strings.Repeat("(", expect.MaxCheckDepth+1) + "lost" + strings.Repeat(")", expect.MaxCheckDepth+1) + " == 0",
	strings.Repeat("!", 200) + "(lost == 0)",
	strings.Repeat("lost == 0 || ", 320) + "lost == 0",
	"lost == 0 ? 1 : " + strings.Repeat("lost == 1 ? 1 : ", 200) + "0",
}

// fuzzJudgeFile is a file with expectations of each kind, a seed of FuzzParse.
const fuzzJudgeFile = `
name: judge
duration: 1m
fleet: {count: 10}
expect:
  - lost == 0
  - name: depth bounded
    check: leader.mailbox.max_depth <= leader.mailbox.capacity
  - workers.at_version["2.1.0"] == fleet.count
  - leader.mailbox.wait.p99 < 2
  - all(deploys, .duration < 60)
  - deploys[0].delivered == 10
  - heartbeats.coalesced_ratio >= 0.8
`
