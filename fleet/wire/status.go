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
	// Epoch is the connection's epoch; "" for a status without one (an
	// older worker, or one typed by hand), which keeps its plain meaning.
	Epoch string
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
	return word + " " + s.Epoch
}

// Payload is String as bytes, for a publish or a last will.
func (s Status) Payload() []byte { return []byte(s.String()) }

// ParseStatus reads a status payload received on topic. It is strict: the
// word in lower case, then nothing, or exactly one space and a valid epoch
// (see ValidEpoch); no other whitespace, no trailing newline. Whatever it
// accepts, String gives back byte for byte. An empty payload (a cleared
// retained message) is an error too: the caller decides what it means.
// Every failure is a *DecodeError with Kind ErrBadStatus.
func ParseStatus(topic string, payload []byte) (Status, error) {
	fail := func(format string, a ...any) (Status, error) {
		return Status{}, &DecodeError{Topic: topic, Kind: ErrBadStatus, Detail: fmt.Sprintf(format, a...) +
			` (want "online" or "offline", optionally followed by one space and an epoch of 1 to 64 characters from A-Z a-z 0-9 . _ -)`}
	}
	if len(payload) > len(StatusOffline)+1+MaxEpochLen {
		return fail("%d bytes", len(payload))
	}
	word, epoch, hasEpoch := strings.Cut(string(payload), " ")
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
	if err := ValidEpoch(epoch); err != nil {
		return fail("%v", err)
	}
	s.Epoch = epoch
	return s, nil
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

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
