// Package news owns the news vertical's records: the article extracted from every crawled
// HTML page that is one (package extract does the extraction), stored in the crawl
// database under key prefix a, one record per URL, replaced when the page is fetched again.
//
// The Analyzer runs in the crawl. Its record is committed in the same batch as the page's
// own record (crawl.Document.CommitWith), so after a crash either both are stored or
// neither is, and the page is fetched again. Pages that are not articles (listings, home
// pages, short pages) get no record, and a page that stops being an article loses its
// record.
package news

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// Article is the stored record of one article page: what the extractor found, plus when it
// was fetched, first seen and last changed. Its JSON form is the line
// `sonda export --what articles` writes.
type Article struct {
	extract.Article
	FinalURL  string    `json:"final_url"` // the URL that was fetched (a redirect's target)
	FetchedAt time.Time `json:"fetched_at"`
	FirstSeen time.Time `json:"first_seen"` // first fetch that found the article
	Changed   time.Time `json:"changed"`    // last fetch whose text differed from the one before
	// SimHash is the 64-bit SimHash of the body (hex), the key to merging syndicated copies
	// of one story.
	SimHash string `json:"simhash,omitempty"`
}

const prefixArticle = 'a'

func articleKey(k store.URLKey) []byte { return store.RecordKey(prefixArticle, k) }

// Put writes (replaces) the article record for key into w.
func Put(w store.Writer, key store.URLKey, a *Article) error {
	v, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("news: encode article %s: %w", a.URL, err)
	}
	return w.Set(articleKey(key), v, nil)
}

// Get returns the article record for key; ok is false when there is none.
func Get(db *store.DB, key store.URLKey) (a *Article, ok bool, err error) {
	v, closer, err := db.Pebble().Get(articleKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("news: read article: %w", err)
	}
	defer closer.Close()
	a = new(Article)
	if err := json.Unmarshal(v, a); err != nil {
		return nil, false, fmt.Errorf("news: article record %x is corrupt: %w", key, err)
	}
	return a, true, nil
}

// Each calls fn for every article record, in key order (random with respect to URLs and
// dates); it stops at the first error fn returns.
func Each(db *store.DB, fn func(*Article) error) error {
	return eachKeyed(db, func(_ store.URLKey, a *Article) error { return fn(a) })
}

// Stats count what the analyzer did since it was made.
type Stats struct {
	Pages    atomic.Int64 // HTML pages examined
	Articles atomic.Int64 // article records written
	Others   atomic.Int64 // pages judged not articles
	Failed   atomic.Int64 // pages the extractor failed on
}

// Analyzer extracts articles during a crawl and stores their records.
type Analyzer struct {
	ex      *extract.Extractor
	db      *store.DB
	monitor *Monitor
	Stats   Stats
}

// Options configure the Analyzer.
type Options struct {
	Extract extract.Options
	// Monitor, when set, files each article under the topics it matches, in the same
	// batch as the article record.
	Monitor *Monitor
}

// OptionsFromConfig is the news section of cfg, for a crawl. It refuses a negative
// news.source-interval without a revisit policy: the topic sources would silently never be
// fetched again. That check is here, at crawl start, rather than in config.Validate, because
// the configuration is validated before command-line flags such as --revisit are applied.
func OptionsFromConfig(cfg config.Config) (Options, error) {
	o := Options{Extract: extract.Options{Mode: extract.Mode(cfg.News.Mode)}}
	if p := cfg.Revisit.Policy; cfg.News.SourceInterval < 0 && (p == "" || p == "none") {
		return o, fmt.Errorf("news.source-interval: %s (negative) leaves topic sources to revisit.policy, "+
			"but revisit.policy is none, so they would never be fetched again; set news.source-interval to a "+
			"positive interval (24h is the default) or choose a revisit.policy (e.g. adaptive, or --revisit adaptive)", cfg.News.SourceInterval)
	}
	if z := cfg.News.Zone; z != "" {
		loc, err := time.LoadLocation(z)
		if err != nil {
			return o, fmt.Errorf("news.timezone: %w", err)
		}
		o.Extract.Location = loc
	}
	return o, nil
}

// NewAnalyzer returns the analyzer for a crawl whose database is db (it reads the
// previous record of a page to keep its first-seen time).
func NewAnalyzer(db *store.DB, opts Options) (*Analyzer, error) {
	ex, err := extract.New(opts.Extract)
	if err != nil {
		return nil, err
	}
	return &Analyzer{ex: ex, db: db, monitor: opts.Monitor}, nil
}

