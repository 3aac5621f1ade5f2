// Package procstat reads the process's own memory figures from /proc, for benchmarks that
// report resident set sizes.
package procstat

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// RSS is the current resident set size in bytes (0 where /proc is unavailable).
func RSS() int64 { return field("self", "VmRSS") }

// PeakRSS is the largest resident set size the process has had, in bytes.
func PeakRSS() int64 { return field("self", "VmHWM") }

// RSSOf is the current resident set size of process pid (a server a load test drives),
// in bytes; 0 when it cannot be read.
func RSSOf(pid int) int64 { return field(strconv.Itoa(pid), "VmRSS") }

// field reads a "Name:   1234 kB" line of /proc/PROC/status, in bytes.
func field(proc, name string) int64 {
	f, err := os.Open("/proc/" + proc + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if ok && key == name {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
