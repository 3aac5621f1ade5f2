//go:build !unix

package procstat

import "time"

// SelfCPU is 0 where getrusage is not available.
func SelfCPU() time.Duration { return 0 }
