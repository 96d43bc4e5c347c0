package control

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Request is what 'leader deploy' publishes on <prefix>/_leader/deploy
// (docs/PROTOCOL.md, "Operating a running leader"): a deploy, or, with
// Cancel, the cancel of one.
type Request struct {
	ID             string   `json:"id"`                // request id; the answer goes to <prefix>/_leader/deploy/<id>
	Kind           string   `json:"kind,omitempty"`    // firmware (default) or config
	Version        string   `json:"version,omitempty"` // required, wire.ValidVersion
	Workers        []string `json:"workers,omitempty"` // in wave order; empty with all
	All            bool     `json:"all,omitempty"`     // every worker the leader has seen, sorted by id
	WaveSize       int      `json:"wave_size,omitempty"`
	WaveIntervalMs int64    `json:"wave_interval_ms,omitempty"`
	TTLMs          int64    `json:"ttl_ms,omitempty"`
	// Cancel is the number of a deploy to cancel (leader.Cancel); a
	// cancel request holds id and cancel only.
	Cancel *int `json:"cancel,omitempty"`
}

// requestFields is what a deploy request may hold, and what each field
// takes, for the answer to a request that holds something else.
var requestFields = []struct{ name, want string }{
	{"id", "a request id string of 1 to 64 characters A-Z a-z 0-9 _ -"},
	{"kind", `"firmware" or "config"`},
	{"version", "a string of 1 to 64 letters, digits or . _ + -, starting with a letter or digit"},
	{"workers", "an array of worker id strings"},
	{"all", "true or false"},
	{"wave_size", "a whole number, 0 or more"},
	{"wave_interval_ms", "a whole number of milliseconds"},
	{"ttl_ms", "a whole number of milliseconds"},
	{"cancel", "the number of a deploy to cancel, 0 or more"},
}

const (
	// MaxRequestSize bounds a deploy request: a million worker ids fit.
	MaxRequestSize = 32 << 20
	// MaxSpanMs bounds wave_interval_ms, ttl_ms and the time from a
	// deploy's first wave to its last: a year, far below where a
	// duration overflows.
	MaxSpanMs = 365 * 24 * 3600 * 1000
	// MaxReasonLen bounds the reason a refusal is answered and logged
	// with, whatever the request held.
	MaxReasonLen = 300
)

// RequestError is why a deploy request was refused. ID is the request's
// id if it had a valid one, so the refusal can be answered on its topic;
// "" when it cannot be answered.
type RequestError struct {
	ID     string
	Reason string // names the field and what would be valid; at most MaxReasonLen bytes
}

func (e *RequestError) Error() string { return e.Reason }

func refuse(id, format string, a ...any) *RequestError {
	return &RequestError{ID: id, Reason: clip(fmt.Sprintf(format, a...), MaxReasonLen)}
}

// ParseRequest decodes and checks a deploy request as strictly as
// the leader checks a worker's envelope: one JSON object of at most
// MaxRequestSize bytes, UTF-8, no unknown field, each field once and by
// its exact name, every field of its type, every value valid. Every
// refusal is a *RequestError.
func ParseRequest(payload []byte) (Request, error) {
	var req Request
	if len(payload) > MaxRequestSize {
		return req, refuse("", "%d bytes, limit %d", len(payload), MaxRequestSize)
	}
	if err := decodeStrict(payload, &req); err != nil {
		return Request{}, refuse(peekID(payload), "%s", err)
	}
	keys, err := checkStrict(payload)
	if err != nil {
		id := req.ID
		var se *wire.StrictError
		if wire.ValidWorkerID(id) != nil || errors.As(err, &se) && se.Key == "id" {
			// Decoding altered it (invalid UTF-8 becomes U+FFFD, never
			// valid in an id), or the request names two: no topic is
			// the requester's for sure.
			id = ""
		}
		return Request{}, refuse(id, "%s", err)
	}
	if req.ID == "" {
		return req, refuse("", "id: required, %s (the answer goes to <prefix>/_leader/deploy/<id>)", requestFields[0].want)
	}
	if err := wire.ValidWorkerID(req.ID); err != nil {
		return req, refuse("", "id: %v (it names the answer's topic)", err)
	}
	if req.Cancel != nil {
		if err := validCancel(keys, *req.Cancel); err != nil {
			return req, refuse(req.ID, "%s", err)
		}
		return req, nil
	}
	if err := req.validate(); err != nil {
		return req, refuse(req.ID, "%s", err)
	}
	return req, nil
}

// validCancel checks a cancel request: its deploy number, and that it
// holds nothing but id and cancel (keys, as sent).
func validCancel(keys []string, index int) error {
	for _, k := range keys {
		if k != "id" && k != "cancel" {
			return fmt.Errorf("cancel: a cancel request holds id and cancel only, not %s", quote(k))
		}
	}
	if index < 0 {
		return fmt.Errorf("cancel %d: want the number of a deploy, 0 or more (the number 'leader deploy' printed)", index)
	}
	return nil
}

