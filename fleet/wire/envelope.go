package wire

import (
	"encoding/json"
	"time"
)

// Version is the envelope version this package speaks ("v" in JSON).
const Version = 1

// DefaultMaxSize is the largest payload Decode accepts by default (64 KiB).
const DefaultMaxSize = 64 << 10

// MaxSeq is the highest "seq" an envelope may carry: 2^53-1, the largest
// integer that a JSON reader holding numbers as IEEE doubles (JavaScript,
// many others) still reads exactly. Above it two different sequence
// numbers can read as one, and a new version as a repeat. Decode refuses
// more, and Encode never sends it.
const MaxSeq = 1<<53 - 1

// Kind names what an envelope carries.
type Kind string

// Kinds sent by the leader on a worker's down topic.
const (
	// KindConfig asks the worker to apply a configuration version. Body: Apply.
	KindConfig Kind = "config"
	// KindFirmware asks the worker to install a firmware version. Body: Apply.
	KindFirmware Kind = "firmware"
	// KindJob is a unit of work. Body: Job (optional).
	KindJob Kind = "job"
	// KindPing asks for an ack and nothing else.
	KindPing Kind = "ping"
	// KindReply answers a worker's request (Ref, Result).
	KindReply Kind = "reply"
)

// Kinds sent by a worker on its up topic.
const (
	// KindAck answers a command (Ref, Result).
	KindAck Kind = "ack"
	// KindRequest asks the leader for something, answered by a reply. Body:
	// Request.
	KindRequest Kind = "request"
	// KindHeartbeat reports liveness and state. Body: Heartbeat.
	KindHeartbeat Kind = "heartbeat"
	// KindTelemetry carries measurements. Body: Telemetry.
	KindTelemetry Kind = "telemetry"
)

// Direction says which topic a kind travels on.
type Direction int

const (
	Down Direction = iota // leader -> worker
	Up                    // worker -> leader
)

var kinds = map[Kind]Direction{
	KindConfig: Down, KindFirmware: Down, KindJob: Down, KindPing: Down, KindReply: Down,
	KindAck: Up, KindRequest: Up, KindHeartbeat: Up, KindTelemetry: Up,
}

// IsAnswer reports whether k answers another envelope (ack, reply): it
// carries Ref and Result instead of its own id.
func (k Kind) IsAnswer() bool { return k == KindAck || k == KindReply }

// Result is a worker's (or the leader's) answer to a delivery.
type Result string

const (
	// ResultOK: accepted (queued for or done by the receiver).
	ResultOK Result = "ok"
	// ResultFull: the receiver's mailbox is full; retry after RetryAfterMs.
	ResultFull Result = "full"
	// ResultReject: refused for good (Reason says why); do not retry.
	ResultReject Result = "reject"
	// ResultDrained answers a job request (reply only): no job for the
	// worker now; ask again after RetryAfterMs, which is always above 0.
	ResultDrained Result = "drained"
)

// Envelope is one message on a fleetsim topic.
type Envelope struct {
	V    int    `json:"v"`
	ID   string `json:"id,omitempty"` // sender-unique; required except on answers
	Kind Kind   `json:"kind"`
	// Ref is the ID of the envelope an ack or reply answers.
	Ref string `json:"ref,omitempty"`
	// Key is the idempotency key: a receiver applies a key's effect once.
	Key string `json:"key,omitempty"`
	// Seq orders versions of one key; a lower Seq than one already applied
	// is stale. At most MaxSeq.
	Seq uint64 `json:"seq,omitempty"`
	// TTLMs, if positive, is how long after SentMs the envelope is worth
	// acting on.
	TTLMs int64 `json:"ttl_ms,omitempty"`
	// Attempt is the delivery attempt (1 for the first).
	Attempt int `json:"attempt,omitempty"`
	// SentMs is the sender's clock (simulated time) in Unix milliseconds.
	SentMs int64 `json:"sent_ms,omitempty"`
	// Result, RetryAfterMs and Reason answer a delivery (ack, reply).
	Result       Result `json:"result,omitempty"`
	RetryAfterMs int64  `json:"retry_after_ms,omitempty"`
	Reason       string `json:"reason,omitempty"`
	// Body is the kind's payload (see the body types).
	Body json.RawMessage `json:"body,omitempty"`
}

// RetryAfter returns RetryAfterMs as a duration.
func (e *Envelope) RetryAfter() time.Duration {
	return time.Duration(e.RetryAfterMs) * time.Millisecond
}

// Apply is the body of config and firmware commands.
type Apply struct {
	Version string `json:"version"`
}

// Job is the body of a job command, and of the reply that hands a
// pulling worker its next job.
type Job struct {
	// ID names the job in the leader's job queue ("q17"); a pulling worker
	// reports it done in its next job request. Empty on a command that is
	// not from the queue.
	ID string `json:"id,omitempty"`
	// LeaseMs is how long, from the reply's SentMs, the worker holds a
	// pulled job: one not reported done by then goes back to the queue,
	// and the worker must not apply it after. 0 on a pushed job.
	LeaseMs int64 `json:"lease_ms,omitempty"`
	// WorkMs, if set, overrides the worker's sampled service time.
	WorkMs int64 `json:"work_ms,omitempty"`
	// Data is opaque to fleetsim.
	Data json.RawMessage `json:"data,omitempty"`
}

// The requests a leader answers; Decode refuses any other.
const (
	// RequestSync is what a worker asks for after it (re)connects: the
	// request that makes a thundering herd.
	RequestSync = "sync"
	// RequestJob asks for the worker's next job from the leader's job
	// queue (work pulling): answered by a reply with a Job body, or
	// ResultDrained with a retry time.
	RequestJob = "job"
)

// Request is the body of a worker's request.
type Request struct {
	// What the worker asks for: RequestSync or RequestJob.
	What string `json:"what"`
	// Done, on a job request only, is the id of the job the worker
	// finished since its last answered job request: the report that
	// completes the job (the application-level ack of pulling).
	Done string `json:"done,omitempty"`
}

// Heartbeat is the body of a heartbeat.
type Heartbeat struct {
	Version      string `json:"version,omitempty"` // applied firmware/config version
	MailboxDepth int    `json:"mailbox_depth"`
	Busy         bool   `json:"busy,omitempty"`
}

// Telemetry is the body of a telemetry message: named measurements.
type Telemetry struct {
	Metrics map[string]float64 `json:"metrics"`
}

// Ack builds the answer to env with result r.
func Ack(env *Envelope, r Result) Envelope {
	k := KindAck
	if env.Kind == KindRequest {
		k = KindReply
	}
	return Envelope{V: Version, Kind: k, Ref: env.ID, Result: r}
}
