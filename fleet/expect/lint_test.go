package expect_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"github.com/goccy/go-yaml"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// realChecks are expectations a user writes: each can pass and can fail,
// and none may be refused as constant.
var realChecks = []string{
	`lost == 0`,
	`workers.at_version["2.0.0"] == fleet.count`,
	`workers.at_version["2.1.0"] + workers.at_version["2.0.0"] == fleet.count`,
	`workers.at_version["2.1.0"] >= fleet.count * 0.99`,
	`"2.0.0" in workers.at_version`,
	`outbox.enqueued == outbox.acked && relay.delivered == workers.acked_ok && fleet.online == fleet.count`,
	`lost == 0 and outbox.depth == 0 and commands.queued == 0`,
	`all(deploys, .delivered == .targets)`,
	`any(deploys, .version == "2.1.0")`,
	`none(deploys, .rejected > .targets)`,
	`count(deploys, .rejected > 0) == 0`,
	`count(deploys, .delivered == .targets) == len(deploys)`,
	`sum(deploys, .duration) < 10`,
	`len(deploys) == 2 and lost == 0`,
	`len(deploys) > 7`,
	`deploys[0].version == "2.0.0"`,
	`deploys[len(deploys)-1].version == "3.0.0"`,
	`deploys[1].duration - deploys[0].duration == 1`,
	`deploys[0].duration > 0 && deploys[0].duration < 60`,
	`heartbeats.coalesced_ratio >= 0.75`,
	`heartbeats.max_queued <= fleet.count`,
	`heartbeats.rounds >= 6`,
	`heartbeats.age.max <= 31`,
	`heartbeats.processed + heartbeats.coalesced == heartbeats.received`,
	`relay.limit.min < relay.limit.initial`,
	`relay.limit.max > relay.limit.min`,
	`relay.limit.min < relay.limit.initial / 2`,
	`relay.limit.final >= relay.partitions * relay.limit.min`,
	`min(relay.limit.min, relay.limit.initial) == relay.limit.min`,
	`relay.errors == 0 || relay.retries > 0`,
	`relay.backpressure > 0`,
	`outbox.dead_letters == commands.poisoned`,
	`outbox.overwritten >= fleet.count / 5`,
	`outbox.oldest_max < 0.5`,
	`workers.applied == 2 * fleet.count - fleet.count / 5`,
	`workers.sync_ok >= 2 * fleet.count`,
	`workers.max_attempt <= 3`,
	`workers.mailbox.policy != "reject"`,
	`workers.mailbox.dropped < workers.mailbox.offered / 10`,
	`telemetry.stored > 0 && telemetry.forwarded > 0 && telemetry.lost == 0`,
	`telemetry.generated == telemetry.direct + telemetry.forwarded + telemetry.dropped + telemetry.rejected`,
	`leader.mailbox.policy == "unbounded" || leader.mailbox.max_depth <= 200`,
	`leader.mailbox.max_depth <= leader.mailbox.capacity`,
	`leader.mailbox.depth < leader.mailbox.capacity`,
	`leader.mailbox.taken / leader.mailbox.offered >= 0.99`,
	`leader.mailbox.wait.p99 < 2`,
	`leader.mailbox.wait.p99 * 4 == 1`,
	`max(leader.mailbox.wait.p99, heartbeats.age.max) < 30`,
	`leader.requests_served == leader.requests_received`,
	`leader.answered_full > 0`,
	`fleet.online == fleet.count`,
	`fleet.offline == 0`,
	`fleet.count % 2 == 0`,
	`fleet.count >= 1e6`,
	`abs(fleet.online - fleet.leader_online) <= 1`,
	`fleet.groups["config-servers"] == 3`,
	`fleet.groups["flaky"] * 10 == fleet.count`,
	`len(fleet.groups) == 2`,
	`run.kept_up`,
	`not run.kept_up || leader.mailbox.wait.p99 < 1`,
	`run.leader_restarts == 1`,
	`run.seed == 42`,
	`run.speed > 1.5`,
	`lost == 0 ? outbox.depth == 0 : commands.lost > 0`,
	`deploys[0].version matches "^2\\."`, // no drawn text matches: explorable
	`len(deploys[0].version) == 5`,       // no drawn text is 5 long
	`deploys[0].version startsWith "2."`,
	`deploys[0].version in ["2.0.0", "2.1.0"]`,
	`$env.lost == 0`,
}

