package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/web"
)

// Data is a data directory opened for serving: the crawl-state database, the link graph
// kept in it, the search index, and the runner that crawls into them. Close it when done.
type Data struct {
	cfg    config.Config
	log    *slog.Logger
	norm   *urlnorm.Normalizer
	DB     *store.DB
	Graph  *linkgraph.Graph
	Index  *index.Index
	Runner *Runner

	isink *index.Sink         // nil when search.index is off
	sinks func() []crawl.Sink // the sinks every crawl gets
}

// Options configure Open.
type Options struct {
	Logger *slog.Logger
	// CrawlOptions are added to every crawl the runner starts (verticals' analyzers and
	// sinks, a link scorer, a revisit policy; see RunnerOptions.Options); Open adds the
	// sinks that feed the index and the link graph.
	CrawlOptions func(cfg *config.Config, db *store.DB) ([]crawl.Option, error)
	// Progress receives the progress of crawls every second (see RunnerOptions).
	Progress func(crawl.Progress)
	// Index tunes the search index (ranking, implicit operator: the search section of the
	// configuration); Links is set by Open.
	Index index.Options
}

// ErrInUse means another process has the data directory open.
var ErrInUse = errors.New("the data directory is in use by another sonda process")

// Open opens cfg.Data for serving, creating it when it does not exist. With
// search.index on (the default), crawls run by the server index what they fetch and
// record its links, as `sonda crawl` does.
func Open(cfg config.Config, o Options) (*Data, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	inUse := func(err error) error {
		return fmt.Errorf("%w (%s: %v): stop the crawl or server using it first; sonda serve can run crawls itself (dashboard, or POST /api/crawl/start)", ErrInUse, cfg.Data, err)
	}
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{Logger: o.Logger})
	if errors.Is(err, store.ErrLocked) {
		return nil, inUse(err)
	}
	if err != nil {
		return nil, err
	}
	d := &Data{cfg: cfg, log: o.Logger, DB: db, norm: urlnorm.New(crawl.NormalizerOptions(cfg))}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	if d.Graph, err = linkgraph.Open(db, linkgraph.Options{Logger: o.Logger}); err != nil {
		return nil, err
	}
	ixo := o.Index
	ixo.Links, ixo.Logger = d.Graph, o.Logger
	d.Index, err = index.Open(index.DataDir(cfg.Data), ixo)
	if errors.Is(err, index.ErrLocked) {
		return nil, inUse(err)
	}
	if err != nil {
		return nil, err
	}
	if d.Index.Stats().Unclean {
		o.Logger.Warn("the search index was not closed cleanly: pages crawled just before may be missing from it; `sonda index rebuild` restores them")
	}
	d.sinks = func() []crawl.Sink { return nil }
	if cfg.Search.Index {
		d.isink = index.NewSink(d.Index, d.Graph, index.SinkOptions{BatchSize: cfg.Search.BatchSize, Delay: cfg.Search.BatchDelay, Logger: o.Logger})
		// The link graph first, so a page's anchors are in it when the index writes the page.
		gsink := linkgraph.NewSink(d.Graph, d.isink.Touch)
		d.sinks = func() []crawl.Sink { return []crawl.Sink{gsink, d.isink} }
		d.Graph.StartRanking(cfg.Search.PageRankInterval)
	}
	d.Runner = NewRunner(cfg, db, RunnerOptions{Logger: o.Logger, Progress: o.Progress, AfterCrawl: d.afterCrawl, Options: func(cfg *config.Config, db *store.DB) ([]crawl.Option, error) {
		var opts []crawl.Option
		if o.CrawlOptions != nil {
			extra, err := o.CrawlOptions(cfg, db)
			if err != nil {
				return nil, err
			}
			opts = append(opts, extra...)
		}
		return append(opts, crawl.WithSinks(d.sinks()...)), nil
	}})
	ok = true
	return d, nil
}

// afterCrawl makes what a crawl fetched searchable at once: the index sink's queue is
// written and PageRank recomputed when links changed.
func (d *Data) afterCrawl(ctx context.Context) error {
	if d.isink == nil {
		return nil
	}
	if err := d.isink.Flush(ctx); err != nil {
		return err
	}
	if d.Graph.Changes() > 0 {
		if _, err := d.Graph.ComputePageRank(ctx); err != nil {
			return err
		}
	}
	return nil
}

// WebOptions are the backends for web.New; the caller adds the token.
func (d *Data) WebOptions() web.Options {
	b := backends{d}
	o := web.Options{Searcher: b, Documents: b, Relations: b, Stats: b, Analyzer: newTermAnalyzer(), Crawl: d.Runner, Logger: d.log}
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
	if d.Runner != nil {
		errs = append(errs, d.Runner.Close())
	}
	if d.isink != nil {
		errs = append(errs, d.isink.Close())
	}
	if d.Index != nil {
		errs = append(errs, d.Index.Close())
	}
	if d.Graph != nil {
		errs = append(errs, d.Graph.Close())
	}
	if d.DB != nil {
		errs = append(errs, d.DB.Close())
	}
	return errors.Join(errs...)
}

// backends adapts the index and the link graph to the web layer's interfaces.
type backends struct{ d *Data }

func (b backends) Search(ctx context.Context, req web.SearchRequest) (*web.SearchResult, error) {
	res, err := b.d.Index.Search(ctx, index.Request{Query: req.Query, Page: req.Page, PerPage: req.PerPage, Kind: req.Kind, Facets: req.Facets})
	var qe *index.QueryError
	if errors.As(err, &qe) {
		return nil, &web.QueryError{Pos: qe.Pos, Msg: qe.Msg}
	}
	if err != nil {
		return nil, err
	}
	out := &web.SearchResult{Total: res.Total, Took: res.Took, Query: res.Query, Relaxed: res.Relaxed, Hits: make([]web.Hit, 0, len(res.Hits)),
		Facets: make(map[string][]web.FacetCount, len(res.Facets))}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, web.Hit{ID: h.ID, Kind: h.Kind, URL: h.URL, Title: h.Title, Snippet: h.Snippet,
			Score: h.Score, Fetched: h.Fetched, Host: h.Host, InLinks: h.InLinks, Fields: h.Fields})
	}
	for name, values := range res.Facets {
		fs := make([]web.FacetCount, 0, len(values))
		for _, v := range values {
			fs = append(fs, web.FacetCount{Value: v.Value, Count: v.Count, Filter: v.Filter})
		}
		out.Facets[name] = fs
	}
	return out, nil
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
	u, err := b.d.norm.Parse(rawURL)
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
