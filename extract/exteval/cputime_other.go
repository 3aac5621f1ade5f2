//go:build !unix

package exteval

import "time"

// cpuTime is unknown on this platform; rates per CPU second are then reported as 0.
func cpuTime() time.Duration { return 0 }
