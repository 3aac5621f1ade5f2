package crawl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The render governor makes renders yield to fetching when the CPU is what fetching waits
// for. A browser's renders run at a lower CPU priority (render.nice), but Chromium runs
// a dozen busy threads and a thread's priority weighs per thread: on a machine with no
// idle CPU the browser still took about a third of the CPU the crawl of pages that need
// no browser would have had (docs/benchmarks.md). So when the machine is saturated and the
// fetch workers are mostly busy, a render starts only when the renders' CPU budget
// (render.cpu-share of the crawl's CPU, sonda's and the browser's together) has room for
// one more, and one at a time; pages waiting for that keep their leases (their hosts wait)
// like pages waiting for a tab. When the machine has idle CPU, or fetching waits for
// politeness rather than CPU, renders start as soon as a tab is free.

// loadSample is what the governor decides by: cumulative CPU counters and the fetch
// workers' state at one moment.
type loadSample struct {
	ok          bool          // false where the counters cannot be read: renders are not governed
	idle, total time.Duration // the machine's idle and total CPU time, all cores (/proc/stat)
	crawl       time.Duration // this process's CPU time
	render      time.Duration // the browser's CPU time (0 while none runs; restarts from 0 when it is replaced)
	workers     int           // fetch workers running
	waiting     int           // of them, waiting for a URL whose host is due (or for crawl.budget)
}

// loadSignal reads a loadSample: /proc in a crawl (procLoad), a script in tests.
type loadSignal interface {
	sample() loadSample
}

// Governor settings.
const (
	governEvery = 200 * time.Millisecond // how often the load is read
	governSteps = 5                      // the load is judged over this many readings (1s)
	// saturatedIdle: below this share of idle CPU the machine is saturated.
	saturatedIdle = 0.1
	// firstRenderCPU is the cost expected of a render before any was measured: Chromium's
	// start and a first render (render.TestCPUTime: 2 CPU-s on a busy 2-core machine).
	firstRenderCPU = 2.0
)

// renderGovernor admits renders (see above). Its budget is a token bucket in CPU-seconds:
// it fills with share × (crawl + render CPU) and empties by the browser's CPU, so over a
// saturated stretch the renders take at most share of the crawl's CPU; a render is admitted
// when the bucket holds what a render has cost on average (its start included).
type renderGovernor struct {
	share  float64
	tabs   int // renders admitted at most at once: admission is a tab's start
	signal loadSignal

	held atomic.Int64 // renders that waited for the budget

	mu        sync.Mutex
	wake      chan struct{} // closed at each step: waiting renders look again
	last      loadSample
	primed    bool
	judged    bool                 // a step judged saturation: until then no render starts
	idle      [governSteps]float64 // the machine's idle share at each of the last steps
	waiting   [governSteps]int     // waiting workers at each of the last steps
	steps     int
	saturated bool
	tokens    float64 // CPU-seconds the renders may still use while saturated (negative: debt)
	spent     float64 // the browser's CPU-seconds since the crawl began
	finished  int64   // renders finished
	running   int     // renders admitted and not finished
}

func newRenderGovernor(share float64, tabs int, signal loadSignal) *renderGovernor {
	return &renderGovernor{share: share, tabs: max(1, tabs), signal: signal, wake: make(chan struct{})}
}

// run reads the load every governEvery until ctx ends; stop waits for it to end.
func (g *renderGovernor) run(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(governEvery)
		defer t.Stop()
		for {
			g.step(g.signal.sample())
			select {
			case <-t.C:
			case <-ctx.Done():
				g.step(loadSample{}) // no longer governed: waiting renders start
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// cost is the CPU a render is expected to take: the browser's CPU so far over the renders
// finished, or firstRenderCPU before the first.
func (g *renderGovernor) cost() float64 {
	if g.finished == 0 || g.spent <= 0 {
		return firstRenderCPU
	}
	return g.spent / float64(g.finished)
}

// step takes a reading: it fills the bucket, judges saturation and wakes waiting renders.
func (g *renderGovernor) step(s loadSample) {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() {
		close(g.wake)
		g.wake = make(chan struct{})
	}()
	if !s.ok {
		g.saturated, g.primed, g.judged = false, false, true
		return
	}
	if !g.primed {
		g.last, g.primed = s, true
		return
	}
	dTotal, dIdle := (s.total - g.last.total).Seconds(), (s.idle - g.last.idle).Seconds()
	dCrawl, dRender := max(0, (s.crawl-g.last.crawl).Seconds()), (s.render - g.last.render).Seconds()
	if dRender < 0 { // a new browser: its counter starts again
		dRender = s.render.Seconds()
	}
	g.last = s
	g.spent += dRender
	limit := 2 * g.cost()
	g.tokens = min(limit, max(-limit, g.tokens+g.share*(dCrawl+dRender)-dRender))

	idle := 1.0
	if dTotal > 0 {
		idle = dIdle / dTotal
	}
	g.idle[g.steps%governSteps], g.waiting[g.steps%governSteps] = idle, s.waiting
	g.steps++
	n := min(g.steps, governSteps)
	var idleSum float64
	waitSum := 0
	for i := 0; i < n; i++ {
		idleSum += g.idle[i]
		waitSum += g.waiting[i]
	}
	// Fetching waits for the CPU when fewer than half the workers waited for a due host on
	// average (with fewer hosts at hand than workers some wait even when CPU-bound); with
	// no worker left (the frontier is drained) the renders are all that is left to do.
	g.saturated = s.workers > 0 && idleSum/float64(n) < saturatedIdle && 2*waitSum < n*s.workers
	g.judged = true
}

// tryAdmit admits a render if the governor lets one start now.
func (g *renderGovernor) tryAdmit() (ok bool, wake <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.judged || g.running >= g.tabs || g.saturated && (g.running > 0 || g.tokens < g.cost()) {
		return false, g.wake
	}
	g.running++
	return true, nil
}

// admit waits until a render may start; every nil return must be followed by finish.
func (g *renderGovernor) admit(ctx context.Context) error {
	for waited := false; ; waited = true {
		ok, wake := g.tryAdmit()
		if ok {
			if waited {
				g.held.Add(1)
			}
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finish ends an admitted render: the next may start.
func (g *renderGovernor) finish() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	g.finished++
	close(g.wake)
	g.wake = make(chan struct{})
}
