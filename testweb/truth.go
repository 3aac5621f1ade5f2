package testweb

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// walk computes the ground truth: a breadth-first crawl of the model as a
// correct crawler would do it over HTTP. It starts at the seeds; never
// fetches what robots.txt (for agent sonda, 500 KiB cap) forbids; follows
// no link of a nofollow page; follows a redirect as a new URL, at most
// MaxRedirects hops from the linked URL; stops at trap entries, whose URLs
// are accounted for separately; fetches each URL once.
func (w *Web) walk(cases []Case) truth {
	type item struct {
		r    *resource
		hops int // redirects followed to get here
	}
	var (
		t        = truth{fetches: map[string]int{}}
		seen     = map[*resource]bool{}
		touched  = map[*site]bool{} // hosts with a discovered URL
		stranger = false            // a URL of unknownHost was discovered
		queue    []item
		nofollow = map[string]bool{}
	)
	discover := func(r *resource, hops int) {
		if seen[r] {
			return
		}
		seen[r] = true
		if r.site == nil {
			stranger = true
		} else {
			touched[r.site] = true
		}
		switch {
		case r.trap != nil:
			t.traps = append(t.traps, *r.trap)
		case r.site != nil && !r.site.robots.allows(r.uri):
			t.disallowed = append(t.disallowed, r.url)
		default:
			t.reachable = append(t.reachable, r.url)
			t.fetches[r.url] = 1
			queue = append(queue, item{r, hops})
		}
	}
	for _, s := range w.seeds {
		discover(s, 0)
	}
	var nofollowPages []*resource
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		switch r := it.r; {
		case r.location != nil:
			if it.hops < w.cfg.MaxRedirects {
				discover(r.location, it.hops+1)
			}
		case r.nofollow:
			nofollowPages = append(nofollowPages, r)
		default:
			for _, l := range r.links {
				discover(l.to, 0)
			}
		}
	}
	for _, p := range nofollowPages {
		for _, l := range p.links {
			if !seen[l.to] {
				nofollow[l.to.url] = true
			}
		}
	}
	t.nofollowOnly = sortedKeys(nofollow)

	for _, s := range w.sites {
		if !touched[s] {
			continue
		}
		t.robots = append(t.robots, s.origin+"/robots.txt")
		f := s.robots
		for _, h := range f.hops {
			t.robots = append(t.robots, s.origin+h)
		}
		if f.status == 200 && f.sitemap != "" {
			t.sitemaps = append(t.sitemaps, f.sitemap)
			for _, h := range s.hidden {
				t.sitemapOnly = append(t.sitemapOnly, h.url)
			}
		}
		if f.status >= 500 && seen[s.home] {
			cases = append(cases, Case{URL: s.home.url, Kind: "robots-5xx", Want: "robots-unavailable"})
		}
	}
	if stranger {
		t.robots = append(t.robots, "http://"+unknownHost+"/robots.txt")
	}
	for _, c := range cases {
		if _, ok := t.fetches[c.URL]; ok {
			t.fetches[c.URL] = c.Fetches
		}
	}
	t.cases = cases
	slices.SortFunc(t.cases, func(a, b Case) int { return strings.Compare(a.URL, b.URL) })
	slices.SortFunc(t.traps, func(a, b Trap) int { return strings.Compare(a.Entry, b.Entry) })
	for _, l := range [][]string{t.reachable, t.disallowed, t.robots, t.sitemaps, t.sitemapOnly} {
		slices.Sort(l)
	}
	return t
}

// Seeds returns the URLs a crawl starts from: the home pages of the first
// hosts. Every host is reachable from them.
func (w *Web) Seeds() []string {
	out := make([]string, len(w.seeds))
	for i, s := range w.seeds {
		out[i] = s.url
	}
	return out
}

// Hosts returns the names of the hosts served, in order.
func (w *Web) Hosts() []string {
	out := make([]string, len(w.sites))
	for i, s := range w.sites {
		out[i] = s.name
	}
	return out
}

// Reachable returns, sorted, every URL a correct crawler starting at Seeds
// requests, in canonical form: the pages reachable by links (any .test
// host, no depth limit), minus those robots.txt forbids, plus redirect hops
// within MaxRedirects and the error and awkward URLs linked from reachable
// pages. Each is requested once, except the BadCases whose Fetches says
// otherwise. It leaves out robots.txt files (RobotsURLs), sitemaps and pages
// listed only in them (Sitemaps, SitemapOnly) and trap URLs (Traps).
// Canonical means: lowercase scheme and host, no port 80, dot segments
// resolved, no fragment, unreserved percent-escapes decoded, no utm_*
// parameters.
func (w *Web) Reachable() []string { return slices.Clone(w.truth.reachable) }

// Disallowed returns the linked URLs that robots.txt forbids sonda (or
// forbids everyone, where robots.txt answers 5xx): a crawler must never
// request them.
func (w *Web) Disallowed() []string { return slices.Clone(w.truth.disallowed) }

