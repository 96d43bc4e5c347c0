package transport

import (
	"context"
	"errors"
	"fmt"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// ErrRefused matches a *RefusedError: the broker said no.
var ErrRefused = errors.New("refused by the broker")

// RefusedError is the broker's refusal of a login or a subscription.
// Retrying the same request cannot help: credentials or topics must change.
type RefusedError struct {
	Op    string // "connect" or "subscribe"
	Topic string // the refused filter, for subscribe
	Code  byte   // CONNACK return code (1-5) or SUBACK code (0x80)
	Err   error  // paho's error, for connect
}

func (e *RefusedError) Error() string {
	if e.Op == "subscribe" {
		return fmt.Sprintf("transport: subscribe %q refused by the broker (SUBACK 0x%02x): not allowed for this client", e.Topic, e.Code)
	}
	return fmt.Sprintf("transport: connect refused by the broker (CONNACK %d): %v", e.Code, e.Err)
}

// Is reports whether target is ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Unwrap returns paho's error, if any.
func (e *RefusedError) Unwrap() error { return e.Err }

// Wait waits until tok completes or ctx ends, and returns the operation's
// error. paho's tokens need care, and Wait takes it:
//
//   - a refused login (bad credentials, bad client id) is a *RefusedError
//     (ErrRefused); "server unavailable", a network failure or a timeout
//     is returned as paho reports it;
//   - a refused subscription completes paho's token without an error, with
//     failure code 0x80 in its Result; Wait returns a *RefusedError;
//   - a QoS 0 Publish completes when the message is written to the
//     connection, a QoS 1 Publish at the broker's PUBACK — neither means the
//     message reached a subscriber;
//   - if ctx ends first Wait returns ctx's error, and the operation may
//     still complete.
func Wait(ctx context.Context, tok paho.Token) error {
	select {
	case <-tok.Done():
	case <-ctx.Done():
		return fmt.Errorf("transport: wait: %w (the operation may still complete)", ctx.Err())
	}
	switch t := tok.(type) {
	case *paho.ConnectToken:
		if err := connectError(t); err != nil {
			return err
		}
	case *paho.SubscribeToken:
		if t.Error() == nil {
			for topic, code := range t.Result() {
				if code > 2 {
					return &RefusedError{Op: "subscribe", Topic: topic, Code: code}
				}
			}
		}
	}
	return tok.Error()
}

// connectError is a completed connect token's error, a *RefusedError when
// the broker refused the login (bad credentials, bad client id); 3,
// server unavailable (too many clients), may pass and is not a refusal.
func connectError(t *paho.ConnectToken) error {
	switch rc := t.ReturnCode(); rc {
	case packets.ErrRefusedBadProtocolVersion, packets.ErrRefusedIDRejected,
		packets.ErrRefusedBadUsernameOrPassword, packets.ErrRefusedNotAuthorised:
		return &RefusedError{Op: "connect", Code: rc, Err: t.Error()}
	}
	return t.Error()
}
