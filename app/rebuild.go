package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/internal/crashpoint"
	"github.com/sonda-search/sonda/linkgraph"
)

// RebuildOptions tune Rebuild.
type RebuildOptions struct {
	Logger *slog.Logger
	// Progress, when set, is called now and then with the phase ("links", then
	// "documents"), the pages replayed and the total.
	Progress func(phase string, done, total int)
}

// RebuildStats say what Rebuild did.
type RebuildStats struct {
	Pages    int // page records replayed (in each phase)
	Missing  int // records whose WARC capture could not be read: left out of the index
	PageRank linkgraph.RankSummary
	// RanksKept: the data directory is a cluster node's, whose ranks its cluster computed
	// over the whole cluster's graph (PageRank.Cluster names it); they were kept, not
	// replaced by a run over this node's share of the links.
	RanksKept bool
	Datasets  int   // geographic datasets written (kind dataset), from the geo catalog
	Documents int64 // documents in the new index
	Took      time.Duration
}

// Rebuild throws the search index of cfg.Data away and makes it again, with the link graph
// and PageRank, from what the crawl recorded: every page record in the store and its
// latest capture in the WARC files, parsed as the crawler parsed it and shaped as its
// analyzers shaped it (Restorers). Two passes: the links first, so every document is
// written once, with the anchor text of all the links to it. A cluster node's directory
// keeps the ranks its cluster computed (RebuildStats.RanksKept). The data directory must
// not be in use.
func Rebuild(ctx context.Context, cfg config.Config, o RebuildOptions) (RebuildStats, error) {
	start := time.Now()
	if _, err := os.Stat(crawl.StateDir(cfg.Data)); err != nil {
		return RebuildStats{}, fmt.Errorf("no crawl in %s: %w", cfg.Data, err)
	}
	in, err := Open(cfg, Options{Logger: o.Logger})
	if err != nil {
		return RebuildStats{}, err
	}
	defer in.Close()
	if err := markRebuild(cfg.Data); err != nil {
		return RebuildStats{}, err
	}
	if err := os.RemoveAll(index.DataDir(cfg.Data)); err != nil {
		return RebuildStats{}, fmt.Errorf("remove the old index: %w", err)
	}
	crashpoint.Here("app.rebuild.removed")
	if err := in.openSearch(); err != nil {
		return RebuildStats{}, err
	}
	var st RebuildStats
	replay := func(phase string, sink crawl.Sink) error {
		ro := in.replayOptions(time.Time{})
		if o.Progress != nil {
			ro.Progress = func(done, total int) { o.Progress(phase, done, total) }
		}
		rs, err := index.Replay(ctx, in.DB, crawl.WARCDir(cfg.Data), []crawl.Sink{sink}, ro)
		st.Pages, st.Missing = rs.Replayed, rs.Missing
		return err
	}
	if err := replay("links", linkgraph.NewSink(in.Graph, nil)); err != nil {
		return st, err
	}
	if s := in.Graph.Summary(); s != nil && s.Cluster != "" {
		// A cluster node's graph holds its pages' links and those routed to its
		// partitions, not the whole web: PageRank over it would rank its pages unlike one
		// machine holding every page, which the stored ranks (its cluster's, over every
		// node's links) do. The replay above changed no rank; the node stores each new run
		// of its cluster as it comes.
		st.PageRank, st.RanksKept = *s, true
	} else if st.PageRank, err = in.Graph.ComputePageRank(ctx); err != nil {
		return st, err
	}
	in.isink = in.newIndexSink(false)
	if err := replay("documents", in.isink); err != nil {
		return st, err
	}
	if err := in.isink.Flush(ctx); err != nil {
		return st, err
	}
	if st.Datasets, err = geosearch.Reindex(ctx, catalog.New(in.DB), in.Index); err != nil {
		return st, err
	}
	st.Documents = int64(in.Index.Stats().Documents)
	st.Took = time.Since(start)
	if err := in.Close(); err != nil {
		return st, err
	}
	return st, os.Remove(rebuildMark(cfg.Data))
}

// rebuildMark is the file that says the search index of data is being rebuilt, or must
// be: a rebuild (or a repair, which ends in one) that a crash stopped leaves an index
// that misses pages, and the mark has the next repair, crawl or serve finish it.
func rebuildMark(data string) string { return filepath.Join(data, "index-rebuild-unfinished") }

func markRebuild(data string) error {
	if err := os.WriteFile(rebuildMark(data), []byte("the search index is being rebuilt; a crash left this: sonda repair, crawl or serve rebuilds it\n"), 0o600); err != nil {
		return fmt.Errorf("marking the index rebuild: %w", err)
	}
	return nil
}

func rebuildUnfinished(data string) bool {
	_, err := os.Stat(rebuildMark(data))
	return err == nil
}
