package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// A Mutant is one small bug put into one mechanism: the text find in file
// becomes replace. Scenarios are the shipped scenarios that exist to show
// that mechanism working, so one of them must fail with it in. A mutant no
// scenario can show (a lost fsync shows only on power loss, which a process
// kill does not simulate) names the unit test that catches it instead, and
// says why.
type Mutant struct {
	Name      string   `yaml:"name"`
	Mechanism string   `yaml:"mechanism"`
	Claim     string   `yaml:"claim"`
	File      string   `yaml:"file"`
	Find      string   `yaml:"find"`
	Replace   string   `yaml:"replace"`
	Scenarios []string `yaml:"scenarios,omitempty"`
	Test      *Test    `yaml:"test,omitempty"`
	Why       string   `yaml:"why,omitempty"`
	// CI marks a mutant whose scenarios are quick: .ci/run runs these.
	CI bool `yaml:"ci,omitempty"`
	// Survives says why a mutant is known to pass its scenarios today: a
	// gap in them, kept in view in the table. It still counts as survived.
	Survives string `yaml:"survives,omitempty"`
}

// Test is a unit test that must fail with a mutant in.
type Test struct {
	Package string `yaml:"package"` // ./fleet/outbox
	Run     string `yaml:"run"`     // a go test -run pattern
}

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// loadMutants reads the mutants file and checks every entry against the
// tree at root: its file exists, its find text occurs exactly once there,
// and its scenarios are shipped ones. Every problem is reported, each
// naming the mutant.
func loadMutants(path, root string) ([]Mutant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ms []Mutant
	if err := yaml.UnmarshalWithOptions(data, &ms, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("%s: %s", path, yaml.FormatError(err, false, true))
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%s: no mutants", path)
	}
	var problems []string
	seen := map[string]bool{}
	for i, m := range ms {
		bad := func(format string, a ...any) {
			problems = append(problems, fmt.Sprintf("%s: mutant %d (%s): %s", path, i+1, m.Name, fmt.Sprintf(format, a...)))
		}
		switch {
		case !namePattern.MatchString(m.Name):
			bad("name must be lower-case words joined by hyphens")
		case seen[m.Name]:
			bad("name used twice")
		}
		seen[m.Name] = true
		if m.Mechanism == "" || m.Claim == "" {
			bad("mechanism and claim are required: what is broken, and what it promised")
		}
		if m.Find == "" || m.Find == m.Replace {
			bad("find must be non-empty and differ from replace")
		}
		switch {
		case len(m.Scenarios) == 0 && m.Test == nil:
			bad("give scenarios that must catch it, or a test and why no scenario can")
		case len(m.Scenarios) > 0 && m.Test != nil:
			bad("give scenarios or a test, not both")
		case m.Test != nil && (m.Test.Package == "" || m.Test.Run == "" || m.Why == ""):
			bad("a test needs its package, its -run pattern, and why no scenario can catch the mutant")
		}
		for _, s := range m.Scenarios {
			if _, err := os.Stat(filepath.Join(root, "scenarios", s+".yaml")); err != nil {
				bad("scenario %q is not in scenarios/", s)
			}
		}
		src, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			bad("file: %v", err)
			continue
		}
		if n := bytes.Count(src, []byte(m.Find)); n != 1 && m.Find != "" {
			bad("find occurs %d times in %s, want exactly once", n, m.File)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return ms, nil
}

// selectMutants keeps the mutants named in only (all when empty), or those
// marked ci when ci is set.
func selectMutants(ms []Mutant, only []string, ci bool) ([]Mutant, error) {
	for _, name := range only {
		if !slices.ContainsFunc(ms, func(m Mutant) bool { return m.Name == name }) {
			return nil, fmt.Errorf("--only: no mutant named %q", name)
		}
	}
	var out []Mutant
	for _, m := range ms {
		if (len(only) == 0 || slices.Contains(only, m.Name)) && (!ci || m.CI) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mutant selected")
	}
	return out, nil
}

// apply writes m's file into the tree at dir with the mutation in, and
// returns a function that puts the original back.
func (m Mutant) apply(dir string) (restore func() error, err error) {
	path := filepath.Join(dir, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if n := bytes.Count(orig, []byte(m.Find)); n != 1 {
		return nil, fmt.Errorf("mutant %s: find occurs %d times in %s, want exactly once", m.Name, n, m.File)
	}
	mutated := bytes.Replace(orig, []byte(m.Find), []byte(m.Replace), 1)
	if err := writeAtomic(path, mutated); err != nil {
		return nil, err
	}
	return func() error { return writeAtomic(path, orig) }, nil
}

// writeAtomic replaces path's content by data through a rename, so that a
// failed write leaves the file as it was.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".mutant-tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
