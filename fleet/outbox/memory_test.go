package outbox_test

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

func openMemory(t *testing.T, o outbox.Options) outbox.Store {
	t.Helper()
	s, err := outbox.NewMemory(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMemoryContract(t *testing.T) { runContract(t, openMemory) }
