package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedMutantsApply: every mutant in the shipped file still finds its
// text exactly once in today's tree, so a change to the code that moves a
// mutant's line fails here, in go test, and not later in the suite's run.
func TestShippedMutantsApply(t *testing.T) {
	ms, err := loadMutants("../../testdata/mutants/mutants.yaml", "../..")
	if err != nil {
		t.Fatal(err)
	}
	ci := 0
	for _, m := range ms {
		if m.CI {
			ci++
		}
	}
	if len(ms) < 30 || ci < 10 {
		t.Errorf("%d mutants, %d of them in CI; want at least 30 and 10", len(ms), ci)
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadMutantsNamesEachProblem: a bad entry is named with what would be
// valid, and every bad entry is reported, not the first alone.
func TestLoadMutantsNamesEachProblem(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"scenarios/a.yaml": "name: a\n",
		"x.go":             "a := 1\nb := 1\nb := 1\n",
		"mutants.yaml": `
- {name: ok, mechanism: m, claim: c, file: x.go, find: "a := 1", replace: "a := 2", scenarios: [a]}
- {name: twice, mechanism: m, claim: c, file: x.go, find: "b := 1", replace: "b := 2", scenarios: [a]}
- {name: absent, mechanism: m, claim: c, file: x.go, find: "c := 1", replace: "c := 2", scenarios: [a]}
- {name: no-scenario, mechanism: m, claim: c, file: x.go, find: "a := 1", replace: "a := 2", scenarios: [nope]}
- {name: nothing-catches, mechanism: m, claim: c, file: x.go, find: "a := 1", replace: "a := 2"}
- {name: test-without-why, mechanism: m, claim: c, file: x.go, find: "a := 1", replace: "a := 2", test: {package: ./x, run: TestX}}
- {name: ok, mechanism: m, claim: c, file: x.go, find: "a := 1", replace: "a := 2", scenarios: [a]}
- {name: Bad_Name, mechanism: m, claim: c, file: missing.go, find: "a", replace: "b", scenarios: [a]}
`,
	})
	_, err := loadMutants(filepath.Join(dir, "mutants.yaml"), dir)
	if err == nil {
		t.Fatal("a file with bad mutants loaded")
	}
	for _, want := range []string{
		"mutant 2 (twice): find occurs 2 times in x.go, want exactly once",
		"mutant 3 (absent): find occurs 0 times",
		`mutant 4 (no-scenario): scenario "nope" is not in scenarios/`,
		"mutant 5 (nothing-catches): give scenarios that must catch it",
		"mutant 6 (test-without-why): a test needs its package, its -run pattern, and why",
		"mutant 7 (ok): name used twice",
		"mutant 8 (Bad_Name): name must be lower-case words",
		"mutant 8 (Bad_Name): file:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "mutant 1 ") {
		t.Errorf("the good mutant was reported:\n%v", err)
	}
}

// TestLoadMutantsStrict: an unknown key (a typo) is an error, not ignored.
func TestLoadMutantsStrict(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"x.go":         "a := 1\n",
		"mutants.yaml": "- {name: a, mechanism: m, claim: c, file: x.go, find: 'a := 1', replace: 'a := 2', scenario: [a]}\n",
	})
	if _, err := loadMutants(filepath.Join(dir, "mutants.yaml"), dir); err == nil || !strings.Contains(err.Error(), "scenario") {
		t.Fatalf("an unknown key loaded: %v", err)
	}
}

// TestApplyRestores: a mutant changes its one place and restore puts the
// file back byte for byte.
func TestApplyRestores(t *testing.T) {
	orig := "x := 1\n\tif a < b {\n}\n"
	dir := writeTree(t, map[string]string{"f.go": orig})
	m := Mutant{Name: "m", File: "f.go", Find: "if a < b {", Replace: "if a <= b {"}
	restore, err := m.apply(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "f.go"))
	if string(got) != "x := 1\n\tif a <= b {\n}\n" {
		t.Fatalf("mutated file:\n%s", got)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.go")); string(got) != orig {
		t.Fatalf("restored file:\n%s", got)
	}
}

// TestSelectMutants: --only names must exist; --ci keeps the marked ones.
func TestSelectMutants(t *testing.T) {
	ms := []Mutant{{Name: "a", CI: true}, {Name: "b"}, {Name: "c", CI: true}}
	if got, _ := selectMutants(ms, nil, true); len(got) != 2 || got[0].Name != "a" || got[1].Name != "c" {
		t.Errorf("--ci kept %v", got)
	}
	if got, _ := selectMutants(ms, []string{"b"}, false); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("--only b kept %v", got)
	}
	if _, err := selectMutants(ms, []string{"zz"}, false); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("--only zz: %v", err)
	}
	if _, err := selectMutants(ms, []string{"b"}, true); err == nil {
		t.Error("--only b --ci selected something")
	}
}