// NofollowOnly returns the URLs linked only from nofollow pages (meta
// robots or X-Robots-Tag): a crawler must never request them.
func (w *Web) NofollowOnly() []string { return slices.Clone(w.truth.nofollowOnly) }

// RobotsURLs returns the robots.txt URLs of every host with a discovered
// URL, and the redirect hops of a robots.txt that moved. A crawler requests
// each at least once before anything else on the host (more often when it
// answers 5xx and the crawler retries).
func (w *Web) RobotsURLs() []string { return slices.Clone(w.truth.robots) }

// Sitemaps returns the sitemap URLs named by the robots.txt files a crawler
// reads.
func (w *Web) Sitemaps() []string { return slices.Clone(w.truth.sitemaps) }

// SitemapOnly returns pages listed in those sitemaps and linked from
// nowhere: only a crawler that reads sitemaps finds them.
func (w *Web) SitemapOnly() []string { return slices.Clone(w.truth.sitemapOnly) }

// BadCases returns every awkward URL of the web with what a correct crawler
// records for it, sorted by URL.
func (w *Web) BadCases() []Case { return slices.Clone(w.truth.cases) }

// Traps returns the crawler traps linked from reachable pages.
func (w *Web) Traps() []Trap { return slices.Clone(w.truth.traps) }

// TrapOf reports whether rawURL (absolute) belongs to a trap, and which.
func (w *Web) TrapOf(rawURL string) (Trap, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Trap{}, false
	}
	if s := w.byName[canonicalHost(u.Host)]; s != nil {
		q := stripTracking(u.RawQuery)
		for _, t := range s.traps {
			if t.match(u.Path, q) {
				return *t.trap, true
			}
		}
	}
	return Trap{}, false
}

// PolitenessDelay is the Crawl-delay host's robots.txt declares for sonda,
// 0 if none.
func (w *Web) PolitenessDelay(host string) time.Duration {
	if s := w.byName[canonicalHost(host)]; s != nil {
		return s.robots.crawlDelay()
	}
	return 0
}

// CheckFetches compares the request log with the ground truth and returns
// one line per problem, sorted; none means the crawl was exactly right:
// every Reachable URL requested as often as it should be (once, or Fetches
// for BadCases), nothing Disallowed or NofollowOnly requested, sitemaps and
// sitemap-only pages at most once, no trap explored beyond its MaxFetches
// or any of its URLs twice, robots.txt requested first on every host, and no
// other URL requested (a URL outside the model is usually a link resolved or
// normalized wrongly).
func (w *Web) CheckFetches() []string { return w.CheckFetchesAfterTimeouts(nil) }

// CheckFetchesAfterTimeouts is CheckFetches for a crawl that reports, in timedOut,
// how many of its attempts at each URL timed out: an ordinary page (one the truth
// wants fetched once) whose fetch a loaded machine kept from being read in time is
// rightly fetched again, and is then wanted 1 + timedOut[u] times. Only the crawler's
// own account excuses a request; the web's slow pages are wanted as before.
func (w *Web) CheckFetchesAfterTimeouts(timedOut map[string]int) []string {
	w.settle()
	var (
		counts   = w.Counts()
		t        = &w.truth
		known    = map[string]bool{}
		problems []string
	)
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, u := range t.reachable {
		known[u] = true
		want := t.fetches[u]
		if want == 1 {
			want += timedOut[u]
		}
		if got := counts[u]; got != want {
			report("%s: requested %d times, want %d", u, got, want)
		}
	}
	for _, l := range []struct {
		urls []string
		most int
		why  string
	}{
		{t.disallowed, 0, "robots.txt forbids it"},
		{t.nofollowOnly, 0, "only nofollow pages link to it"},
		{t.sitemaps, 1, "want at most 1"},
		{t.sitemapOnly, 1, "want at most 1"},
	} {
		for _, u := range l.urls {
			known[u] = true
			if counts[u] > l.most {
				report("%s: requested %d times, %s", u, counts[u], l.why)
			}
		}
	}
	for _, u := range t.robots {
		known[u] = true
	}
	explored := map[string]int{}
	for _, u := range sortedKeys(counts) {
		if known[u] {
			continue
		}
		if trap, ok := w.TrapOf(u); ok {
			explored[trap.Entry]++
			if counts[u] > 1 {
				report("%s: trap URL requested %d times", u, counts[u])
			}
			continue
		}
		report("%s: requested %d times, but the web does not link to it", u, counts[u])
	}
	for _, tr := range t.traps {
		if n := explored[tr.Entry]; n > tr.MaxFetches {
			report("%s: %s trap explored %d URLs, want at most %d", tr.Entry, tr.Kind, n, tr.MaxFetches)
		}
	}
	first := map[string]Request{}
	for _, r := range w.Requests() {
		if _, ok := first[r.Host]; !ok {
			first[r.Host] = r
		}
	}
	for _, h := range sortedKeys(first) {
		if r := first[h]; r.URL != "http://"+h+"/robots.txt" {
			report("%s: %s requested before robots.txt", h, r.URL)
		}
	}
	slices.Sort(problems)
	return problems
}
