package control

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops its server, and with it the goroutine Run serves on.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