// validate checks every field but the id.
func (r Request) validate() error {
	switch r.Kind {
	case "", "firmware", "config":
	default:
		return fmt.Errorf("kind %s: want firmware (the default) or config", quote(r.Kind))
	}
	if err := wire.ValidVersion(r.Version); err != nil {
		return err
	}
	switch {
	case r.All && len(r.Workers) > 0:
		return errors.New(`give either "workers" or "all", not both`)
	case !r.All && len(r.Workers) == 0:
		return errors.New(`workers: give the workers to update, in wave order, or "all": true`)
	}
	seen := make(map[string]int, len(r.Workers))
	for i, w := range r.Workers {
		if err := wire.ValidWorkerID(w); err != nil {
			return fmt.Errorf("workers[%d]: %w", i, err)
		}
		if j, dup := seen[w]; dup {
			return fmt.Errorf("workers[%d]: %q is workers[%d] again: give each worker once", i, w, j)
		}
		seen[w] = i
	}
	switch {
	case r.WaveSize < 0:
		return fmt.Errorf("wave_size %d: want 0 (one wave) or more", r.WaveSize)
	case r.WaveIntervalMs < 0 || r.WaveIntervalMs > MaxSpanMs:
		return fmt.Errorf("wave_interval_ms %d: want 0 to %d (a year)", r.WaveIntervalMs, MaxSpanMs)
	case r.TTLMs < 0 || r.TTLMs > MaxSpanMs:
		return fmt.Errorf("ttl_ms %d: want 0 (none) to %d (a year)", r.TTLMs, MaxSpanMs)
	}
	return checkSpan(len(r.Workers), r.WaveSize, r.WaveIntervalMs)
}

// checkSpan checks that n workers in waves of size make at most
// leader.MaxWaves waves, which start, intervalMs apart, within MaxSpanMs.
func checkSpan(n, size int, intervalMs int64) error {
	if err := leader.CheckWaves(n, size); err != nil {
		return fmt.Errorf("wave_size %d: %w", size, err)
	}
	if n == 0 || size == 0 || intervalMs == 0 {
		return nil
	}
	waves := (n + size - 1) / size
	if int64(waves-1) > MaxSpanMs/intervalMs {
		return fmt.Errorf("wave_interval_ms %d: %d waves of %d would take more than a year to start; want a larger wave_size or a shorter interval", intervalMs, waves, size)
	}
	return nil
}

// checkStrict refuses what decodeStrict lets pass: text that is not
// UTF-8 (or escapes half a surrogate pair), which the decoder replaces
// with U+FFFD; a field given twice, of which it keeps the last; and a
// field name in another case ("ID"), which it matches to a field all the
// same. Two readers of such a request could disagree on what it asked.
// It returns the object's keys.
func checkStrict(payload []byte) ([]string, error) {
	keys, err := wire.CheckStrict(payload)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if fieldWant(k) == "" {
			return nil, unknownField(k)
		}
	}
	return keys, nil
}

// decodeStrict decodes one JSON object into v, refusing unknown fields,
// wrong types and trailing data with a reason that names the field and
// what it takes.
func decodeStrict(data []byte, v *Request) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return errors.New("trailing data after the JSON object (want one JSON object, see docs/PROTOCOL.md)")
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Errorf("got JSON %s, want one JSON object (see docs/PROTOCOL.md)", clip(te.Value, 40))
		}
		return fmt.Errorf("%s: got JSON %s, want %s", te.Field, clip(te.Value, 40), cmp.Or(fieldWant(te.Field), "another type"))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if s, uerr := strconv.Unquote(name); uerr == nil {
			return unknownField(s)
		}
		return unknownField(name)
	}
	return fmt.Errorf("not JSON: %s (want one JSON object, see docs/PROTOCOL.md)", strings.TrimPrefix(err.Error(), "json: "))
}

// unknownField is the refusal of a field no request holds.
func unknownField(name string) error {
	names := make([]string, len(requestFields))
	for i, f := range requestFields {
		names[i] = f.name
	}
	return fmt.Errorf("unknown field %s (valid: %s)", quote(name), strings.Join(names, ", "))
}

// fieldWant says what field name takes, or "" for no such field.
func fieldWant(name string) string {
	for _, f := range requestFields {
		if f.name == name {
			return f.want
		}
	}
	return ""
}

// peekID returns the id of a request decodeStrict refused, if it has a
// valid one: such a request is answered with its reason.
func peekID(payload []byte) string {
	var p struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(payload, &p) != nil || wire.ValidWorkerID(p.ID) != nil {
		return ""
	}
	// An id the decoder altered (bytes that are not UTF-8 become U+FFFD)
	// is not a valid one; an id given twice is not the requester's for
	// sure.
	var se *wire.StrictError
	if _, err := wire.CheckStrict(payload); errors.As(err, &se) && se.Key == "id" {
		return ""
	}
	return p.ID
}

// quote quotes s for a reason, cut to its first 32 bytes when longer.
func quote(s string) string {
	if len(s) <= 32 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:32]) + "…"
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
