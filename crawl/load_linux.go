package crawl

import (
	"syscall"
	"time"

	"github.com/sonda-search/sonda/internal/procstat"
)

// procLoad reads the governor's loadSample from /proc/stat, the process's rusage, the
// browser's processes and the crawler's worker counters.
type procLoad struct{ c *Crawler }

// cpuTimer is the renderer's side of the reading: *render.Renderer has it.
type cpuTimer interface{ CPUTime() time.Duration }

func (p procLoad) sample() loadSample {
	busy, total := procstat.MachineCPU()
	if total <= 0 {
		return loadSample{}
	}
	idle := total - busy
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
