package scenario

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// parseCost parses data and returns its error and the bytes the parse
// allocated: work that a busy machine does not change, unlike its time.
// The tests that call it do not run in parallel with others.
func parseCost(data string) (error, uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse("hostile.yaml", []byte(data))
	runtime.ReadMemStats(&after)
	return err, after.TotalAlloc - before.TotalAlloc
}

// bigCheck is a check just under MaxCheckLength: a sum of n terms.
func bigCheck(terms int) string { return "lost" + strings.Repeat(" + lost", terms-1) + " > 0" }

// withDeploy is minimal with a deploy and a poison event, so that checks
// reading commands are not vacuous.
const withDeploy = minimal + "timeline:\n  - {at: 1s, name: poison, poison: {workers: all, count: 1}}\n  - {at: 2s, deploy: {version: 1.2.3, workers: all}}\n"

// sweepOf sweeps speed over n values.
func sweepOf(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprint(1 + float64(i)/100)
	}
	return "sweep:\n  speed: [" + strings.Join(vals, ", ") + "]\n"
}

// TestLoadBudget: a file within the file's limits (size, nesting, keys)
// can still make the load do far more than its bytes say: aliases repeat
// their anchor's value, each check costs its compiler a quarter of a
// millisecond and more, and each variant of a sweep is a copy of the
// scenario built and checked whole. Each such file is refused before the
// work, at its place in the file and with the limit, or loaded, with
// bounded allocation (measured, not timed: a busy machine does not change
// it). Without the limits each case below allocates gigabytes (a note
// says how many) and takes seconds to minutes.
func TestLoadBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      string
		line, col int    // of the one error; 0: it loads
		want      string // what the error says
		errors    int    // how many errors (1 if 0)
		maxAlloc  uint64 // bytes
	}{
		{
			// Was 39 s and 3.0 GB: every copy compiled before the
			// duplicates were found.
			name: "10,000 aliases of a 4 KB check",
			data: minimal + "expect:\n  - &c " + bigCheck(584) + "\n" + strings.Repeat("  - *c\n", 10_000),
			line: 263, col: 5, want: "the aliases repeat more than 1048576 bytes of text in all (*c repeats 4089)",
			maxAlloc: 48 << 20,
		},
		{
			// A name given twice is refused before anything compiles:
			// one check compiled, not 10,001.
			name: "10,000 aliases of a small check",
			data: withDeploy + "expect:\n  - &c lost == 0\n" + strings.Repeat("  - *c\n", 10_000),
			line: 10, col: 5, want: `expect[1]: the expectation "lost == 0" is already at 9:8 (expect[0]): give each a different name`, errors: maxProblems + 1,
			maxAlloc: 64 << 20,
		},
		{
			// Was 7.4 s and 2.77 GB, and loaded.
			name: "a 1 MB string swept 1000 times",
			data: minimal + "description: &d " + strings.Repeat("x", 1<<20-10_000) + "\nsweep:\n  description: [" + strings.Repeat("*d, ", 999) + "*d]\n",
			line: 7, col: 21, want: "the aliases repeat more than 1048576 bytes of text in all (*d repeats 1038576)",
			maxAlloc: 128 << 20,
		},
		{
			// Was 24 s and 372 MB, and loaded.
			name: "49,000 distinct expectations",
			data: minimal + "expect:\n" + repeat(49_000, func(i int) string { return fmt.Sprintf("  - lost == %d\n", i) }),
			line: 1006, col: 5, want: "expect[1000]: more than 1000 checks to compile",
			maxAlloc: 256 << 20,
		},
		{
			name: "17 checks of 4 KB",
			data: withDeploy + "expect:\n" + repeat(17, func(i int) string { return "  - " + bigCheck(580) + fmt.Sprintf(" + %d\n", i) }),
			line: 25, col: 5, want: "expect[16]: the checks to compile hold more than 65536 bytes in all",
			maxAlloc: 16 << 20,
		},
		{
			name: "600 expectations and 600 comparisons",
			data: withDeploy + "expect:\n" + repeat(600, func(i int) string { return fmt.Sprintf("  - lost == %d\n", i) }) +
				"sweep:\n  speed: [1, 2]\ncompare:\n" + repeat(600, func(i int) string { return fmt.Sprintf("  - variant[\"1\"].lost == %d\n", i) }),
			line: 1012, col: 5, want: "compare[400]: more than 1000 checks to compile",
			maxAlloc: 256 << 20,
		},
		{
			// Was 71 s and 7.6 GB, and loaded.
			name: "1000 variants of 6000 events",
			data: minimal + "timeline:\n" + repeat(6000, func(i int) string {
				return fmt.Sprintf("  - at: %dms\n    deploy: {version: 1.2.%d, workers: all}\n", i, i)
			}) + sweepOf(1000),
			line: 12006, col: 1, want: "sweep: the sweep makes 1000 variants of 30007 keys and list items each (the file's, one value of each parameter): 30007001 in all, over the limit of 250000",
			maxAlloc: 256 << 20,
		},
		{
			// Was over 2 minutes: 300,000 checks compiled.
			name: "1000 variants of 300 checks",
			data: minimal + "expect:\n" + repeat(300, func(i int) string { return fmt.Sprintf("  - lost == %d\n", i) }) + sweepOf(1000),
			line: 306, col: 1, want: "the sweep makes 1000 variants of 307 keys and list items each",
			maxAlloc: 64 << 20,
		},
		{
			// One parameter's variants were all built to be checked,
			// before the number of variants was.
			name: "one parameter of 40,000 values",
			data: minimal + sweepOf(40_000),
			line: 5, col: 1, want: "sweep: the sweep makes more than 1000 variants",
			maxAlloc: 128 << 20,
		},
		{
			// Was 9.6 s and 1.26 GB, and 240 MB of messages: each listed
			// every group and searched them all for a suggestion.
			name: "5000 events naming none of 7000 groups",
			data: "name: groups\nduration: 1m\nfleet:\n  count: 1000000\n  groups:\n" +
				repeat(7000, func(i int) string { return fmt.Sprintf("    - name: g%d\n      count: 1\n", i) }) + "timeline:\n" +
				repeat(5000, func(i int) string {
					return fmt.Sprintf("  - at: 1s\n    deploy:\n      version: 1.2.3\n      workers: group:q%d\n", i)
				}),
			line: 14010, col: 16, want: `timeline[0].deploy.workers: no group "q0" (did you mean g0?); the groups are g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11, g12, g13, g14, g15, g16, g17, g18, g19 and 6981 more`,
			errors: maxProblems + 1, maxAlloc: 256 << 20,
		},
		{
			// Was 3.5 s, 1.1 GB allocated, and 48 MB of messages.
			name: "1000 checks naming none of 8000 windows",
			data: withDeploy + "windows:\n" + repeat(8000, func(i int) string { return fmt.Sprintf("  - {name: w%d, from: 1s, to: 2s}\n", i) }) +
				"expect:\n" + repeat(1000, func(i int) string { return fmt.Sprintf("  - windows[\"q%d\"].relay.delivered > 0\n", i) }),
			line: 8010, col: 13, want: `expect[0]: check "windows[\"q0\"].relay.delivered > 0": windows has no "q0" (did you mean w0?); it has w0, w1, w10, w100, w1000`,
			errors: maxProblems + 1, maxAlloc: 256 << 20,
		},
		{
			name: "an alias inside its own anchor",
			data: minimal + "leader: &l {mailbox: *l}\n",
			line: 5, col: 22, want: "alias *l stands for the value it is inside (&l above it): it would repeat without end",
			maxAlloc: 1 << 20,
		},
		// Within every limit: loaded.
		{
			name:     "1000 distinct checks",
			data:     withDeploy + "expect:\n" + repeat(1000, func(i int) string { return fmt.Sprintf("  - lost == %d || relay.backpressure > %d\n", i, i) }),
			maxAlloc: 256 << 20,
		},
		{
			name:     "16 checks of 4 KB",
			data:     withDeploy + "expect:\n" + repeat(16, func(i int) string { return "  - " + bigCheck(580) + fmt.Sprintf(" + %d\n", i) }),
			maxAlloc: 64 << 20,
		},
		{
			name: "1000 variants of 100 checks",
			data: withDeploy + "expect:\n" + repeat(100, func(i int) string { return fmt.Sprintf("  - lost == %d || relay.backpressure > %d\n", i, i) }) +
				"sweep:\n  speed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  seed: [" + strings.TrimSuffix(repeat(100, func(i int) string { return fmt.Sprint(i+1, ", ") }), ", ") + "]\n",
			maxAlloc: 160 << 20,
		},
		{
			name:     "1000 values of one parameter",
			data:     withDeploy + "expect:\n" + repeat(100, func(i int) string { return fmt.Sprintf("  - lost == %d || relay.backpressure > %d\n", i, i) }) + sweepOf(1000),
			maxAlloc: 256 << 20,
		},
		{
			name:     "a 256 KB anchor repeated 4 times",
			data:     minimal + "description: &d " + strings.Repeat("x", 256<<10) + "\nsweep:\n  description: [*d, *d, *d, *d]\n",
			maxAlloc: 32 << 20,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, alloc := parseCost(tc.data)
			t.Logf("%d bytes of file: %d MB allocated", len(tc.data), alloc>>20)
			if alloc > tc.maxAlloc {
				t.Errorf("the load allocated %d MB, want at most %d MB", alloc>>20, tc.maxAlloc>>20)
			}
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("err = %.500v; want the file to load", err)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) || len(es) != max(tc.errors, 1) {
				t.Fatalf("%d errors: %.500v; want %d", len(es), err, max(tc.errors, 1))
			}
			if e := es[0]; e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Error(), tc.want) {
				t.Errorf("error at %d:%d %q; want at %d:%d, saying %q", e.Line, e.Col, e.Error(), tc.line, tc.col, tc.want)
			}
		})
	}
}
