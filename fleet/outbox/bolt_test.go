package outbox_test

import (
	"path/filepath"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// openBolt opens a fresh bbolt store in the test's temp dir.
func openBolt(d outbox.Durability) opener {
	return func(t *testing.T, o outbox.Options) outbox.Store {
		t.Helper()
		o.Durability = d
		s, err := outbox.OpenBolt(filepath.Join(t.TempDir(), "outbox.db"), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestBoltContract(t *testing.T) {
	for _, d := range []outbox.Durability{outbox.Sync, outbox.Batch, outbox.None} {
		t.Run(d.String(), func(t *testing.T) { runContract(t, openBolt(d)) })
	}
}
