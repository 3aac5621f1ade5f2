package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/index/ireval"
)

func init() { evalCommands = append(evalCommands, newEvalRetrievalCmd) }

func newEvalRetrievalCmd() *cobra.Command {
	var dir string
	var tune, asJSON, e2e bool
	var serveEnv, sites []string
	cmd := &cobra.Command{
		Use:   "retrieval [--cranfield DIR] [--tune] [--end-to-end [--env KEY=VALUE]...] [--json]",
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
by coordinate ascent on the odd half only, and prints what it chose.

--end-to-end measures the path a user's question takes instead of the index alone: the
collection is served on loopback as a website (each abstract a page with its title as
<title> and <h1>, inside a site template of navigation, side box and footer; listing
pages and previous/next links that say nothing about relevance), crawled with sonda crawl,
served with sonda serve, and every question is sent to GET /api/search as typed (the
configured operator). It reports those scores, once as configured and once with the link
rank off (ranking.link 0), and the p50 and p99 time of each question's first result page.

--site chooses the site template: archive (the default: navigation, side box and footer
marked as such with <nav>, <aside> and <footer>) or portal (a CMS page of plain <div>s:
menu, breadcrumbs, a "popular topics" box of the field's subjects and a "readers also
viewed" box with three other abstracts' titles on every page, the title in <title> after
which the site's name follows, and in <h2>). --site archive,portal runs both.

  sonda eval retrieval
  sonda eval retrieval --end-to-end
  sonda eval retrieval --end-to-end --site archive,portal
  sonda eval retrieval --end-to-end --env SONDA_SEARCH_OPERATOR=or`,
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
			var runs []*endToEnd
			for _, site := range sites {
				if !slices.Contains(ireval.Templates, site) {
					return usageError{fmt.Errorf("--site %q: the templates are %s", site, strings.Join(ireval.Templates, ", "))}
				}
			}
			if e2e {
				with := ""
				if len(serveEnv) > 0 {
					with = ", " + strings.Join(serveEnv, " ")
				}
				for _, site := range sites {
					name := "crawled site"
					if site != ireval.TemplateArchive {
						name = site + " site"
					}
					variants := []e2eVariant{
						{"sonda end to end (" + name + ", GET /api/search" + with + ")", nil},
						{"sonda end to end, " + name + ", link rank off (ranking.link 0" + with + ")", []string{"SONDA_SEARCH_RANKING_LINK=0"}},
					}
					r, err := runEndToEnd(ctx, c, site, serveEnv, variants, cmd.ErrOrStderr())
					if err != nil {
						return err
					}
					runs = append(runs, r...)
				}
				for _, e := range runs {
					row, err := ireval.Score(ctx, c, e.name, e.ranking)
					if err != nil {
						return err
					}
					row.Pages = e.pages
					row.P50MS = ms(percentile(e.latencies, 0.5))
					row.P99MS = ms(percentile(e.latencies, 0.99))
					rows = append(rows, row)
				}
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
			for _, row := range rows {
				if row.Pages > 0 {
					fmt.Fprintf(out, "\n%s: %d pages indexed from the crawl; GET /api/search, first page: p50 %.1f ms, p99 %.1f ms",
						row.System, row.Pages, row.P50MS, row.P99MS)
				}
			}
			if len(runs) > 0 {
				fmt.Fprintln(out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "cranfield", filepath.Join("..", "shared", "testdata", "cranfield"), "`DIR` holding cran.all.1400, cran.qry and cranqrel")
	cmd.Flags().BoolVar(&tune, "tune", false, "choose title weight, k1, b and proximity on the odd queries first")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	cmd.Flags().BoolVar(&e2e, "end-to-end", false, "also serve the collection as a website, crawl it with sonda crawl, serve it with sonda serve and ask every question over GET /api/search")
	cmd.Flags().StringSliceVar(&sites, "site", []string{ireval.TemplateArchive}, "with --end-to-end: the site `TEMPLATE`s to render the collection in: archive, portal (comma-separated)")
	cmd.Flags().StringArrayVar(&serveEnv, "env", nil, "with --end-to-end: a `KEY=VALUE` setting for the crawl and serve processes, e.g. SONDA_SEARCH_OPERATOR=or (repeatable)")
	return cmd
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
