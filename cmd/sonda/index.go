package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/index"
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
search.index off. On a cluster node's data directory (sonda node, cluster.global-ranks on)
it keeps the PageRank the cluster computed over every node's links rather than rank the
node's share alone. The data directory must not be in use.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if err := requireCrawl(cfg.Data); err != nil {
				return err
			}
			return rebuildIndex(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
}

func rebuildIndex(ctx context.Context, cfg config.Config, w io.Writer) error {
	phase := ""
	st, err := app.Rebuild(ctx, cfg, app.RebuildOptions{Logger: newLogger(cfg), Progress: func(p string, done, total int) {
		if phase != "" && p != phase {
			fmt.Fprintln(w)
		}
		phase = p
		fmt.Fprintf(w, "\r%s: %d of %d pages", p, done, total)
	}})
	if phase != "" {
		fmt.Fprintln(w)
	}
	if errors.Is(err, app.ErrInUse) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if st.Missing > 0 {
		fmt.Fprintf(w, "  %d captures could not be read from the WARC files; those pages are left out\n", st.Missing)
	}
	r := st.PageRank
	if st.RanksKept {
		fmt.Fprintf(w, "PageRank: kept the ranks cluster %q computed over its whole graph (%d pages, %d links, run of %s); the node stores each new run when it runs\n",
			r.Cluster, r.Nodes, r.Edges, r.At.Format(time.RFC3339))
	} else {
		fmt.Fprintf(w, "PageRank: %d pages, %d links, %d iterations, %s\n", r.Nodes, r.Edges, r.Iterations, formatDuration(r.Took))
	}
	fmt.Fprintf(w, "index: %d documents in %s (%s)\n", st.Documents, index.DataDir(cfg.Data), formatDuration(st.Took))
	return nil
}
