package revisit

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/store"
)

// CrawlPolicy runs a Policy inside the crawler: it is a crawl.RevisitPolicy, turning each
// fetched document into an Observation, and a crawl.HistoryRestorer, rebuilding the
// policy's memory from the store's visit history when a crawl resumes.
//
// When the crawl has a request budget (crawl.budget) shared by discovery and revisits,
// the revisit budget follows discovery: revisits may take what discovery leaves (95% of
// the budget minus the recent rate of first visits), but never less than their share
// while discovery is busy. The frontier serves due revisits and new URLs in turn while
// both wait (frontier.Frontier.pick), so without this a plan made for the few pages known
// at the start would take half of every host's fetches from discovery and leave its
// revisits late, and once discovery ends revisits would leave the rest of the budget idle.
type CrawlPolicy struct {
	name      string
	build     func(Options) (Policy, error) // makes the policy anew (Restore)
	opts      Options
	relevance bool // weight pages by their topical relevance
	dates     *fingerprint.Volatile

	mu    sync.RWMutex
	p     Policy
	fresh *planFreshness // the plan's expected freshness (ExpectedFreshness)

	// The shared budget (0: the revisit budget is fixed) and discovery's recent rate.
	total, share float64
	newRate      float64   // first visits per second, exponentially weighted
	lastObs      time.Time // time of the last observation folded into newRate
	current      float64   // the revisit budget last given to the policy

	// undiscovered is how many queued URLs the crawl has never fetched; discovering says
	// discovery is making progress on them (followDiscovery).
	undiscovered int64
	discovering  bool
	told         bool // the crawler reports undiscovered (crawl.DiscoveryAware)
	rateTold     bool // the policy knows the crawl's rate (paced)
}

// Headroom is the part of the shared budget plans may count on: the pacer loses a few
// slots to workers that wait for work, and a plan that asks for more than the crawler can
// do leaves every revisit late and discovery starved.
const Headroom = 0.95

// NewCrawlPolicy makes the named policy for the crawler. With relevance set, pages are
// weighted by their record's relevance (focused crawling).
func NewCrawlPolicy(name string, o Options, relevance bool) (*CrawlPolicy, error) {
	return newCrawlPolicy(name, func(o Options) (Policy, error) { return NewForCrawl(name, o) }, o, relevance)
}

func newCrawlPolicy(name string, build func(Options) (Policy, error), o Options, relevance bool) (*CrawlPolicy, error) {
	p, err := build(o)
	if err != nil {
		return nil, err
	}
	dates, _ := fingerprint.NewVolatile("dates", "times")
	return &CrawlPolicy{name: name, build: build, opts: o, relevance: relevance, dates: dates, p: p, fresh: newPlanFreshness(o)}, nil
}

// NewForCrawl is New for a live crawl: the optimal policy re-plans in the background, so
// the crawl worker whose visit starts a re-plan is not held for it (FromConfigWith's
// build functions use it to make named policies with options of their own).
func NewForCrawl(name string, o Options) (Policy, error) {
	p, err := New(name, o)
	if err != nil {
		return nil, err
	}
	if op, ok := p.(*optimal); ok {
		op.background = true
	}
	return p, nil
}

// FromConfig makes the policy cfg's revisit section asks for; nil (and no error) for
// policy none, so the crawl ends when its frontier is empty.
func FromConfig(cfg config.Config) (*CrawlPolicy, error) {
	r := cfg.Revisit
	if r.Policy == "" || r.Policy == "none" {
		return nil, nil
	}
	return FromConfigWith(cfg, r.Policy, func(o Options) (Policy, error) { return NewForCrawl(r.Policy, o) })
}

// FromConfigWith is FromConfig for a policy that build makes from the options cfg's
// revisit section gives (an evaluation's Oracle); the revisit budget still follows
// discovery as for the named policies.
func FromConfigWith(cfg config.Config, name string, build func(Options) (Policy, error)) (*CrawlPolicy, error) {
	r := cfg.Revisit
	o, err := OptionsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	cp, err := newCrawlPolicy(name, build, o, r.Weight == "relevance")
	if err != nil {
		return nil, fmt.Errorf("revisit.policy: %w", err)
	}
	if r.Budget == 0 && cfg.Crawl.Budget > 0 {
		cp.total, cp.share, cp.current = cfg.Crawl.Budget.PerSecond(), r.Share, o.Budget
	}
	return cp, nil
}

