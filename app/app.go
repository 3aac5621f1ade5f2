// Package app assembles a sonda instance from its configuration: it opens a data
// directory's store, link graph and search index, and builds the crawl options the
// configuration asks for, in the order that makes them compose. Every command that opens a
// data directory goes through it (sonda crawl; sonda serve and sonda demo through package
// web/local; sonda search, index rebuild and export), so a crawl is wired the same way
// whichever command runs it, and what a crash leaves behind is repaired the same way
// whichever command opens the directory next.
//
// What is opened when (Open):
//
//   - The crawl database, DATA/state, always. Pebble allows one opener, so the instance
//     owns it and shares it: crawls get it through crawl.WithStore, the link graph and the
//     verticals keep their records in it.
//   - The link graph (in the database) and the search index, DATA/index, when
//     Options.Search asks for them, or when Options.Crawl does and search.index is on.
//   - Crawls feed the index behind them (search.index-mode async, or sync for
//     read-your-writes): each page committed is also put in the index's durable queue
//     (index.Queue, in the store, in the page's own commit) and removed from it once the
//     index has persisted it. Pages left in the queue (a kill, a power cut) are caught up
//     before anything reads or writes the index: replayed from the store and the WARC files
//     into the link graph and the index (index.Replay), shaped as the live crawl shaped
//     them (Restorers).
//     A new index (first use, search.index turned on later, or one whose creation a crash
//     interrupted, which index.Open makes anew) gets everything the store holds.
//
// The crawl options (Instance.CrawlOptions) are built fresh for every crawl, since link
// scorers and analyzers keep per-crawl state; see that method for their order.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/query"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// Options say what Open prepares beyond the crawl database.
type Options struct {
	Logger *slog.Logger
	// Search opens the link graph and the search index even when search.index is off:
	// for reading them (sonda search, the web UI).
	Search bool
	// Crawl prepares the instance to run crawls (CrawlOptions): with search.index on, the
	// link graph and the index are opened and every crawl feeds them through its sinks.
	Crawl bool
	// ReadOnly opens the crawl database and the search index read-only
	// (store.Options.ReadOnly, index.Options.ReadOnly), for commands that only look: not
	// one byte of the data directory changes. It excludes Crawl.
	ReadOnly bool
	// RanksFromElsewhere: the link graph's ranks are stored into it from outside (a
	// cluster node stores those its leader computed over the whole cluster's graph,
	// linkgraph.Graph.SetRanks), so the instance never computes PageRank itself (neither
	// in the background nor after a crawl), which would replace them with ranks over its
	// own share of the links.
	RanksFromElsewhere bool
}

// Instance is one open data directory. Close it when done; it is safe to use from several
// goroutines as its parts are (one crawl at a time).
type Instance struct {
	cfg  config.Config
	log  *slog.Logger
	norm *urlnorm.Normalizer

	// DB is the crawl database; nil only after Close.
	DB *store.DB
	// Graph and Index are nil unless Open opened them (see Options).
	Graph *linkgraph.Graph
	Index *index.Index

	crawl    bool            // Options.Crawl
	readOnly bool            // Options.ReadOnly
	noRank   bool            // Options.RanksFromElsewhere
	queue    *index.Queue    // with Index: the pages committed and not yet persisted in it
	isink    *index.Sink     // with Index: writes crawled pages into it
	gsink    *linkgraph.Sink // with Graph: records their links, then tells isink whose anchors changed
	// geo keeps the dataset documents in the index in step with the geo catalog (with
	// geo.enabled, search.index and Options.Crawl): datasets recorded by crawls, link checks.
	geo *geosearch.Indexer
}

// ErrInUse means another process has the data directory open.
var ErrInUse = errors.New("the data directory is in use by another sonda process")

