package broker

import (
	"testing"

	"go.uber.org/goleak"
)

// The broker, its listeners, the in-memory connections and the paho clients
// all stop their goroutines; none may be left when the tests end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