// CrawlOptions install the analyzer in a crawl (and the monitor's revisits of topic
// sources, when there is a monitor).
func (an *Analyzer) CrawlOptions() []crawl.Option {
	opts := []crawl.Option{crawl.WithAnalyzers(an)}
	if an.monitor != nil {
		opts = append(opts, crawl.WithRevisitOverrides(an.monitor))
	}
	return opts
}

// Name implements crawl.Analyzer.
func (an *Analyzer) Name() string { return "news" }

// Analyze implements crawl.Analyzer: an HTML page that is an article gets its record
// (committed with the page); one that is not loses any record it had. Pages whose robots
// directives say noindex are treated as not articles: their publisher asked that they not
// be listed.
func (an *Analyzer) Analyze(_ context.Context, d *crawl.Document) error {
	if d.Page == nil || d.Fetch == nil || d.Fetch.UTF8 == nil {
		return nil
	}
	an.Stats.Pages.Add(1)
	key := d.URL.Key()
	prev, hadPrev, err := Get(an.db, key)
	if err != nil {
		return err
	}
	a, err := an.ex.Extract(d.Fetch.UTF8, d.Item.URL)
	if err != nil {
		an.Stats.Failed.Add(1)
		return err
	}
	if !a.IsArticle || d.Record.NoIndex {
		an.Stats.Others.Add(1)
		if hadPrev {
			d.CommitWith(func(w store.Writer) error { return deleteArticle(w, key) })
			if an.monitor != nil {
				d.CommitWith(an.monitor.unfile(key))
			}
		}
		return nil
	}
	rec := &Article{Article: *a, FinalURL: d.Record.FinalURL, FetchedAt: d.Record.FetchedAt}
	body := a.Text()
	rec.SimHash = fmt.Sprintf("%016x", fingerprint.Of(body).SimHash)
	rec.FirstSeen, rec.Changed = rec.FetchedAt, rec.FetchedAt
	if hadPrev {
		rec.FirstSeen = prev.FirstSeen
		if prev.SimHash == rec.SimHash && prev.Text() == body {
			rec.Changed = prev.Changed
		}
	}
	an.Stats.Articles.Add(1)
	if d.Results == nil {
		d.Results = map[string]any{}
	}
	d.Results[an.Name()] = rec // for the index sink (Article is an index.Shaper)
	d.CommitWith(func(w store.Writer) error { return Put(w, key, rec) })
	if an.monitor != nil {
		d.CommitWith(an.monitor.file(key, rec))
	}
	return nil
}

// deleter is the part of a Pebble batch that removes keys.
type deleter interface {
	Delete(key []byte, o *pebble.WriteOptions) error
}

func deleteArticle(w store.Writer, key store.URLKey) error {
	if d, ok := w.(deleter); ok {
		return d.Delete(articleKey(key), nil)
	}
	return errors.New("news: this writer cannot delete the stale article record")
}

// MonitorOptionsFromConfig is the topic-monitoring part of cfg for the crawl database db:
// the sites provider, the known feeds and sitemaps when feeds.enabled, and the results-page
// providers of news.search, which fetch with the crawl's HTTP settings (with a malformed
// fetch.resolve, which the crawl itself refuses, they may lack some of its mappings) and
// are paced by its politeness settings (SharedPacer).
func MonitorOptionsFromConfig(cfg config.Config, db *store.DB) MonitorOptions {
	o := MonitorOptions{SourceInterval: cfg.News.SourceInterval, Normalizer: urlnorm.New(crawl.NormalizerOptions(cfg))}
	o.Providers = []SearchProvider{SitesProvider{}}
	if cfg.Feeds.Enabled {
		o.Providers = append(o.Providers, FeedsProvider{DB: db})
	}
	fo, _ := crawl.FetchOptions(cfg)
	for _, p := range cfg.News.Search {
		o.Providers = append(o.Providers, &TemplateProvider{Label: p.Name, URLTemplate: p.URL, LinkSelector: p.Links, Pages: p.Pages,
			Agent: cfg.Robots.Agent, FetchOptions: fo, Pacer: SharedPacer(cfg.Politeness)})
	}
	return o
}
