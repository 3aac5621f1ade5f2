package geosearch

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/robots"
)

// RecheckOptions configure a broken-link check of the catalog's datasets.
type RecheckOptions struct {
	// Agent is the robots.txt product token; a dataset robots.txt now forbids is left
	// alone (not fetched, not marked).
	Agent string
	// Politeness are the crawl's settings: between two requests to one host the check
	// rests as a crawl does (crawl.HostDelay: min-delay, delay-factor times the last
	// response time up to max-delay, and the host's robots.txt Crawl-delay in full).
	Politeness config.Politeness
	// Hosts is how many hosts are checked at once. Default 4.
	Hosts int
	// OlderThan skips datasets checked (or fetched) less than this long ago; 0 checks all.
	OlderThan time.Duration
	// MaxRedirects followed per check. Default 5.
	MaxRedirects int
	// Progress, when set, is called after each dataset with the running totals; calls do
	// not overlap.
	Progress func(RecheckStats)
	Logger   *slog.Logger
	Now      func() time.Time // default time.Now
}

// RecheckStats count a check's outcomes.
type RecheckStats struct {
	Checked  int `json:"checked"`  // requests made
	OK       int `json:"ok"`       // the link answered 2xx (or 304)
	Gone     int `json:"gone"`     // newly found broken: out of search
	Restored int `json:"restored"` // gone before, answering again: back in search
	Failed   int `json:"failed"`   // no verdict (5xx, timeouts, refused): checked again next time
	Robots   int `json:"robots"`   // skipped: robots.txt forbids the URL now
	Recent   int `json:"recent"`   // skipped: checked within OlderThan
}

// NewRecheckFetcher is the fetcher a link check uses: the crawl's HTTP settings in cfg
// (timeouts, user agent, allow-private, resolve), taking only text bodies, so that a
// dataset's answer is its headers and its file is not downloaded.
func NewRecheckFetcher(cfg config.Config) (*fetch.Fetcher, error) {
	fo, err := crawl.FetchOptions(cfg)
	if err != nil {
		return nil, err
	}
	fo.AcceptTypes = []string{"text/*"}
	return fetch.New(fo)
}

// RecheckOptionsFrom are the link check's settings in cfg: the crawl's robots.txt agent and
// politeness, checking links older than olderThan.
func RecheckOptionsFrom(cfg config.Config, olderThan time.Duration, log *slog.Logger) RecheckOptions {
	return RecheckOptions{Agent: cfg.Robots.Agent, Politeness: cfg.Politeness, OlderThan: olderThan, Logger: log}
}

