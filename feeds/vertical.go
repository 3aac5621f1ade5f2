package feeds

import (
	"context"
	"log/slog"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// Options configure the crawl integration.
type Options struct {
	Limits Limits
	// Interval is the wait before a feed or sitemap that showed something new is read
	// again (default 1h); one that showed nothing waits twice its last wait, up to
	// MaxInterval (default 24h, the thesis's daily revisit). A negative Interval reads each
	// once.
	Interval, MaxInterval time.Duration
	// MaxFeedsPerHost bounds the feeds a host's pages may register through
	// <link rel=alternate> (default 20): some sites give every article its own comments feed.
	MaxFeedsPerHost int
	// Normalizer must be the crawl's (crawl.NormalizerOptions), so registry keys match the
	// crawler's URL keys. Default: urlnorm's defaults.
	Normalizer *urlnorm.Normalizer
	Logger     *slog.Logger
}

// OptionsFromConfig is the feeds section of cfg.
func OptionsFromConfig(cfg config.Config) Options {
	f := cfg.Feeds
	return Options{
		Limits:          Limits{MaxEntries: f.MaxEntries, MaxBytes: int64(f.MaxSize)},
		Interval:        f.Interval,
		MaxInterval:     f.MaxInterval,
		MaxFeedsPerHost: f.MaxPerHost,
		Normalizer:      urlnorm.New(crawl.NormalizerOptions(cfg)),
	}
}

// Stats count what the vertical did (since New).
type Stats struct {
	FeedsRead, SitemapsRead atomic.Int64 // successful reads
	Listed                  atomic.Int64 // URLs handed to the crawler from feeds and sitemaps
	Registered              atomic.Int64 // feeds and sitemaps newly registered
	Errors                  atomic.Int64 // reads that failed (malformed XML, not a feed)
}

// Vertical plugs feeds and sitemaps into a crawl: an Analyzer, a RobotsListener, a
// RequestPolicy and a RevisitOverride (install them with CrawlOptions).
type Vertical struct {
	opts  Options
	reg   *Registry
	Stats Stats
}

// New prepares the vertical on the crawl database db (its registry lives there).
func New(db *store.DB, opts Options) (*Vertical, error) {
	if opts.Interval == 0 {
		opts.Interval = time.Hour
	}
	if opts.MaxInterval <= 0 {
		opts.MaxInterval = 24 * time.Hour
	}
	if opts.Interval > 0 && opts.MaxInterval < opts.Interval {
		opts.MaxInterval = opts.Interval
	}
	if opts.MaxFeedsPerHost <= 0 {
		opts.MaxFeedsPerHost = 20
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.Normalizer == nil {
		opts.Normalizer = urlnorm.New(urlnorm.DefaultOptions())
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	reg, err := OpenRegistry(db)
	if err != nil {
		return nil, err
	}
	return &Vertical{opts: opts, reg: reg}, nil
}

// Registry is the vertical's registry of feeds and sitemaps.
func (v *Vertical) Registry() *Registry { return v.reg }

// CrawlOptions install the vertical in a crawl.
func (v *Vertical) CrawlOptions() []crawl.Option {
	return []crawl.Option{crawl.WithAnalyzers(v), crawl.WithRobotsListeners(v), crawl.WithRequestPolicies(v), crawl.WithRevisitOverrides(v)}
}

// Name implements crawl.Analyzer.
func (v *Vertical) Name() string { return "feeds" }

// RobotsFetched implements crawl.RobotsListener: a robots.txt's Sitemap: lines are
// registered and queued.
func (v *Vertical) RobotsFetched(origin string, r *robots.Robots) []string {
	var out []string
	for _, raw := range r.Sitemaps() {
		u, err := v.opts.Normalizer.Parse(raw)
		if err != nil {
			continue
		}
		v.register(u, KindSitemap, "robots", 0)
		out = append(out, u.String())
	}
	return out
}

func (v *Vertical) register(u urlnorm.URL, kind Kind, via string, maxPerHost int) bool {
	added, err := v.reg.Add(u.Key(), Source{URL: u.String(), Kind: kind, Via: via, Discovered: time.Now().UTC()}, maxPerHost)
	if err != nil {
		v.opts.Logger.Warn("feeds: cannot register", "url", u.String(), "error", err)
	}
	if added {
		v.Stats.Registered.Add(1)
	}
	return added || v.reg.Known(u.Key())
}

// AdjustRequest implements crawl.RequestPolicy: feeds and sitemaps are downloaded
// whatever media type they are served with (sitemap.xml.gz comes as application/gzip),
// up to Limits.MaxBytes.
func (v *Vertical) AdjustRequest(u urlnorm.URL, _ frontier.Item, req *fetch.Request) {
	if !v.reg.Known(u.Key()) && !LooksLikeFeedURL(u.String()) {
		return
	}
	req.AnyType = true
	req.MaxBodyBytes = max(req.MaxBodyBytes, v.opts.Limits.MaxBytes)
}

// LooksLikeFeedURL guesses from an address alone that it is a feed or sitemap (.xml,
// .xml.gz, .rss, .atom, .rdf files; /feed, /rss, /atom paths; anything named sitemap), so
// seeds such as https://example.org/sitemap.xml are fetched as one before they are known.
func LooksLikeFeedURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	p := strings.ToLower(strings.TrimSuffix(u.Path, "/"))
	if strings.Contains(p, "sitemap") {
		return true
	}
	for _, ext := range []string{".xml", ".xml.gz", ".rss", ".atom", ".rdf"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	switch path.Base(p) {
	case "feed", "rss", "atom", "feeds":
		return true
	}
	return false
}

// Analyze implements crawl.Analyzer: an HTML page's feed links are registered and queued;
// a feed or sitemap is read and the URLs it lists are queued.
func (v *Vertical) Analyze(_ context.Context, d *crawl.Document) error {
	if d.Page != nil {
		v.linkedFeeds(d)
		return nil
	}
	res := d.Fetch
	if res == nil || res.Status < 200 || res.Status > 299 || len(res.Body) == 0 {
		return nil
	}
	key := d.URL.Key()
	known := v.reg.Known(key)
	kind := Detect(res.MediaType, res.Body)
	switch {
	case kind == KindNone && !known:
		return nil // an ordinary file
	case kind == KindSitemap && !looksLikeXML(res.Body) && !isGzip(res.Body) && !known && !LooksLikeFeedURL(d.URL.String()):
		return nil // a text file that happens to start with a URL, where no sitemap was expected
	}
	doc, err := Parse(res.Body, res.MediaType, d.URL.String(), v.opts.Limits)
	var urls []string
	if doc != nil {
		if doc.Kind == KindSitemapIndex {
			for _, s := range doc.Sitemaps {
				if u, err := v.opts.Normalizer.Parse(s.URL); err == nil {
					v.register(u, KindSitemap, "index", 0)
				}
			}
		}
		urls = doc.URLs()
		d.Discovered = append(d.Discovered, urls...)
		v.Stats.Listed.Add(int64(len(urls)))
		if doc.Kind == KindFeed {
			v.Stats.FeedsRead.Add(1)
		} else {
			v.Stats.SitemapsRead.Add(1)
		}
	}
	if err != nil {
		v.Stats.Errors.Add(1)
		d.Record.Error, d.Record.ErrorDetail = "bad-feed", err.Error()
		if kind == KindSitemap || kind == KindSitemapIndex {
			d.Record.Error = "bad-sitemap"
		}
	}
	d.CommitWith(v.reg.update(key, d.URL.String(), func(s *Source) {
		if doc != nil {
			digest := digestOf(urls)
			s.Changed = s.Reads == 0 || digest != s.Digest
			s.Kind, s.Entries, s.Digest, s.Truncated = doc.Kind, len(doc.Entries)+len(doc.Sitemaps), digest, doc.Truncated
			if t := newest(doc.Entries); !t.IsZero() {
				s.Newest = t
			}
		} else {
			s.Changed = false
		}
		if s.Via == "" {
			s.Via = "content"
		}
		s.Fetched = res.StartedAt.UTC()
		s.Reads++
		s.Error = ""
		if err != nil {
			s.Error = err.Error()
		}
	}))
	return nil
}

// digestOf identifies a set of URLs whatever their order.
func digestOf(urls []string) uint64 {
	sorted := append([]string(nil), urls...)
	sort.Strings(sorted)
	h := xxhash.New()
	for _, u := range sorted {
		h.WriteString(u)
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// linkedFeeds registers and queues the feeds an HTML page announces, leaving out comment
// feeds (one per article on many blogs, and never news).
func (v *Vertical) linkedFeeds(d *crawl.Document) {
	for _, f := range d.Page.Feeds {
		if f.URL == "" || strings.Contains(strings.ToLower(f.Title+" "+f.URL), "comment") {
			continue
		}
		u, err := v.opts.Normalizer.Parse(f.URL)
		if err != nil {
			continue
		}
		if v.register(u, KindFeed, "link", v.opts.MaxFeedsPerHost) {
			d.Discovered = append(d.Discovered, u.String())
		}
	}
}

// Revisit implements crawl.RevisitOverride: feeds and sitemaps are read again after
// Interval when their last read listed something new, after twice their last wait when it
// did not (or the server answered 304), up to MaxInterval; never once they are gone (404,
// 410). Other URLs are left to the crawl's RevisitPolicy.
func (v *Vertical) Revisit(d *crawl.Document, now time.Time) (time.Time, bool) {
	key := d.URL.Key()
	src, ok := v.reg.Get(key)
	if !ok {
		return time.Time{}, false
	}
	if v.opts.Interval < 0 {
		return time.Time{}, true
	}
	status := 0
	if d.Fetch != nil {
		status = d.Fetch.Status
	}
	if status == 404 || status == 410 {
		return time.Time{}, true
	}
	wait := v.opts.Interval
	if status == 304 || !src.Changed || status == 0 || status >= 400 {
		wait = min(max(2*src.Interval, v.opts.Interval), v.opts.MaxInterval)
	}
	d.CommitWith(v.reg.update(key, d.URL.String(), func(s *Source) {
		s.Interval = wait
		if status == 304 {
			s.Changed = false
		}
	}))
	return now.Add(wait), true
}
