package crawl

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"
)

// loadScript is a loadSignal a test drives: each sample advances the machine's clock by
// one governEvery on 2 cores, idle or busy as set, and the crawl's and the browser's CPU by
// what is set per sample.
type loadScript struct {
	mu               sync.Mutex
	idleShare        float64
	crawlStep        time.Duration // the crawl's CPU per sample
	renderStep       time.Duration // the browser's CPU per sample
	workers, waiting int
	broken           bool // sample reports nothing readable
	idle, total      time.Duration
	crawl, render    time.Duration
	samples          int
	sampled          chan struct{} // closed and replaced at each sample
}

func newLoadScript(idleShare float64, workers, waiting int) *loadScript {
	return &loadScript{idleShare: idleShare, workers: workers, waiting: waiting, sampled: make(chan struct{})}
}

func (l *loadScript) sample() loadSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples++
	close(l.sampled)
	l.sampled = make(chan struct{})
	if l.broken {
		return loadSample{}
	}
	step := 2 * governEvery
	l.total += step
	l.idle += time.Duration(l.idleShare * float64(step))
	l.crawl += l.crawlStep
	l.render += l.renderStep
	return loadSample{ok: true, idle: l.idle, total: l.total, crawl: l.crawl, render: l.render, workers: l.workers, waiting: l.waiting}
}

func (l *loadScript) set(f func(l *loadScript)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l)
}

// admitted counts how many of n renders g lets start now.
func admitted(g *renderGovernor, n int) int {
	k := 0
	for i := 0; i < n; i++ {
		if ok, _ := g.tryAdmit(); ok {
			k++
		}
	}
	return k
}

// TestRenderGovernor steps the governor through readings and checks which renders it lets
// start: freely (up to the tabs) with idle CPU, while fetching waits for politeness, with
// no worker left or where the load cannot be read; under saturation one at a time and
// only once the budget (share of the crawl's CPU) holds a render's expected cost.
func TestRenderGovernor(t *testing.T) {
	t.Run("no render before the first judgement", func(t *testing.T) {
		g := newRenderGovernor(0.1, 2, newLoadScript(1, 8, 0))
		g.step(g.signal.sample()) // primes only
		if n := admitted(g, 2); n != 0 {
			t.Fatalf("%d renders admitted before the load was judged", n)
		}
		g.step(g.signal.sample())
		if n := admitted(g, 3); n != 2 {
			t.Fatalf("idle machine: %d renders admitted, want 2 (the tabs)", n)
		}
	})
	free := []struct {
		name string
		load *loadScript
	}{
		{"idle CPU", newLoadScript(0.5, 8, 0)},
		{"fetching waits for politeness", newLoadScript(0, 8, 4)},
		{"no fetch worker left", newLoadScript(0, 0, 0)},
		{"load unreadable", &loadScript{broken: true, sampled: make(chan struct{})}},
	}
	for _, tc := range free {
		t.Run(tc.name, func(t *testing.T) {
			g := newRenderGovernor(0.1, 2, tc.load)
			for i := 0; i < 3; i++ {
				g.step(tc.load.sample())
			}
			if g.saturated {
				t.Fatal("judged saturated")
			}
			if n := admitted(g, 3); n != 2 {
				t.Fatalf("%d renders admitted, want 2 (the tabs)", n)
			}
		})
	}
	t.Run("saturated: within the budget, one at a time", func(t *testing.T) {
		load := newLoadScript(0, 8, 0)
		load.crawlStep = 100 * time.Millisecond
		g := newRenderGovernor(0.1, 2, load)
		g.step(load.sample())
		// The budget fills by 0.1 × 0.1 CPU-s a reading; the first render is expected
		// to cost firstRenderCPU.
		fill := int(math.Round(firstRenderCPU / 0.01))
		for i := 1; i < fill; i++ {
			g.step(load.sample())
			if !g.saturated {
				t.Fatalf("reading %d: not judged saturated", i)
			}
			if n := admitted(g, 1); n != 0 {
				t.Fatalf("reading %d: a render admitted with %.3f CPU-s in the budget", i, g.tokens)
			}
		}
		g.step(load.sample())
		if n := admitted(g, 2); n != 1 {
			t.Fatalf("budget full (%.3f CPU-s): %d renders admitted, want 1 (one at a time)", g.tokens, n)
		}
		// The render costs 1.5 × firstRenderCPU, charged as it runs (in two readings).
		spent := 1.5 * firstRenderCPU
		load.set(func(l *loadScript) { l.renderStep = time.Duration(spent / 2 * float64(time.Second)) })
		g.step(load.sample())
		g.step(load.sample())
		load.set(func(l *loadScript) { l.renderStep = 0 })
		g.finish()
		if math.Abs(g.cost()-spent) > 0.01 {
			t.Fatalf("expected cost %.3f CPU-s after one render of %.3f, want that", g.cost(), spent)
		}
		if g.tokens >= g.cost() {
			t.Fatalf("the render's CPU was not charged: %.3f CPU-s left", g.tokens)
		}
		for i := 0; g.tokens < g.cost(); i++ {
			if n := admitted(g, 1); n != 0 {
				t.Fatalf("a render admitted with %.3f CPU-s in the budget, want ≥ %.3f", g.tokens, g.cost())
			}
			g.step(load.sample())
			if i > 10*fill {
				t.Fatal("the budget does not fill")
			}
		}
		if n := admitted(g, 1); n != 1 {
			t.Fatalf("budget refilled (%.3f CPU-s): %d renders admitted, want 1", g.tokens, n)
		}
		g.finish()
		// The machine frees: after governSteps readings the average idle share is above
		// saturatedIdle and renders start freely again, whatever the budget.
		load.set(func(l *loadScript) { l.idleShare = 1; l.renderStep = time.Second })
		for i := 0; i < governSteps; i++ {
			g.step(load.sample())
		}
		if n := admitted(g, 2); n != 2 {
			t.Fatalf("machine idle: %d renders admitted, want 2 (budget %.3f CPU-s)", n, g.tokens)
		}
	})
	t.Run("CPU-bound with fewer hosts than workers", func(t *testing.T) {
		load := newLoadScript(0, 8, 3) // 5 hosts at hand, 3 workers without one
		g := newRenderGovernor(0.1, 2, load)
		for i := 0; i < 3; i++ {
			g.step(load.sample())
		}
		if !g.saturated {
			t.Fatal("not judged saturated")
		}
		if n := admitted(g, 1); n != 0 {
			t.Fatalf("%d renders admitted with an empty budget", n)
		}
	})
	t.Run("a new browser's counter starts again", func(t *testing.T) {
		load := newLoadScript(0, 8, 0)
		g := newRenderGovernor(0.1, 2, load)
		load.render = 10 * time.Second
		g.step(load.sample())
		load.render = 300 * time.Millisecond // the browser was replaced
		g.step(load.sample())
		if g.spent < 0.29 || g.spent > 0.31 {
			t.Fatalf("spent %.3f CPU-s, want 0.3 (the new browser's)", g.spent)
		}
	})
}

