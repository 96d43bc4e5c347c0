package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errors matched by errors.Is on a *DecodeError.
var (
	// ErrTooLarge: the payload is over the size limit.
	ErrTooLarge = errors.New("payload too large")
	// ErrMalformed: not a valid envelope (bad JSON, unknown or missing
	// field, wrong type, bad value).
	ErrMalformed = errors.New("malformed envelope")
	// ErrUnknownKind: the kind is not one this version knows.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrVersion: "v" is not Version.
	ErrVersion = errors.New("unsupported envelope version")
	// ErrWrongTopic: the kind does not travel in this direction.
	ErrWrongTopic = errors.New("kind not allowed on this topic")
)

// DecodeError says what was wrong with a payload and where it came from.
type DecodeError struct {
	Topic  string
	Kind   error  // one of the sentinels above
	Detail string // what was wrong and what would be valid
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %v: %s", e.Topic, e.Kind, e.Detail)
}

// Is matches the sentinel in Kind.
func (e *DecodeError) Is(target error) bool { return target == e.Kind }

// Decode parses and checks payload received on topic. It accepts only a
// complete, known envelope of at most max bytes (max <= 0: DefaultMaxSize)
// whose kind may travel in dir; the body of a known kind is checked too.
// Every failure is a *DecodeError.
func Decode(topic string, payload []byte, dir Direction, max int) (Envelope, error) {
	var env Envelope
	if max <= 0 {
		max = DefaultMaxSize
	}
	fail := func(kind error, format string, a ...any) (Envelope, error) {
		return Envelope{}, &DecodeError{Topic: topic, Kind: kind, Detail: fmt.Sprintf(format, a...)}
	}
	if len(payload) > max {
		return fail(ErrTooLarge, "%d bytes, limit %d", len(payload), max)
	}
	if !decodeFast(payload, &env) {
		// The strict decoder takes its target as an interface, which
		// would move env to the heap on the fast path too.
		slow := new(Envelope)
		if err := strictUnmarshal(payload, slow); err != nil {
			return fail(ErrMalformed, "%v (want a JSON envelope, see docs/PROTOCOL.md)", err)
		}
		env = *slow
	}
	if env.V != Version {
		return fail(ErrVersion, "v = %d, this leader speaks v %d", env.V, Version)
	}
	d, known := kinds[env.Kind]
	if !known {
		return fail(ErrUnknownKind, "kind %q (valid: config, firmware, job, ping, reply down; ack, request, heartbeat, telemetry up)", env.Kind)
	}
	if d != dir {
		return fail(ErrWrongTopic, "kind %q travels %s, not %s", env.Kind, dirName(d), dirName(dir))
	}
	if err := env.check(); err != nil {
		return fail(ErrMalformed, "%v", err)
	}
	return env, nil
}

func dirName(d Direction) string {
	if d == Down {
		return "down (leader to worker)"
	}
	return "up (worker to leader)"
}

