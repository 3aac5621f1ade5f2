package crawl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/scope"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/warc"
)

// process handles one leased URL from robots.txt check to completion.
func (c *Crawler) process(ctx context.Context, l *frontier.Lease, budget *atomic.Int64, stop context.CancelCauseFunc) error {
	// leave ends the gate's hold on the item; a page handed to a render (renderLater)
	// takes it over, as the page is finished there.
	var leave func()
	if c.gate != nil {
		if !c.gate.Enter(l.Item) {
			return c.frontier.Release(l, c.clock().Add(gateRetry))
		}
		leave = func() { c.gate.Leave(l.Item) }
		defer func() {
			if leave != nil {
				leave()
			}
		}()
	}
	u, err := c.norm.Parse(l.Item.URL)
	if err != nil {
		// Only URLs that parsed are queued; this means the normalizer changed between runs.
		return c.finish(l, &Document{Item: l.Item, Record: c.newRecord(l.Item)}, frontier.Outcome{}, "bad-url", err.Error())
	}
	slot, done, err := c.robotsFor(ctx, l, u)
	if err != nil || done {
		return err
	}
	if slot.entry.Outcome == robots.Unreachable {
		if slot.entry.GiveUp(c.policy) {
			d := &Document{URL: u, Item: l.Item, Record: c.newRecord(l.Item)}
			return c.finish(l, d, frontier.Outcome{}, "robots-unavailable", "robots.txt unreachable: "+slot.entry.Err)
		}
		// RFC 9309 §2.3.1.4: nothing may be fetched until robots.txt can be read. The host
		// waits for the retry; a crawl with nothing else to do ends and reports it.
		return c.frontier.Park(l, slot.entry.Expires, "robots.txt unreachable: "+slot.entry.Err)
	}
	if !slot.group.Allowed(u.PathQuery()) {
		c.stats.disallowed.Add(1)
		d := &Document{URL: u, Item: l.Item, Record: c.newRecord(l.Item)}
		return c.finish(l, d, frontier.Outcome{}, "robots-disallowed", "robots.txt disallows "+u.PathQuery())
	}
	if max := c.cfg.Crawl.MaxPages; max > 0 && budget.Add(1) > max {
		stop(errMaxPages)
		return c.frontier.Release(l, time.Time{})
	}
	if c.rs.deferFetch(l.Item.Host) {
		// The host's pages are rendered and the renders are all taken: its turn goes to
		// later, and this worker to a host whose pages need no browser.
		return c.frontier.Release(l, c.clock().Add(renderRetry))
	}
	return c.fetchPage(ctx, l, u, slot, &leave, stop)
}

// robotsFor returns the robots.txt entry for u's origin. When it must be fetched first, it
// fetches it with this lease's turn at the host, gives the lease back for after the
// host's rest, and reports done.
func (c *Crawler) robotsFor(ctx context.Context, l *frontier.Lease, u urlnorm.URL) (slot *robotsSlot, done bool, err error) {
	o := origin(u)
	for {
		slot, mustFetch, wait, err := c.robots.lookup(o, c.clock())
		if err != nil {
			return nil, true, err
		}
		if slot != nil {
			return slot, false, nil
		}
		if mustFetch {
			break
		}
		select { // another worker is fetching this origin's robots.txt (per-host > 1)
		case <-wait:
		case <-ctx.Done():
			return nil, true, c.frontier.Release(l, time.Time{})
		}
	}
	fctx, unfence, ok := c.fence(ctx, l.Item.Host)
	if !ok {
		c.robots.abandon(o)
		return nil, true, c.frontier.Release(l, c.clock().Add(gateRetry))
	}
	slot, res, err := c.loadRobots(fctx, l.Item.Host, o)
	fenced := fctx.Err() != nil // before unfence, which ends fctx too
	unfence()
	if ctx.Err() != nil {
		return nil, true, c.frontier.Release(l, time.Time{})
	}
	if fenced { // this node's right to fetch from the host ran out (loadRobots abandoned)
		return nil, true, c.frontier.Release(l, c.clock().Add(gateRetry))
	}
	if err != nil {
		return nil, true, err
	}
	if e := slot.entry; e.Outcome == robots.Unreachable && !e.GiveUp(c.policy) {
		return nil, true, c.frontier.Park(l, e.Expires, "robots.txt unreachable: "+e.Err)
	}
	delay := c.delay(slot, res)
	return nil, true, c.frontier.Release(l, c.clock().Add(delay))
}

