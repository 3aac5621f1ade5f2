package crawl

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/render"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/warc"
)

// Rendering (render.mode auto or always) runs an HTML page's scripts in a headless browser
// and reads the DOM they build instead of the raw HTML. The browser reaches nothing by
// itself: every request it makes comes to the gate below, which applies the crawl's own
// rules (the SSRF guard, scope, robots.txt, per-host politeness, the size cap) and answers
// from a per-crawl cache when it can. The page itself is handed over as already fetched.

// PageRenderer runs pages in a browser: what the crawl needs of package render.
type PageRenderer interface {
	Render(ctx context.Context, p render.Page) (*render.Result, error)
	Stats() render.Stats
	Close() error
}

// WithRenderer makes the crawl render with r instead of starting a browser of its own when
// render.mode asks for one. The crawler does not close r.
func WithRenderer(r PageRenderer) Option { return func(c *Crawler) { c.rs.external = r } }

// RenderOptions are the browser settings of cfg.
func RenderOptions(cfg config.Config) render.Options {
	r := cfg.Render
	return render.Options{ExecPath: r.Chromium, Tabs: r.Tabs, NavigationTimeout: r.NavigationTimeout, Idle: r.Idle,
		Deadline: r.Deadline, Scrolls: r.Scrolls, LoadMedia: r.LoadMedia, MemoryLimit: int64(r.MemoryLimit), Nice: r.Nice}
}

// learnAfter is how many renders of a host auto mode makes before it judges whether
// rendering pays there; a host where fewer than one render in payShare paid stops being
// rendered.
const (
	learnAfter = 3
	payShare   = 3
)

// renderState is the crawl's rendering: the browser, the gate's cache and pacing, and what
// it learned per host.
type renderState struct {
	mode     string
	r        PageRenderer
	external PageRenderer // from WithRenderer: not closed by the crawler
	cache    *subCache
	pace     hostPacer

	detected, skippedLearned, subrequests, cacheHits atomic.Int64

	// Renders run on goroutines of their own, never on a fetch worker: a worker hands a
	// page to be rendered over (renderLater) and goes back to the frontier, so hosts whose
	// pages need no browser keep their pace while pages wait for a tab. queue bounds the
	// pages handed over (rendering or waiting for a tab), and so the memory they hold, to
	// as many as the workers hold; past full (every tab busy and as many pages ready for
	// the next), hosts known to render are not fetched (deferFetch).
	queue    chan struct{}
	full     int
	gov      *renderGovernor // render.cpu-share; nil: renders are not held back for CPU
	signal   loadSignal      // what gov reads (procLoad; tests set their own)
	wg       sync.WaitGroup
	deferred atomic.Int64 // leases given back unfetched: their host renders and the queue was full
	waited   atomic.Int64 // pages whose worker waited for room in the queue
	failMu   sync.Mutex
	failed   error // the first error finishing a rendered page (the crawl stops on it)

	mu      sync.Mutex
	hosts   map[string]*HostRender
	blocked map[string]int64 // gate refusals by rule
	times   []time.Duration  // render durations, a bounded reservoir for the percentiles
	timeN   int64
}

// HostRender is what rendering did on one host.
type HostRender struct {
	Renders    int64 `json:"renders"`     // pages rendered
	Paid       int64 `json:"paid"`        // renders that found more text or more in-scope links
	LinksAdded int64 `json:"links_added"` // links only the rendered DOM had
	Requests   int64 `json:"requests"`    // subresource requests to this host the gate answered
	Off        bool  `json:"off"`         // auto mode stopped rendering the host: it did not pay

	handed int64 // pages handed to a render (deferFetch: the host's pages are rendered)
}