// check validates the fields each kind needs.
func (e *Envelope) check() error {
	if e.Kind.IsAnswer() {
		if e.Ref == "" {
			return fmt.Errorf("%s: field \"ref\" is required (the id of the envelope answered)", e.Kind)
		}
		if len(e.Ref) > 2*MaxIDLen {
			return fmt.Errorf("%s: field \"ref\" is %d characters, limit %d", e.Kind, len(e.Ref), 2*MaxIDLen)
		}
		switch e.Result {
		case ResultOK:
		case ResultFull:
			if e.RetryAfterMs < 0 {
				return fmt.Errorf("%s: \"retry_after_ms\" = %d, must be >= 0", e.Kind, e.RetryAfterMs)
			}
		case ResultReject:
			if e.Reason == "" {
				return fmt.Errorf("%s: a reject needs a \"reason\"", e.Kind)
			}
		case ResultDrained:
			if e.Kind != KindReply {
				return fmt.Errorf("%s: \"result\" = %q belongs on a reply to a job request", e.Kind, e.Result)
			}
			if e.RetryAfterMs <= 0 {
				return fmt.Errorf("%s: a drained answer needs \"retry_after_ms\" above 0, got %d", e.Kind, e.RetryAfterMs)
			}
		default:
			return fmt.Errorf("%s: \"result\" = %q, must be ok, full, reject or drained", e.Kind, e.Result)
		}
		if e.Kind == KindReply && len(e.Body) > 0 {
			return e.checkJob(KindReply)
		}
		return nil
	}
	if e.ID == "" {
		return fmt.Errorf("%s: field \"id\" is required", e.Kind)
	}
	if len(e.ID) > 2*MaxIDLen {
		return fmt.Errorf("%s: field \"id\" is %d characters, limit %d", e.Kind, len(e.ID), 2*MaxIDLen)
	}
	if e.Result != "" || e.Ref != "" {
		return fmt.Errorf("%s: \"result\" and \"ref\" belong on ack and reply only", e.Kind)
	}
	if e.Seq > MaxSeq {
		return fmt.Errorf("%s: \"seq\" = %d, must be at most 2^53-1 (%d), which every JSON reader holds exactly", e.Kind, e.Seq, uint64(MaxSeq))
	}
	if e.TTLMs < 0 || e.Attempt < 0 {
		return fmt.Errorf("%s: \"ttl_ms\" and \"attempt\" must be >= 0", e.Kind)
	}
	switch e.Kind {
	case KindConfig, KindFirmware:
		var b Apply
		if err := e.body(&b, true); err != nil {
			return err
		}
		if b.Version == "" {
			return fmt.Errorf("%s: body \"version\" is required", e.Kind)
		}
	case KindJob:
		return e.checkJob(KindJob)
	case KindRequest:
		var b Request
		if err := e.body(&b, true); err != nil {
			return err
		}
		if b.What == "" {
			return fmt.Errorf("request: body \"what\" is required")
		}
		if b.What != RequestSync && b.What != RequestJob {
			return fmt.Errorf("request: body \"what\" is %s: a leader answers %q and %q", clipQuote(b.What), RequestSync, RequestJob)
		}
		if b.Done != "" && b.What != RequestJob {
			return fmt.Errorf("request: body \"done\" belongs on a %q request", RequestJob)
		}
		if len(b.Done) > MaxIDLen {
			return fmt.Errorf("request: body \"done\" is %d characters, limit %d", len(b.Done), MaxIDLen)
		}
	case KindHeartbeat:
		var b Heartbeat
		return e.body(&b, false)
	case KindTelemetry:
		var b Telemetry
		return e.body(&b, true)
	}
	return nil
}

// checkJob checks a Job body: on a job command (optional) and on the
// reply that hands out a pulled job.
func (e *Envelope) checkJob(k Kind) error {
	var b Job
	if err := e.body(&b, false); err != nil {
		return err
	}
	if b.WorkMs < 0 || b.LeaseMs < 0 {
		return fmt.Errorf("%s: body \"work_ms\" and \"lease_ms\" must be >= 0", k)
	}
	if len(b.ID) > MaxIDLen {
		return fmt.Errorf("%s: body \"id\" is %d characters, limit %d", k, len(b.ID), MaxIDLen)
	}
	if k == KindReply && (b.ID == "" || b.LeaseMs <= 0 || e.Result != ResultOK) {
		return fmt.Errorf("reply: a job body needs result ok, an \"id\" and \"lease_ms\" above 0")
	}
	return nil
}

// BodyInto decodes the body of an envelope Decode accepted into v, the
// body type of its kind (Heartbeat for a heartbeat, and so on), as
// strictly as Decode checked it. An absent body leaves v as it is.
func (e *Envelope) BodyInto(v any) error { return e.body(v, false) }

// body decodes e.Body strictly into v.
func (e *Envelope) body(v any, required bool) error {
	if len(e.Body) == 0 || string(e.Body) == "null" {
		if required {
			return fmt.Errorf("%s: \"body\" is required", e.Kind)
		}
		return nil
	}
	if decodeBodyFast(e.Body, v) {
		return nil
	}
	if err := strictUnmarshal(e.Body, v); err != nil {
		return fmt.Errorf("%s body: %v", e.Kind, err)
	}
	return nil
}

// Encode checks env as Decode would and returns its JSON. A message this
// package would refuse to decode is never sent.
func Encode(env Envelope) ([]byte, error) {
	if env.V == 0 {
		env.V = Version
	}
	if _, ok := kinds[env.Kind]; !ok {
		return nil, fmt.Errorf("encode: unknown kind %q", env.Kind)
	}
	if err := env.check(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if b, ok := encodeFast(&env); ok {
		return b, nil
	}
	return json.Marshal(env)
}

// Body marshals v for an envelope's Body.
func Body(v any) json.RawMessage {
	if b, ok := bodyFast(v); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil { // only the body types above are passed here
		panic("wire: body: " + err.Error())
	}
	return b
}
