package revisit

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/revisit/changeweb"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
)

func TestStatusOf(t *testing.T) {
	tests := []struct {
		fetched       bool
		status        int
		fingerprinted bool
		want          Status
	}{
		{false, 0, false, Gone}, {true, 200, true, OK}, {true, 200, false, Gone}, {true, 304, false, NotModified},
		{true, 301, false, Gone}, {true, 404, false, Gone}, {true, 410, false, Gone}, {true, 503, false, Failed},
		{true, 429, false, Failed}, {true, 0, false, Failed}, {true, 408, false, Failed},
	}
	for _, tt := range tests {
		if got := StatusOf(tt.fetched, tt.status, tt.fingerprinted); got != tt.want {
			t.Errorf("StatusOf(%v, %d, %v) = %v, want %v", tt.fetched, tt.status, tt.fingerprinted, got, tt.want)
		}
	}
}

func TestFromConfig(t *testing.T) {
	cfg := config.Default()
	if p, err := FromConfig(cfg); p != nil || err != nil {
		t.Errorf("policy none: %v, %v; want no policy", p, err)
	}
	cfg.Revisit.Policy = "optimal"
	if _, err := FromConfig(cfg); err == nil {
		t.Error("optimal without any budget accepted")
	}
	cfg.Crawl.Budget = 10
	cfg.Politeness.MinDelay = 500 * time.Millisecond
	p, err := FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.opts.Budget != 5 || p.opts.HostCap != 1 || p.total != 10 {
		t.Errorf("budget %v (want share 0.5 of 10), host cap %v (want 0.5 × 1/0.5s), total %v", p.opts.Budget, p.opts.HostCap, p.total)
	}
	cfg.Revisit.ClassModel = "/nonexistent/model.json"
	cfg.Revisit.Policy = "classes"
	if _, err := FromConfig(cfg); err == nil {
		t.Error("a missing class model was accepted")
	}
}

// TestFollowDiscovery: while pages are being discovered the revisit budget stays at its
// share; when discovery stops it grows towards the whole budget.
func TestFollowDiscovery(t *testing.T) {
	cfg := config.Default()
	cfg.Crawl.Budget = 10
	cfg.Revisit.Policy = "uniform"
	p, err := FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	for i := 0; i < 200; i++ { // 10 first visits a second
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now, First: true})
	}
	if p.current < 5 || p.current > 5.25 { // changes under 5% are not passed on
		t.Errorf("during discovery: revisit budget %v, want the share 5", p.current)
	}
	for i := 0; i < 600; i++ { // revisits only, for a minute
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now})
	}
	if p.current != 9.5 {
		t.Errorf("a minute after discovery: revisit budget %v, want 95%% of 10", p.current)
	}
	if u := p.Policy().(*uniform); u.o.Budget != p.current {
		t.Errorf("the policy plans for %v, the adapter says %v", u.o.Budget, p.current)
	}
	// URLs still to be fetched and discovery making progress, however slowly: revisits
	// keep their share (revisits that crowd discovery out must not earn themselves more
	// budget by doing so).
	p.Undiscovered(1000)
	for i := 0; i < 300; i++ {
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now, First: i%20 == 0}) // half a first visit a second
	}
	if p.current < 5 || p.current > 5.25 {
		t.Errorf("discovery slowed by revisits: revisit budget %v, want the share 5", p.current)
	}
	// A handful of URLs waiting, discovery making progress: discovery is given what
	// fetching them within tau (10 s here) takes, not the share.
	p.Undiscovered(5)
	for i := 0; i < 300; i++ {
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now, First: i%20 == 0})
	}
	if want := 0.95 * (10 - 5.0/10); p.current < want-0.5 || p.current > want+0.1 {
		t.Errorf("5 URLs waiting: revisit budget %v, want about %.2f (95%% of what fetching them within 10 s leaves)", p.current, want)
	}
	p.Undiscovered(1000)
	for i := 0; i < 300; i++ {
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now, First: i%20 == 0})
	}
	// URLs that make no progress (a host that never answers) do not hold the budget back.
	for i := 0; i < 600; i++ {
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now})
	}
	if p.current < 9 || p.current > 9.5 {
		t.Errorf("1000 URLs that make no progress: revisit budget %v, want about 95%% of 10", p.current)
	}
	// Discovery over while first visits were frequent: the budget goes to revisits at once.
	p.Undiscovered(1000)
	for i := 0; i < 100; i++ {
		now = now.Add(100 * time.Millisecond)
		p.followDiscovery(Observation{At: now, First: true})
	}
	p.Undiscovered(0)
	p.followDiscovery(Observation{At: now.Add(100 * time.Millisecond)})
	if p.current < 9 || p.current > 9.5 {
		t.Errorf("no URL left to discover: revisit budget %v, want about 95%% of 10 at once", p.current)
	}
}