// Recheck is the thesis's broken-link check (seed 000 §3.8.1): every dataset link in cat
// is requested again, host by host under the same politeness as a crawl (robots.txt, the
// crawl's rest between requests to a host, Crawl-delay included), and one that answers 404 or 410 — after redirects —
// is marked gone, which takes it out of search (an Indexer listening to cat deletes its
// document) while its record stays, so a crawl does not fetch it as new. A gone link that
// answers again is restored. Anything else (a 5xx, a timeout, a refused connection) gives
// no verdict: a producer's bad hour must not delete its data from search.
//
// The request is a GET that does not download the file: f should accept only text types
// (NewRecheckFetcher), so a dataset's body is skipped after its headers. HEAD is
// not used because many servers answer it differently from GET (405, or 200 for files that
// are gone).
func Recheck(ctx context.Context, cat *catalog.Catalog, f *fetch.Fetcher, o RecheckOptions) (RecheckStats, error) {
	if o.Hosts <= 0 {
		o.Hosts = 4
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var stats RecheckStats
	byHost := map[string][]*catalog.Dataset{}
	err := cat.Datasets(func(d *catalog.Dataset) error {
		if !d.Geographic || d.Metadata == nil {
			return nil // never in search: nothing to check
		}
		last := d.CheckedAt
		if last.IsZero() {
			last = d.FetchedAt
		}
		if o.OlderThan > 0 && o.Now().Sub(last) < o.OlderThan {
			stats.Recent++
			return nil
		}
		u, err := url.Parse(d.URL)
		if err != nil || u.Host == "" {
			o.Logger.Warn("recheck: dataset URL unusable", "url", d.URL, "err", err)
			return nil
		}
		byHost[u.Scheme+"://"+u.Host] = append(byHost[u.Scheme+"://"+u.Host], d)
		return nil
	})
	if err != nil {
		return stats, err
	}
	hosts := make([]string, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)

	var mu sync.Mutex
	var firstErr error
	count := func(fn func(*RecheckStats)) {
		mu.Lock()
		defer mu.Unlock()
		fn(&stats)
		if o.Progress != nil {
			o.Progress(stats) // one call at a time, though hosts are checked in parallel
		}
	}
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(o.Hosts, len(hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for origin := range work {
				if err := recheckHost(ctx, cat, f, o, origin, byHost[origin], count); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for _, h := range hosts {
		select {
		case work <- h:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return stats, firstErr
}

// recheckHost checks one host's datasets in order, resting between requests as a crawl
// would (crawl.HostDelay under o.Politeness and the host's robots.txt).
func recheckHost(ctx context.Context, cat *catalog.Catalog, f *fetch.Fetcher, o RecheckOptions, origin string, ds []*catalog.Dataset, count func(func(*RecheckStats))) error {
	rules := hostRobots(ctx, f, origin)
	if rules == nil {
		o.Logger.Warn("recheck: robots.txt unavailable; host skipped", "host", origin)
		count(func(s *RecheckStats) { s.Failed += len(ds) })
		return nil
	}
	group := rules.Group(o.Agent)
	var last *fetch.Result // the host's last answer, whose time the delay factor scales
	rest := func() bool {
		d := crawl.HostDelay(o.Politeness, group, last)
		if d <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, d := range ds {
		if !rest() {
			return ctx.Err()
		}
		u, _ := url.Parse(d.URL)
		if !rules.Allowed(o.Agent, robots.PathQuery(u)) {
			count(func(s *RecheckStats) { s.Robots++ })
			continue
		}
		res := f.Fetch(ctx, fetch.Request{URL: d.URL, MaxRedirects: o.MaxRedirects, MaxBodyBytes: 64 << 10})
		last = res
		key := KeyOf(d.URL)
		switch {
		case res.Err == nil && (res.Status == http.StatusNotFound || res.Status == http.StatusGone):
			why := "http-" + strconv.Itoa(res.Status)
			if _, _, err := cat.MarkGone(key, why, o.Now()); err != nil {
				return fmt.Errorf("recheck %s: %w", d.URL, err)
			}
			count(func(s *RecheckStats) {
				s.Checked++
				if d.Gone == "" {
					s.Gone++
				}
			})
			o.Logger.Info("recheck: dataset link broken", "url", d.URL, "status", res.Status)
		case res.Err == nil && (res.Status >= 200 && res.Status < 300 || res.Status == http.StatusNotModified):
			if _, _, err := cat.MarkGone(key, "", o.Now()); err != nil {
				return fmt.Errorf("recheck %s: %w", d.URL, err)
			}
			count(func(s *RecheckStats) {
				s.Checked++
				s.OK++
				if d.Gone != "" {
					s.Restored++
				}
			})
		default:
			detail := strconv.Itoa(res.Status)
			if res.Err != nil {
				detail = res.Err.Error()
			}
			o.Logger.Warn("recheck: no verdict", "url", d.URL, "answer", detail)
			count(func(s *RecheckStats) { s.Checked++; s.Failed++ })
		}
	}
	return nil
}

// hostRobots fetches origin's robots.txt and decides on it as the crawler does
// (robots.FromFetch); nil when the server gives no answer to go by (5xx, 429, no
// connection), in which case the crawler too would not fetch.
func hostRobots(ctx context.Context, f *fetch.Fetcher, origin string) *robots.Robots {
	res := f.Fetch(ctx, fetch.Request{URL: origin + "/robots.txt", MaxRedirects: 5, AnyType: true, MaxBodyBytes: robots.MaxSize})
	e := robots.FromFetch(robots.Response{Status: res.Status, Body: res.Body, CacheControl: res.Header.Get("Cache-Control"), Err: res.Err}, time.Now(), nil, robots.Policy{})
	if e.Outcome == robots.Unreachable {
		return nil
	}
	return e.Rules()
}