// loadRobots fetches origin's robots.txt (of host) and stores the entry; the caller got the
// right to fetch it from robots.lookup. res is the last response (for the host's rest).
func (c *Crawler) loadRobots(ctx context.Context, host, o string) (slot *robotsSlot, res *fetch.Result, err error) {
	prev, err := c.robots.previous(o)
	if err != nil {
		c.robots.abandon(o)
		return nil, nil, err
	}
	res = c.fetchRobots(ctx, host, o)
	if ctx.Err() != nil {
		c.robots.abandon(o)
		return nil, res, ctx.Err()
	}
	resp := robots.Response{Status: res.Status, Body: res.Body, Err: res.Err}
	if res.Header != nil {
		resp.CacheControl = res.Header.Get("Cache-Control")
	}
	entry := robots.FromFetch(resp, c.clock(), prev, c.policy)
	slot, err = c.robots.store(o, entry)
	if err != nil {
		return nil, res, err
	}
	if entry.Outcome == robots.Unreachable {
		// Counted and logged as it happens: a seed whose host does not resolve, refuses
		// connections or is a private address says so at once, under its own kind.
		kind := "robots-http-" + strconv.Itoa(res.Status)
		if res.Err != nil {
			kind = string(fetch.KindOf(res.Err))
		}
		c.stats.countError(kind)
		c.log.Warn("cannot read robots.txt; nothing is fetched from the host until it can", "origin", o, "kind", kind,
			"error", entry.Err, "attempt", entry.Failures, "retry", entry.Expires.Format(time.RFC3339))
	}
	return slot, res, c.tellRobotsListeners(o, entry)
}

// tellRobotsListeners gives a freshly fetched robots.txt to the RobotsListeners and queues
// the URLs they return like seeds of the origin.
func (c *Crawler) tellRobotsListeners(origin string, entry *robots.Entry) error {
	if len(c.robotsLs) == 0 || entry.Outcome != robots.Fetched {
		return nil
	}
	var items []frontier.Item
	for _, l := range c.robotsLs {
		for _, raw := range l.RobotsFetched(origin, entry.Rules()) {
			u, err := c.norm.Parse(raw)
			if err != nil {
				continue
			}
			if item, ok := c.candidate(Link{URL: u, Index: -1}, origin+"/robots.txt"); ok {
				items = append(items, item)
			}
		}
	}
	if len(items) == 0 {
		return nil
	}
	if c.router != nil {
		return c.router.Add(items)
	}
	adm, err := c.frontier.Add(items)
	c.stats.linksQueued.Add(int64(adm.Added))
	return err
}

// fetchRobots fetches origin's robots.txt, following up to robots.MaxRedirects redirects
// itself rather than through the fetcher, so that each hop waits the politeness delay like
// any other request. One byte more than robots.MaxSize is read so the parser can tell a file
// cut at the limit (whose last, partial line it must drop) from one that ends there.
func (c *Crawler) fetchRobots(ctx context.Context, host, origin string) *fetch.Result {
	target := origin + "/robots.txt"
	var res *fetch.Result
	for hop := 0; ; hop++ {
		if hop > 0 && !c.mayFetch(host) {
			return res // the host moved away mid-chain: the last answer stands
		}
		res = c.fetcher.Fetch(ctx, fetch.Request{URL: target, AnyType: true, MaxBodyBytes: robots.MaxSize + 1})
		c.stats.robotsFetch.Add(1)
		if ctx.Err() == nil {
			c.stats.countAttempt(res)
		}
		c.archive(res, nil)
		if res.Err != nil || res.Status < 300 || res.Status >= 400 || res.Location == "" || hop == robots.MaxRedirects {
			return res
		}
		target = res.Location
		select {
		case <-ctx.Done():
			return res
		case <-time.After(c.delay(nil, res)):
		}
	}
}

