package fleettest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every end-to-end test stops the broker, the leader, every worker and
// every paho client it started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
