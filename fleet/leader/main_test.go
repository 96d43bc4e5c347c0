package leader_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops its leader, and with it every goroutine Run started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
