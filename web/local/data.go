package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/web"
)

// Data is a data directory opened for serving: the instance package app assembles (the
// crawl-state database, the link graph kept in it, the search index) and the runner that
// crawls into it with the options app builds, as `sonda crawl` does. Close it when done.
type Data struct {
	cfg    config.Config
	log    *slog.Logger
	app    *app.Instance
	DB     *store.DB
	Graph  *linkgraph.Graph
	Index  *index.Index
	Runner *Runner

	stopRecheck func()        // ends recheckLoop (nil when it does not run)
	recheckDone chan struct{} // closed when recheckLoop has returned
}

// Options configure Open.
type Options struct {
	Logger *slog.Logger
	// CrawlOptions, when set, are added to every crawl the runner starts after the options
	// package app builds from the configuration (a test's stand-in analyzer).
	CrawlOptions func(cfg *config.Config, db *store.DB) ([]crawl.Option, error)
	// Progress receives the progress of crawls every second (see RunnerOptions).
	Progress func(crawl.Progress)
	// ReadOnly serves the directory without changing one byte of it (sonda serve
	// --read-only): the store and the index are opened read-only, no crawl can be started
	// (crawl control answers 503) and datasets' links are not rechecked. Several read-only
	// servers and sonda search may share a directory; a crawl excludes them.
	ReadOnly bool
}

// ErrInUse means another process has the data directory open.
var ErrInUse = app.ErrInUse

// Open opens cfg.Data for serving, creating it when it does not exist, through package
// app: an index left unclean by a crash is caught up first, and with search.index on (the
// default) crawls run by the server index what they fetch and record its links.
func Open(cfg config.Config, o Options) (*Data, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	in, err := app.Open(cfg, app.Options{Logger: o.Logger, Search: true, Crawl: !o.ReadOnly, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, err
	}
	d := &Data{cfg: cfg, log: o.Logger, app: in, DB: in.DB, Graph: in.Graph, Index: in.Index}
	if o.ReadOnly {
		return d, nil
	}
	d.Runner = NewRunner(cfg, in.DB, RunnerOptions{Logger: o.Logger, Progress: o.Progress, AfterCrawl: in.AfterCrawl,
		Options: func(cfg *config.Config, _ *store.DB) ([]crawl.Option, error) {
			opts, err := in.CrawlOptions(cfg)
			if err != nil || o.CrawlOptions == nil {
				return opts, err
			}
			extra, err := o.CrawlOptions(cfg, in.DB)
			return append(opts, extra...), err
		}})
	if cfg.Geo.Enabled && cfg.Geo.RecheckEvery > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		d.stopRecheck, d.recheckDone = cancel, make(chan struct{})
		go d.recheckLoop(ctx, d.recheckDone)
	}
	return d, nil
}

// WebOptions are the backends for web.New; the caller adds the token.
func (d *Data) WebOptions() web.Options {
	b := backends{d}
	o := web.Options{Searcher: b, Documents: b, Relations: b, Stats: b, Analyzer: newTermAnalyzer(), Logger: d.log}
	if d.Runner != nil { // not a nil *Runner in the interface: the API answers 503 without one
		o.Crawl = d.Runner
	}
	if d.cfg.Geo.Enabled { // dataset search, map, downloads (see geo.go)
		o.Datasets = GeoBackend(d.Index, catalog.New(d.DB), d.cfg.Data)
	}
	if d.cfg.News.Enabled { // news topics (see news.go)
		mo := news.MonitorOptionsFromConfig(d.cfg, d.DB)
		mo.Logger = d.log
		if mon, err := news.OpenMonitor(d.DB, mo); err != nil {
			d.log.Error("news topics are unavailable", "error", err)
		} else {
			o.News = NewsBackend(d.DB, mon)
		}
	}
	return o
}

// Close stops a running crawl, then closes the index, the link graph and the database.
func (d *Data) Close() error {
	var errs []error
	if d.stopRecheck != nil {
		d.stopRecheck()
		<-d.recheckDone
	}
	if d.Runner != nil {
		errs = append(errs, d.Runner.Close())
	}
	return errors.Join(append(errs, d.app.Close())...)
}

// backends adapts the index and the link graph to the web layer's interfaces.
type backends struct{ d *Data }

func (b backends) Search(ctx context.Context, req web.SearchRequest) (*web.SearchResult, error) {
	res, err := b.d.Index.Search(ctx, index.Request{Query: req.Query, Page: req.Page, PerPage: req.PerPage, Kind: req.Kind, Facets: req.Facets})
	if err != nil {
		return nil, SearchError(err)
	}
	return SearchResult(res), nil
}

// SearchResult converts an index's result to the web layer's (the cluster backend,
// web/cluster, converts the gatherer's with it too).
func SearchResult(res *index.Result) *web.SearchResult {
	out := &web.SearchResult{Total: res.Total, Took: res.Took, Query: res.Query, Relaxed: res.Relaxed, AllWords: res.AllWords, Hits: make([]web.Hit, 0, len(res.Hits)),
		Facets: webFacets(res.Facets), Shards: res.Shards, Missing: res.Missing, Partial: res.Partial}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, web.Hit{ID: h.ID, Kind: h.Kind, URL: h.URL, Title: h.Title, Snippet: h.Snippet,
			Score: h.Score, Fetched: h.Fetched, Host: h.Host, InLinks: h.InLinks, Fields: h.Fields})
	}
	return out
}