// RenderSummary describes rendering in a crawl.
type RenderSummary struct {
	Mode           string                 `json:"mode"`
	Renders        int64                  `json:"renders"`
	Failures       int64                  `json:"failures"`
	Restarts       int64                  `json:"restarts"`
	Crashes        int64                  `json:"crashes"`
	MemoryBytes    int64                  `json:"memory_bytes"`
	Detected       int64                  `json:"detected"`        // pages auto mode found script-built
	SkippedLearned int64                  `json:"skipped_learned"` // of them, not rendered: their host does not pay
	Subrequests    int64                  `json:"subrequests"`     // requests the gate answered (from the network or the cache)
	CacheHits      int64                  `json:"cache_hits"`
	LinksAdded     int64                  `json:"links_added"`
	Deferred       int64                  `json:"deferred"`          // leases given back unfetched: their host renders and the render queue was full
	Waited         int64                  `json:"waited"`            // pages whose fetch worker waited for room in the render queue
	Held           int64                  `json:"held"`              // renders that waited for CPU (render.cpu-share) while fetching was CPU-bound
	Blocked        map[string]int64       `json:"blocked,omitempty"` // requests the gate refused, by rule
	P50, P99       time.Duration          `json:"-"`
	P50Ms          int64                  `json:"p50_ms"`
	P99Ms          int64                  `json:"p99_ms"`
	Hosts          map[string]*HostRender `json:"hosts,omitempty"`
}

const maxRenderSamples = 4096

// startRendering starts the browser render.mode asks for (none for never).
func (c *Crawler) startRendering() error {
	rs := &c.rs
	rs.mode = c.cfg.Render.Mode
	rs.hosts, rs.blocked = map[string]*HostRender{}, map[string]int64{}
	if rs.mode == "never" || rs.mode == "" {
		return nil
	}
	rs.cache = newSubCache(int64(c.cfg.Render.CacheSize))
	tabs := c.cfg.Render.Tabs
	if tabs <= 0 {
		tabs = render.DefaultTabs
	}
	rs.full = 2 * tabs
	rs.queue = make(chan struct{}, rs.full+c.cfg.Crawl.Concurrency)
	rs.pace.hosts = map[string]*hostTurn{}
	if share := c.cfg.Render.CPUShare; share > 0 && share < 1 {
		if rs.signal == nil {
			rs.signal = procLoad{c}
		}
		rs.gov = newRenderGovernor(share, tabs, rs.signal)
	}
	if rs.external != nil {
		rs.r = rs.external
		return nil
	}
	o := RenderOptions(c.cfg)
	o.Logger = c.log
	o.Lazy = rs.mode == "auto" // many auto crawls never meet a script-built page
	r, err := render.New(o)
	if err != nil {
		return fmt.Errorf("render.mode %s: %w", rs.mode, err)
	}
	rs.r = r
	return nil
}

// govern starts the governor's readings, if renders are governed; stop ends them (and
// lets every render start).
func (rs *renderState) govern() (stop func()) {
	if rs.gov == nil {
		return func() {}
	}
	return rs.gov.run(context.Background())
}

func (rs *renderState) close() error {
	if rs.r != nil && rs.external == nil {
		return rs.r.Close()
	}
	return nil
}

func (rs *renderState) host(h string) *HostRender {
	hr := rs.hosts[h]
	if hr == nil {
		hr = &HostRender{}
		rs.hosts[h] = hr
	}
	return hr
}

// summary snapshots the rendering figures.
func (rs *renderState) summary() RenderSummary {
	s := RenderSummary{Mode: rs.mode, Detected: rs.detected.Load(), SkippedLearned: rs.skippedLearned.Load(),
		Subrequests: rs.subrequests.Load(), CacheHits: rs.cacheHits.Load(), Deferred: rs.deferred.Load(), Waited: rs.waited.Load()}
	if rs.gov != nil {
		s.Held = rs.gov.held.Load()
	}
	if rs.r != nil {
		st := rs.r.Stats()
		s.Renders, s.Failures, s.Restarts, s.Crashes, s.MemoryBytes = st.Renders, st.Failures, st.Restarts, st.Crashes, st.Memory
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.blocked) > 0 {
		s.Blocked = maps(rs.blocked)
	}
	if len(rs.hosts) > 0 {
		s.Hosts = make(map[string]*HostRender, len(rs.hosts))
		for h, hr := range rs.hosts {
			cp := *hr
			s.Hosts[h] = &cp
			s.LinksAdded += hr.LinksAdded
		}
	}
	if n := len(rs.times); n > 0 {
		t := slices.Clone(rs.times)
		slices.Sort(t)
		s.P50, s.P99 = t[n/2], t[min(n-1, n*99/100)]
		s.P50Ms, s.P99Ms = s.P50.Milliseconds(), s.P99.Milliseconds()
	}
	return s
}