// mayFetch asks the gate, if any, right before a request to host.
func (c *Crawler) mayFetch(host string) bool { return c.gate == nil || c.gate.Valid(host) }

// fence asks the gate, if any, right before a request to host, and returns the context
// the request must run in: it ends when this process may no longer fetch from host.
func (c *Crawler) fence(ctx context.Context, host string) (context.Context, context.CancelFunc, bool) {
	if c.gate == nil {
		return ctx, func() {}, true
	}
	fctx, cancel, ok := c.gate.Fence(ctx, host)
	if !ok {
		return fctx, cancel, ok
	}
	// The gate is asked once more as the request is written: a process stopped (or
	// starved) between this check and the send must not send after its right ran out.
	return fetch.WithSendGuard(fctx, func() error {
		if !c.gate.Valid(host) {
			return errGateClosed
		}
		return nil
	}), cancel, true
}

// errGateClosed is why a request was not sent: the gate closed between the check before
// it and the moment it was written.
var errGateClosed = errors.New("crawl: the gate closed before the request was sent (this node may no longer fetch from the host)")

// delay is how long a host rests after a request (HostDelay); slot is nil before its
// robots.txt is read.
func (c *Crawler) delay(slot *robotsSlot, res *fetch.Result) time.Duration {
	var group robots.Group
	if slot != nil {
		group = slot.group
	}
	return HostDelay(c.cfg.Politeness, group, res)
}

// recordPace notes the rate politeness allows host, for a budget's explanation (only when
// there is a budget to explain).
func (c *Crawler) recordPace(host string, slot *robotsSlot, res *fetch.Result, delay time.Duration) {
	if c.pacer == nil {
		return
	}
	cycle := (delay + responseTime(res)).Seconds()
	pace := hostPace{perSec: float64(max(c.cfg.Politeness.PerHost, 1)) / max(cycle, 1e-3), at: time.Now()}
	if slot != nil {
		if cd, ok := slot.group.CrawlDelay(); ok && cd >= delay {
			pace.crawlDelay = true
		}
	}
	c.paces.record(host, pace)
}

// budgetNote explains a budget the crawl does not spend (see budgetNote); rate is the
// fetch rate measured.
func (c *Crawler) budgetNote(rate float64) string {
	if c.pacer == nil {
		return ""
	}
	perSec, hosts, delayed := c.paces.achievable(time.Now())
	return budgetNote(c.cfg.Crawl.Budget.PerSecond(), rate, perSec, hosts, delayed, c.cfg.Politeness.MinDelay)
}

func (c *Crawler) newRecord(it frontier.Item) *store.Page {
	return &store.Page{URL: it.URL, FinalURL: it.URL, Depth: it.Depth, Parent: it.Parent, Visits: it.Visits + 1, RedirectChain: it.Via}
}

