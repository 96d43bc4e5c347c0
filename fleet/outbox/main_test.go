package outbox_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: a store's Close waits for its
// calls, and bbolt's group commit must have finished its batches.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
