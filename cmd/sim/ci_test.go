package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// simArgs splits a shell line into words (quotes removed, a variable kept
// as its name) and returns the words of each sim command in it.
func simArgs(line string) [][]string {
	var words []string
	var cur strings.Builder
	quote, in := byte(0), false
	flush := func() {
		if in {
			words = append(words, cur.String())
		}
		cur.Reset()
		in = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	var out [][]string
	for i, w := range words {
		if w == "sim" && (i == 0 || words[i-1] == "&&" || words[i-1] == ";" || words[i-1] == "||") {
			var cmd []string
			for _, a := range words[i+1:] {
				if a == "&&" || a == ";" || a == "||" || a == "|" {
					break
				}
				cmd = append(cmd, a)
			}
			out = append(out, cmd)
		}
	}
	return out
}

// accepts parses args with sim's own command tree and flags, and its
// argument checks, without running anything.
func accepts(args []string) error {
	root := newRoot(context.Background(), io.Discard, io.Discard)
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if c == root {
		return fmt.Errorf("no sim command in %q", args)
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	return c.ValidateArgs(c.Flags().Args())
}

// strings collects every string value in a decoded YAML document.
func allStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			allStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			allStrings(e, out)
		}
	}
}

// TestCIRecipes: the CI recipes in docs/ci parse as YAML, are shown in
// docs/REPORTS.md as they are, and every sim command in them is one sim
// accepts, flags and arguments; each runs sim check with --junit.
func TestCIRecipes(t *testing.T) {
	reports, err := os.ReadFile("../../docs/REPORTS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"github-actions.yml", "gitlab-ci.yml"} {
		data, err := os.ReadFile("../../docs/ci/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(reports), "```yaml\n"+string(data)+"```\n") {
			t.Errorf("docs/REPORTS.md does not show docs/ci/%s as it is", name)
		}
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: not YAML: %v", name, err)
		}
		var texts []string
		allStrings(doc, &texts)
		var cmds [][]string
		for _, s := range texts {
			cmds = append(cmds, simArgs(s)...)
		}
		junit := false
		for _, args := range cmds {
			if err := accepts(args); err != nil {
				t.Errorf("%s: sim %s: %v", name, strings.Join(args, " "), err)
			}
			if len(args) > 0 && args[0] == "check" && strings.Contains(strings.Join(args, " "), "--junit ") {
				junit = true
			}
		}
		if len(cmds) < 2 || !junit {
			t.Errorf("%s: %d sim commands, sim check with --junit: %v", name, len(cmds), junit)
		}
	}
	// The check can fail.
	for _, bad := range []string{"sim check --no-such-flag scenarios/", "sim chek scenarios/", "sim check", "sim schema extra", "sim check scenarios/ --workers many"} {
		if err := accepts(simArgs(bad)[0]); err == nil {
			t.Errorf("%q is accepted", bad)
		}
	}
}