// fetchPage fetches an allowed URL and completes its lease, or hands it to renderLater
// (which then owns *leave).
func (c *Crawler) fetchPage(ctx context.Context, l *frontier.Lease, u urlnorm.URL, slot *robotsSlot, leave *func(), stop context.CancelCauseFunc) error {
	it := l.Item
	d := &Document{URL: u, Item: it, Record: c.newRecord(it)}
	prev, found, err := c.db.Page(u.Key())
	if err != nil {
		return err
	}
	if found {
		d.Prev = prev
	}
	req := fetch.Request{URL: it.URL}
	for _, p := range c.requests {
		p.AdjustRequest(u, it, &req)
	}
	if d.Prev != nil && l.Scheduled() {
		req.ETag, req.LastModified = d.Prev.ETag, d.Prev.LastModified
	}
	var releaseBody func()
	req.Admit, releaseBody = c.large.admission()
	defer releaseBody() // the body is archived, analysed and handed on by then
	fctx, unfence, ok := c.fence(ctx, it.Host)
	if !ok {
		return c.frontier.Release(l, c.clock().Add(gateRetry))
	}
	var res *fetch.Result
	if c.pages != nil {
		res = c.pages.FetchPage(fctx, it, req, c.delay(slot, nil))
	} else {
		res = c.fetcher.Fetch(fctx, req)
	}
	unfence()
	if ctx.Err() != nil {
		return c.frontier.Release(l, time.Time{}) // stopping: the URL stays queued
	}
	if fetch.KindOf(res.Err) == fetch.KindCanceled {
		// This node's right to fetch from the host ran out mid-request: the URL stays
		// queued, for this node once it renews it or for the host's next owner.
		return c.frontier.Release(l, c.clock().Add(gateRetry))
	}
	d.Fetch = res
	c.stats.pages.Add(1)
	c.stats.countAttempt(res)
	c.stats.bytes.Add(int64(len(res.Wire)))
	c.metrics.fetchSeconds.Observe(res.Timing.Total.Seconds())
	rec := d.Record
	rec.FetchedAt = res.StartedAt.UTC()
	rec.Status = res.Status
	rec.ContentType = res.MediaType
	rec.Charset = res.Charset
	rec.Truncated = res.Truncated
	rec.Skipped = res.Skipped
	rec.Size, rec.WireSize = int64(len(res.Body)), int64(len(res.Wire))
	rec.FetchMillis = res.Timing.Total.Milliseconds()
	if res.Header != nil {
		rec.ETag, rec.LastModified = res.Header.Get("ETag"), res.Header.Get("Last-Modified")
	}
	if res.Status != 0 {
		c.stats.countStatus(res.Status)
	}
	out := frontier.Outcome{Fetched: true, Delay: c.delay(slot, res)}
	c.recordPace(it.Host, slot, res, out.Delay)
	errKind, errDetail := "", ""
	now := c.clock()

	switch {
	case res.Err != nil:
		errKind, errDetail = string(fetch.KindOf(res.Err)), res.Err.Error()
		if retryable(fetch.KindOf(res.Err)) {
			if wait, ok := RetryWait(c.cfg.Politeness, it.Attempts, res); ok {
				out.Retry, out.Why = retryAt(now, out, wait), errKind+": "+errDetail
			}
		}
		if res.Status == 200 && len(res.Body) > 0 {
			// A body that broke off mid-way (decompression error, reset) is still content.
			c.analyzeContent(ctx, d, &out, nil)
		}
	case res.Status == 304:
		if d.Prev != nil { // unchanged: keep what we knew
			rec.Title, rec.Fingerprint, rec.SimHash, rec.Lang = d.Prev.Title, d.Prev.Fingerprint, d.Prev.SimHash, d.Prev.Lang
			rec.ContentType = d.Prev.ContentType
		}
	case res.Status >= 300 && res.Status < 400 && res.Location != "":
		errKind, errDetail = c.redirect(d, res.Location, &out)
	case res.Status == 429 || res.Status >= 500:
		errKind, errDetail = "http-"+strconv.Itoa(res.Status), ""
		if wait, ok := RetryWait(c.cfg.Politeness, it.Attempts, res); ok {
			out.Retry, out.Why = retryAt(now, out, wait), "HTTP "+strconv.Itoa(res.Status)
		}
		if hold := RetryAfterHold(c.cfg.Politeness, res); hold > 0 {
			out.NotBefore = now.Add(hold)
		}
	case res.Status >= 400:
		errKind = "http-" + strconv.Itoa(res.Status)
	case res.Status >= 200 && res.Status < 300:
		page, render := c.renderCandidate(d)
		if render {
			return c.renderLater(ctx, l, d, out, slot, page, now, leave, stop)
		}
		c.analyzeContent(ctx, d, &out, page)
	}
	return c.complete(l, d, out, errKind, errDetail, now)
}

// retryAt is when a failed request is tried again: wait (RetryWait) after its host may be
// asked again, not after the failure. A request that stalled until fetch.first-byte-timeout
// (20 s) leaves its host resting delay-factor times that (40 s); counted from the failure,
// the retry (30 s) was due before the rest ended and stalled the host again the moment it
// could be served, so a crawl of a hostile web waited for a second stall instead of ending
// with the retry parked (crawl.end-when-waiting). After a fast failure (a 500 in a few
// milliseconds) the rest is min-delay and the retry comes as before.
func retryAt(now time.Time, out frontier.Outcome, wait time.Duration) time.Time {
	return now.Add(out.Delay + wait)
}