// constantChecks cannot depend on the run; want is in the load error.
var constantChecks = []struct{ check, want string }{
	{`1 == 1`, "is true whatever the run measures: it cannot fail (it reads no result name); compare a result name with a bound, as in lost == 0"},
	{`true`, "is true whatever the run measures: it cannot fail (it reads no result name)"},
	{`false`, "is false whatever the run measures: it cannot pass (it reads no result name)"},
	{`2 > 1`, "(it reads no result name)"},
	{`1 > 2 || 3 == 4`, "is false whatever the run measures"},
	{`fleet.count == fleet.count`, "cannot fail (it compares fleet.count with itself); compare it with another name or a bound"},
	{`lost <= lost`, "cannot fail (it compares lost with itself)"},
	{`relay.limit.min > relay.limit.min`, "cannot pass (it compares relay.limit.min with itself)"},
	{`lost != lost`, "is false whatever the run measures"},
	{`deploys[0].version == deploys[0].version`, "(it compares deploys[0].version with itself)"},
	{`len(deploys) == len(deploys)`, "(it compares len(deploys) with itself)"},
	{`lost - lost == 0`, "cannot fail (lost - lost is always 0)"},
	{`lost >= 0`, "is true whatever the run measures: it cannot fail (lost is never negative); compare with a bound the run could cross"},
	{`lost < 0`, "is false whatever the run measures: it cannot pass (lost is never negative)"},
	{`0 <= lost`, "cannot fail (lost is never negative)"},
	{`lost > -1`, "cannot fail (lost is never negative)"},
	{`-1 < lost`, "cannot fail (lost is never negative)"},
	{`lost == -1`, "cannot pass (lost is never negative)"},
	{`commands.lost >= 0`, "(commands.lost is never negative)"},
	{`heartbeats.coalesced_ratio >= 0`, "(heartbeats.coalesced_ratio is never negative)"},
	{`leader.mailbox.wait.p99 >= 0`, "(leader.mailbox.wait.p99 is never negative)"},
	{`workers.at_version["2.0.0"] >= 0`, `(workers.at_version["2.0.0"] is never negative)`},
	{`len(deploys) >= 0`, "(len(deploys) is never negative)"},
	{`count(deploys, .rejected > 0) >= 0`, "is never negative)"},
	{`all(deploys, .delivered >= 0)`, "cannot fail (no value of deploys changes it)"},
	{`lost == 0 || lost >= 0`, "cannot fail (lost >= 0 is always true: lost is never negative)"},
	{`lost < 0 && fleet.count > 1`, "cannot pass (lost < 0 is always false: lost is never negative)"},
	{`not (lost >= 0)`, "is false whatever the run measures"},
	{`fleet.count + 1 > fleet.count`, "cannot fail (no value of fleet.count changes it)"},
	{`max(lost, 1) >= 1`, "cannot fail"},
	{`fleet.count * 0 == 0`, "cannot fail"},
	{`lost / 1 >= 0`, "cannot fail"},
	{`abs(relay.limit.min - relay.limit.initial) >= 0`, "cannot fail"},
	{`fleet.count / 0 > 1`, "divides by zero whatever the run measures (fleet.count / 0): it is never judged"},
	{`fleet.count % 0 == 1`, "divides by zero whatever the run measures"},
}

