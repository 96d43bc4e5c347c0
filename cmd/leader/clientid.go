package main

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
)

// maxClientIDLen bounds --client-id; every broker fleetsim names accepts
// far longer ids.
const maxClientIDLen = 128

// newClientID returns a client id for this leader process: "_leader-" and
// 16 random hex digits. It comes from crypto/rand, not from --seed, on
// purpose: two leaders started with the same seed must still not share an
// id, or one's login takes the other's session over at the broker.
func newClientID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return "_leader-" + hex.EncodeToString(b[:])
}

// validClientID checks a --client-id that was given. It must start with "_": a worker id
// never does, so no worker can log in with the leader's client id and
// take its session over, whatever its credentials.
func validClientID(id string) error {
	bad := len(id) > maxClientIDLen || id[0] != '_'
	for i := 0; i < len(id) && !bad; i++ {
		c := id[i]
		bad = !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if bad {
		return cli.Usagef("--client-id %q: want 1 to %d characters from A-Z a-z 0-9 . _ - starting with _ (worker ids never start with _), e.g. _leader-eu1 (default: a random _leader-<16 hex digits>)", id, maxClientIDLen)
	}
	return nil
}