// complete archives a fetched page and finishes its lease.
func (c *Crawler) complete(l *frontier.Lease, d *Document, out frontier.Outcome, errKind, errDetail string, now time.Time) error {
	c.archiveRendered(d, c.archive(d.Fetch, d))
	if err := c.storageFailed(); err != nil {
		return err
	}
	if out.Retry.IsZero() {
		out.Revisit = c.nextVisit(d, now)
	}
	return c.finish(l, d, out, errKind, errDetail)
}

// nextVisit is when d is fetched again: the first RevisitOverride that claims it decides,
// else the RevisitPolicy (zero time: never).
func (c *Crawler) nextVisit(d *Document, now time.Time) time.Time {
	for _, o := range c.overrides {
		if next, ok := o.Revisit(d, now); ok {
			return next
		}
	}
	if c.revisit != nil {
		if a, ok := c.revisit.(DiscoveryAware); ok {
			a.Undiscovered(c.frontier.Stats().New)
		}
		return c.revisit.NextVisit(d, now)
	}
	return time.Time{}
}

// retryable says whether a fetch failure is worth another attempt later.
func retryable(k fetch.ErrorKind) bool {
	switch k {
	case fetch.KindDNS, fetch.KindRefused, fetch.KindConnect, fetch.KindConnectTimeout, fetch.KindTLSTimeout,
		fetch.KindFirstByteTimeout, fetch.KindTimeout, fetch.KindClosed, fetch.KindBody:
		return true
	}
	return false
}

// redirect queues a 3xx target like a newly discovered URL at the same depth.
func (c *Crawler) redirect(d *Document, location string, out *frontier.Outcome) (errKind, detail string) {
	target, err := c.norm.Parse(location)
	if err != nil {
		return "bad-redirect", fmt.Sprintf("Location %q: %v", location, err)
	}
	d.Record.FinalURL = target.String()
	via := append(append([]string{}, d.Item.Via...), d.Item.URL)
	for _, v := range via {
		if v == target.String() {
			return "redirect-loop", "redirect back to " + v
		}
	}
	if len(via) > c.cfg.Fetch.MaxRedirects {
		return "too-many-redirects", fmt.Sprintf("%d hops, fetch.max-redirects is %d", len(via), c.cfg.Fetch.MaxRedirects)
	}
	if item, ok := c.candidate(Link{URL: target, Depth: d.Item.Depth, Source: d, Index: -1}, d.Item.URL); ok {
		item.Via = via
		out.Discovered = append(out.Discovered, item)
		d.hopQueued = true
	}
	return "", ""
}

// chainErrors are the failures that belong to a whole redirect chain, so they are also
// recorded on the URL the chain started from.
var chainErrors = map[string]bool{"redirect-loop": true, "too-many-redirects": true, "bad-redirect": true}

// updateChainOrigin records where a finished redirect chain led on the record of the URL
// it started from, so a link's record tells its final destination (or its chain's failure).
func (c *Crawler) updateChainOrigin(b *pebble.Batch, d *Document) error {
	via := d.Item.Via
	if len(via) == 0 || d.hopQueued {
		return nil
	}
	u, err := c.norm.Parse(via[0])
	if err != nil {
		return nil
	}
	origin, ok, err := c.db.Page(u.Key())
	if err != nil || !ok {
		return err
	}
	origin.FinalURL = d.Record.FinalURL
	if chainErrors[d.Record.Error] {
		origin.Error, origin.ErrorDetail = d.Record.Error, d.Record.ErrorDetail
	}
	return store.PutPage(b, u.Key(), origin)
}

// candidate turns a link into a frontier item if the scope admits it.
func (c *Crawler) candidate(l Link, parent string) (frontier.Item, bool) {
	sc := c.scope.Load()
	v := sc.Check(l.URL, l.Depth)
	if !v.Allowed {
		c.stats.countRejected(v.Rule)
		return frontier.Item{}, false
	}
	if v, err := sc.CheckVariants(l.URL, c.variants); err != nil {
		c.log.Warn("trap counter failed", "url", l.URL.String(), "error", err)
	} else if !v.Allowed {
		c.stats.countRejected(v.Rule)
		return frontier.Item{}, false
	}
	for _, f := range c.filters {
		if ok, rule := f.Admit(l); !ok {
			c.stats.countRejected(rule)
			return frontier.Item{}, false
		}
	}
	return frontier.Item{URL: l.URL.String(), Key: l.URL.Key(), Host: l.URL.HostKey(), Priority: c.scorer.Score(l), Depth: l.Depth, Parent: parent}, true
}

