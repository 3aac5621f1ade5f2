package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

func init() { register(newIndexCmd) }

func newIndexCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Maintain the search index",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newIndexRebuildCmd())
	return cmd
}

func newIndexRebuildCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild [--data DIR]",
		Short: "Recreate the search index and the link graph from the crawl's records and WARC files",
		Long: `rebuild throws the search index (DIR/index) away and makes it again, with the link graph
and PageRank, from what the crawl recorded: every page record in DIR/state and its latest
capture in DIR/warc, parsed again as the crawler parsed it. Use it after a crash that left
the index behind the crawl, after changing the analysis, or to index a crawl made with
search.index off. The data directory must not be in use.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if _, err := os.Stat(crawl.StateDir(cfg.Data)); err != nil {
				return usageError{fmt.Errorf("no crawl in %s: %w", cfg.Data, err)}
			}
			return rebuildIndex(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
}

func rebuildIndex(ctx context.Context, cfg config.Config, w io.Writer) error {
	log := newLogger(cfg)
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{Logger: log})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := os.RemoveAll(index.DataDir(cfg.Data)); err != nil {
		return fmt.Errorf("remove the old index: %w", err)
	}
	g, ix, err := openGraphAndIndex(cfg, db, log)
	if err != nil {
		return err
	}
	defer g.Close()
	defer ix.Close()
	ropts := index.ReplayOptions{
		Normalizer:  urlnorm.New(crawl.NormalizerOptions(cfg)),
		RobotsAgent: cfg.Robots.Agent,
	}
	// Two passes: the links first, so every document is written once, with the anchor text
	// of all the links to it.
	replay := func(name string, sink crawl.Sink) error {
		ropts.Progress = func(done, total int) { fmt.Fprintf(w, "\r%s: %d of %d pages", name, done, total) }
		st, err := index.Replay(ctx, db, crawl.WARCDir(cfg.Data), []crawl.Sink{sink}, ropts)
		fmt.Fprintln(w)
		if st.Missing > 0 {
			fmt.Fprintf(w, "  %d captures could not be read from the WARC files; those pages are left out\n", st.Missing)
		}
		return err
	}
	if err := replay("links", linkgraph.NewSink(g, nil)); err != nil {
		return err
	}
	sum, err := g.ComputePageRank(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "PageRank: %d pages, %d links, %d iterations, %s\n", sum.Nodes, sum.Edges, sum.Iterations, formatDuration(sum.Took))
	is := index.NewSink(ix, g, index.SinkOptions{BatchSize: cfg.Search.BatchSize, Delay: cfg.Search.BatchDelay, Logger: log})
	err = replay("documents", is)
	if cerr := is.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s := ix.Stats()
	fmt.Fprintf(w, "index: %d documents in %s\n", s.Documents, index.DataDir(cfg.Data))
	return nil
}
