package render

import (
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ: 100 on every Linux
// architecture Go supports).
const userHZ = 100

// treeEvery is how long the list of a browser's processes is reused before /proc is
// scanned again: Chromium starts its renderer processes early and keeps them.
const treeEvery = time.Second

// CPUTime is the CPU time (user and system) the current browser's processes have used so
// far, children that exited included, read from /proc: what a crawl weighs the renders'
// share of the CPU by. It is 0 when no browser runs or where /proc is missing, and starts
// again from 0 when the browser is replaced.
func (r *Renderer) CPUTime() time.Duration {
	r.mu.Lock()
	inst := r.cur
	r.mu.Unlock()
	if inst == nil || inst.pid <= 0 {
		return 0
	}
	inst.cpuMu.Lock()
	defer inst.cpuMu.Unlock()
	if now := time.Now(); now.Sub(inst.treeAt) > treeEvery {
		inst.tree, inst.treeAt = processTree(inst.pid), now
	}
	var ticks int64
	for _, p := range inst.tree {
		ticks += processCPU(p)
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// processCPU is one process's CPU time in clock ticks: utime, stime, cutime and cstime
// from /proc/<pid>/stat (0 when it is gone).
func processCPU(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := statFields(b) // f[0] is field 3 (state): utime is field 14
	if len(f) < 15 {
		return 0
	}
	var n int64
	for _, v := range f[11:15] {
		t, _ := strconv.ParseInt(string(v), 10, 64)
		n += t
	}
	return n
}
