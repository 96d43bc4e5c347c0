package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFlagsRefused: a bad value of a shared flag is exit code 2 naming the
// flag and what would be valid, before any file is read (the file named
// here does not exist), for every subcommand that has the flag.
func TestFlagsRefused(t *testing.T) {
	speed := `--speed %s: want above 0 and at most 10000 (simulated seconds per wall second at most), or leave the flag out`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--speed", "NaN"}, strings.Replace(speed, "%s", "NaN", 1)},
		{[]string{"run", "--speed", "Inf"}, strings.Replace(speed, "%s", "+Inf", 1)},
		{[]string{"check", "--speed", "-Inf"}, strings.Replace(speed, "%s", "-Inf", 1)},
		{[]string{"run", "--speed", "100000"}, strings.Replace(speed, "%s", "100000", 1)},
		{[]string{"check", "--speed", "-1"}, strings.Replace(speed, "%s", "-1", 1)},
		{[]string{"run", "--speed", "0"}, strings.Replace(speed, "%s", "0", 1)},
		{[]string{"check", "--speed", "fast"}, `invalid argument "fast" for "--speed" flag: want a number`},
		{[]string{"run", "--progress", "-1s"}, "--progress -1s: want an interval such as 5s, or 0 for no progress lines"},
		{[]string{"check", "--workers", "-5"}, "--workers -5: want 1 to 1000000, or 0 for the scenario's fleet.count"},
		{[]string{"run", "--workers", "1000001"}, "--workers 1000001: want 1 to 1000000"},
		{[]string{"run", "--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"check", "--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"validate", "--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"validate", "--log-format", "xml"}, `--log-format "xml": want text or json`},
		{[]string{"validate", "--max-file-size", "0"}, `invalid argument "0" for "--max-file-size" flag: want 1 byte to 4MiB`},
		{[]string{"run", "--max-file-size", "5MiB"}, `invalid argument "5MiB" for "--max-file-size" flag: want 1 byte to 4MiB`},
		{[]string{"check", "--max-file-size", "lots"}, `invalid argument "lots" for "--max-file-size" flag: want a size in bytes, or with a unit`},
	} {
		args := append([]string{tc.args[0], "no-such-file.yaml"}, tc.args[1:]...)
		code, _, stderr := sim(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "no-such-file") {
			t.Errorf("sim %s: exit %d, stderr:\n%s\nwant exit 2 saying %q (and nothing about the file)", strings.Join(args, " "), code, stderr, tc.want)
		}
	}
	code, _, stderr := sim(t, "list", "--log-level", "verbose")
	if code != 2 || !strings.Contains(stderr, `--log-level "verbose"`) {
		t.Errorf("sim list --log-level verbose: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "1048576": 1 << 20, "512KiB": 512 << 10, "4MiB": 4 << 20, "4MB": 4 << 20, "4M": 4 << 20, "4096KiB": 4 << 20, "100B": 100} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5MiB", "1TiB", "1GiB", "5MiB", "4097KiB", "4194305", "MiB", "9223372036854775807GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, b)
		}
	}
	b := byteSize(1 << 20)
	if b.String() != "1MiB" {
		t.Errorf("String() = %q", b.String())
	}
}

// writeFiles writes files into dir by name.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const minimal = "name: minimal\nduration: 1m\nfleet:\n  count: 10\n"

// TestMaxFileSize: a file over --max-file-size is refused, unread, naming
// the limit and the flag; raised, the flag lets it load. A 50 MB file is
// refused at once.
func TestMaxFileSize(t *testing.T) {
	dir := t.TempDir()
	big := minimal + "# " + strings.Repeat("x", 2<<20) + "\n"
	writeFiles(t, dir, map[string]string{"big.yaml": big})
	path := filepath.Join(dir, "big.yaml")
	code, _, stderr := sim(t, "validate", path)
	if want := fmt.Sprintf("%s: file too large (%d bytes, the limit is 1048576): raise the limit with --max-file-size", path, len(big)); code != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 saying %q", code, stderr, want)
	}
	if code, stdout, stderr := sim(t, "validate", path, "--max-file-size", "4MiB"); code != 0 || !strings.Contains(stdout, "ok  "+path) {
		t.Fatalf("--max-file-size 4MiB: exit %d\n%s\n%s", code, stdout, stderr)
	}
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil { // sparse: nothing to write
		t.Fatal(err)
	}
	f.Close()
	if code, _, stderr := sim(t, "validate", huge); code != 2 || !strings.Contains(stderr, "52428800 bytes, the limit is 1048576") {
		t.Fatalf("a 50 MB file: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestFolderErrors: in a folder, a directory named x.yaml, a file too
// large and a file with errors are each reported, after the files before
// and after them were loaded, and the exit code is 2.
func TestFolderErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a-good.yaml": minimal,
		"b-bad.yaml":  strings.Replace(minimal, "1m", "10 minutes", 1),
		"d-big.yaml":  minimal + "# " + strings.Repeat("x", 1<<20) + "\n",
		"e-good.yaml": strings.Replace(minimal, "minimal", "another", 1),
		"notes.txt":   "not a scenario",
	})
	if err := os.Mkdir(filepath.Join(dir, "c-dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := sim(t, "validate", dir, "no-such-scenario")
	if code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		filepath.Join(dir, "b-bad.yaml") + `:2:11: duration: "10 minutes" is not a duration`,
		filepath.Join(dir, "c-dir.yaml") + ": not a regular file (a directory): a scenario is read from a regular file",
		filepath.Join(dir, "d-big.yaml") + ": file too large",
		"no-such-scenario: no such file or directory, and not a shipped scenario",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "good.yaml") || strings.Contains(stderr, "notes.txt") {
		t.Errorf("stderr names a file without problems:\n%s", stderr)
	}
}

// TestCheckJUnitOnLoadFailure: when files do not load, check runs nothing
// (exit 2) and still writes its JUnit file, with a failed testcase per
// file that did not load.
func TestCheckJUnitOnLoadFailure(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a-good.yaml": minimal,
		"b-bad.yaml":  strings.Replace(minimal, "1m", "10 minutes", 1),
	})
	if err := os.Mkdir(filepath.Join(dir, "c-dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, stdout, stderr := sim(t, "check", dir, "--junit", junit, "--baseline", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "10 minutes") {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatalf("no JUnit file: %v", err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if doc.Failures != 2 || len(doc.Cases) != 2 ||
		doc.Cases[0].Name != filepath.Join(dir, "b-bad.yaml") || !strings.Contains(doc.Cases[0].Failure.Message, `duration: "10 minutes" is not a duration`) ||
		doc.Cases[1].Name != filepath.Join(dir, "c-dir.yaml") || !strings.Contains(doc.Cases[1].Failure.Text, "not a regular file (a directory)") {
		t.Errorf("JUnit:\n%s", b)
	}
}

// TestValidateBOM: a file saved with a byte order mark loads.
func TestValidateBOM(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"bom.yaml": "\ufeff" + minimal})
	if code, _, stderr := sim(t, "validate", filepath.Join(dir, "bom.yaml")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestLoadInterruptedInProcess: the context ending while files load ends
// the command at once: validate and check exit 1 (nothing passes
// unchecked), run exits 0 (a stop the user asked for) and says nothing
// ran.
func TestLoadInterruptedInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for cmd, want := range map[string]int{"validate": 1, "check": 1, "run": 0} {
		var out, errb bytes.Buffer
		code := Main(ctx, []string{cmd, "testdata/tiny.yaml"}, &out, &errb)
		if code != want || !strings.Contains(errb.String(), "stopped by SIGINT/SIGTERM while loading the scenario files") {
			t.Errorf("sim %s, stopped: exit %d, want %d; stderr:\n%s", cmd, code, want, errb.String())
		}
	}
}

// TestMaxSpeedEnds: runs at the highest speed ceiling the flag takes
// end, and say which speed they ran at.
func TestMaxSpeedEnds(t *testing.T) {
	for _, name := range []string{"offline-reconnect", "telemetry-fallback"} {
		done := make(chan struct{})
		var code int
		var stdout, stderr string
		go func() {
			defer close(done)
			code, stdout, stderr = sim(t, "run", name, "--workers", "10", "--speed", "10000", "--headless", "--report", "", "--log-level", "error")
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s at --speed 10000 has not ended after 2 minutes", name)
		}
		if code != 0 && code != 4 || !strings.Contains(stdout, "at speed 10000") {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, stdout, stderr)
		}
	}
}
