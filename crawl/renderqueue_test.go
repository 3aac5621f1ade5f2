package crawl

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// notifySink calls each with every document the crawl finishes.
type notifySink struct{ each func(*Document) }

func (s notifySink) Name() string { return "test-notify" }
func (s notifySink) Consume(_ context.Context, d *Document) error {
	s.each(d)
	return nil
}

// TestStaticHostsDoNotWaitForRenders: with render.mode auto, pages waiting for a render
// hold no fetch worker and no other host's turn. Every render is held until the static
// half of the mixed web is crawled: with fewer workers (2) than script-built hosts (4),
// a worker that waited for its page's render would leave the static hosts no worker, and
// they would not be crawled before the renders end. No clock is involved: the renders
// never end on their own.
func TestStaticHostsDoNotWaitForRenders(t *testing.T) {
	w := &testweb.ScriptWeb{Articles: 3, Datasets: 2, StaticHosts: 2, StaticPages: 6}
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cfg := scriptWebConfig(t, w, "auto")
	cfg.Crawl.Concurrency = 2
	cfg.Render.Tabs = 1
	static := map[string]bool{}
	for _, u := range w.StaticURLs() {
		static[u] = true
	}
	var (
		mu      sync.Mutex
		crawled = map[string]bool{}
		allIn   = make(chan struct{})
	)
	sink := notifySink{each: func(d *Document) {
		mu.Lock()
		defer mu.Unlock()
		if static[d.Item.URL] && !crawled[d.Item.URL] {
			crawled[d.Item.URL] = true
			if d.Record.Rendered {
				t.Errorf("static page %s was rendered", d.Item.URL)
			}
			if len(crawled) == len(static) {
				close(allIn)
			}
		}
	}}
	held := &heldRenderer{release: make(chan struct{})}
	c, err := New(cfg, WithRenderer(held), WithSinks(sink))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a hang guard
	defer cancel()
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := c.Run(ctx, nil, nil)
		done <- result{sum, err}
	}()
	select {
	case <-allIn:
	case r := <-done:
		t.Fatalf("crawl ended before its renders were let go: %+v, %v", r.sum, r.err)
	case <-ctx.Done():
		mu.Lock()
		n := len(crawled)
		mu.Unlock()
		close(held.release)
		t.Fatalf("%d of %d static pages crawled while %d renders were held: the static hosts waited for renders", n, len(static), held.started.Load())
	}
	if n := held.started.Load(); n < 3 {
		t.Errorf("%d renders asked for while the static half was crawled, want the script-built hosts' (≥ 3)", n)
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