// Open opens cfg.Data (creating it when it does not exist) and prepares what o asks for.
func Open(cfg config.Config, o Options) (*Instance, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	inUse := func(err error) error {
		return fmt.Errorf("%w (%s: %v): stop the crawl or server using it first; sonda serve can run crawls itself (dashboard, or POST /api/crawl/start)", ErrInUse, cfg.Data, err)
	}
	if o.ReadOnly && o.Crawl {
		return nil, errors.New("app: a read-only instance cannot crawl")
	}
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{Logger: o.Logger, ReadOnly: o.ReadOnly})
	if errors.Is(err, store.ErrLocked) {
		return nil, inUse(err)
	}
	if err != nil {
		return nil, err
	}
	in := &Instance{cfg: cfg, log: o.Logger, norm: urlnorm.New(crawl.NormalizerOptions(cfg)), DB: db, crawl: o.Crawl, readOnly: o.ReadOnly, noRank: o.RanksFromElsewhere}
	if !o.Search && !(o.Crawl && cfg.Search.Index) {
		return in, nil
	}
	ok := false
	defer func() {
		if !ok {
			in.Close()
		}
	}()
	err = in.openSearch()
	if errors.Is(err, index.ErrLocked) {
		return nil, inUse(err)
	}
	if err != nil {
		return nil, err
	}
	if in.queue, err = index.OpenQueue(db); err != nil {
		return nil, err
	}
	in.isink = in.newIndexSink(true)
	// The link graph first, so a page's anchors are in it when the index writes the page.
	in.gsink = linkgraph.NewSink(in.Graph, in.isink.Touch)
	unfinished := rebuildUnfinished(cfg.Data)
	switch st := in.Index.Stats(); {
	case o.ReadOnly && (st.Created || unfinished || in.queue.Len() > 0):
		// Catching up writes the link graph into the crawl database, which is read-only.
		in.log.Warn("the search index is new or behind the store and may miss the pages fetched last; the next sonda crawl or serve catches it up")
	case st.Created || unfinished:
		// A new index (first use, search.index turned on, or one whose creation a crash
		// interrupted), or one a rebuild did not finish: replay whatever the crawl already
		// recorded. Nothing, on first use.
		if err := in.catchUp(context.Background(), true); err != nil {
			return nil, err
		}
		if err := os.Remove(rebuildMark(cfg.Data)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	case in.queue.Len() > 0:
		if err := in.catchUp(context.Background(), false); err != nil {
			return nil, err
		}
	}
	if o.Crawl && cfg.Search.Index && !o.RanksFromElsewhere {
		in.Graph.StartRanking(cfg.Search.PageRankInterval)
	}
	if o.Crawl && cfg.Search.Index && cfg.Geo.Enabled {
		in.geo = geosearch.NewIndexer(catalog.New(db), in.Index, geosearch.IndexerOptions{Delay: cfg.Search.BatchDelay, Logger: o.Logger})
	}
	ok = true
	return in, nil
}

// openSearch opens the link graph (in the database) and the search index, DATA/index,
// ranked with it.
func (in *Instance) openSearch() error {
	ixo, err := IndexOptions(in.cfg, in.log)
	if err != nil {
		return err
	}
	if in.Graph, err = linkgraph.Open(in.DB, linkgraph.Options{Logger: in.log}); err != nil {
		return err
	}
	ixo.Links = in.Graph
	ixo.ReadOnly = in.readOnly
	in.Index, err = index.Open(index.DataDir(in.cfg.Data), ixo)
	return err
}

// newIndexSink is a sink that writes crawled (or replayed) pages into the index, in
// batches as search.batch-size and search.batch-delay say.
// The crawls' sink journals pages in the instance's queue and, with search.index-mode
// sync, makes each crawl worker wait for its page; replays (catch-up, rebuild) write in
// batches without either.
func (in *Instance) newIndexSink(forCrawls bool) *index.Sink {
	o := index.SinkOptions{BatchSize: in.cfg.Search.BatchSize, Delay: in.cfg.Search.BatchDelay, Logger: in.log}
	if forCrawls {
		o.Sync, o.Queue = in.cfg.Search.IndexMode == config.IndexSync, in.queue
	}
	return index.NewSink(in.Index, in.Graph, o)
}

// IndexBacklog is how far the index is behind the crawls: pages committed and not yet
// persisted in it, and the age of the oldest (zero without an index).
func (in *Instance) IndexBacklog() crawl.Backlog {
	if in.isink == nil {
		return crawl.Backlog{}
	}
	return in.isink.Backlog()
}

// IndexOptions are the search settings of cfg, for an index ranked with a link graph the
// caller adds (index.Options.Links).
func IndexOptions(cfg config.Config, log *slog.Logger) (index.Options, error) {
	op, err := query.ParseOperator(cfg.Search.Operator)
	if err != nil {
		return index.Options{}, fmt.Errorf("search.operator: %w", err)
	}
	r := cfg.Search.Ranking
	// 0 in the configuration is none kept; index.Options' zero is its default.
	facetCache, forwardCache, postingsCache := int64(cfg.Search.FacetCache), int64(cfg.Search.ForwardCache), int64(cfg.Search.PostingsCache)
	if facetCache == 0 {
		facetCache = -1
	}
	if forwardCache == 0 {
		forwardCache = -1
	}
	if postingsCache == 0 {
		postingsCache = -1
	}
	return index.Options{
		Ranking: index.Ranking{
			Title: r.Title, Body: r.Body, Headings: r.Headings, Description: r.Description, Anchors: r.Anchors,
			Extra: r.Extra, URL: r.URL, K1: r.K1, B: r.B, Proximity: r.Proximity, Feedback: r.Feedback, Link: r.Link, Relevance: r.Relevance,
			LinkSignal: r.LinkSignal, Window: r.Window,
		},
		Implicit: op, CacheEntries: cfg.Search.Cache, FacetCache: facetCache, ForwardCache: forwardCache, PostingsCache: postingsCache, MaxResults: cfg.Search.MaxResults, Logger: log,
		Budget: cfg.Search.TimeBudget, MaxSearches: cfg.Search.MaxSearches, QueueWait: cfg.Search.QueueWait,
		BatchSize: cfg.Search.BatchSize,
	}, nil
}

