package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeListsEveryPackage: README's package table ("What is here")
// has a row for every directory of Go code, and no row for one that is
// gone, so a newcomer's map of the code stays whole.
func TestReadmeListsEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for line := range strings.SplitSeq(string(readme), "\n") {
		if dir, ok := strings.CutPrefix(line, "| [`"); ok {
			if end := strings.Index(dir, "`]("); end > 0 {
				rows[dir[:end]] = true
			}
		}
	}
	dirs := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != ".." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") {
			dir, _ := filepath.Rel("..", filepath.Dir(path))
			dirs[filepath.ToSlash(dir)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		if !rows[dir] {
			t.Errorf("README.md's package table has no row for %s", dir)
		}
	}
	for row := range rows {
		if strings.Contains(row, "/") || row == "docs" || row == "scenarios" {
			if !dirs[row] {
				t.Errorf("README.md's package table lists %s, which holds no Go code", row)
			}
		}
	}
}