func TestRealChecksAccepted(t *testing.T) {
	for _, text := range realChecks {
		c, err := expect.Compile(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if msg := expect.ConstantMessage(text, c); msg != "" {
			t.Errorf("a real check refused: %s", msg)
		}
	}
}

// Every constant check is a load error at its place in the file, with why
// it cannot depend on the run.
func TestConstantChecksRefused(t *testing.T) {
	for _, tc := range constantChecks {
		t.Run(tc.check, func(t *testing.T) {
			file := "name: c\nduration: 1m\nfleet: {count: 5}\nexpect:\n  - lost == 0\n  - check: " + tc.check + "\n"
			_, err := scenario.Parse("c.yaml", []byte(file))
			var es scenario.Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("Parse: %v, want one load error", err)
			}
			want := "c.yaml:6:12: expect[1]: check " + strconv.Quote(tc.check) + " "
			if got := es[0].Error(); !strings.HasPrefix(got, want) || !strings.Contains(got, tc.want) {
				t.Errorf("got  %s\nwant %s...%s", got, want, tc.want)
			}
		})
	}
}

// The message the docs and the task show, whole.
func TestConstantMessage(t *testing.T) {
	_, err := scenario.Parse("c.yaml", []byte("name: c\nduration: 1m\nfleet: {count: 5}\nexpect: [lost == 0, fleet.online > 0, lost >= 0]\n"))
	want := `c.yaml:4:39: expect[2]: check "lost >= 0" is true whatever the run measures: it cannot fail (lost is never negative); compare with a bound the run could cross` +
		"\n\texpect: [lost == 0, fleet.online > 0, lost >= 0]\n\t                                      ^"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// constantOutcome works over any environment type: a map from variant
// names to Results, and names added to Result later (maps of structs).
func TestConstantOutcomeOtherEnvironments(t *testing.T) {
	type window struct {
		Lost  int64   `expr:"lost"`
		Ratio float64 `expr:"ratio"`
	}
	type future struct {
		result.Result `expr:"-"`
		Windows       map[string]window `expr:"windows"`
		Events        map[string]int    `expr:"events"`
	}
	variants := map[string]result.Result{"policy=reject": {}, "policy=unbounded": {}, "a": {}, "b": {}}
	for _, tc := range []struct {
		env      any
		check    string
		constant bool
	}{
		{variants, `$env["policy=reject"].lost < $env["policy=unbounded"].lost`, false},
		{variants, `a.leader.mailbox.max_depth < b.leader.mailbox.max_depth`, false},
		{variants, `a.lost == b.lost`, false},
		{variants, `$env["policy=reject"].lost >= 0`, true},
		{variants, `a.fleet.count == a.fleet.count`, true},
		{future{}, `windows["peak"].lost > 0`, false},
		{future{}, `windows["peak"].ratio < windows["calm"].ratio`, false},
		{future{}, `events["leader_crash"] == 1`, false},
		{future{}, `windows["peak"].lost >= 0`, true},
		{future{}, `events["leader_crash"] < 0`, true},
	} {
		prog, err := expr.Compile(tc.check, expr.Env(tc.env), expr.AsBool())
		if err != nil {
			t.Errorf("%s: %v", tc.check, err)
			continue
		}
		if _, c := expect.ConstantOutcome(prog, reflect.TypeOf(tc.env)); c != tc.constant {
			t.Errorf("%s over %T: constant = %v, want %v", tc.check, tc.env, c, tc.constant)
		}
	}
	// A sweep's compare: checks, compiled as the loader compiles them.
	compileCmp := func(text string) (*vm.Program, error) {
		p, _, err := expect.CompileProgram(text, expect.Comparison{}, true)
		return p, err
	}
	for check, constant := range map[string]bool{
		`variant["aimd"].relay.backpressure * 2 <= variant["static"].relay.backpressure`:       false,
		`variant["aimd"].leader.mailbox.wait.p99 <= variant["static"].leader.mailbox.wait.p99`: false,
		`variant["aimd"].lost == 0 && variant["static"].lost == 0`:                             false,
		`variant["aimd"].relay.backpressure >= 0`:                                              true,
		`variant["aimd"].lost <= variant["aimd"].lost`:                                         true,
	} {
		prog, err := compileCmp(check)
		if err != nil {
			t.Errorf("%s: %v", check, err)
			continue
		}
		if _, c := expect.ConstantCheck(prog, reflect.TypeFor[expect.Comparison](), compileCmp); c != constant {
			t.Errorf("%s: constant = %v, want %v", check, c, constant)
		}
	}
}

// No expectation of a shipped scenario, nor any in docs/SCENARIOS.md's
// examples, is refused.
func TestShippedAndDocumentedChecksAccepted(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) < 8 {
		t.Fatalf("shipped scenarios: %v, %d files", err, len(files))
	}
	var blocks []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, string(b))
		if _, err := scenario.Parse(f, b); err != nil {
			t.Errorf("%s does not load: %v", f, err)
		}
	}
	doc, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, block)
	}
	checked := 0
	for _, b := range blocks {
		var file struct{ Expect []any }
		if yaml.Unmarshal([]byte(b), &file) != nil {
			continue // a fragment of a file, not a mapping
		}
		for _, item := range file.Expect {
			text, _ := item.(string)
			if m, ok := item.(map[string]any); ok {
				text, _ = m["check"].(string)
			}
			c, err := expect.Compile(text)
			if err != nil {
				continue // the load error example misspells a name on purpose
			}
			checked++
			if msg := expect.ConstantMessage(text, c); msg != "" {
				t.Errorf("refused: %s", msg)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d expectations checked: the files or the doc's blocks were not read", checked)
	}
}

// A check built from distinct result names and positive bounds can always
// come out both ways: none is refused, whatever the names and operators.
func TestNoRealCheckRefused(t *testing.T) {
	var numeric []string
	for _, p := range expect.Names() {
		if !strings.Contains(p, "[]") && expect.IsNumber(expect.NameType(p)) {
			numeric = append(numeric, p)
		}
	}
	numeric = append(numeric, `workers.at_version["2.0.0"]`, `fleet.groups["flaky"]`)
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	rapid.Check(t, func(t *rapid.T) {
		// Each side draws its own names, so that the two halves of an
		// and/or cannot contradict each other.
		pool := slices.Clone(numeric)
		name := func(label string) string {
			i := rapid.IntRange(0, len(pool)-1).Draw(t, label)
			n := pool[i]
			pool = slices.Delete(pool, i, i+1)
			return n
		}
		comparison := func(label string) string {
			a := name(label + ".a")
			op := rapid.SampledFrom(ops).Draw(t, label+".op")
			switch rapid.IntRange(0, 6).Draw(t, label+".form") {
			case 0:
				return a + " " + op + " " + name(label+".b")
			case 1:
				c := strconv.Itoa(rapid.IntRange(1, 2000).Draw(t, label+".c"))
				if op != "==" && op != "!=" && rapid.Bool().Draw(t, label+".frac") {
					c += ".5"
				}
				return a + " " + op + " " + c
			case 2:
				return a + " + " + name(label+".b") + " " + op + " " + name(label+".c")
			case 3:
				k := strconv.Itoa(rapid.IntRange(2, 9).Draw(t, label+".k"))
				return a + " * " + k + " " + op + " " + name(label+".b")
			case 4:
				return a + " / " + name(label+".b") + " " + op + " " + name(label+".c")
			case 5:
				return a + " + " + name(label+".b") + " " + op + " " + name(label+".c") + " + " + name(label+".d")
			default: // two comparisons sharing a name
				b := name(label + ".b")
				return a + " " + op + " " + b + " && " + b + " " + rapid.SampledFrom(ops).Draw(t, label+".op2") + " " + name(label+".c")
			}
		}
		check := comparison("x")
		if rapid.Bool().Draw(t, "two") {
			check += " " + rapid.SampledFrom([]string{"&&", "||"}).Draw(t, "and/or") + " " + comparison("y")
		}
		c, err := expect.Compile(check)
		if err != nil {
			t.Fatalf("%s: %v", check, err)
		}
		if msg := expect.ConstantMessage(check, c); msg != "" {
			t.Fatalf("a real check refused: %s", msg)
		}
	})
}