// analyzeContent parses a successful response, fills the record and collects its links.
// page, when not nil, is the page's HTML already parsed (from its rendered DOM when it
// was rendered).
func (c *Crawler) analyzeContent(ctx context.Context, d *Document, out *frontier.Outcome, page *parse.Page) {
	res, rec := d.Fetch, d.Record
	if res.Skipped != "" {
		return
	}
	if res.UTF8 == nil {
		// A binary body (an archive, a dataset, an image) has no text or links, but
		// analyzers that read files (the geo vertical, compressed sitemaps) still get it.
		c.runAnalyzers(ctx, d)
		c.queueDiscovered(d, out, false)
		return
	}
	var directives robots.Directives
	if res.Header != nil {
		directives = robots.HeaderDirectives(res.Header.Values("X-Robots-Tag"), c.cfg.Robots.Agent)
	}
	if isHTML(res) {
		if page == nil {
			var err error
			if page, err = c.parseHTML(d, res.UTF8); err != nil {
				rec.Error, rec.ErrorDetail = "parse", err.Error()
				return
			}
		}
		d.Page = page
		d.Text = page.Text()
		rec.TextTruncated = page.TextTruncated
		rec.Title = page.Title
		rec.Lang = page.Lang
		metas := make([]robots.Meta, len(page.Robots))
		for i, m := range page.Robots {
			metas[i] = robots.Meta{Name: m.Name, Content: m.Content}
		}
		directives = directives.Merge(robots.MetaDirectives(metas, c.cfg.Robots.Agent))
	} else {
		// Plain text is bounded as the parser bounds a page's visible text: the analyzers
		// (fingerprints, language, focus, index) read its start. A 10 MiB text page held
		// whole took ~20 MiB more per worker (the text and its normalized copy).
		b := res.UTF8
		if len(b) > parse.DefaultMaxTextBytes {
			n := parse.DefaultMaxTextBytes
			for n > 0 && b[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
				n--
			}
			b, rec.TextTruncated = b[:n], true
		}
		d.Text = string(b)
	}
	if rec.Lang == "" && res.Header != nil {
		rec.Lang = primaryLang(res.Header.Get("Content-Language"))
	}
	rec.NoIndex = !directives.Indexable(c.clock())
	rec.NoFollow = directives.NoFollow
	c.fingerprint(d)
	c.runAnalyzers(ctx, d)
	c.queueDiscovered(d, out, directives.NoFollow)
	if d.Page == nil {
		return
	}
	c.stats.linksFound.Add(int64(len(d.Page.Links)))
	rec.Links = len(d.Page.Links)
	if directives.NoFollow {
		return
	}
	add := func(raw string, index int) { c.discover(d, out, raw, index) }
	for i := range d.Page.Links {
		lk := &d.Page.Links[i]
		if !c.cfg.Scope.FollowNofollowLinks && lk.HasRel("nofollow") {
			c.stats.countRejected("rel-nofollow")
			continue
		}
		add(lk.URL, i)
	}
	for _, extra := range []string{d.Page.RefreshURL, d.Page.Next, d.Page.Prev} {
		if extra != "" {
			add(extra, -1)
		}
	}
}

// runAnalyzers runs every analyzer on d; a failure is logged and does not stop the crawl.
func (c *Crawler) runAnalyzers(ctx context.Context, d *Document) {
	for _, a := range c.analyze {
		if err := a.Analyze(ctx, d); err != nil {
			c.log.Warn("analyzer failed", "analyzer", a.Name(), "url", d.Item.URL, "error", err)
		}
	}
}