// TestCrawlIntegration runs the real crawler with a revisit policy on a changing test web:
// pages are revisited with conditional requests, a 304 keeps the previous fingerprint and
// counts as unchanged, volatile fragments and the site's chrome (navigation, side box,
// footer: parse.Block.Chrome) do not count as changes, the crawl keeps going after
// discovery until it is stopped, and a resumed crawl's policy is rebuilt from the visit
// history. Each crawl runs until the test web has seen the work asserted on (bounded by
// crawlCap), not for a fixed time, so a busy machine makes it slower, not failing.
func TestCrawlIntegration(t *testing.T) {
	set := changeweb.New(changeweb.Config{PagesPerHost: 5, Mixture: []changeweb.Component{{MeanInterval: time.Hour, Share: 1}}, Validators: 0.5, Seed: 4,
		Kinds: &changeweb.Kinds{Mapping: "natural", Fidelity: 1}})
	web := testweb.New(testweb.Config{Seed: 5, Hosts: 3, PagesPerHost: 2, Disable: testweb.AllFeatures, Extra: set.Extra})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Log.Level = "error"
	cfg.Crawl.Duration = crawlCap
	cfg.Crawl.Budget = 30
	cfg.Politeness.MinDelay = 0
	cfg.Revisit.Policy = "optimal"
	cfg.Revisit.MinInterval = 200 * time.Millisecond
	// crawlUntil crawls with cfg until done holds on the test web's log, then stops the
	// crawl as a user's interrupt does (fetches in flight are recorded).
	crawlUntil := func(cfg config.Config, done func(changeweb.Tally) bool) (*CrawlPolicy, crawl.Summary) {
		t.Helper()
		p, err := FromConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c, err := crawl.New(cfg, crawl.WithRevisitPolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		since := time.Now()
		go func() {
			if done != nil && set.Await(ctx, since, done) {
				stop()
			}
		}()
		sum, err := c.Run(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if done != nil && sum.Reason != "interrupted" {
			t.Fatalf("crawl ended by %q before the test web saw the work asserted on (%+v)", sum.Reason, set.Tally(since))
		}
		return p, sum
	}
	set.Start(time.Now())
	// Every changing page fetched, most revisited (several times over: 304s need a
	// validator, which half the pages have).
	cp, sum := crawlUntil(cfg, func(n changeweb.Tally) bool { return n.Fetched == 15 && n.Revisited >= 12 && n.NotModified >= 3 })
	// The policy read each page's features at its first fetch and put the changing pages
	// (all under /news/, with a dateline) in the news section's groups (its feature prior).
	if op, ok := cp.Policy().(*optimal); !ok {
		t.Errorf("policy %T, want the optimal policy", cp.Policy())
	} else {
		op.mu.Lock()
		news, ok := op.groupOf["section news"]
		inNews := 0
		for _, pg := range op.list {
			g := pg.group
			for g >= 0 && op.groups.Parent(g) >= 0 {
				g = op.groups.Parent(g)
			}
			if ok && g == news {
				inNews++
			}
		}
		op.mu.Unlock()
		if !ok || inNews != 15 {
			t.Errorf("%d pages in the news section's groups (section known: %v), want the 15 changing pages", inNews, ok)
		}
	}
	// The pages change once an hour and are revisited within seconds: the plan expects
	// them nearly all fresh.
	if sum.Freshness == nil || *sum.Freshness < 0.9 || *sum.Freshness > 1 {
		t.Errorf("expected freshness of the plan %v, want above 0.9", sum.Freshness)
	}
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pages, revisited, notModified, falseChanges int
	err = db.Histories(func(_ store.URLKey, rec *store.Page, visits []store.Visit) error {
		if set.Rate(rec.URL) == 0 {
			return nil
		}
		pages++
		if len(visits) > 1 {
			revisited++
		}
		for i, v := range visits {
			if v.Status == http.StatusNotModified {
				notModified++
				if v.Changed || v.Fingerprint != visits[i-1].Fingerprint {
					t.Errorf("%s: a 304 changed the record (changed %v, fingerprint %s after %s)", rec.URL, v.Changed, v.Fingerprint, visits[i-1].Fingerprint)
				}
			}
			if v.Changed {
				falseChanges++ // the pages change once an hour: nothing may look changed
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if pages != 15 || revisited < 10 || notModified == 0 {
		t.Errorf("%d changing pages recorded (want 15), %d revisited, %d answered 304", pages, revisited, notModified)
	}
	if falseChanges > 0 {
		t.Errorf("%d visits found a change on pages that did not change: volatile fragments or site chrome were counted", falseChanges)
	}
	// The thesis's MD5 of the stripped text ignores nothing: the same pages now look
	// changed at every revisit that got a body, because of their counters, session ids
	// and chrome.
	md5cfg := cfg
	md5cfg.Data = t.TempDir()
	md5cfg.Revisit.Fingerprint = "md5"
	crawlUntil(md5cfg, func(n changeweb.Tally) bool { return n.Bodies >= 10 })
	db5, err := store.Open(crawl.StateDir(md5cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var bodies, changed int
	err = db5.Histories(func(_ store.URLKey, rec *store.Page, visits []store.Visit) error {
		if set.Rate(rec.URL) == 0 {
			return nil
		}
		for _, v := range visits[1:] {
			if v.Status == http.StatusOK {
				bodies++
				if v.Changed {
					changed++
				}
			}
		}
		if len(rec.Fingerprint) != 32 {
			t.Errorf("%s: fingerprint %q is not an MD5", rec.URL, rec.Fingerprint)
		}
		return nil
	})
	db5.Close()
	if err != nil {
		t.Fatal(err)
	}
	if bodies == 0 || changed != bodies {
		t.Errorf("md5 fingerprints: %d of %d revisits with a body looked changed, want all", changed, bodies)
	}
	// Resume: the policy knows every page before the first fetch, and with a revisit
	// policy the crawl runs until its duration although nothing new is left to discover.
	cfg.Crawl.Duration = time.Second
	p, sum := crawlUntil(cfg, nil)
	if sum.Reason != "duration" {
		t.Errorf("resumed crawl ended by %q; with a revisit policy it must run until its duration", sum.Reason)
	}
	op := p.Policy().(*optimal)
	op.mu.Lock()
	known := len(op.list)
	op.mu.Unlock()
	if known < 15 {
		t.Errorf("after resuming, the policy knows %d pages, want at least the 15 changing ones", known)
	}
}

// crawlCap bounds a test crawl that runs until it has done some work: far more than a
// quiet machine needs (a few seconds), so only a crawl that stopped making progress
// reaches it.
const crawlCap = 90 * time.Second
