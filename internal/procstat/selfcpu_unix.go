//go:build unix

package procstat

import (
	"syscall"
	"time"
)

// SelfCPU is the CPU time (user plus system) this process has used, at getrusage's
// microsecond resolution (CPUOf reads /proc's 10 ms ticks): what a timing test or a
// benchmark compares, since on a shared machine wall time mostly measures the neighbours.
// 0 when it cannot be read.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
