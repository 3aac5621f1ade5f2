package crawl

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// procLoad reads the governor's loadSample from /proc/stat, the process's rusage, the
// browser's processes and the crawler's worker counters.
type procLoad struct{ c *Crawler }

// cpuTimer is the renderer's side of the reading: *render.Renderer has it.
type cpuTimer interface{ CPUTime() time.Duration }

func (p procLoad) sample() loadSample {
	idle, total, ok := machineCPU()
	if !ok {
		return loadSample{}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return loadSample{}
	}
	s := loadSample{ok: true, idle: idle, total: total, crawl: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		workers: int(p.c.workersRunning.Load()), waiting: int(p.c.workersWaiting.Load())}
	if t, ok := p.c.rs.r.(cpuTimer); ok {
		s.render = t.CPUTime()
	}
	return s
}

// machineCPU is the machine's idle (idle and iowait) and total CPU time over all cores,
// from the first line of /proc/stat (in USER_HZ ticks, 100 a second).
func machineCPU() (idle, total time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 6 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	var sum int64
	for i, v := range f[1:min(len(f), 9)] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		sum += n
		if i == 3 || i == 4 {
			idle += time.Duration(n) * time.Second / 100
		}
	}
	return idle, time.Duration(sum) * time.Second / 100, true
}