// Config is the configuration the instance was opened with.
func (in *Instance) Config() config.Config { return in.cfg }

// DeleteDocs removes documents from the search index (none without one). What the crawl
// queued for the index is written first, so a page queued before the call does not come
// back after it, nor does an anchor refresh running meanwhile (index.Sink.Delete).
func (in *Instance) DeleteDocs(ctx context.Context, ids ...string) error {
	if in.Index == nil {
		return nil
	}
	if in.isink != nil {
		return in.isink.Delete(ctx, ids...)
	}
	return in.Index.Delete(ctx, ids...)
}

// LinkSink is the sink that keeps the link graph and tells the search index whose anchor
// texts changed; nil without a search index. A cluster node records in it the links other
// nodes' pages have to its hosts.
func (in *Instance) LinkSink() *linkgraph.Sink { return in.gsink }

// Normalizer is the crawl's URL normalizer (link-graph and record keys are its URLs).
func (in *Instance) Normalizer() *urlnorm.Normalizer { return in.norm }

// catchUp replays pages into the link graph (whose updates may be lost too) and the index,
// from the store and the WARC files: everything the store holds (all: a new index), or the
// pages left in the index's queue, committed by a crawl that stopped (a kill, a power cut)
// before the index persisted them. The queue's entries are removed once the index has
// persisted the replay. Indexing is by URL, so a page that was indexed after all is not
// indexed twice.
func (in *Instance) catchUp(ctx context.Context, all bool) error {
	var urls []string
	var seqs []uint64
	err := in.queue.Entries(func(seq uint64, url string) error {
		urls, seqs = append(urls, url), append(seqs, seq)
		return nil
	})
	if err != nil {
		return err
	}
	ro := in.replayOptions(time.Time{})
	if !all {
		in.log.Warn("the search index is behind the store (the last crawl stopped before it caught up); re-indexing the pages queued for it", "pages", len(urls))
		ro.URLs = urls
	}
	replay := in.newIndexSink(false)
	st, err := index.Replay(ctx, in.DB, crawl.WARCDir(in.cfg.Data), []crawl.Sink{in.gsink, replay}, ro)
	if cerr := replay.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("catching the search index up (sonda index rebuild redoes it all): %w", err)
	}
	if err := in.Index.Sync(ctx); err != nil {
		return err
	}
	if err := in.queue.Remove(seqs); err != nil {
		return err
	}
	if st.Replayed > 0 || st.Missing > 0 {
		in.log.Info("search index caught up", "pages", st.Replayed, "missing", st.Missing)
	}
	return nil
}

// replayOptions replay pages as the crawl of cfg saw them, from since (zero: all).
func (in *Instance) replayOptions(since time.Time) index.ReplayOptions {
	return index.ReplayOptions{Since: since, Normalizer: in.norm, RobotsAgent: in.cfg.Robots.Agent, Analyzers: Restorers(in.DB)}
}

// AfterCrawl makes what a crawl fetched searchable at once: the index sink's queue is
// written and PageRank recomputed when links changed. Long-lived processes (sonda serve)
// call it when each crawl ends; Close does the same.
func (in *Instance) AfterCrawl(ctx context.Context) error {
	if in.geo != nil {
		if err := in.geo.Flush(ctx); err != nil {
			return err
		}
	}
	if in.isink == nil {
		return nil
	}
	if err := in.isink.Compact(ctx); err != nil {
		return err
	}
	return in.rank(ctx)
}

// rank recomputes PageRank when the link graph changed since it was last computed.
func (in *Instance) rank(ctx context.Context) error {
	if in.Graph == nil || in.noRank || in.Graph.Changes() == 0 {
		return nil
	}
	in.log.Info("ranking the link graph")
	sum, err := in.Graph.ComputePageRank(ctx)
	if err != nil {
		return err
	}
	in.log.Info("PageRank computed", "pages", sum.Nodes, "links", sum.Edges, "iterations", sum.Iterations, "took", sum.Took)
	return nil
}

// Close writes what the index sink has queued, ranks the link graph if a crawl changed it,
// and closes the index, the graph and the database, in that order (each reads the next).
// Crawls using the instance must have ended. Closing twice does nothing.
func (in *Instance) Close() error {
	var errs []error
	if in.geo != nil {
		errs = append(errs, in.geo.Close())
		in.geo = nil
	}
	if in.isink != nil {
		errs = append(errs, in.isink.Close())
		if in.crawl {
			errs = append(errs, in.rank(context.Background()))
		}
		in.isink, in.gsink = nil, nil
	}
	if in.Index != nil {
		errs = append(errs, in.Index.Close())
		in.Index = nil
	}
	if in.Graph != nil {
		errs = append(errs, in.Graph.Close())
		in.Graph = nil
	}
	if in.DB != nil {
		errs = append(errs, in.DB.Close())
		in.DB = nil
	}
	return errors.Join(errs...)
}
