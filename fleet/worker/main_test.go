package worker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops its worker, its broker and every paho client it started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
