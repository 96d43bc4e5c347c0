package wire

import (
	"errors"
	"fmt"
	"strings"
)

// Status payloads on status topics (retained), alone or followed by a
// space and an epoch.
const (
	StatusOnline  = "online"
	StatusOffline = "offline"
)

// MaxEpochLen bounds an epoch.
const MaxEpochLen = 64

// ErrBadStatus: a status payload is neither "online" nor "offline", with or
// without one epoch. It is the Kind of the *DecodeError ParseStatus returns.
var ErrBadStatus = errors.New("malformed status")

// ErrNoEpoch: a worker's, a device's or a gateway's status without an
// epoch ("online", "offline"). Well formed, but it names no connection:
// the leader cannot tell whether it speaks for the live one, so it does
// not honour it (see ParseEpochStatus). It is the Kind of the
// *DecodeError ParseEpochStatus returns.
var ErrNoEpoch = errors.New("status without an epoch")

// Status is what a worker's retained status topic says: online or offline,
// and the epoch of the connection that said it.
//
// An epoch names one connection of a worker: the worker picks a new one for
// every connection attempt and puts it in both the "online" it publishes
// after connecting and the "offline" of that connection's last will. A
// broker may publish an old connection's will after the new connection's
// "online" (it drops the old connection only at a session takeover or when
// its keepalive runs out, and publishes the will when it gets to it); the
// epoch lets the leader see that this "offline" speaks for a connection
// that is already gone, and ignore it. Epochs are only compared for
// equality, never ordered, so no two clocks need to agree.
type Status struct {
	Online bool
	// Epoch is the connection's epoch; "" for a status without one: the
	// leader's own status, or one the leader does not honour (see
	// ParseEpochStatus).
	Epoch string
	// Via names the gateway that announced this status for a device
	// behind it ("online <epoch> via <gateway>"); "" for a worker with its
	// own session. A status with Via has an epoch.
	Via string
}

// String is the status as it goes on the wire: "online", "offline",
// "online <epoch>" or "offline <epoch>".
func (s Status) String() string {
	word := StatusOffline
	if s.Online {
		word = StatusOnline
	}
	if s.Epoch == "" {
		return word
	}
	if s.Via != "" {
		return word + " " + s.Epoch + " " + statusVia + " " + s.Via
	}
	return word + " " + s.Epoch
}

// statusVia separates a device's epoch from its gateway's id.
const statusVia = "via"

// Payload is String as bytes, for a publish or a last will.
func (s Status) Payload() []byte { return []byte(s.String()) }

// ParseStatus reads a status payload received on topic. It is strict: the
// word in lower case, then nothing, or exactly one space and a valid epoch
// (see ValidEpoch), optionally followed by " via " and a gateway id (see
// ValidGatewayID); no other whitespace, no trailing newline. Whatever it
// accepts, String gives back byte for byte. An empty payload (a cleared
// retained message) is an error too: the caller decides what it means.
// Every failure is a *DecodeError with Kind ErrBadStatus.
func ParseStatus(topic string, payload []byte) (Status, error) {
	fail := func(format string, a ...any) (Status, error) {
		return Status{}, &DecodeError{Topic: topic, Kind: ErrBadStatus, Detail: fmt.Sprintf(format, a...) +
			` (want "online" or "offline", optionally followed by one space and an epoch of 1 to 64 characters from A-Z a-z 0-9 . _ -,` +
			` and for a device behind a gateway " via " and the gateway's id)`}
	}
	if len(payload) > len(StatusOffline)+1+MaxEpochLen+1+len(statusVia)+1+MaxIDLen {
		return fail("%d bytes", len(payload))
	}
	word, rest, hasEpoch := strings.Cut(string(payload), " ")
	var s Status
	switch word {
	case StatusOnline:
		s.Online = true
	case StatusOffline:
	default:
		return fail("%q", payload)
	}
	if !hasEpoch {
		return s, nil
	}
	epoch, via, hasVia := strings.Cut(rest, " ")
	if err := ValidEpoch(epoch); err != nil {
		return fail("%v", err)
	}
	s.Epoch = epoch
	if !hasVia {
		return s, nil
	}
	gw, ok := strings.CutPrefix(via, statusVia+" ")
	if !ok {
		return fail("%q after the epoch", via)
	}
	if err := ValidGatewayID(gw); err != nil {
		return fail("%v", err)
	}
	s.Via = gw
	return s, nil
}

// ParseEpochStatus is ParseStatus for the statuses the leader acts on (a
// worker's, a device's, a gateway's own): an epoch is required, and a
// status without one is a *DecodeError with Kind ErrNoEpoch. A plain
// "offline", retained or not, would otherwise take a live worker offline
// with nothing to tell it from the will of a connection long gone; only
// the leader's own status is plain.
func ParseEpochStatus(topic string, payload []byte) (Status, error) {
	s, err := ParseStatus(topic, payload)
	if err == nil && s.Epoch == "" {
		return Status{}, &DecodeError{Topic: topic, Kind: ErrNoEpoch, Detail: fmt.Sprintf(
			"%q names no connection (want %q or %q followed by one space and the connection's epoch)", payload, StatusOnline, StatusOffline)}
	}
	return s, err
}

// ValidEpoch checks an epoch: 1 to 64 characters from A-Z a-z 0-9 . _ -
// (the characters of a worker id, so that it needs no quoting in a shell
// and no escaping anywhere).
func ValidEpoch(e string) error {
	if e == "" || len(e) > MaxEpochLen {
		return fmt.Errorf("epoch %q: must be 1 to %d characters", e, MaxEpochLen)
	}
	for i := 0; i < len(e); i++ {
		if !idChar(e[i]) {
			return fmt.Errorf("epoch %q: character %q not allowed (use A-Z a-z 0-9 . _ -)", e, e[i])
		}
	}
	return nil
}

// topicIDChar reports whether c may appear in an id that becomes a topic
// level (a worker, gateway or deploy request id): idChar's characters but
// ".", which a broker that maps MQTT topics to AMQP routing keys (RabbitMQ)
// turns into a level separator, so that fleet/dev.x.1/status arrives as
// fleet/dev/x/1/status and the worker is never heard.
func topicIDChar(c byte) bool { return c != '.' && idChar(c) }

// topicIDChars says which characters topicIDChar allows, for errors.
const topicIDChars = `use A-Z a-z 0-9 _ -; not ".", which brokers mapping MQTT to AMQP, as RabbitMQ does, turn into a topic level`

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
