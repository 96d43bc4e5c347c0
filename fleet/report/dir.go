package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteDir writes the report directory of `sim run --report DIR`: for each
// run <name>.json (WriteJSON) and <name>.html (HTML), where <name> is
// FileName(r.Scenario, r.Variant); index.html linking them (Index); and
// summary.md for all (Markdown), each showing the runs' verdicts as Judge
// gave them. dir is created if needed; files already there with other
// names are left alone.
func WriteDir(dir string, runs []Run) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Two variants whose names map to one file would overwrite each other.
	owner := make(map[string]string)
	for _, run := range runs {
		r := run.Report
		n := FileName(r.Scenario, r.Variant)
		if prev, dup := owner[n]; dup {
			return fmt.Errorf("report: %s and %s would both be written to %s.*: rename one", prev, name(r), filepath.Join(dir, n))
		}
		owner[n] = name(r)
	}
	write := func(file string, render func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			return err
		}
		return writeFileAtomic(filepath.Join(dir, file), buf.Bytes())
	}
	for _, run := range runs {
		n := FileName(run.Report.Scenario, run.Report.Variant)
		if err := write(n+".json", func(w io.Writer) error { return WriteJSON(w, run) }); err != nil {
			return err
		}
		if err := write(n+".html", func(w io.Writer) error { return HTML(w, run) }); err != nil {
			return err
		}
	}
	if err := write("index.html", func(w io.Writer) error { return Index(w, runs) }); err != nil {
		return err
	}
	return write("summary.md", func(w io.Writer) error { return Markdown(w, runs) })
}
