package flow_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want flow.Class
	}{
		{"nil", nil, flow.OK},
		{"capacity", flow.Capacity(time.Second, "mailbox full"), flow.Backpressure},
		{"wrapped capacity", fmt.Errorf("ask w1: %w", flow.Capacity(0, "")), flow.Backpressure},
		{"transient", flow.Transient(context.DeadlineExceeded), flow.Retry},
		{"permanent", flow.Permanent(errors.New("bad payload")), flow.Reject},
		{"wrapped permanent", fmt.Errorf("x: %w", flow.Permanent(errors.New("y"))), flow.Reject},
		{"unknown error is retried", errors.New("something"), flow.Retry},
		{"permanent wins over capacity", errors.Join(flow.Capacity(0, ""), flow.Permanent(errors.New("p"))), flow.Reject},
		{"capacity wins over transient", errors.Join(flow.Transient(errors.New("t")), flow.Capacity(0, "")), flow.Backpressure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := flow.Classify(tc.err); got != tc.want {
				t.Fatalf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestTypedErrorsWorkWithErrorsAsAndIs(t *testing.T) {
	err := fmt.Errorf("deliver: %w", flow.Capacity(250*time.Millisecond, "mailbox full"))
	var ce *flow.CapacityError
	if !errors.As(err, &ce) || ce.RetryAfter != 250*time.Millisecond {
		t.Fatalf("errors.As(capacity) = %v, %+v", errors.As(err, &ce), ce)
	}
	if !errors.Is(err, flow.ErrCapacity) || errors.Is(err, flow.ErrTransient) {
		t.Fatal("errors.Is does not match the capacity sentinel alone")
	}
	if ra, ok := flow.RetryAfter(err); !ok || ra != 250*time.Millisecond {
		t.Fatalf("RetryAfter = %v %v", ra, ok)
	}
	cause := context.DeadlineExceeded
	tr := flow.Transient(cause)
	if !errors.Is(tr, cause) || !errors.Is(tr, flow.ErrTransient) {
		t.Fatal("Transient does not unwrap to its cause or match ErrTransient")
	}
	if _, ok := flow.RetryAfter(tr); ok {
		t.Fatal("RetryAfter found a hint in a transient error")
	}
}

func ExampleClassify() {
	for _, err := range []error{
		nil,
		flow.Capacity(time.Second, "mailbox full"),
		flow.Transient(context.DeadlineExceeded),
		flow.Permanent(errors.New("malformed")),
	} {
		fmt.Println(flow.Classify(err))
	}
	// Output:
	// ok
	// backpressure
	// retry
	// reject
}
