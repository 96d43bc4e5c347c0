package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	reps, cmp := goldenSet(t)
	if err := WriteDir(dir, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"index.html", "summary.md"}
	for _, r := range reps {
		n := FileName(r.Scenario, r.Variant)
		want = append(want, n+".json", n+".html")
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("files = %v\nwant    %v", got, want)
	}

	f, err := os.Open(filepath.Join(dir, "mailbox-policies--leader.mailbox.policy=reject.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil || r.Variant != "leader.mailbox.policy=reject" || r.Result.Leader.Mailbox.Rejected != 4110 {
		t.Errorf("report read back: %v %+v", err, r)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.HasPrefix(string(md), "# fleetsim scenarios") {
		t.Errorf("summary.md: %v", err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "thundering-herd.html"))
	if err != nil || strings.Count(string(html), "<svg ") != 8 {
		t.Errorf("thundering-herd.html: %v, %d charts", err, strings.Count(string(html), "<svg "))
	}
}

func TestWriteDirRefuses(t *testing.T) {
	dir := t.TempDir()
	a, b := small(), small()
	a.Variant, b.Variant = "x=a/b", "x=a/b"
	err := WriteDir(dir, judged([]*result.Report{a, b}, nil))
	if err == nil || !strings.Contains(err.Error(), "would both be written to") {
		t.Errorf("two runs, one name: err = %v", err)
	}
	if err := WriteDir(dir, judged([]*result.Report{a, nil}, nil)); err == nil || !strings.Contains(err.Error(), "runs[1]: no report") {
		t.Errorf("nil report: err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written before the error: %v", entries)
	}
	// A directory that cannot be made names itself.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(filepath.Join(file, "sub"), judged([]*result.Report{a}, nil)); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("err = %v", err)
	}
}
