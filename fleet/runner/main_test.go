package runner

import (
	"testing"

	"go.uber.org/goleak"
)

// Every run stops its broker, leader, workers and paho clients, and every
// goroutine of its own, before Run returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
