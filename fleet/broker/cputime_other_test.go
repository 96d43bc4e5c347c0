//go:build !unix

package broker

import "time"

// cpuTime is not measured here: idleCPU% reads 0.
func cpuTime() time.Duration { return 0 }
