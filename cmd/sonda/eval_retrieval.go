package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/index/ireval"
)

func init() { evalCommands = append(evalCommands, newEvalRetrievalCmd) }

func newEvalRetrievalCmd() *cobra.Command {
	var dir string
	var tune, asJSON bool
	cmd := &cobra.Command{
		Use:   "retrieval [--cranfield DIR] [--tune] [--json]",
		Short: "Rank the Cranfield collection and compare sonda's search with plain BM25",
		Long: `retrieval indexes the Cranfield 1400 collection (aeronautics abstracts with 225 judged
queries) with sonda's analysis and ranking (search.ranking in the configuration), runs
every query, and reports MAP (over the first 1000 results) and nDCG@10 for sonda and for a
plain BM25 baseline: k1 1.2, b 0.75, title and abstract as one field, Unicode words,
lowercase, English stop words, no stemming.

Judgements: grades 1 (complete answer) to 4 (minimum interest) are relevant, with gains 4
to 1 for nDCG; the −1 pairs are not judgements. Queries are numbered by their order in
cran.qry (their .I numbers have gaps). Both systems get each question as written, as a
bag of words (sonda's implicit operator OR). Scores are given over all queries and over
the odd (tuning) and even (test) halves: --tune chooses title weight, k1, b and proximity
by coordinate ascent on the odd half only, and prints what it chose.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			c, err := ireval.LoadCranfield(dir)
			if err != nil {
				return usageError{err}
			}
			opts, err := app.IndexOptions(cfg, newLogger(cfg))
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "sonda-cranfield-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			ix, err := index.Open(filepath.Join(tmp, "index"), opts)
			if err != nil {
				return err
			}
			defer ix.Close()
			ctx := cmd.Context()
			if err := ireval.Load(ctx, ix, c); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if tune {
				var log io.Writer = cmd.ErrOrStderr()
				best, _, err := ireval.TuneRanking(ctx, c, ix, ix.Ranking(), 5, log)
				if err != nil {
					return err
				}
				fmt.Fprintf(log, "chosen on the tuning half: title %g, k1 %g, b %g, proximity %g\n", best.Title, best.K1, best.B, best.Proximity)
			}
			rows, err := ireval.Compare(ctx, c, ix)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			r := ix.Ranking()
			fmt.Fprintf(out, "Cranfield 1400: %d documents, %d queries; sonda ranking: title %g, body %g, k1 %g, b %g, proximity %g\n\n",
				len(c.Docs), len(c.Queries), r.Title, r.Body, r.K1, r.B, r.Proximity)
			fmt.Fprintf(out, "%-55s %-6s %-8s %s\n", "system", "split", "MAP", "nDCG@10")
			for _, row := range rows {
				for _, s := range []struct {
					name   string
					scores ireval.Scores
				}{{"all", row.All}, {"tune", row.Tune}, {"test", row.Test}} {
					fmt.Fprintf(out, "%-55s %-6s %-8.4f %.4f\n", row.System, s.name, s.scores.MAP, s.scores.NDCG10)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "cranfield", filepath.Join("..", "shared", "testdata", "cranfield"), "`DIR` holding cran.all.1400, cran.qry and cranqrel")
	cmd.Flags().BoolVar(&tune, "tune", false, "choose title weight, k1, b and proximity on the odd queries first")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}
