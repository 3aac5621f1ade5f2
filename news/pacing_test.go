package news

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
)

// searchSite is a results-page server on loopback that keeps its own log of the requests
// it received, so pacing is judged where it matters: at the server.
type searchSite struct {
	*httptest.Server
	robots string
	// answer, when set, may answer a results-page request itself (return true).
	answer func(w http.ResponseWriter, r *http.Request, n int) bool

	mu          sync.Mutex
	log         []served
	inflight    int
	maxInflight int
}

type served struct {
	path       string
	start, end time.Time
}

func newSearchSite(t *testing.T, robotsTxt string) *searchSite {
	s := &searchSite{robots: robotsTxt}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.log)
		s.log = append(s.log, served{path: r.URL.Path, start: time.Now()})
		s.inflight++
		s.maxInflight = max(s.maxInflight, s.inflight)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inflight--
			s.log[n].end = time.Now()
			s.mu.Unlock()
		}()
		time.Sleep(20 * time.Millisecond) // a little server time, so overlapping requests would overlap
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, s.robots)
			return
		}
		if s.answer != nil && s.answer(w, r, n) {
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><a class="hit" href="/story-%s-%s">Story</a></body></html>`, r.URL.Query().Get("q"), r.URL.Query().Get("page"))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *searchSite) requests() []served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]served(nil), s.log...)
}

// checkGaps fails unless each request started at least min after the previous one ended.
func checkGaps(t *testing.T, log []served, min time.Duration) {
	t.Helper()
	for i := 1; i < len(log); i++ {
		if gap := log[i].start.Sub(log[i-1].end); gap < min {
			t.Errorf("request %d (%s) came %v after request %d (%s) ended; want at least %v", i, log[i].path, gap, i-1, log[i-1].path, min)
		}
	}
}

func loopbackFetcher(t *testing.T) *fetch.Fetcher {
	f, err := fetch.New(fetch.Options{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func testPoliteness(minDelay time.Duration) config.Politeness {
	return config.Politeness{PerHost: 1, MinDelay: minDelay, MaxDelay: time.Minute, MaxRetries: 2, RetryDelay: 50 * time.Millisecond}
}

// TestProviderPacedLikeTheCrawl: several results pages from one host go out one at a time,
// the crawl's politeness.min-delay apart, or the robots.txt Crawl-delay apart when longer.
func TestProviderPacedLikeTheCrawl(t *testing.T) {
	for _, c := range []struct {
		name     string
		robots   string
		minDelay time.Duration
		want     time.Duration
	}{
		{"min-delay", "User-agent: *\nDisallow: /private\n", 250 * time.Millisecond, 250 * time.Millisecond},
		{"crawl-delay", "User-agent: *\nCrawl-delay: 0.5\n", 50 * time.Millisecond, 500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			site := newSearchSite(t, c.robots)
			p := &TemplateProvider{URLTemplate: site.URL + "/search?q={query}&page={page}", LinkSelector: "a.hit", Pages: 3,
				Fetcher: loopbackFetcher(t), Pacer: NewHostPacer(testPoliteness(c.minDelay))}
			got, err := p.Sources(context.Background(), Topic{Name: "greve"})
			if err != nil || len(got) != 3 {
				t.Fatalf("sources %v %+v", err, got)
			}
			log := site.requests()
			if len(log) != 4 || log[0].path != "/robots.txt" {
				t.Fatalf("requests %+v, want robots.txt and three results pages", log)
			}
			checkGaps(t, log, c.want)
		})
	}
}

// TestProviderHonoursRetryAfter: a 429 with Retry-After is retried (as the crawl retries it)
// no sooner than the header asked, and when retries are used up the host is still left
// alone that long by the next topic's request.
func TestProviderHonoursRetryAfter(t *testing.T) {
	site := newSearchSite(t, "User-agent: *\nAllow: /\n")
	var limited atomic.Bool // the next results page answers 429
	limited.Store(true)
	site.answer = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if limited.CompareAndSwap(true, false) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	pacer := NewHostPacer(testPoliteness(50 * time.Millisecond))
	p := &TemplateProvider{URLTemplate: site.URL + "/search?q={query}&page={page}", LinkSelector: "a.hit", Pages: 1, Fetcher: loopbackFetcher(t), Pacer: pacer}
	got, err := p.Sources(context.Background(), Topic{Name: "greve"})
	if err != nil || len(got) != 1 {
		t.Fatalf("sources after a 429: %v %+v", err, got)
	}
	log := site.requests()
	if len(log) != 3 {
		t.Fatalf("requests %+v, want robots.txt, the 429 and its retry", log)
	}
	if gap := log[2].start.Sub(log[1].end); gap < time.Second {
		t.Errorf("the retry came %v after the 429, before its Retry-After of 1s", gap)
	}

	// No retries left: the provider gives up naming the answer, and the host's pause holds
	// for the next request all the same.
	limited.Store(true)
	noRetries := testPoliteness(50 * time.Millisecond)
	noRetries.MaxRetries = 0
	p.Pacer = NewHostPacer(noRetries)
	if _, err := p.Sources(context.Background(), Topic{Name: "greve"}); err == nil || !strings.Contains(err.Error(), "429 (Retry-After 1s)") {
		t.Fatalf("a 429 without retries left: %v", err)
	}
	if _, err := p.Sources(context.Background(), Topic{Name: "eleições"}); err != nil {
		t.Fatal(err)
	}
	log = site.requests()
	if len(log) != 7 {
		t.Fatalf("requests %+v", log)
	}
	if gap := log[5].start.Sub(log[4].end); gap < time.Second {
		t.Errorf("the next topic asked %v after the 429, before its Retry-After of 1s", gap)
	}

	// A caller whose deadline comes before the host's rest ends is told so, and nothing is sent.
	limited.Store(true)
	if _, err := p.Sources(context.Background(), Topic{Name: "greve"}); err == nil {
		t.Fatal("the 429 was not reported")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = p.Sources(ctx, Topic{Name: "greve"})
	if err == nil || !strings.Contains(err.Error(), "must rest") {
		t.Errorf("a deadline before the host's rest ends: %v", err)
	}
	if n := len(site.requests()); n != 9 {
		t.Errorf("%d requests, want 9: nothing sent while the host rests", n)
	}
}

// TestProvidersTakeTurns: topics added at the same time through providers that share a pacer
// never have two requests at the search site at once, and keep the delay between them.
func TestProvidersTakeTurns(t *testing.T) {
	site := newSearchSite(t, "User-agent: *\nAllow: /\n")
	pacer := NewHostPacer(testPoliteness(100 * time.Millisecond))
	f := loopbackFetcher(t)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, topic := range []string{"greve", "eleições", "enchente"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &TemplateProvider{URLTemplate: site.URL + "/search?q={query}&page={page}", LinkSelector: "a.hit", Pages: 2, Fetcher: f, Pacer: pacer}
			if _, err := p.Sources(context.Background(), Topic{Name: topic}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	log := site.requests()
	if len(log) != 9 {
		t.Fatalf("%d requests, want 9 (robots.txt and two pages per topic)", len(log))
	}
	if site.maxInflight != 1 {
		t.Errorf("%d requests at the site at once, want 1", site.maxInflight)
	}
	checkGaps(t, log, 100*time.Millisecond)
}

// TestSharedPacer: one pacer per politeness setting in a process.
func TestSharedPacer(t *testing.T) {
	a, b := testPoliteness(time.Second), testPoliteness(2*time.Second)
	if SharedPacer(a) != SharedPacer(a) || SharedPacer(a) == SharedPacer(b) {
		t.Error("SharedPacer must give the same pacer for the same settings only")
	}
}
