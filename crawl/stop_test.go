package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/store"
)

// slowSite serves a home page linking to /slow, which answers after delay. It counts
// requests per path and reports when /slow has started.
type slowSite struct {
	delay   time.Duration
	started chan struct{}
	mu      sync.Mutex
	counts  map[string]int
}

func (s *slowSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts[r.URL.Path]++
	s.mu.Unlock()
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Home</title></head><body><a href="/slow">slow page</a></body></html>`)
	case "/slow":
		select {
		case s.started <- struct{}{}:
		default:
		}
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Slow</title></head><body><p>Worth the wait.</p></body></html>`)
	default:
		http.NotFound(w, r)
	}
}

func (s *slowSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[path]
}

// TestInterruptLetsFetchesInFlightFinish: on an interrupt no new fetch starts, and a fetch
// in flight gets crawl.stop-grace to finish and be recorded, so the resumed crawl does not
// fetch it again. With stop-grace 0 it is abandoned at once and fetched again on resume.
func TestInterruptLetsFetchesInFlightFinish(t *testing.T) {
	const delay = 2 * time.Second
	for _, tt := range []struct {
		name        string
		grace       time.Duration
		recorded    bool
		slowFetches int // after the interrupted crawl and its resumption
	}{
		{"grace", 30 * time.Second, true, 1},
		{"no grace", 0, false, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &slowSite{delay: delay, started: make(chan struct{}, 1), counts: map[string]int{}}
			srv := httptest.NewServer(site)
			defer srv.Close()
			cfg := config.Default()
			cfg.Data = t.TempDir()
			cfg.Crawl.Seeds = []string{srv.URL + "/"}
			cfg.Crawl.Concurrency = 2
			cfg.Crawl.StopGrace = tt.grace
			cfg.Fetch.AllowPrivate = true
			cfg.Politeness.MinDelay = 0
			cfg.Politeness.DelayFactor = 0
			cfg.Log.Level = "warn"
			db := openState(t, cfg)
			c, err := New(cfg, WithStore(db))
			if err != nil {
				t.Fatal(err)
			}
			ctx, interrupt := context.WithCancel(context.Background())
			type result struct {
				sum Summary
				err error
			}
			ran := make(chan result, 1)
			go func() {
				sum, err := c.Run(ctx, nil, nil)
				ran <- result{sum, err}
			}()
			select {
			case <-site.started:
			case <-time.After(30 * time.Second):
				t.Fatal("the crawl never requested /slow")
			}
			interrupted := time.Now()
			interrupt()
			r := <-ran
			took := time.Since(interrupted)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if r.err != nil || r.sum.Reason != "interrupted" {
				t.Fatalf("interrupted crawl: %v, reason %q", r.err, r.sum.Reason)
			}
			if !tt.recorded && took >= delay {
				t.Errorf("without grace the crawl took %v to stop; /slow answers after %v", took, delay)
			}
			slow, err := c.norm.Parse(srv.URL + "/slow")
			if err != nil {
				t.Fatal(err)
			}
			key := store.URLKey(slow.Key())
			p, ok, err := db.Page(key)
			if err != nil {
				t.Fatal(err)
			}
			if recorded := ok && p.Status == http.StatusOK; recorded != tt.recorded {
				t.Fatalf("/slow recorded after the interrupt: %v (%+v), want %v", recorded, p, tt.recorded)
			}

			c2, err := New(cfg, WithStore(db))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c2.Run(context.Background(), nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := c2.Close(); err != nil {
				t.Fatal(err)
			}
			if got := site.count("/slow"); got != tt.slowFetches {
				t.Errorf("/slow requested %d times over the crawl and its resumption, want %d", got, tt.slowFetches)
			}
			if got := site.count("/"); got != 1 {
				t.Errorf("/ requested %d times, want 1", got)
			}
		})
	}
}