// discover queues raw, found on d, one hop deeper if scope and the link filters admit it;
// index is its position in d.Page.Links, -1 for URLs found elsewhere.
func (c *Crawler) discover(d *Document, out *frontier.Outcome, raw string, index int) {
	u, err := c.norm.Parse(raw)
	if err != nil {
		return
	}
	if item, ok := c.candidate(Link{URL: u, Depth: d.Item.Depth + 1, Source: d, Index: index, Rendered: d.renderedOnly[raw]}, d.Item.URL); ok {
		out.Discovered = append(out.Discovered, item)
	}
}

// queueDiscovered queues the URLs analyzers put in d.Discovered (feed items, sitemap
// entries), unless the document forbids following its links.
func (c *Crawler) queueDiscovered(d *Document, out *frontier.Outcome, nofollow bool) {
	if nofollow || len(d.Discovered) == 0 {
		return
	}
	c.stats.linksFound.Add(int64(len(d.Discovered)))
	for _, raw := range d.Discovered {
		c.discover(d, out, raw, -1)
	}
}

func primaryLang(tag string) string {
	tag = strings.TrimSpace(strings.SplitN(tag, ",", 2)[0])
	tag = strings.ToLower(strings.SplitN(tag, "-", 2)[0])
	if len(tag) < 2 || len(tag) > 3 {
		return ""
	}
	return tag
}

// wordless is the fingerprint of every text without words.
var wordless = fingerprint.Exact("")

// fingerprint sets the record's content identity, change flag and duplicate links.
func (c *Crawler) fingerprint(d *Document) {
	rec := d.Record
	var fp fingerprint.Fingerprint
	switch {
	case c.md5Print:
		fp = c.textNorm.Of(d.Text)
		rec.Fingerprint = fingerprint.MD5Stripped(d.Text)
	case d.Page != nil && d.Text == d.Page.Text() && slices.ContainsFunc(d.Page.Blocks, func(b parse.Block) bool { return b.Chrome }):
		// Change detection reads the page's own text: a new menu entry or a footer
		// is the site changing, not the page (parse.Block.Chrome). The page's text is
		// its blocks, one a line: the main text's digest comes with the page's
		// fingerprints, in one pass (the same digest as Exact(d.Page.MainText())).
		blocks := d.Page.Blocks
		var main fingerprint.Digest
		fp, main = c.textNorm.OfMain(d.Text, func(line int) bool { return line < len(blocks) && !blocks[line].Chrome })
		rec.Fingerprint = main.String()
	default:
		fp = c.textNorm.Of(d.Text)
		rec.Fingerprint = fp.Exact.String()
	}
	rec.SimHash = fmt.Sprintf("%016x", fp.SimHash)
	if d.Prev != nil && d.Prev.Fingerprint != "" {
		rec.Changed = d.Prev.Fingerprint != rec.Fingerprint
	}
	if fp.Exact == wordless {
		return // pages without words are all alike, and alike in nothing that matters
	}
	c.dupMu.Lock()
	dup, err := c.db.CheckDuplicates(d.URL.Key(), d.Item.URL, fp.Exact[:], fp.SimHash)
	c.dupMu.Unlock()
	if err != nil {
		c.log.Warn("duplicate check failed", "url", d.Item.URL, "error", err)
		return
	}
	rec.DuplicateOf, rec.NearDuplicateOf = dup.ExactOf, dup.NearOf
}

