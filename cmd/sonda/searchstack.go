package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/query"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// indexOptions are the search settings of cfg (the link graph is added by the caller).
func indexOptions(cfg config.Config, log *slog.Logger) (index.Options, error) {
	op, err := query.ParseOperator(cfg.Search.Operator)
	if err != nil {
		return index.Options{}, usageError{fmt.Errorf("search.operator: %w", err)}
	}
	r := cfg.Search.Ranking
	return index.Options{
		Ranking: index.Ranking{
			Title: r.Title, Body: r.Body, Headings: r.Headings, Description: r.Description, Anchors: r.Anchors,
			Extra: r.Extra, URL: r.URL, K1: r.K1, B: r.B, Proximity: r.Proximity, Link: r.Link, Relevance: r.Relevance,
			LinkSignal: r.LinkSignal, Window: r.Window,
		},
		Implicit: op, CacheEntries: cfg.Search.Cache, MaxResults: cfg.Search.MaxResults, Logger: log,
	}, nil
}

// openGraphAndIndex opens the link graph kept in db and, ranking with it, the search index
// of cfg.Data (created if needed).
func openGraphAndIndex(cfg config.Config, db *store.DB, log *slog.Logger) (*linkgraph.Graph, *index.Index, error) {
	opts, err := indexOptions(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	g, err := linkgraph.Open(db, linkgraph.Options{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	opts.Links = g
	ix, err := index.Open(index.DataDir(cfg.Data), opts)
	if err != nil {
		g.Close()
		return nil, nil, err
	}
	return g, ix, nil
}

// searchStack is what a crawl writes besides the store: the link graph (in the store's
// database) and the search index, with the sinks that keep them up to date.
type searchStack struct {
	log   *slog.Logger
	Graph *linkgraph.Graph
	Index *index.Index
	isink *index.Sink
	gsink *linkgraph.Sink
}

// openSearchStack opens the link graph in db and the index in DATA/index for a crawl; it
// returns nil when search.index is off.
func openSearchStack(cfg config.Config, db *store.DB, log *slog.Logger) (*searchStack, error) {
	if !cfg.Search.Index {
		return nil, nil
	}
	s := &searchStack{log: log}
	var err error
	if s.Graph, s.Index, err = openGraphAndIndex(cfg, db, log); err != nil {
		return nil, err
	}
	s.isink = index.NewSink(s.Index, s.Graph, index.SinkOptions{BatchSize: cfg.Search.BatchSize, Delay: cfg.Search.BatchDelay, Logger: log})
	s.gsink = linkgraph.NewSink(s.Graph, s.isink.Touch)
	if s.Index.Stats().Unclean {
		if err := s.catchUp(cfg, db); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.Graph.StartRanking(cfg.Search.PageRankInterval)
	return s, nil
}

// catchUp replays the pages fetched since shortly before the index's checkpoint: after a
// crash, the index may have lost its last batches (see package index on durability). The
// margin covers pages whose fetch started before the checkpoint but were written after.
func (s *searchStack) catchUp(cfg config.Config, db *store.DB) error {
	since := s.Index.Checkpoint().Add(-10 * time.Minute)
	s.log.Warn("the search index was not closed cleanly; re-indexing the pages fetched since its last persisted write", "since", since.Format(time.RFC3339))
	st, err := index.Replay(context.Background(), db, crawl.WARCDir(cfg.Data), []crawl.Sink{s.gsink, s.isink}, index.ReplayOptions{
		Since: since, Normalizer: urlnorm.New(crawl.NormalizerOptions(cfg)), RobotsAgent: cfg.Robots.Agent,
	})
	if err != nil {
		return fmt.Errorf("catching the search index up (sonda index rebuild redoes it all): %w", err)
	}
	if err := s.isink.Flush(context.Background()); err != nil {
		return err
	}
	s.log.Info("search index caught up", "pages", st.Replayed)
	return nil
}

// crawlOptions are the crawl options that feed the stack: the link graph first, so a
// page's anchors are in the graph when the index writes it.
func (s *searchStack) crawlOptions() []crawl.Option {
	if s == nil {
		return nil
	}
	return []crawl.Option{crawl.WithSinks(s.gsink, s.isink)}
}

// Close writes what the index sink has queued, ranks the graph if it changed, and closes
// the index and the graph (not the database).
func (s *searchStack) Close() error {
	if s == nil {
		return nil
	}
	errs := []error{s.isink.Close()}
	if s.Graph.Changes() > 0 {
		s.log.Info("ranking the link graph")
		if sum, err := s.Graph.ComputePageRank(context.Background()); err != nil {
			errs = append(errs, err)
		} else {
			s.log.Info("PageRank computed", "pages", sum.Nodes, "links", sum.Edges, "iterations", sum.Iterations, "took", sum.Took)
		}
	}
	errs = append(errs, s.Graph.Close(), s.Index.Close())
	return errors.Join(errs...)
}

// openCrawlDB opens the crawl database for the parts of a crawl that share it (the geo
// catalog, the link graph); nil when none is on, and the crawler opens it itself.
func openCrawlDB(cfg config.Config, log *slog.Logger) (*store.DB, error) {
	if !cfg.Geo.Enabled && !cfg.Search.Index {
		return nil, nil
	}
	return store.Open(crawl.StateDir(cfg.Data), store.Options{Logger: log})
}
