package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

var (
	selectorType = reflect.TypeFor[Selector]()
	expectType   = reflect.TypeFor[Expect]()
	durationType = reflect.TypeFor[Duration]()
	distType     = reflect.TypeFor[dist.Dist]()
	policyType   = reflect.TypeFor[mailbox.Policy]()
	retryType    = reflect.TypeFor[mailbox.RetryHint]()
	edgeType     = reflect.TypeFor[Edge]()
)

const (
	distSyntax  = dist.Syntax
	policyNames = "reject, drop-oldest, drop-newest, block, coalesce or unbounded"
)

// Load reads and parses the scenario file at path (see ReadFile, with
// DefaultMaxFileSize, and Parse). An unreadable file is an error wrapping
// the os error (or ErrTooLarge, ErrNotRegular); a file with problems is an
// Errors listing all of them.
func Load(path string) (*Scenario, error) {
	data, err := ReadFile(path, DefaultMaxFileSize)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// The errors of ReadFile, besides the os errors it wraps; match them with
// errors.Is.
var (
	// ErrTooLarge is a file larger than the limit ReadFile was given.
	ErrTooLarge = errors.New("file too large")
	// ErrNotRegular is a directory, a named pipe, a device or a socket: a
	// pipe would block the reader, a device might never end.
	ErrNotRegular = errors.New("not a regular file")
)

// ReadFile reads the scenario file at path, of at most max bytes. A file
// that is larger, or that is not a regular file, is refused before it is
// read (ErrTooLarge, ErrNotRegular: the message says which kind of file it
// is), and the read stops at max+1 bytes whatever the file does.
func ReadFile(path string, max int64) ([]byte, error) {
	// Stat first, so that a device is not even opened; then check the file
	// that was opened, which may not be the one stated. A named pipe opened
	// without O_NONBLOCK would block until a writer came.
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if err := regular(path, st, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if err := regular(path, st, max); err != nil {
		return nil, err
	}
	max = min(max, math.MaxInt64-1)
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if int64(len(data)) > max { // it grew while read
		return nil, fmt.Errorf("%s: %w (over %d bytes, the limit is %d)", path, ErrTooLarge, max, max)
	}
	return data, nil
}

// regular refuses a file that is not a regular one, or larger than max.
func regular(path string, st os.FileInfo, max int64) error {
	m := st.Mode()
	if !m.IsRegular() {
		kind := "a special file"
		switch {
		case m.IsDir():
			kind = "a directory"
		case m&os.ModeNamedPipe != 0:
			kind = "a named pipe"
		case m&os.ModeSocket != 0:
			kind = "a socket"
		case m&os.ModeDevice != 0:
			kind = "a device"
		}
		return fmt.Errorf("%s: %w (%s): a scenario is read from a regular file", path, ErrNotRegular, kind)
	}
	if st.Size() > max {
		return fmt.Errorf("%s: %w (%d bytes, the limit is %d)", path, ErrTooLarge, st.Size(), max)
	}
	return nil
}

// Parse decodes a scenario file strictly and validates it. A file nested
// deeper than MaxDepth, or with more keys than MaxKeys in a mapping or
// MaxNodes in all, is refused before the YAML parser sees it, and a check
// longer than MaxCheckLength or with brackets deeper than MaxCheckDepth
// before the expression parser does, each with its place and the limit;
// so is a file that is not UTF-8. Once parsed, aliases that repeat more
// than MaxAliasBytes of text (or make more than MaxNodes keys and list
// items), checks past MaxChecks or MaxCheckBytes, and a sweep whose
// variants hold more than MaxSweepNodes are refused before the work they
// would cost. A leading byte order mark is ignored. Then: an unknown key,
// a value of the wrong type or out of range, an event with no action or
// two, a selector naming a group or a worker the fleet does not have, a
// check that does not compile against Result or that cannot depend on the
// run (lost >= 0)... Every problem is reported (up to 100, with a last
// one saying the file was checked no further), as an Errors, each with
// file:line:col, the YAML path, the offending text and what would be
// valid. file names the data in messages.
//
// The returned Scenario has its defaults filled in, its timeline sorted by
// time (stably) and its expectations compiled. Every variant of its sweep
// has been built and validated too (Variants). Its Warnings list the
// checks that cannot depend on this scenario's run: they read only counts
// it never produces.
func Parse(file string, data []byte) (*Scenario, error) {
	// Editors on Windows may start a UTF-8 file with a byte order mark.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if err := checkShape(file, data); err != nil {
		return nil, Errors{err}
	}
	src := newSource(file, data)
	body, errs := parseDocument(src, data)
	if errs != nil {
		return nil, errs
	}
	d := newDecoder(src, body)
	if err := checkExpansion(src, body); err != nil {
		return nil, Errors{err}
	}
	s := &Scenario{File: file}
	d.value(body, reflect.ValueOf(s).Elem(), "", "")
	errs = append(errs, d.errs...)
	errs = append(errs, finish(s, src, d.failed())...)
	sweep, serrs := readSweep(d, body)
	errs = append(errs, serrs...)
	s.Sweep = sweep
	s.src = src
	if len(serrs) == 0 {
		errs = append(errs, unlessFailed(compileComparisons(s, src), d.failed())...)
	}
	if len(sweep) > 0 && (len(errs) == 0 || len(errs) == len(serrs)) {
		errs = append(errs, s.checkVariants()...)
	}
	if len(errs) > 0 {
		return nil, errs.sorted().capped()
	}
	return s, nil
}

// parseDocument parses data into its one YAML document's body, a mapping.
func parseDocument(src *source, data []byte) (body ast.Node, errs Errors) {
	defer func() {
		// The parser is outside code: a bug in it must not take the
		// process down on a user's file.
		if r := recover(); r != nil {
			body, errs = nil, Errors{src.atPos(position{1, 1}, "", fmt.Sprintf("the YAML parser failed on this file (%v): check its syntax", r))}
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			p := ye.GetToken().Position
			return nil, Errors{src.atPos(position{p.Line, p.Column}, "", "YAML syntax: "+ye.GetMessage())}
		}
		line, _, _ := strings.Cut(err.Error(), "\n")
		return nil, Errors{src.atPos(position{1, 1}, "", "YAML syntax: "+line)}
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, Errors{src.atPos(position{1, 1}, "", "the file holds no scenario: it needs at least name, duration and fleet.count")}
	}
	if len(docs) > 1 {
		return nil, Errors{src.atPos(nodePos(docs[1].Body), "", "a file holds one scenario: this is a second YAML document (after ---); put it in its own file")}
	}
	body = docs[0].Body
	if c, ok := body.(*ast.CommentGroupNode); ok && c != nil {
		return nil, Errors{src.atPos(position{1, 1}, "", "the file holds only comments: a scenario needs at least name, duration and fleet.count")}
	}
	n := newDecoder(src, nil).resolve(body, "")
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return body, nil
	}
	return nil, Errors{src.atPos(nodePos(body), "", fmt.Sprintf("%s is not a scenario: the file must be a mapping of keys (name, description, duration, fleet, leader, timeline, expect, sweep...)", describe(n)))}
}

// finish completes a decoded scenario: mechanism defaults, validation,
// the scenario-level defaults, compiled expectations, and the timeline in
// time order. skip lists the paths that already failed to decode, whose
// validation would only repeat the problem.
func finish(s *Scenario, src *source, skip map[string]bool) Errors {
	for i := range s.Timeline {
		if s.Timeline[i].path == "" {
			s.Timeline[i].path = index("timeline", i)
		}
	}
	fillDefaults(s, src)
	errs := validate(s, src)
	s.ApplyDefaults()
	errs = append(errs, compileChecks(s, src)...)
	s.Warnings = append(s.Warnings, settingWarnings(s, src)...)
	slices.SortStableFunc(s.Timeline, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	return unlessFailed(errs, skip)
}

// unlessFailed drops the errors about the paths in skip, or inside them:
// they failed to decode, and that error says what is wrong.
func unlessFailed(errs Errors, skip map[string]bool) Errors {
	return slices.DeleteFunc(errs, func(e *Error) bool {
		for p := e.Path; p != ""; p = parent(p) {
			if skip[p] {
				return true
			}
		}
		return false
	})
}