func maps(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// observe keeps a render's duration: the first maxRenderSamples, then a reservoir sample.
func (rs *renderState) observe(d time.Duration) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.timeN++
	if len(rs.times) < maxRenderSamples {
		rs.times = append(rs.times, d)
		return
	}
	if i := rs.timeN % (rs.timeN*7919%maxRenderSamples + 1); i < maxRenderSamples {
		rs.times[i] = d
	}
}

// wantRender decides whether a parsed HTML page is rendered.
func (c *Crawler) wantRender(d *Document, page *parse.Page) bool {
	rs := &c.rs
	switch rs.mode {
	case "always":
		return true
	case "auto":
	default:
		return false
	}
	if !render.Detect(page, d.Fetch.UTF8).ScriptBuilt() {
		return false
	}
	rs.detected.Add(1)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	hr := rs.host(d.URL.HostKey())
	if hr.Renders >= learnAfter && hr.Paid*payShare < hr.Renders {
		if !hr.Off {
			hr.Off = true
			c.log.Info("render: the host's pages gain nothing from rendering; reading their raw HTML from now on", "host", d.URL.HostKey(), "renders", hr.Renders, "paid", hr.Paid)
		}
		rs.skippedLearned.Add(1)
		return false
	}
	return true
}

// renderRetry is how long a lease given back by deferFetch waits before it is offered again.
const renderRetry = 500 * time.Millisecond

// deferFetch says whether a lease of host should be given back unfetched: the host's pages
// are rendered (some were handed to a render, and the host was not turned off) and the
// render queue is full, so its page would only add to the wait. Pages of hosts not known
// to render still go in, up to the queue's capacity; past it their worker waits.
func (rs *renderState) deferFetch(host string) bool {
	if rs.queue == nil || len(rs.queue) < rs.full {
		return false
	}
	rs.mu.Lock()
	hr := rs.hosts[host]
	rendered := hr != nil && hr.handed > 0 && !hr.Off
	rs.mu.Unlock()
	if rendered {
		rs.deferred.Add(1)
	}
	return rendered
}

func isHTML(res *fetch.Result) bool {
	return res.MediaType == "text/html" || res.MediaType == "application/xhtml+xml"
}

// parseHTML parses body as the HTML of d.
func (c *Crawler) parseHTML(d *Document, body []byte) (*parse.Page, error) {
	return parse.Parse(body, d.Item.URL, parse.Options{Resolver: c.norm, RobotsNames: []string{c.cfg.Robots.Agent}})
}

// renderCandidate parses the raw HTML of d, a successful response (nil when it is not an
// HTML page that parses), and says whether render.mode wants the page rendered.
func (c *Crawler) renderCandidate(d *Document) (*parse.Page, bool) {
	res := d.Fetch
	if res.Skipped != "" || res.UTF8 == nil || res.Err != nil || !isHTML(res) {
		return nil, false
	}
	page, err := c.parseHTML(d, res.UTF8)
	if err != nil {
		return nil, false
	}
	return page, c.wantRender(d, page)
}

// renderLater hands d, fetched with lease l and parsed from its raw HTML into raw, to a
// goroutine of its own that renders it and finishes it (analyzers, WARC, the lease), and
// returns: the worker goes on with other hosts meanwhile. The lease stays held until the
// page is finished, so its host makes no other request meanwhile (the render's own are
// paced by the gate). When the queue is at capacity the worker waits for room. leave, when set, is the gate's hold on the item;
// renderLater takes it over. An error finishing the page stops the crawl through stop.
func (c *Crawler) renderLater(ctx context.Context, l *frontier.Lease, d *Document, out frontier.Outcome, slot *robotsSlot, raw *parse.Page, now time.Time, leave *func(), stop context.CancelCauseFunc) error {
	rs := &c.rs
	select {
	case rs.queue <- struct{}{}:
	default:
		rs.waited.Add(1)
		select {
		case rs.queue <- struct{}{}:
		case <-ctx.Done():
			return c.frontier.Release(l, time.Time{}) // stopping: the URL stays queued
		}
	}
	rs.mu.Lock()
	rs.host(d.URL.HostKey()).handed++
	rs.mu.Unlock()
	left := *leave
	*leave = nil
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		defer func() { <-rs.queue }()
		if left != nil {
			defer left()
		}
		page := c.renderPage(ctx, d, raw, slot)
		c.analyzeContent(ctx, d, &out, page)
		if err := c.complete(l, d, out, "", "", now); err != nil {
			rs.failMu.Lock()
			if rs.failed == nil {
				rs.failed = err
			}
			rs.failMu.Unlock()
			stop(err)
		}
	}()
	return nil
}

