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
)

// stallSite answers / with links to /stall and /other; /stall never sends its first
// byte. It notes when each request for /stall started.
type stallSite struct {
	mu     sync.Mutex
	stalls []time.Time
}

func (s *stallSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>home</title></head><body><p>A page with two links.</p><a href="/stall">stall</a> <a href="/other">other</a></body></html>`)
	case "/other":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>other</title></head><body><p>Another page.</p></body></html>`)
	case "/stall":
		s.mu.Lock()
		s.stalls = append(s.stalls, time.Now())
		s.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	default:
		http.NotFound(w, r)
	}
}

// TestRetryWaitsForTheHostsRest: a request that stalls until fetch.first-byte-timeout is
// retried politeness.retry-delay after its host's rest (delay-factor × the stall), not
// after the failure. Counted from the failure, the retry fell due inside the rest the
// stall itself caused and stalled the host again the moment it could be served: a hostile
// web's crawl (TestHostileWebFinishesInBoundedTime, full run at load 8) waited 20 s for a
// second stall and ended at 97 s instead of with the retry parked.
func TestRetryWaitsForTheHostsRest(t *testing.T) {
	site := &stallSite{}
	srv := httptest.NewServer(site)
	defer srv.Close()
	const timeout, retry = 300 * time.Millisecond, time.Second
	cfg := config.Default()
	cfg.Data = t.TempDir()
	cfg.Crawl.Seeds = []string{srv.URL + "/"}
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.FirstByteTimeout = timeout
	cfg.Politeness.MinDelay = 0
	cfg.Politeness.DelayFactor = 2
	cfg.Politeness.RetryDelay = retry
	cfg.Politeness.MaxRetries = 1
	cfg.Log.Level = "error"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Run(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	if len(site.stalls) != 2 {
		t.Fatalf("/stall requested %d times, want 2 (one retry)", len(site.stalls))
	}
	// The stall (≥ timeout), the host's rest (≥ 2 × timeout), then the retry delay; a
	// little less for the time the first request took to reach the server.
	want := timeout + 2*timeout + retry - 100*time.Millisecond
	if gap := site.stalls[1].Sub(site.stalls[0]); gap < want {
		t.Errorf("the stalled request was retried %v after it started, want at least %v (stall, rest, retry-delay)", gap.Round(time.Millisecond), want)
	}
}
