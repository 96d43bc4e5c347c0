package clock_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A Virtual clock's advancer stops when the last running clock stops.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