// OptionsFromConfig translates the revisit section into policy options. The per-host cap
// is the share of a host's polite request rate (per-host / min-delay) that revisits may
// take; without a minimum delay hosts are not capped.
func OptionsFromConfig(cfg config.Config) (Options, error) {
	r := cfg.Revisit
	o := Options{
		Budget:      cfg.RevisitBudget(),
		Interval:    r.Interval,
		MinInterval: r.MinInterval,
		MaxInterval: r.MaxInterval,
		Unit:        r.ProportionalUnit,
		Classes: ClassOptions{
			Periods: r.ClassPeriods, Windows: r.ClassWindows, Upper: r.ClassUpper, Lower: r.ClassLower,
		},
		Adaptive: AdaptiveOptions{Inc: r.AdaptiveInc, Dec: r.AdaptiveDec, SyncRate: r.AdaptiveSyncRate, NoSync: r.AdaptiveSyncRate == 0,
			Min: r.MinInterval, Max: r.MaxInterval},
	}
	if d := cfg.Politeness.MinDelay; d > 0 {
		share := r.Share
		if share <= 0 {
			share = 1
		}
		o.HostCap = share * float64(cfg.Politeness.PerHost) / d.Seconds()
	}
	if r.ClassModel != "" {
		m, err := LoadClassModel(r.ClassModel)
		if err != nil {
			return o, fmt.Errorf("revisit.class-model: %w", err)
		}
		if periods := len(r.ClassPeriods); periods > 0 && m.Classes() != periods {
			return o, fmt.Errorf("revisit.class-model: %s predicts %d classes but revisit.class-periods has %d", r.ClassModel, m.Classes(), periods)
		}
		o.Classes.Initial = m
	}
	return o, nil
}

// Policy returns the policy in use.
func (c *CrawlPolicy) Policy() Policy {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.p
}

// Undiscovered implements crawl.DiscoveryAware.
func (c *CrawlPolicy) Undiscovered(urls int64) {
	c.mu.Lock()
	c.undiscovered, c.told = urls, true
	c.mu.Unlock()
}

// NextVisit implements crawl.RevisitPolicy.
func (c *CrawlPolicy) NextVisit(d *crawl.Document, now time.Time) time.Time {
	o := c.Observe(d, now)
	c.followDiscovery(o)
	c.followPending()
	key := [16]byte(d.URL.Key())
	next := c.Policy().Visit(key, o)
	c.freshness().observe(key, o, next)
	return next
}

// ExpectedFreshness implements crawl.FreshnessReporter: the weighted share of the pages
// the plan keeps that are expected up to date at a random moment, under a Gamma model of
// their change rates fitted to this crawl's visits (see planFreshness); ok is false before
// the first page is planned.
func (c *CrawlPolicy) ExpectedFreshness() (float64, bool) {
	return c.freshness().expected(time.Now())
}

func (c *CrawlPolicy) freshness() *planFreshness {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.fresh
}

