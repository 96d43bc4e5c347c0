package scenario

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/expect"
)

// BenchmarkLimits measures what the limits cost a real file (the scan,
// against parsing the same file, in the same run) and how fast a file
// past them is refused, against parsing a file a tenth its size that
// passes them.
func BenchmarkLimits(b *testing.B) {
	real, err := os.ReadFile("../../scenarios/wave-deploy.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var keys strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&keys, "k%d: 1\n", i)
	}
	events := minimal + "timeline:\n" + strings.Repeat("- at: 1s\n  deploy: {version: 1.2.3, workers: all}\n", 8000)
	small := func(i int) string { return fmt.Sprintf("  - lost == %d || relay.backpressure > %d\n", i, i) }
	for _, bc := range []struct {
		name   string
		data   []byte
		scan   bool
		refuse bool
	}{
		{"wave-deploy/scan", real, true, false},
		{"wave-deploy/parse", real, false, false},
		{"1M-keys/refused", []byte(keys.String()), false, true},
		{"8000-events/parse", []byte(events), false, false},
		{"alias-bomb/refused", []byte(minimal + "expect:\n  - &c " + bigCheck(584) + "\n" + strings.Repeat("  - *c\n", 10_000)), false, true},
		{"49000-checks/refused", []byte(minimal + "expect:\n" + repeat(49_000, func(i int) string { return fmt.Sprintf("  - lost == %d\n", i) })), false, true},
		{"1000-checks/parse", []byte(withDeploy + "expect:\n" + repeat(MaxChecks, small)), false, false},
		{"1000-variants-of-100-checks/parse", []byte(withDeploy + "expect:\n" + repeat(100, small) + sweepOf(1000)), false, false},
		{"45000-ids/parse", []byte("name: ids\nduration: 1m\nfleet: {count: 100000}\ntimeline:\n  - at: 1s\n    deploy:\n      version: 1.2.3\n      workers: [" +
			strings.TrimSuffix(repeat(45_000, func(i int) string { return WorkerID(2*i) + ", " }), ", ") + "]\n"), false, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			for b.Loop() {
				if bc.scan {
					if err := checkShape("f.yaml", bc.data); err != nil {
						b.Fatal(err)
					}
					continue
				}
				_, err := Parse("f.yaml", bc.data)
				if refused := err != nil && strings.Contains(err.Error(), "more than"); refused != bc.refuse || err != nil && !bc.refuse {
					b.Fatalf("%.200v", err)
				}
			}
		})
	}
}

// BenchmarkCheckLimits: a check past MaxCheckLength or MaxCheckDepth is
// refused before expr parses it, against compiling a real check.
func BenchmarkCheckLimits(b *testing.B) {
	for _, bc := range []struct{ name, check string }{
		{"real", `workers.at_version["2.0.0"] == fleet.count`},
		{"1M-bytes", strings.Repeat("(", 500_000) + "lost" + strings.Repeat(")", 500_000)},
		{"33-brackets", strings.Repeat("(", 33) + "lost" + strings.Repeat(")", 33) + " == 0"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_, err := expect.Compile(bc.check)
				if (err != nil) != (bc.name != "real") {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadPerMB: what parsing costs per byte of file, for the shapes
// that cost it most (B/op over the bytes is the cost per byte), within
// every limit but the size: what MaxFileSize is set from.
func BenchmarkLoadPerMB(b *testing.B) {
	const size = 1 << 20
	fill := func(prefix, unit string, suffix ...string) []byte {
		end := strings.Join(suffix, "")
		n := (size - len(minimal) - len(prefix) - len(end)) / len(unit)
		return []byte(minimal + prefix + strings.Repeat(unit, n) + end)
	}
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"plain-text", fill("description: ", "word ")},
		{"block-scalar", fill("description: |\n", "  a line of text in a block scalar xx\n")},
		{"folded-scalar", fill("description: >\n", "  a line of text in a block scalar xx\n\n")},
		{"empty-lines", fill("", "\n")},
		{"comments", fill("", "# a comment line of some length here ok\n")},
		{"quoted", fill("description: \"", "ab\\tc", "\"\n")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			for b.Loop() {
				if _, err := Parse("f.yaml", bc.data); err != nil {
					b.Fatalf("%.200v", err)
				}
			}
		})
	}
}
