package broker

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/ratelog"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// RateLimit is what one device may publish to the broker: two token
// buckets, one of messages and one of bytes (topic and payload), each
// refilled at its rate per second up to its burst. A publish over either
// is dropped and counted (Stats.RateLimited). A zero field takes its
// default (DefaultRateLimit); a negative rate turns that bucket off.
//
// A worker's login gets it once; a gateway's gets it times the number of
// devices in its range. The leader's login is not limited.
type RateLimit struct {
	// Messages per second, and how many may come at once above that.
	Messages float64
	Burst    int
	// Bytes per second, and how many may come at once above that. A
	// message is let through whenever the bucket is not in debt, however
	// large (MaxPacketSize bounds it), and leaves the bucket that much
	// lower: ByteBurst need not exceed the largest message.
	Bytes     float64
	ByteBurst int
}

// DefaultRateLimit is the default of BrokerOptions.RateLimit. A fleetsim
// worker sends a heartbeat every 5 s by default, telemetry as configured
// (the shipped scenarios: every 1.5 s or slower), an ack per command and
// a sync request per connect: under one message a second. When it
// reconnects it says online, asks for a sync and sends the telemetry it
// kept while away, one message per round trip to the leader. 20 messages
// a second is ten times the busiest shipped profile; the burst of 200
// covers a reconnect with a backlog and a wave of commands answered at
// once (docs/BENCHMARKS.md, inbound rate limits, has the measurement).
// 64 KiB/s with a 1 MiB burst lets a worker send a 64 KiB envelope every
// second, sixteen at once.
var DefaultRateLimit = RateLimit{Messages: 20, Burst: 200, Bytes: 64 << 10, ByteBurst: 1 << 20}

func (r RateLimit) withDefaults() RateLimit {
	d := DefaultRateLimit
	if r.Messages == 0 {
		r.Messages = d.Messages
	}
	if r.Burst <= 0 {
		r.Burst = d.Burst
	}
	if r.Bytes == 0 {
		r.Bytes = d.Bytes
	}
	if r.ByteBurst <= 0 {
		r.ByteBurst = d.ByteBurst
	}
	return r
}

func (r RateLimit) validate() error {
	if math.IsNaN(r.Messages) || math.IsInf(r.Messages, 0) || math.IsNaN(r.Bytes) || math.IsInf(r.Bytes, 0) {
		return fmt.Errorf("broker: RateLimit %+v: rates must be finite numbers (negative: no limit)", r)
	}
	return nil
}

// String says r as a log line or an error gives it.
func (r RateLimit) String() string {
	s := "no message limit"
	if r.Messages >= 0 {
		s = fmt.Sprintf("%g messages/s (burst %d)", r.Messages, r.Burst)
	}
	if r.Bytes >= 0 {
		return s + fmt.Sprintf(", %g bytes/s (burst %d)", r.Bytes, r.ByteBurst)
	}
	return s + ", no byte limit"
}

// scaled is r for n devices, as the bucket uses it: rates and bursts
// times n, +Inf for a bucket turned off.
func (r RateLimit) scaled(n float64) bucketLimit {
	l := bucketLimit{msgRate: math.Inf(1), msgBurst: math.Inf(1), byteRate: math.Inf(1), byteBurst: math.Inf(1)}
	if r.Messages >= 0 {
		l.msgRate, l.msgBurst = r.Messages*n, float64(r.Burst)*n
	}
	if r.Bytes >= 0 {
		l.byteRate, l.byteBurst = r.Bytes*n, float64(r.ByteBurst)*n
	}
	return l
}

type bucketLimit struct{ msgRate, msgBurst, byteRate, byteBurst float64 }

// bucket is one client id's allowance, shared by its connections (a
// reconnect does not refill it). Its counts are float64: a gateway's
// burst in bytes can pass what an int64 of nanotokens holds.
type bucket struct {
	id string

	mu      sync.Mutex
	lim     bucketLimit
	devices float64       // what lim was scaled by
	last    time.Duration // clock.Mono of the last refill
	msgs    float64
	bytes   float64 // may go below 0: a message larger than what is left
	drops   uint64  // dropped since the last log line
	logged  bool
	logAt   time.Duration // clock.Mono of the last log line

	refs int // connections attached; rateLimiter.mu
}

// refill brings b's tokens to now; b.mu held.
func (b *bucket) refill(now time.Duration) {
	if dt := now - b.last; dt > 0 {
		s := dt.Seconds()
		b.msgs = min(b.msgs+s*b.lim.msgRate, b.lim.msgBurst)
		b.bytes = min(b.bytes+s*b.lim.byteRate, b.lim.byteBurst)
		b.last = now
	}
}

// take spends one message of size bytes at now, and reports whether it
// may go through. A refusal spends nothing.
func (b *bucket) take(now time.Duration, size int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.msgs < 1 || b.bytes <= 0 {
		b.drops++
		return false
	}
	b.msgs--
	b.bytes -= float64(size)
	return true
}

