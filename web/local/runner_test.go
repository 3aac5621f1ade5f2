package local

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/web"
)

// smallWeb is a few hosts of plain pages; host 0 also has /hidden.html, linked from
// nowhere, which a crawl reaches only when it is given as a seed.
func smallWeb(t testing.TB, hosts int) *testweb.Web {
	t.Helper()
	first := true
	w := testweb.New(testweb.Config{Seed: 5, Hosts: hosts, PagesPerHost: 6, Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra: func(host string, _ *rand.Rand) []testweb.Page {
			if !first {
				return nil
			}
			first = false
			return []testweb.Page{{Path: "/hidden.html", Title: "Hidden", Text: []string{"only a seed leads here"}, Unlinked: true}}
		}})
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func runnerFor(t testing.TB, w *testweb.Web, minDelay time.Duration, opts func(*config.Config, *store.DB) ([]crawl.Option, error)) (*Runner, *store.DB, config.Config) {
	t.Helper()
	cfg := crawlConfig(t, w, minDelay)
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(cfg, db, RunnerOptions{Options: opts})
	t.Cleanup(func() {
		r.Close()
		db.Close()
	})
	return r, db, cfg
}

// crawlConfig is a quick crawl of w into a temporary directory.
func crawlConfig(t testing.TB, w *testweb.Web, minDelay time.Duration) config.Config {
	cfg := w.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Concurrency = 8
	cfg.Politeness.MinDelay = minDelay
	cfg.WARC.Enabled = false
	cfg.Log.Level = "error"
	return cfg
}

// wait waits for the runner's crawl to end. The bound only keeps a broken crawl from
// hanging the suite: a geo crawl took more than a minute under -race at a load of 28
// (full run 43, TestServeRechecksDatasets), so it is far above that.
func wait(t testing.TB, r *Runner) *crawl.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := r.Wait(ctx)
	if err != nil || sum == nil {
		t.Fatalf("crawl: %v (summary %v)", err, sum)
	}
	return sum
}