// TestRendersWaitForCPUBoundFetching: with render.mode auto on a mixed web, while the
// machine has no idle CPU and the fetch workers have work, no render starts (the budget
// is empty: the scripted crawl uses no CPU); the static half is crawled meanwhile, and
// the pages handed to renders wait with their leases. When the CPU frees, they are all
// rendered and the crawl ends. Without the governor a page handed over starts rendering
// at once: the test fails (the crawl ends, or a render starts, while the CPU is saturated).
func TestRendersWaitForCPUBoundFetching(t *testing.T) {
	w, cfg := smallMixedWeb(t)
	half := watchStaticHalf(t, w)
	load := newLoadScript(0, 2, 0) // saturated, workers busy
	renders := &heldRenderer{release: make(chan struct{})}
	close(renders.release) // renders end at once: only their start is under test
	c, err := New(cfg, WithRenderer(renders), WithSinks(half), func(c *Crawler) { c.rs.signal = load })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a hang guard
	defer cancel()
	done := runAsync(ctx, c)
	handed := func() int64 {
		c.rs.mu.Lock()
		defer c.rs.mu.Unlock()
		var n int64
		for _, hr := range c.rs.hosts {
			n += hr.handed
		}
		return n
	}
	select {
	case <-half.allIn:
	case r := <-done:
		t.Fatalf("crawl ended while the CPU was saturated: %+v, %v", r.sum, r.err)
	case <-ctx.Done():
		t.Fatal("static half not crawled in 90 s")
	}
	// Pages of the script-built hosts are handed over (the SPA and the portal are seeds);
	// wait for two, then for governSteps more readings of the load, and no render may have
	// started meanwhile.
	for handed() < 2 {
		if renders.started.Load() > 0 {
			t.Fatalf("render started while fetching was CPU-bound (%d handed)", handed())
		}
		select {
		case <-time.After(10 * time.Millisecond): // polling a counter, not a wait for time to pass
		case <-ctx.Done():
			t.Fatalf("%d pages handed to renders, want 2", handed())
		}
	}
	for i := 0; i < governSteps; i++ {
		load.mu.Lock()
		sampled := load.sampled
		load.mu.Unlock()
		select {
		case <-sampled:
		case <-ctx.Done():
			t.Fatal("the load is not read")
		case r := <-done:
			t.Fatalf("crawl ended while the CPU was saturated: %+v, %v", r.sum, r.err)
		}
		if n := renders.started.Load(); n > 0 {
			t.Fatalf("render started while fetching was CPU-bound (%d renders, %d pages handed)", n, handed())
		}
	}
	load.set(func(l *loadScript) { l.idleShare = 1 })
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.Reason != "frontier empty" {
		t.Errorf("crawl stopped: %s", r.sum.Reason)
	}
	if r.sum.Render.Renders < 3 {
		t.Errorf("%d renders, want ≥ 3 (every script-built page, once the CPU freed)", r.sum.Render.Renders)
	}
	if r.sum.Render.Held < 1 {
		t.Errorf("%d renders held, want ≥ 1", r.sum.Render.Held)
	}
}