// full reports whether b has refilled completely by now: forgetting it
// then changes nothing.
func (b *bucket) full(now time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return b.msgs >= b.lim.msgBurst && b.bytes >= b.lim.byteBurst
}

// logDue reports whether a line about b's drops is due (the first, then
// one per interval), how many drops it covers and the devices b is for.
func (b *bucket) logDue(now, every time.Duration) (due bool, drops uint64, devices float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.logged && now-b.logAt < every {
		return false, 0, 0
	}
	drops = b.drops
	b.drops, b.logged, b.logAt = 0, true, now
	return true, drops, b.devices
}

// rateLimiter holds the buckets of the clients logged in over TCP, by
// client id, and drops what a client publishes over its bucket. The
// buckets are kept past a disconnect until they have refilled, so that
// reconnecting does not buy a fresh burst.
type rateLimiter struct {
	clk     clock.Clock
	per     RateLimit // one device's
	every   time.Duration
	lim     *ratelog.Limiter
	log     *slog.Logger
	dropped *atomic.Uint64 // Stats.RateLimited

	mu       sync.Mutex
	byID     map[string]*bucket
	sweepAt  int // sweep the buckets no connection holds once there are this many
	minSweep int
}

// newRateLimiter returns the limiter for per, or nil if per limits
// nothing. It counts drops in dropped and logs them on log through lim,
// one line per client per every at most.
func newRateLimiter(clk clock.Clock, per RateLimit, every time.Duration, lim *ratelog.Limiter, log *slog.Logger, dropped *atomic.Uint64) *rateLimiter {
	if per.Messages < 0 && per.Bytes < 0 {
		return nil
	}
	return &rateLimiter{clk: clk, per: per, every: every, lim: lim, log: log, dropped: dropped,
		byID: make(map[string]*bucket), sweepAt: 1024, minSweep: 1024}
}

// devices is how many devices a login speaks for: a gateway's range, one
// for anyone else, and 0 for a login that is not limited: the leader's,
// and (without Auth, where nothing is proven) a client that gave no
// username, whose role the broker cannot tell.
func devices(username string) float64 {
	switch {
	case username == wire.LeaderUsername || username == "":
		return 0
	case wire.IsGatewayUsername(username):
		if _, r, err := wire.ParseGatewayUsername(username); err == nil && r.Last >= r.First {
			return float64(r.Last-r.First) + 1
		}
	}
	return 1
}

// attach returns the bucket of a session of client id that speaks for n
// devices (n > 0), creating it full, or rescaling the one its earlier
// sessions left (a gateway may come back with another range).
func (r *rateLimiter) attach(id string, n float64) *bucket {
	lim := r.per.scaled(n)
	now := r.clk.Mono()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.byID[id]
	if b == nil {
		if len(r.byID) >= r.sweepAt {
			r.sweep(now)
		}
		b = &bucket{id: id, lim: lim, devices: n, last: now, msgs: lim.msgBurst, bytes: lim.byteBurst}
		r.byID[id] = b
	} else {
		b.mu.Lock()
		if b.devices != n {
			b.refill(now)
			b.lim, b.devices = lim, n
			b.msgs, b.bytes = min(b.msgs, lim.msgBurst), min(b.bytes, lim.byteBurst)
		}
		b.mu.Unlock()
	}
	b.refs++
	return b
}

// detach lets go of a session's bucket, forgetting it at once if it has
// refilled.
func (r *rateLimiter) detach(b *bucket) {
	now := r.clk.Mono()
	r.mu.Lock()
	defer r.mu.Unlock()
	b.refs--
	if b.refs == 0 && b.full(now) && r.byID[b.id] == b {
		delete(r.byID, b.id)
	}
}

// sweep forgets the buckets no session holds that have refilled, and
// sets the size of the next sweep to twice what is left: amortised, each
// new bucket pays for a constant share of a sweep. r.mu held.
func (r *rateLimiter) sweep(now time.Duration) {
	for id, b := range r.byID {
		if b.refs == 0 && b.full(now) {
			delete(r.byID, id)
		}
	}
	r.sweepAt = max(2*len(r.byID), r.minSweep)
}

// allow reports whether cl's publish pk may go on; a refusal is counted
// and logged (the first drop, then at most one line per client per log
// interval, saying how many it covers).
func (r *rateLimiter) allow(cl *mqtt.Client, pk *packets.Packet) bool {
	lc := limitConnOf(cl.Net.Conn)
	if lc == nil || lc.bucket == nil {
		return true
	}
	b := lc.bucket
	now := r.clk.Mono()
	if b.take(now, len(pk.TopicName)+len(pk.Payload)) {
		return true
	}
	r.dropped.Add(1)
	if due, n, devs := b.logDue(now, r.every); due {
		r.lim.Warn(r.log, "rate limit of "+b.id, "message dropped: over the client's inbound rate limit; further drops are counted",
			"client", b.id, "topic", ratelog.Brief(pk.TopicName, 128), "limit", r.per.String(),
			"devices", devs, "dropped", n)
	}
	return false
}