// wait waits for the pages handed to renders and returns the first error finishing one.
func (rs *renderState) wait() error {
	rs.wg.Wait()
	rs.failMu.Lock()
	defer rs.failMu.Unlock()
	return rs.failed
}

// renderPage renders d (whose raw HTML parsed into raw) and, when that works, returns the
// parse of the rendered DOM, having swapped d.Fetch for a copy whose body is that DOM (the
// raw response stays in d.Raw for the WARC). On failure it returns raw and notes why.
func (c *Crawler) renderPage(ctx context.Context, d *Document, raw *parse.Page, slot *robotsSlot) *parse.Page {
	res := d.Fetch
	host := d.URL.HostKey()
	// The page's host rests after the page itself before its subresources are asked for.
	c.rs.pace.rested(host, c.delay(slot, res))
	out, err := c.render(ctx, render.Page{Response: res, Gate: &renderGate{c: c, d: d}})
	if err != nil {
		d.Record.RenderError = err.Error()
		c.log.Warn("render failed; the page is read from its raw HTML", "url", d.Item.URL, "error", err)
		return raw
	}
	c.rs.observe(out.Duration)
	c.metrics.renderSeconds.Observe(out.Duration.Seconds())
	page, err := c.parseHTML(d, out.HTML)
	if err != nil {
		d.Record.RenderError = "parse rendered DOM: " + err.Error()
		return raw
	}
	rendered := *res
	rendered.Body, rendered.UTF8, rendered.Charset, rendered.CharsetSource = out.HTML, out.HTML, "utf-8", "rendered"
	d.Raw, d.Fetch, d.Rendered = res, &rendered, out
	d.Record.Rendered = true

	// Links the raw HTML did not have are marked (Link.Rendered) and counted per host.
	had := make(map[string]bool, len(raw.Links))
	for _, l := range raw.Links {
		had[l.URL] = true
	}
	d.renderedOnly = map[string]bool{}
	for _, l := range page.Links {
		if !had[l.URL] {
			d.renderedOnly[l.URL] = true
		}
	}
	for _, nav := range out.Navigations {
		if !had[nav] {
			d.renderedOnly[nav] = true
			d.Discovered = append(d.Discovered, nav)
		}
	}
	d.Record.RenderedLinks = len(d.renderedOnly)
	newInScope := 0
	for u := range d.renderedOnly {
		if nu, err := c.norm.Parse(u); err == nil && c.scope.Load().Check(nu, d.Item.Depth+1).Allowed {
			newInScope++
		}
	}
	rawText, newText := utf8.RuneCountInString(raw.Text()), utf8.RuneCountInString(page.Text())
	paid := newInScope > 0 || newText > rawText+rawText/4+100
	c.rs.mu.Lock()
	hr := c.rs.host(host)
	hr.Renders++
	hr.LinksAdded += int64(len(d.renderedOnly))
	if paid {
		hr.Paid++
	}
	c.rs.mu.Unlock()
	return page
}

// render renders p once the governor (if any) lets it start.
func (c *Crawler) render(ctx context.Context, p render.Page) (*render.Result, error) {
	if g := c.rs.gov; g != nil {
		if err := g.admit(ctx); err != nil {
			return nil, err
		}
		defer g.finish()
	}
	return c.rs.r.Render(ctx, p)
}

