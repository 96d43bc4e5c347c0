package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// askSession is what 'leader deploy' needs of its MQTT session (a
// *transport.Session).
type askSession interface {
	Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error
	Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error
}

// The request is sent again reaskFirst after the first copy if no answer
// came, then after twice as long each time, up to reaskCap apart.
const (
	reaskFirst = 2 * time.Second
	reaskCap   = 8 * time.Second
)

// errNoAnswer: no answer came before ctx ended; the request may or may
// not have been carried out.
var errNoAnswer = errors.New("no answer")

// notSentError: the first copy of the request could not be published, so
// no leader got it.
type notSentError struct {
	bytes int
	err   error
}

func (e *notSentError) Error() string {
	return fmt.Sprintf("publish the deploy request: %v (nothing was sent)", e.err)
}
func (e *notSentError) Unwrap() error { return e.err }

// ask publishes req and waits for the leader's answer until ctx ends,
// sending the request again meanwhile (the leader carries out one request
// per id, so a copy never deploys twice). It returns the answer and how
// many copies it sent; errNoAnswer if none came (the outcome is unknown),
// a *notSentError if the first copy could not be published.
func ask(ctx context.Context, sess askSession, topics wire.Topics, req deployRequest) (deployAnswer, int, error) {
	answers := make(chan []byte, 1)
	err := sess.Subscribe(ctx, topics.LeaderDeployReply(req.ID), 1, func(_ string, p []byte) {
		select {
		case answers <- p:
		default: // a copy's answer: the first one is enough
		}
	})
	if err != nil {
		return deployAnswer{}, 0, err
	}
	b, err := json.Marshal(req)
	if err != nil {
		return deployAnswer{}, 0, err
	}
	topic := topics.LeaderDeploy()
	if err := sess.Publish(ctx, topic, 1, false, b); err != nil {
		if ctx.Err() != nil {
			return deployAnswer{}, 1, errNoAnswer // the broker may have taken it
		}
		return deployAnswer{}, 0, &notSentError{bytes: len(b), err: err}
	}
	copies := 1
	wait := reaskFirst
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case p := <-answers:
			var ans deployAnswer
			if err := json.Unmarshal(p, &ans); err != nil {
				return ans, copies, fmt.Errorf("the leader's answer is not JSON: %w", err)
			}
			return ans, copies, nil
		case <-ctx.Done():
			return deployAnswer{}, copies, errNoAnswer
		case <-t.C:
			// A copy that fails to go out is no error: the next may, and
			// the timeout says what it means.
			_ = sess.Publish(ctx, topic, 1, false, b)
			copies++
			wait = min(2*wait, reaskCap)
			t.Reset(wait)
		}
	}
}
