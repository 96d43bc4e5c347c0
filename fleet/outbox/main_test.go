package outbox_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// relay promises that Run returns only after everything it started has.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