// TestRunnerCrawlsAndReports: a crawl started through the runner finishes, and the status
// agrees with the records in the store (errors by kind, hosts).
func TestRunnerCrawlsAndReports(t *testing.T) {
	w := smallWeb(t, 3)
	r, db, _ := runnerFor(t, w, 0, nil)
	if st := r.Status(); st.State != "idle" {
		t.Errorf("fresh runner: state %q", st.State)
	}
	if err := r.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), web.CrawlRequest{}); !errors.Is(err, web.ErrCrawlRunning) && r.Status().State == "running" {
		t.Errorf("second start while running: %v", err)
	}
	sum := wait(t, r)
	st := r.Status()
	if st.State != "finished: frontier empty" || st.Pages != sum.Pages || st.Pages == 0 {
		t.Fatalf("status %q, %d pages; summary %d", st.State, st.Pages, sum.Pages)
	}
	errs, hosts := map[string]int64{}, map[string]int64{}
	if err := db.Pages(func(p *store.Page) error {
		if p.Error != "" {
			errs[p.Error]++
		}
		hosts[strings.Split(strings.TrimPrefix(p.URL, "http://"), "/")[0]]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k, v := range errs {
		if st.Errors[k] != v {
			t.Errorf("errors[%s] = %d; the store has %d", k, st.Errors[k], v)
		}
	}
	if len(st.TopHosts) != len(hosts) {
		t.Errorf("top hosts %v; the store has %v", st.TopHosts, hosts)
	}
	for _, h := range st.TopHosts {
		if hosts[h.Host] != h.Count {
			t.Errorf("host %s: %d records counted, %d stored", h.Host, h.Count, hosts[h.Host])
		}
	}
	if st.HarvestRate != nil {
		t.Error("a harvest rate without a topic")
	}
	if r.Gatherer() != nil {
		t.Error("metrics of a finished crawl are still served")
	}
}

// TestRunnerStopResumeAndSeeds: stop ends a running crawl; adding seeds while one runs
// restarts it with them (the unlinked page gets crawled); start resumes; nothing is
// fetched twice beyond the fetches in flight at the interruptions.
func TestRunnerStopResumeAndSeeds(t *testing.T) {
	w := smallWeb(t, 4)
	r, db, cfg := runnerFor(t, w, 300*time.Millisecond, nil)
	ctx := context.Background()
	hidden := "http://" + strings.TrimPrefix(strings.TrimSuffix(w.Seeds()[0], "/"), "http://") + "/hidden.html"
	if err := r.Start(ctx, web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // bounds a broken crawl only
	for r.Status().Pages < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := r.Gatherer(); g == nil {
		t.Error("no metrics while running")
	} else if mfs, err := g.Gather(); err != nil || len(mfs) == 0 {
		t.Errorf("gather while running: %d families, %v", len(mfs), err)
	}
	if err := r.AddSeeds(ctx, []string{hidden}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddSeeds(ctx, []string{"ftp://nope"}); err == nil {
		t.Error("a non-http seed was accepted")
	}
	time.Sleep(300 * time.Millisecond)
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := r.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); st.State != "finished: stopped" || st.InFlight != 0 {
		t.Fatalf("after stop: %+v", st.State)
	}
	seeds, err := r.Seeds(ctx)
	if err != nil || !contains(seeds, hidden) {
		t.Errorf("seeds %v (%v) lack %s", seeds, err, hidden)
	}
	if err := r.Start(ctx, web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, r); st.Reason != "frontier empty" {
		t.Fatalf("resumed crawl ended with %q", st.Reason)
	}
	p, ok, err := db.Page(keyOf(t, cfg, hidden))
	if err != nil || !ok || p.Status != 200 {
		t.Fatalf("the seed added while running was not crawled: %v %v %+v", ok, err, p)
	}
	counts := w.Counts()
	twice := 0
	for u, n := range counts {
		if n > 1 && !strings.HasSuffix(u, "/robots.txt") {
			twice++
		}
	}
	if twice > 2*cfg.Crawl.Concurrency {
		t.Errorf("%d URLs fetched more than once; at most the in-flight fetches of two interruptions may be", twice)
	}
}

func TestRunnerRefusesNothingToCrawl(t *testing.T) {
	w := smallWeb(t, 1)
	r, _, _ := runnerFor(t, w, 0, nil)
	r.cfg.Crawl.Seeds = nil
	err := r.Start(context.Background(), web.CrawlRequest{})
	if err == nil || !strings.Contains(err.Error(), "nothing to crawl") {
		t.Errorf("start without seeds: %v", err)
	}
}

// topicAnalyzer judges every page; those on host site00 are relevant.
type topicAnalyzer struct{}

func (topicAnalyzer) Name() string { return "topic" }
func (topicAnalyzer) Analyze(_ context.Context, d *crawl.Document) error {
	if d.Page == nil {
		return nil
	}
	rel := strings.Contains(d.URL.Host(), "site00")
	score := 0.1
	if rel {
		score = 0.9
	}
	d.Record.Relevance, d.Record.Relevant = &score, &rel
	return nil
}

func TestRunnerHarvestRate(t *testing.T) {
	w := smallWeb(t, 2)
	r, db, _ := runnerFor(t, w, 0, func(cfg *config.Config, _ *store.DB) ([]crawl.Option, error) {
		cfg.Crawl.Concurrency = 2 // the options may adjust the crawl's configuration
		return []crawl.Option{crawl.WithAnalyzers(topicAnalyzer{})}, nil
	})
	if err := r.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	wait(t, r)
	var judged, relevant int64
	db.Pages(func(p *store.Page) error {
		if p.Relevance != nil {
			judged++
			if *p.Relevant {
				relevant++
			}
		}
		return nil
	})
	st := r.Status()
	if st.HarvestRate == nil || st.Judged != judged || st.Relevant != relevant || judged == 0 {
		t.Fatalf("harvest %v, judged %d/%d, relevant %d/%d", st.HarvestRate, st.Judged, judged, st.Relevant, relevant)
	}
	if want := float64(relevant) / float64(judged); *st.HarvestRate != want {
		t.Errorf("harvest rate %v; want %v", *st.HarvestRate, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keyOf(t testing.TB, cfg config.Config, raw string) store.URLKey {
	t.Helper()
	u, err := urlnorm.New(crawl.NormalizerOptions(cfg)).Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Key()
}

// TestRunnerAfterCrawl: the hook runs once a crawl has ended, the status says "finishing"
// meanwhile, and seeds added then wait for the next start.
func TestRunnerAfterCrawl(t *testing.T) {
	w := smallWeb(t, 2)
	cfg := crawlConfig(t, w, 0)
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	calls := 0
	r := NewRunner(cfg, db, RunnerOptions{AfterCrawl: func(context.Context) error {
		calls++
		close(entered)
		<-release
		return nil
	}})
	defer r.Close()
	if err := r.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	<-entered
	if st := r.Status(); st.State != "finishing" {
		t.Errorf("state while the hook runs: %q", st.State)
	}
	if err := r.AddSeeds(context.Background(), []string{"http://www.site00.test/later.html"}); err != nil {
		t.Fatal(err)
	}
	close(release)
	wait(t, r)
	if st := r.Status(); st.State != "finished: frontier empty" || calls != 1 {
		t.Errorf("after the hook: %q, %d calls", st.State, calls)
	}
	if !contains(r.pending, "http://www.site00.test/later.html") {
		t.Errorf("a seed added while finishing was lost: pending %v", r.pending)
	}
}
