// Package procstat reads process and machine figures from /proc (resident set sizes, CPU
// time, the machine's busy time and load average), for benchmarks that report them beside
// wall-clock figures, so that a reader can tell what a run cost from what it waited for,
// and for the crawl's render governor, which holds renders back while the machine has no
// idle CPU. SampleHeap watches the Go heap instead.
package procstat

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
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

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on every Linux architecture Go
// supports (it is fixed by the kernel ABI, whatever the kernel's own HZ).
const clockTick = 10 * time.Millisecond

// CPUOf is the CPU time (user plus system, all threads, including those that have ended)
// process pid has used, at /proc's resolution of 10 ms; 0 when it cannot be read.
func CPUOf(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces: count fields
	// after its closing one. utime and stime are fields 14 and 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * clockTick
}

// MachineCPU is the CPU time all the machine's cores have been busy (every state but idle
// and I/O wait) and their total time, since boot; zeros when /proc/stat cannot be read.
// Between two readings, busy/total is how busy the machine was.
func MachineCPU() (busy, total time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	// user nice system idle iowait irq softirq steal (guest times are inside user and nice).
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0
		}
		total += time.Duration(n) * clockTick
		if i != 3 && i != 4 {
			busy += time.Duration(n) * clockTick
		}
	}
	return busy, total
}

// LoadAverage is the machine's 1-, 5- and 15-minute load averages as /proc/loadavg
// writes them ("" when it cannot be read).
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// SampleHeap samples the Go heap in use every interval until the returned function is
// called, which returns the highest value seen (bytes). Benchmarks use it where the RSS
// would also count mapped files.
func SampleHeap(every time.Duration) (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}