// followDiscovery updates the rate of first visits and, when the revisit budget it implies
// moved by more than 5%, gives the policy its new budget.
func (c *CrawlPolicy) followDiscovery(o Observation) {
	if c.total <= 0 {
		return
	}
	c.mu.Lock()
	// An exponentially weighted rate over about 50 requests' time, at least 10 seconds.
	tau := max(10, 50/c.total)
	if !c.lastObs.IsZero() {
		if dt := o.At.Sub(c.lastObs).Seconds(); dt > 0 {
			c.newRate *= math.Exp(-dt / tau)
		}
	}
	if o.At.After(c.lastObs) {
		c.lastObs = o.At
	}
	if o.First {
		c.newRate += 1 / tau
	}
	// While URLs wait for their first fetch and discovery is making progress (a first
	// visit within the last tau), discovery has work for all the budget revisits leave
	// it: revisits keep their share and no more. Measured by the rate of first visits
	// alone, the budget fed itself: revisits that crowded discovery out lowered that rate,
	// which raised their budget (issue 13's live runs, where discovery took minutes).
	// URLs that make no progress (a host that never answers) do not hold the budget back.
	// When the crawler says no URL waits for its first fetch, discovery needs nothing now:
	// the budget goes to revisits at once rather than as the rate of first visits decays.
	// Discovery is given no more than fetching every waiting URL within tau takes,
	// though: the last handful of URLs of a crawl (issue 13's live runs: 5 of 205 for two
	// minutes) need a few fetches, not half the budget, and a plan made for half the
	// budget leaves the pages' visits spaced for it well after discovery ends.
	c.discovering = c.undiscovered > 0 && c.newRate*tau >= 0.999
	discovery := c.newRate
	switch {
	case c.discovering:
		discovery = min(c.total, float64(c.undiscovered)/tau)
	case c.told && c.undiscovered == 0:
		discovery = 0
	}
	full := Headroom * c.total
	b := min(max(Headroom*(c.total-discovery), c.share*c.total), full)
	// Changes under 5% are not passed on (each one re-plans), but the rate of first visits
	// decays towards zero in steps smaller than that, and the last 2% of the budget stayed
	// unspent for the rest of issue 13's live crawls: within 1% of the whole budget, it is
	// the whole budget.
	if b >= 0.99*full {
		b = full
	}
	changed := math.Abs(b-c.current) > 0.05*c.current || b == full && c.current != full
	if changed {
		c.current = b
	}
	p := c.p
	tellRate := !c.rateTold
	c.rateTold = true
	c.mu.Unlock()
	if bp, ok := p.(budgeted); ok && changed {
		bp.setBudget(b)
	}
	if pp, ok := p.(paced); ok && tellRate {
		pp.setCrawlRate(c.total)
	}
}

// followPending tells a policy that plans for pages not fetched yet how many there are.
func (c *CrawlPolicy) followPending() {
	c.mu.RLock()
	pending, p := c.undiscovered, c.p
	if !c.discovering {
		pending = 0
	}
	horizon := float64(pending) / max(c.newRate, 1e-3*c.total, 1e-9)
	c.mu.RUnlock()
	if pp, ok := p.(pendingAware); ok {
		pp.setPending(int(pending), horizon)
	}
}

// Observe turns a fetched document into an observation.
func (c *CrawlPolicy) Observe(d *crawl.Document, now time.Time) Observation {
	rec := d.Record
	o := Observation{
		At:     rec.FetchedAt,
		Status: StatusOf(d.Fetch != nil, rec.Status, rec.Fingerprint != ""),
		First:  d.Prev == nil || d.Prev.Fingerprint == "",
		Host:   d.URL.HostKey(),
	}
	if o.At.IsZero() {
		o.At = now
	}
	o.Changed = o.Status == OK && rec.Changed
	o.LastModified = parseHTTPTime(rec.LastModified)
	if c.relevance && rec.Relevance != nil {
		o.Weight = max(*rec.Relevance, 1e-3)
	}
	if o.First && o.Status == OK && c.wantFeatures() {
		f := c.features(d)
		o.Features = &f
	}
	return o
}

// wantFeatures says the policy reads page features: an initial classifier, or the optimal
// policy's feature groups.
func (c *CrawlPolicy) wantFeatures() bool {
	if c.opts.Classes.Initial != nil {
		return true
	}
	op, ok := c.Policy().(*optimal)
	return ok && op.groups != nil && !op.opt.NoFeaturePrior
}

// StatusOf classifies a visit: fetched says a request was made (robots.txt may forbid
// it), status is the HTTP status (0 without a response), fingerprinted that the response
// had text to compare.
func StatusOf(fetched bool, status int, fingerprinted bool) Status {
	switch {
	case !fetched:
		return Gone
	case status == http.StatusNotModified:
		return NotModified
	case status >= 200 && status < 300:
		if fingerprinted {
			return OK
		}
		return Gone // nothing to compare: a body not downloaded, or without text
	case status == 0, status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500:
		return Failed // transient: keep the plan
	}
	return Gone // redirects (their target is visited itself), 404, 410 and other refusals
}

func parseHTTPTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// features computes seed 004's page features (and sonda's additions) from a document.
func (c *CrawlPolicy) features(d *crawl.Document) Features {
	f := Features{
		TextSize: float64(len(d.Text)),
		URLLevel: float64(URLLevel(d.URL.Path())),
		Depth:    float64(d.Item.Depth),
		Section:  URLSection(d.URL.Path()),
		Dates:    float64(c.dates.Count(d.Text)),
		MaxAge:   -1,
	}
	if d.Record.LastModified != "" {
		f.LastModified = 1
	}
	if strings.Contains(d.URL.String(), "?") {
		f.Query = 1
	}
	if d.Page != nil {
		f.Links = float64(len(d.Page.Links))
		f.Feeds = float64(len(d.Page.Feeds))
		for _, r := range d.Page.Resources {
			if r.Tag == "img" {
				f.Images++
			}
		}
	}
	if d.Fetch != nil {
		f.Mailto = float64(countFold(d.Fetch.UTF8, "mailto:"))
		if d.Fetch.Header != nil {
			f.MaxAge = maxAge(d.Fetch.Header.Get("Cache-Control"))
		}
	}
	return f
}

// countFold counts case-insensitive occurrences of an ASCII lowercase needle.
func countFold(b []byte, needle string) int {
	n := 0
	for {
		i := bytes.IndexByte(b, ':')
		if i < 0 {
			return n
		}
		if i >= len(needle)-1 && strings.EqualFold(string(b[i-len(needle)+1:i+1]), needle) {
			n++
		}
		b = b[i+1:]
	}
}

// Restore implements crawl.HistoryRestorer: it makes a fresh policy and replays every
// URL's visit history into it, so a resumed crawl plans with everything it learnt before.
// Features are not kept in the history, so restored pages start from no initial class
// prediction; their history reclassifies them as before.
func (c *CrawlPolicy) Restore(db *store.DB) error {
	p, err := c.build(c.opts)
	if err != nil {
		return err
	}
	if op, ok := p.(*optimal); ok {
		op.holdReplan = true
		defer func() {
			op.mu.Lock()
			op.holdReplan = false
			op.mu.Unlock()
		}()
	}
	fresh := newPlanFreshness(c.opts)
	err = db.Histories(func(key store.URLKey, rec *store.Page, visits []store.Visit) error {
		host := ""
		if u, err := url.Parse(rec.URL); err == nil {
			host = strings.ToLower(u.Host)
		}
		var weight float64
		if c.relevance && rec.Relevance != nil {
			weight = max(*rec.Relevance, 1e-3)
		}
		seen := false
		for _, v := range visits {
			o := Observation{
				At:           v.At,
				Status:       StatusOf(true, v.Status, v.Fingerprint != ""),
				Changed:      v.Changed,
				First:        !seen,
				LastModified: parseHTTPTime(v.LastModified),
				Weight:       weight,
				Host:         host,
			}
			if v.Status == 0 && strings.HasPrefix(v.Error, "robots-") {
				o.Status = Gone // robots.txt forbade the fetch: no request was made
			}
			o.Changed = o.Changed && o.Status == OK
			fresh.observe(key, o, p.Visit(key, o))
			seen = seen || v.Fingerprint != ""
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revisit: restore from the visit history: %w", err)
	}
	if bp, ok := p.(budgeted); ok && c.total > 0 {
		bp.setBudget(c.current)
	}
	if pp, ok := p.(paced); ok && c.total > 0 {
		pp.setCrawlRate(c.total)
	}
	c.mu.Lock()
	c.p, c.fresh = p, fresh
	c.mu.Unlock()
	return nil
}

var (
	_ crawl.RevisitPolicy     = (*CrawlPolicy)(nil)
	_ crawl.DiscoveryAware    = (*CrawlPolicy)(nil)
	_ crawl.HistoryRestorer   = (*CrawlPolicy)(nil)
	_ crawl.FreshnessReporter = (*CrawlPolicy)(nil)
)
