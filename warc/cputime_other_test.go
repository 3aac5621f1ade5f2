//go:build !unix

package warc

import "time"

// processCPU is not measured on this platform; benchmarks report 0.
func processCPU() time.Duration { return 0 }