// archive writes the exchange to the WARC files; d (nil for robots.txt and subresources)
// gets the location. It returns the response record's WARC-Record-ID ("" if none).
func (c *Crawler) archive(res *fetch.Result, d *Document) string {
	if c.warc == nil || res == nil || res.RawResponseHeader == nil {
		return ""
	}
	meta := []warc.Field{{Name: "fetchTimeMs", Value: strconv.FormatInt(res.Timing.Total.Milliseconds(), 10)}}
	if res.Charset != "" {
		meta = append(meta, warc.Field{Name: "charset", Value: res.Charset + " (" + res.CharsetSource + ")"})
	}
	if d != nil {
		if d.Item.Parent != "" {
			meta = append(meta, warc.Field{Name: "via", Value: d.Item.Parent})
		}
		if d.Page != nil {
			for _, lk := range d.Page.Links {
				meta = append(meta, warc.Field{Name: "outlink", Value: lk.URL})
			}
		}
		if d.Rendered != nil {
			// The page was read from its rendered DOM (the conversion record after this
			// capture); these links only that DOM has.
			for _, lk := range d.Page.Links {
				if d.renderedOnly[lk.URL] {
					meta = append(meta, warc.Field{Name: "rendered-outlink", Value: lk.URL})
				}
			}
		}
	}
	target := res.FinalURL
	if target == "" {
		target = res.URL
	}
	truncated := res.Truncated
	if res.Skipped != "" {
		// The body was not downloaded (unwanted media type): the record must not claim
		// the empty payload is the whole entity.
		truncated = "unspecified"
		meta = append(meta, warc.Field{Name: "skipped", Value: res.Skipped})
	}
	loc, err := c.warc.WriteCapture(warc.Capture{
		TargetURI: target, Date: res.StartedAt, IP: res.RemoteIP, Request: res.RawRequest,
		ResponseHeader: res.RawResponseHeader, Payload: res.Wire, Truncated: truncated, Metadata: meta,
	})
	if err != nil {
		// Without its capture the page must not be recorded: the crawl stops, and the
		// page, still leased, is fetched again when it resumes.
		c.failStorage(fmt.Errorf("crawl: writing the capture of %s to the WARC files: %w; the crawl stopped and recorded no page without its capture: fix the cause (a full disk?), then run the command again to resume", target, err))
		return ""
	}
	if d != nil {
		d.Record.WARC = loc.File + "#" + strconv.FormatInt(loc.Offset, 10)
	}
	return loc.RecordID
}

// finish completes a lease: the record, its visit and the discovered links are committed
// in one batch with the queue change.
func (c *Crawler) finish(l *frontier.Lease, d *Document, out frontier.Outcome, errKind, detail string) error {
	rec := d.Record
	if errKind != "" && rec.Error == "" {
		rec.Error, rec.ErrorDetail = errKind, detail
	}
	if rec.Error != "" {
		c.stats.countError(rec.Error)
		c.log.Debug("fetch error", "url", rec.URL, "error", rec.Error, "detail", rec.ErrorDetail)
	}
	if rec.Relevant != nil {
		c.stats.judged.Add(1)
		if *rec.Relevant {
			c.stats.relevant.Add(1)
		}
	}
	key := urlnorm.Key(l.Item.Key)
	if !d.URL.IsZero() {
		key = d.URL.Key()
	}
	visit := store.Visit{At: rec.FetchedAt, Status: rec.Status, Changed: rec.Changed, Fingerprint: rec.Fingerprint,
		ETag: rec.ETag, LastModified: rec.LastModified, Error: rec.Error}
	if d.Fetch != nil && d.Fetch.Header != nil {
		visit.CacheControl = d.Fetch.Header.Get("Cache-Control")
	}
	if visit.At.IsZero() {
		visit.At = c.clock().UTC()
	}
	routed := out
	if c.router != nil {
		out.Discovered = nil // the owner admits them, through the router
	}
	adm, err := c.frontier.Complete(l, out, func(b *pebble.Batch) error {
		if c.router != nil {
			if err := c.router.Route(b, l.Item, routed); err != nil {
				return err
			}
		}
		if err := store.PutPage(b, key, rec); err != nil {
			return err
		}
		if err := c.updateChainOrigin(b, d); err != nil {
			return err
		}
		if err := d.Commit(b); err != nil {
			return err
		}
		for _, j := range c.journals {
			if err := j.Journal(d, b); err != nil {
				return fmt.Errorf("sink %s: %w", j.Name(), err)
			}
		}
		return store.AddVisit(b, key, visit)
	})
	if err != nil {
		return err
	}
	c.stats.linksQueued.Add(int64(adm.Added))
	if adm.OverQuota > 0 {
		c.stats.mu.Lock()
		c.stats.byRule[scope.RuleMaxPagesPerHost] += int64(adm.OverQuota)
		c.stats.mu.Unlock()
	}
	for _, s := range c.sinks {
		if err := s.Consume(context.Background(), d); err != nil {
			c.log.Warn("sink failed", "sink", s.Name(), "url", rec.URL, "error", err)
		}
	}
	return nil
}
