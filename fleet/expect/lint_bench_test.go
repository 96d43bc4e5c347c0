package expect_test

import (
	"os"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// BenchmarkConstantCheck measures what refusing constant checks adds to
// loading a check: compiling it alone is the baseline. A check that can
// change stops at the first environments that disagree; a constant one
// runs them all.
func BenchmarkConstantCheck(b *testing.B) {
	for _, bc := range []struct{ name, check string }{
		{"real", `workers.at_version["2.0.0"] == fleet.count`},
		{"real_three_parts", `lost == 0 && fleet.online == fleet.count && relay.retries == 0`},
		{"constant", `lost >= 0`},
		{"constant_or", `lost == 0 || fleet.count + 1 > fleet.count`},
	} {
		b.Run(bc.name+"/compile", func(b *testing.B) {
			for b.Loop() {
				if _, err := expect.Compile(bc.check); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/compile+constant", func(b *testing.B) {
			for b.Loop() {
				c, err := expect.Compile(bc.check)
				if err != nil {
					b.Fatal(err)
				}
				expect.ConstantMessage(bc.check, c)
			}
		})
	}
}

// BenchmarkParseShipped loads a shipped scenario: six checks, each
// compiled, tried for constancy and for vacuity.
func BenchmarkParseShipped(b *testing.B) {
	data, err := os.ReadFile("../../scenarios/wave-deploy.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := scenario.Parse("wave-deploy.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
