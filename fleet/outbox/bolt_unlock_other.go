//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package outbox

import "os"

// unlockFile is a no-op where bbolt does not lock with flock; closing the
// file is all OpenBolt can do after a panic there.
func unlockFile(*os.File) {}