// archiveRendered writes the rendered DOM as a WARC conversion record that refers to the
// response record of the raw HTML, so a capture keeps both.
func (c *Crawler) archiveRendered(d *Document, refersTo string) {
	if c.warc == nil || d.Rendered == nil {
		return
	}
	h := warc.Header{
		{Name: warc.FieldType, Value: warc.TypeConversion},
		{Name: warc.FieldTargetURI, Value: d.Raw.FinalURL},
		{Name: warc.FieldContentType, Value: "text/html; charset=utf-8"},
	}
	if refersTo != "" {
		h = append(h, warc.Field{Name: warc.FieldRefersTo, Value: refersTo})
	}
	loc, err := c.warc.WriteRecord(&warc.Record{Header: h, Content: d.Rendered.HTML})
	if err != nil {
		c.log.Error("WARC write failed", "url", d.Item.URL, "record", "conversion", "error", err)
		return
	}
	d.Record.RenderedWARC = loc.File + "#" + strconv.FormatInt(loc.Offset, 10)
}

// renderGate answers a rendered page's requests with the crawl's own rules.
type renderGate struct {
	c *Crawler
	d *Document
}

// gateRefusal is the gate's refusal of a request; its text names the rule.
type gateRefusal struct{ rule, detail string }

func (e *gateRefusal) Error() string { return e.rule + ": " + e.detail }

func (g *renderGate) refuse(rule, detail string) error {
	rs := &g.c.rs
	rs.mu.Lock()
	rs.blocked[rule]++
	rs.mu.Unlock()
	return &gateRefusal{rule, detail}
}

// Fetch implements render.Gate.
func (g *renderGate) Fetch(ctx context.Context, r render.Request) (*fetch.Result, error) {
	c := g.c
	u, err := c.norm.Parse(r.URL)
	if err != nil {
		return nil, g.refuse("bad-url", err.Error())
	}
	if why := c.privateTarget(ctx, u); why != "" {
		return nil, g.refuse("private-address", why)
	}
	if v := c.scope.Load().Check(u, g.d.Item.Depth); !v.Allowed {
		return nil, g.refuse("scope", v.Rule+" ("+u.String()+")")
	}
	if res := c.rs.cache.get(u.String()); res != nil {
		c.rs.cacheHits.Add(1)
		c.rs.subrequests.Add(1)
		return res, nil
	}
	slot, err := c.robotsNow(ctx, u)
	if err != nil {
		return nil, g.refuse("robots-unavailable", err.Error())
	}
	if !slot.group.Allowed(u.PathQuery()) {
		c.stats.disallowed.Add(1)
		return nil, g.refuse("robots-disallowed", "robots.txt disallows "+u.PathQuery())
	}
	host := u.HostKey()
	release, err := c.rs.pace.turn(ctx, host)
	if err != nil {
		return nil, err
	}
	res := c.fetcher.Fetch(ctx, fetch.Request{URL: u.String(), AnyType: true})
	release(c.delay(slot, res))
	c.stats.bytes.Add(int64(len(res.Wire)))
	c.archive(res, nil)
	c.rs.subrequests.Add(1)
	c.rs.mu.Lock()
	c.rs.host(host).Requests++
	c.rs.mu.Unlock()
	switch {
	case res.Err != nil:
		return nil, g.refuse("fetch-"+string(fetch.KindOf(res.Err)), res.Err.Error())
	case res.Truncated != "":
		return nil, g.refuse("size-cap", "body cut at "+res.Truncated+" limit")
	}
	if res.Status == 200 {
		c.rs.cache.put(u.String(), res)
	}
	return res, nil
}