// SearchError gives the web layer a malformed query as its *web.QueryError (answered 400
// with the position) and any other search error as it is.
func SearchError(err error) error {
	var qe *index.QueryError
	if errors.As(err, &qe) {
		return &web.QueryError{Pos: qe.Pos, Msg: qe.Msg}
	}
	if errors.Is(err, index.ErrBusy) {
		return fmt.Errorf("%s: %w", strings.TrimPrefix(err.Error(), "index: "), web.ErrBusy)
	}
	return err
}

// webFacets converts the index's facet counts to the web layer's (never nil).
func webFacets(facets map[string][]index.FacetCount) map[string][]web.FacetCount {
	out := make(map[string][]web.FacetCount, len(facets))
	for name, values := range facets {
		fs := make([]web.FacetCount, 0, len(values))
		for _, v := range values {
			fs = append(fs, web.FacetCount{Value: v.Value, Count: v.Count, Filter: v.Filter})
		}
		out[name] = fs
	}
	return out
}

func (b backends) Document(ctx context.Context, id string) (web.Document, bool, error) {
	doc, ok, err := b.d.Index.Document(ctx, id)
	if err != nil || !ok {
		return web.Document{}, ok, err
	}
	// The link graph is current; what the index stored may predate later links.
	if n, err := b.d.Graph.InLinks(doc.URL); err == nil {
		doc.InLinks = n
	}
	if len(doc.Anchors) == 0 {
		if a, err := b.d.Graph.Anchors(doc.URL, maxAnchors, maxAnchorBytes); err == nil {
			doc.Anchors = a
		}
	}
	return web.Document{ID: doc.ID, Kind: doc.Kind, URL: doc.URL, Title: doc.Title, Body: doc.Body, Headings: doc.Headings,
		Description: doc.Description, Host: doc.Host, Lang: doc.Lang, ContentType: doc.ContentType, Fetched: doc.Fetched,
		Relevance: doc.Relevance, Relevant: doc.Relevant, Topics: doc.Topics, InLinks: doc.InLinks, Anchors: doc.Anchors,
		Fields: doc.Fields}, true, nil
}

// maxAnchors and maxAnchorBytes bound the anchor texts the document view lists.
const (
	maxAnchors     = 20
	maxAnchorBytes = 4 << 10
)

// Relations reads the link graph, which is keyed by canonical URLs: the address is
// normalized as the crawler normalizes links, so a typed http://Example.org/a/../b finds
// the page recorded as http://example.org/b. An address that is not a crawlable URL has
// no relations.
func (b backends) Relations(ctx context.Context, rawURL string, limit int) (in, out []web.Edge, err error) {
	u, err := b.d.app.Normalizer().Parse(rawURL)
	if err != nil {
		return nil, nil, nil
	}
	gin, gout, err := b.d.Graph.Relations(ctx, u.String(), limit)
	if err != nil {
		return nil, nil, err
	}
	return edges(gin), edges(gout), nil
}

func edges(es []linkgraph.Edge) []web.Edge {
	out := make([]web.Edge, len(es))
	for i, e := range es {
		out[i] = web.Edge{URL: e.URL, Anchor: e.Anchor}
	}
	return out
}

func (b backends) Stats(ctx context.Context) (web.Stats, error) {
	ist := b.d.Index.Stats()
	links, err := b.d.Graph.Edges()
	if err != nil {
		return web.Stats{}, err
	}
	st := web.Stats{Documents: uint64(max(0, ist.Documents)), Links: uint64(max(0, links)),
		Extra: map[string]any{"index_bytes": ist.DiskBytes, "index_languages": ist.Languages}}
	if !ist.LastWrite.IsZero() {
		st.Extra["index_last_write"] = ist.LastWrite
	}
	if ist.Unclean {
		st.Extra["index_unclean"] = true
	}
	// How far the index is behind the crawls (it indexes behind them: search.index-mode).
	st.Extra["index_backlog"] = b.d.app.IndexBacklog()
	if r := b.d.Graph.Summary(); r != nil {
		st.Extra["pagerank"] = r
	}
	return st, nil
}

// termAnalyzer highlights with the analyzers of package text (folding, stop words,
// stemming), one per language, built on first use.
type termAnalyzer struct {
	mu sync.Mutex
	by map[string]*text.Analyzer
}

func newTermAnalyzer() *termAnalyzer { return &termAnalyzer{by: map[string]*text.Analyzer{}} }

func (t *termAnalyzer) Terms(lang, s string) []string {
	t.mu.Lock()
	a, ok := t.by[lang]
	if !ok {
		a = text.NewAnalyzer(lang)
		t.by[lang] = a
	}
	t.mu.Unlock()
	return a.Terms(s)
}
