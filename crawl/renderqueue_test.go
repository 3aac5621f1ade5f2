package crawl

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/render"
	"github.com/sonda-search/sonda/testweb"
)

// heldRenderer is a browser as slow as a test wants: each render waits until release is
// closed, then hands back the page as it came (the scheduling is what is under test).
type heldRenderer struct {
	release chan struct{}
	started atomic.Int64 // renders asked for
	renders atomic.Int64 // renders done
}

func (h *heldRenderer) Render(ctx context.Context, p render.Page) (*render.Result, error) {
	h.started.Add(1)
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.renders.Add(1)
	return &render.Result{HTML: p.Response.UTF8, URL: p.Response.FinalURL, Duration: time.Millisecond}, nil
}

func (h *heldRenderer) Stats() render.Stats { return render.Stats{Renders: h.renders.Load()} }
func (h *heldRenderer) Close() error        { return nil }

// staticHalf is a sink that watches a script web's static pages as a crawl finishes them:
// allIn is closed when every one is in, and a static page rendered is an error.
type staticHalf struct {
	t       testing.TB
	static  map[string]bool
	mu      sync.Mutex
	crawled map[string]bool
	allIn   chan struct{}
}

func watchStaticHalf(t testing.TB, w *testweb.ScriptWeb) *staticHalf {
	s := &staticHalf{t: t, static: map[string]bool{}, crawled: map[string]bool{}, allIn: make(chan struct{})}
	for _, u := range w.StaticURLs() {
		s.static[u] = true
	}
	return s
}

func (s *staticHalf) Name() string { return "test-static-half" }
func (s *staticHalf) Consume(_ context.Context, d *Document) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.static[d.Item.URL] && !s.crawled[d.Item.URL] {
		s.crawled[d.Item.URL] = true
		if d.Record.Rendered {
			s.t.Errorf("static page %s was rendered", d.Item.URL)
		}
		if len(s.crawled) == len(s.static) {
			close(s.allIn)
		}
	}
	return nil
}

// count is how many static pages are in.
func (s *staticHalf) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.crawled)
}

// smallMixedWeb starts a mixed script web of 12 static pages (closed with the test) and
// configures an auto crawl of it with 2 workers (fewer than its 4 script-built hosts) and
// 1 tab.
func smallMixedWeb(t *testing.T) (*testweb.ScriptWeb, config.Config) {
	w := &testweb.ScriptWeb{Articles: 3, Datasets: 2, StaticHosts: 2, StaticPages: 6}
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	cfg := scriptWebConfig(t, w, "auto")
	cfg.Crawl.Concurrency = 2
	cfg.Render.Tabs = 1
	return w, cfg
}

type runResult struct {
	sum Summary
	err error
}

// runAsync runs c in a goroutine; the channel gets its result.
func runAsync(ctx context.Context, c *Crawler) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		sum, err := c.Run(ctx, nil, nil)
		done <- runResult{sum, err}
	}()
	return done
}

// TestStaticHostsDoNotWaitForRenders: with render.mode auto, pages waiting for a render
// hold no fetch worker and no other host's turn. Every render is held until the static
// half of the mixed web is crawled: with fewer workers (2) than script-built hosts (4),
// a worker that waited for its page's render would leave the static hosts no worker, and
// they would not be crawled before the renders end. No clock is involved: the renders
// never end on their own.
func TestStaticHostsDoNotWaitForRenders(t *testing.T) {
	w, cfg := smallMixedWeb(t)
	cfg.Render.CPUShare = 1 // renders never wait for CPU: the queue is under test, not the governor
	half := watchStaticHalf(t, w)
	held := &heldRenderer{release: make(chan struct{})}
	c, err := New(cfg, WithRenderer(held), WithSinks(half))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a hang guard
	defer cancel()
	done := runAsync(ctx, c)
	select {
	case <-half.allIn:
	case r := <-done:
		t.Fatalf("crawl ended before its renders were let go: %+v, %v", r.sum, r.err)
	case <-ctx.Done():
		n := half.count()
		close(held.release)
		t.Fatalf("%d of %d static pages crawled while %d renders were held: the static hosts waited for renders", n, len(half.static), held.started.Load())
	}
	// The script-built hosts' pages may still be on their way to the render queue when the
	// static half is in (which of the two comes first is a race the test does not own); but
	// they must reach it while every render is still held. A worker that waited for its
	// page's render could not hand on a third page: two workers, renders that never end.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for held.started.Load() < 3 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			n := held.started.Load()
			close(held.release)
			t.Fatalf("%d renders asked for while every render was held, want the script-built hosts' (≥ 3)", n)
		}
	}
	if n := held.renders.Load(); n != 0 {
		t.Fatalf("%d renders ended while held", n)
	}
	close(held.release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.Reason != "frontier empty" {
		t.Errorf("crawl stopped: %s", r.sum.Reason)
	}
	if r.sum.Render.Renders < 3 {
		t.Errorf("%d renders, want ≥ 3", r.sum.Render.Renders)
	}
	if r.sum.Render.Waited != 0 {
		t.Errorf("%d pages waited for room in the render queue, want 0 (4 fit)", r.sum.Render.Waited)
	}
}

func TestDeferFetch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queued int
		host   *HostRender
		want   bool
	}{
		{"queue not full", 1, &HostRender{handed: 3}, false},
		{"full, host renders", 2, &HostRender{handed: 3}, true},
		{"full, host never handed a page", 2, &HostRender{}, false},
		{"full, host unknown", 2, nil, false},
		{"full, host turned off", 2, &HostRender{handed: 3, Off: true}, false},
		{"past full, host renders", 3, &HostRender{handed: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &renderState{full: 2, queue: make(chan struct{}, 4), hosts: map[string]*HostRender{}}
			for i := 0; i < tc.queued; i++ {
				rs.queue <- struct{}{}
			}
			if tc.host != nil {
				rs.hosts["a.test"] = tc.host
			}
			if got := rs.deferFetch("a.test"); got != tc.want {
				t.Errorf("deferFetch = %v, want %v", got, tc.want)
			}
		})
	}
}