// privateTarget says why u may not be asked for by a page's script, "" when it may:
// without render.allow-private, a host that fetch.resolve does not map may not be (or
// resolve to) a loopback, private or link-local address, even when fetch.allow-private
// lets the crawl itself reach one.
func (c *Crawler) privateTarget(ctx context.Context, u urlnorm.URL) string {
	if c.cfg.Render.AllowPrivate {
		return ""
	}
	host := u.Hostname()
	for _, m := range c.resolve {
		if m.Matches(host) {
			return ""
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if r := fetch.BlockedReason(a); r != "" {
			return host + " is a " + r + " address"
		}
		return ""
	}
	if !c.cfg.Fetch.AllowPrivate {
		return "" // the fetcher's own guard refuses private addresses at dial time
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if r := fetch.BlockedReason(a); r != "" {
			return host + " resolves to a " + r + " address"
		}
	}
	return ""
}

// robotsNow returns u's origin's robots.txt entry, fetching it first if needed (outside
// the frontier: a subresource has no lease). An unreachable robots.txt is an error.
func (c *Crawler) robotsNow(ctx context.Context, u urlnorm.URL) (*robotsSlot, error) {
	o := origin(u)
	for {
		slot, mustFetch, wait, err := c.robots.lookup(o, c.clock())
		if err != nil {
			return nil, err
		}
		if slot == nil && mustFetch {
			release, err := c.rs.pace.turn(ctx, u.HostKey())
			if err != nil {
				c.robots.abandon(o)
				return nil, err
			}
			var res *fetch.Result
			slot, res, err = c.loadRobots(ctx, u.HostKey(), o)
			release(c.delay(slot, res))
			if err != nil {
				return nil, err
			}
		}
		if slot != nil {
			if slot.entry.Outcome == robots.Unreachable {
				return nil, errors.New("robots.txt unreachable: " + slot.entry.Err)
			}
			return slot, nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// hostPacer spaces the gate's requests to each host: one at a time, each after the host's
// rest (HostDelay) since the last.
type hostPacer struct {
	mu    sync.Mutex
	hosts map[string]*hostTurn
}

type hostTurn struct {
	sem  chan struct{}
	next time.Time // guarded by holding sem
}

// maxPacedHosts bounds the pacer's memory: past it, hosts whose rest is over and that no
// request holds are forgotten (they have nothing left to enforce).
const maxPacedHosts = 10000

func (p *hostPacer) get(host string) *hostTurn {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.hosts[host]
	if t == nil && len(p.hosts) >= maxPacedHosts {
		now := time.Now()
		for h, old := range p.hosts {
			select {
			case old.sem <- struct{}{}:
				if old.next.Before(now) {
					delete(p.hosts, h)
				}
				<-old.sem
			default:
			}
		}
	}
	if t == nil {
		t = &hostTurn{sem: make(chan struct{}, 1)}
		p.hosts[host] = t
	}
	return t
}

// turn waits for host's turn; release ends it and sets the rest before the next.
func (p *hostPacer) turn(ctx context.Context, host string) (release func(rest time.Duration), err error) {
	t := p.get(host)
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if wait := time.Until(t.next); wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			<-t.sem
			return nil, ctx.Err()
		}
	}
	return func(rest time.Duration) {
		t.next = time.Now().Add(rest)
		<-t.sem
	}, nil
}

// rested records a request made outside the pacer (the page itself): the next waits rest.
func (p *hostPacer) rested(host string, rest time.Duration) {
	t := p.get(host)
	t.sem <- struct{}{}
	if next := time.Now().Add(rest); next.After(t.next) {
		t.next = next
	}
	<-t.sem
}

// subCache keeps the gate's successful answers for the crawl, least recently used first
// out, within a byte budget: an app's script and styles are fetched once per crawl.
type subCache struct {
	limit int64
	mu    sync.Mutex
	size  int64
	lru   *list.List // of *cached, front: most recent
	byURL map[string]*list.Element
}

type cached struct {
	url string
	res *fetch.Result
}

func newSubCache(limit int64) *subCache {
	return &subCache{limit: limit, lru: list.New(), byURL: map[string]*list.Element{}}
}

func (s *subCache) get(u string) *fetch.Result {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byURL[u]; ok {
		s.lru.MoveToFront(el)
		return el.Value.(*cached).res
	}
	return nil
}

func (s *subCache) put(u string, res *fetch.Result) {
	// Only what the browser is handed is kept: the decoded body and the headers.
	keep := &fetch.Result{URL: res.URL, FinalURL: res.FinalURL, Status: res.Status, Proto: res.Proto, Header: res.Header,
		Body: res.Body, MediaType: res.MediaType, Location: res.Location}
	n := int64(len(keep.Body)) + 512
	if s == nil || n > s.limit/4 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byURL[u]; ok {
		return
	}
	s.byURL[u] = s.lru.PushFront(&cached{u, keep})
	s.size += n
	for s.size > s.limit {
		el := s.lru.Back()
		old := s.lru.Remove(el).(*cached)
		delete(s.byURL, old.url)
		s.size -= int64(len(old.res.Body)) + 512
	}
}
