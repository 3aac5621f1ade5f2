package crawl

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
)

// hostileKinds are the test web's cases that a hostile web is made of, with the record each
// must leave. The robots.txt that answers 500 leaves none: its host waits (see below).
var hostileKinds = map[string]string{
	"slow-first-byte": "timeout-first-byte", // the first byte comes after 60s
	"endless-body":    "truncated",          // the body never ends
	"huge-body":       "truncated",          // 50 MiB, more than fetch.max-body
	"gzip-bomb":       "decompression-bomb", // 2 GiB of zeros in 2 MiB of gzip
	"redirect-loop":   "redirect-loop",
}

// TestHostileWebFinishesInBoundedTime (issue 14 §2): a web with a 60-second stall, a
// robots.txt that answers 500, an endless body, a gzip bomb, a redirect loop, crawler
// traps and server errors, crawled with the default settings (only the politeness delay
// lowered), ends within 90 seconds with every reachable page of the other hosts fetched,
// every hostile case recorded with its reason and the hosts that wait for a retry listed
// with theirs. Before, stalls were retried at full length and the robots.txt host held
// the crawl for minutes.
func TestHostileWebFinishesInBoundedTime(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about a minute: the endless body runs for fetch.body-timeout")

	}
	web := startWeb(t, testweb.Config{Seed: 3, Hosts: 30, SlowDelay: 60 * time.Second,
		HostileHosts: true, TrapLimit: config.Default().Scope.MaxQueryVariants})
	cfg := config.Default()
	cfg.Data = t.TempDir()
	// The test web's wiring (its seeds, its *.test names on loopback), not its timeouts:
	// fetch, retry and robots.txt settings stay the defaults.
	cfg.Crawl.Seeds = web.Seeds()
	cfg.Scope.Follow, cfg.Scope.AllowDomains = "any", []string{"test"}
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.Resolve = []string{web.Resolve()}
	cfg.Politeness.MinDelay = 20 * time.Millisecond
	cfg.Log.Level = "error"
	def := config.Default()
	if cfg.Fetch.FirstByteTimeout != def.Fetch.FirstByteTimeout || cfg.Robots.RetryDelay != def.Robots.RetryDelay || cfg.Politeness.RetryDelay != def.Politeness.RetryDelay {
		t.Fatal("the test must run with the default timeouts and retry delays")
	}

	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	sum, err := c.Run(ctx, nil, nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hostile web crawled in %v (%s): %d pages, errors %v", elapsed.Round(time.Millisecond), sum.Reason, sum.Pages, sum.Errors)
	hostile := map[string]bool{}
	for _, bc := range web.BadCases() {
		hostile[hostOf(bc.URL)] = true
	}
	var lastNormal, lastEnd time.Time
	for _, r := range web.Requests() {
		if !hostile[r.Host] && r.Start.After(lastNormal) {
			lastNormal = r.Start
		}
		if r.End.After(lastEnd) {
			lastEnd = r.End
		}
	}
	t.Logf("last request to a normal host %v after the start, last answer %v after it", lastNormal.Sub(start).Round(time.Millisecond), lastEnd.Sub(start).Round(time.Millisecond))
	// The goal is 90 s, on a machine that crawls the normal hosts in about 11 s. On a busy
	// one (the suite's other packages at load 30) the normal hosts alone can take minutes;
	// what the hostile hosts must not do is add to that, so the time the normal hosts took
	// past 30 s is not counted against them.
	bound := 90*time.Second + max(0, lastNormal.Sub(start)-30*time.Second)
	if elapsed > bound {
		t.Errorf("the crawl took %v, more than %v (90s, and the normal hosts' crawl past 30s)", elapsed, bound)
	}
	if elapsed > bound*2/3 { // what kept it going: the requests that ended late
		for _, r := range web.Requests() {
			if r.End.Sub(start) > 30*time.Second && !strings.Contains(r.Path, "calendar") {
				t.Logf("late: %s %s from %v to %v, status %d, abandoned %v", r.Host, r.Path, r.Start.Sub(start).Round(time.Millisecond), r.End.Sub(start).Round(time.Millisecond), r.Status, r.Abandoned)
			}
		}
	}
	if sum.Reason != "only waiting hosts left" && sum.Reason != "frontier empty" {
		t.Errorf("crawl ended by %q", sum.Reason)
	}

	waiting := map[string]string{}
	for _, w := range sum.Waiting {
		waiting[w.Host] = w.Reason
	}
	records := map[string]*store.Page{}
	if err := c.db.Pages(func(p *store.Page) error { records[p.URL] = p; return nil }); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, bc := range web.BadCases() {
		host := hostOf(bc.URL)
		if bc.Want == "robots-unavailable" {
			// RFC 9309 §2.3.1.4: nothing is fetched; the host waits, reported with why.
			seen["robots-5xx"] = true
			if r := waiting[host]; !strings.Contains(r, "robots.txt unreachable") || !strings.Contains(r, "500") {
				t.Errorf("%s: robots.txt answers 500 but the host is reported as waiting for %q", host, r)
			}
			continue
		}
		want, ok := hostileKinds[bc.Kind]
		if !ok {
			continue
		}
		seen[bc.Kind] = true
		rec := records[bc.URL]
		if rec == nil {
			t.Errorf("%s (%s): no record", bc.URL, bc.Kind)
			continue
		}
		if got := recordVerdict(rec); !verdictMatches(got, want) {
			t.Errorf("%s (%s): recorded %q, want %q", bc.URL, bc.Kind, got, want)
		}
	}
	for _, k := range []string{"robots-5xx", "slow-first-byte", "endless-body", "gzip-bomb", "redirect-loop"} {
		if !seen[k] {
			t.Errorf("the test web has no %s case", k)
		}
	}
	if len(web.Traps()) == 0 {
		t.Error("the test web has no traps")
	}
	// Every reachable page is fetched, but those behind the robots.txt that answers 500.
	counts := web.Counts()
	missing := 0
	for _, u := range web.Reachable() {
		if _, robots500 := waiting[hostOf(u)]; robots500 && strings.Contains(waiting[hostOf(u)], "robots.txt") {
			continue
		}
		if counts[u] == 0 {
			missing++
			if missing <= 10 {
				t.Errorf("reachable page never requested: %s", u)
			}
		}
	}
	if missing > 10 {
		t.Errorf("... and %d more reachable pages never requested", missing-10)
	}
	// Traps stay bounded.
	for _, p := range web.CheckFetches() {
		if strings.Contains(p, "trap") {
			t.Errorf("fetches: %s", p)
		}
	}
	for _, v := range web.CheckPoliteness(cfg.Politeness.MinDelay, cfg.Politeness.PerHost) {
		t.Errorf("politeness: %s", v)
	}
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
