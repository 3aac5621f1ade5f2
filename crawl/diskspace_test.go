package crawl

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
)

// checkPointers fails the test for every page record with a response but no WARC capture.
func checkPointers(t *testing.T, c *Crawler, when string) int {
	t.Helper()
	n := 0
	err := c.db.Pages(func(p *store.Page) error {
		if p.Status > 0 && p.WARC == "" {
			t.Errorf("%s: %s recorded (status %d) without its WARC capture", when, p.URL, p.Status)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var refetched = regexp.MustCompile(`requested (\d+) times, want (\d+)$`)

// resumeToEnd runs the crawl of cfg again to an empty frontier and checks that every URL
// of the web was fetched and every page has its capture. Pages in flight when the first
// run stopped may have been fetched twice (their capture was not written, or not
// recorded): at most concurrency of them.
func resumeToEnd(t *testing.T, web *testweb.Web, c *Crawler) {
	t.Helper()
	sum, err := c.Run(context.Background(), nil, nil)
	if err != nil || sum.Reason != "frontier empty" {
		t.Fatalf("resume: %q, %v", sum.Reason, err)
	}
	checkPointers(t, c, "after the resume")
	extra := 0
	for _, p := range web.CheckFetches() {
		m := refetched.FindStringSubmatch(p)
		if m == nil {
			t.Errorf("after the resume: %s", p)
			continue
		}
		got, _ := strconv.Atoi(m[1])
		want, _ := strconv.Atoi(m[2])
		if got < want {
			t.Errorf("after the resume: %s (a URL was lost)", p)
		}
		extra += got - want
	}
	if extra > c.cfg.Crawl.Concurrency {
		t.Errorf("%d pages fetched again: more than the %d that can be in flight", extra, c.cfg.Crawl.Concurrency)
	}
}

// TestLowDiskStopsCleanlyAndResumes: when the data directory's file system drops below
// crawl.min-free-space mid-crawl, the crawl stops with an error that says so, every page
// it recorded has its capture, and a resume once space is back fetches everything left.
func TestLowDiskStopsCleanlyAndResumes(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 21, Hosts: 6, PagesPerHost: 15, Disable: testweb.AllFeatures &^ testweb.Robots})
	cfg := testConfig(t, web) // 20 ms between requests to a host: ~300 ms for the web
	cfg.Crawl.MinFreeSpace = 1 << 30
	defer func(d time.Duration) { spaceCheckEvery = d }(spaceCheckEvery)
	spaceCheckEvery = 5 * time.Millisecond

	// A full disk at the start: nothing is fetched.
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.freeSpace = func(string) (uint64, error) { return 10 << 20, nil }
	if _, err := c.Run(context.Background(), nil, nil); err == nil || !strings.Contains(err.Error(), "crawl.min-free-space") {
		t.Fatalf("crawl on a full disk: %v; want an error naming crawl.min-free-space", err)
	}
	c.Close()

	// Space runs out once pages are stored.
	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var low atomic.Bool
	c.freeSpace = func(string) (uint64, error) {
		if c.stats.pages.Load() >= 10 {
			low.Store(true)
		}
		if low.Load() {
			return 1 << 20, nil
		}
		return 100 << 30, nil
	}
	sum, err := c.Run(context.Background(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "crawl.min-free-space") || sum.Reason != "storage failure" {
		t.Fatalf("crawl as the disk fills: %q, %v; want a storage failure naming crawl.min-free-space", sum.Reason, err)
	}
	stored := checkPointers(t, c, "after the stop")
	c.Close()
	t.Logf("stopped after %d page records: %v", stored, err)

	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resumeToEnd(t, web, c)
}

// TestWARCFailureRecordsNoPageWithoutCapture: a WARC write that fails (here: the writer
// closed under the crawl, as a full disk or an I/O error leaves it) stops the crawl with
// the error, and no page is recorded without its capture; a resume fetches what is left.
// Before, the crawl logged the failure and went on recording pages with no capture.
func TestWARCFailureRecordsNoPageWithoutCapture(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 22, Hosts: 6, PagesPerHost: 15, Disable: testweb.AllFeatures &^ testweb.Robots})
	cfg := testConfig(t, web)
	cfg.Politeness.MinDelay = 0
	var c *Crawler
	breaker := &afterSink{n: 8, do: func() { c.warc.Close() }}
	c, err := New(cfg, WithSinks(breaker))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(context.Background(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "WARC") {
		t.Fatalf("crawl with a broken WARC writer: %q, %v; want an error naming the WARC write", sum.Reason, err)
	}
	checkPointers(t, c, "after the WARC failure")
	c.Close()

	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resumeToEnd(t, web, c)
}

// afterSink runs do once, when it has consumed n documents.
type afterSink struct {
	n    int64
	seen atomic.Int64
	do   func()
}

func (s *afterSink) Name() string { return "after" }

func (s *afterSink) Consume(context.Context, *Document) error {
	if s.seen.Add(1) == s.n {
		s.do()
	}
	return nil
}
