package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/index"
)

func init() { register(newSearchCmd) }

func newSearchCmd() *cobra.Command {
	var asJSON, facets bool
	var page, perPage int
	var kind, operator string
	cmd := &cobra.Command{
		Use:         "search [--data DIR] [--json] QUERY...",
		Annotations: map[string]string{annotStop: stopAtOnce},
		Short:       "Search the crawled pages from the terminal",
		Long: `search runs a query over the search index of a data directory and prints one page of
results: title, URL, a snippet with the query words, host, date and in-link count.

Query language (search.operator sets what words side by side mean; and by default):
  solar reactor            both words          solar OR wind      either word
  "nuclear fuel"           the phrase          +reactor -coal     required, excluded
  (solar OR wind) -coal    groups              title:reactor      in the title
  site:example.org         a site and its subdomains        inurl:docs   in the URL
  lang:pt  type:article  type:pdf  topic:nuclear
  after:2024-01-15  before:2024-03  date:2024-01..2024-03   (dates: YYYY, YYYY-MM, YYYY-MM-DD)

The data directory must not be in use (a running crawl or sonda serve has it locked; search
through sonda serve then).

Examples:
  sonda search --data sonda-data 'reactor -coal site:example.org'
  sonda search --data sonda-data --json --page 2 '"fuel rods"'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if _, err := os.Stat(index.DataDir(cfg.Data)); err != nil {
				return usageError{fmt.Errorf("no search index in %s (crawl with search.index on, or run sonda index rebuild): %w", cfg.Data, err)}
			}
			// One search, asked by someone who waits for it: answered whole. The time
			// budget (search.time-budget) protects a server that many share from heavy
			// queries; here it would only cut answers short on a busy machine.
			cfg.Search.TimeBudget = 0
			in, err := openApp(cfg, app.Options{Logger: newLogger(cfg), Search: true, ReadOnly: true})
			if err != nil {
				return err
			}
			defer in.Close()
			res, err := in.Index.Search(cmd.Context(), index.Request{Query: strings.Join(args, " "), Page: page, PerPage: perPage, Kind: kind, Facets: facets, Operator: operator})
			var qe *index.QueryError
			if errors.As(err, &qe) {
				q := strings.Join(args, " ")
				return usageError{fmt.Errorf("%s\n  %s\n  %s^", qe.Msg, q, strings.Repeat(" ", min(qe.Pos, len(q))))}
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			printResults(out, res, isTerminal(out))
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the result page as JSON")
	f.IntVar(&page, "page", 1, "result page `N`")
	f.IntVar(&perPage, "per-page", 10, "results per page (at most 100)")
	f.BoolVar(&facets, "facets", false, "also print counts by site, type, language and date")
	f.StringVar(&kind, "kind", "", "only documents of this kind (page, article, dataset)")
	f.StringVar(&operator, "operator", "", "what words side by side mean: and, or (default: search.operator)")
	return cmd
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// plainSnippet turns a snippet's HTML (escaped text and <mark>) into terminal text: marked
// words in bold on a terminal, between asterisks elsewhere.
func plainSnippet(s string, tty bool) string {
	on, off := "*", "*"
	if tty {
		on, off = "\033[1m", "\033[0m"
	}
	s = strings.ReplaceAll(strings.ReplaceAll(s, "<mark>", on), "</mark>", off)
	return html.UnescapeString(s)
}

func printResults(w io.Writer, r *index.Result, tty bool) {
	if r.Relaxed {
		fmt.Fprintln(w, "No page has all the words; these have some of them.")
	}
	first := (r.Page-1)*r.PerPage + 1
	for i, h := range r.Hits {
		title := h.Title
		if title == "" {
			title = h.URL
		}
		fmt.Fprintf(w, "%d. %s\n   %s\n", first+i, oneLine(title), h.URL)
		if h.Snippet != "" {
			fmt.Fprintf(w, "   %s\n", oneLine(plainSnippet(h.Snippet, tty)))
		}
		meta := []string{h.Host}
		if !h.Date.IsZero() {
			meta = append(meta, h.Date.Format("2006-01-02"))
		}
		meta = append(meta, plural(int64(h.InLinks), "in-link", "in-links"))
		if h.Kind != index.KindPage {
			meta = append(meta, h.Kind)
		}
		fmt.Fprintf(w, "   %s\n\n", strings.Join(meta, " · "))
	}
	switch {
	case r.Total == 0:
		fmt.Fprintf(w, "No results for %s (%s).\n", r.Query, formatDuration(r.Took))
	default:
		fmt.Fprintf(w, "%s for %s (%s); page %d of %d\n", plural(int64(r.Total), "result", "results"), r.Query, formatDuration(r.Took), r.Page, max(r.Pages, 1))
	}
	for _, name := range []string{index.FacetSite, index.FacetType, index.FacetLang, index.FacetDate} {
		counts := r.Facets[name]
		if len(counts) == 0 {
			continue
		}
		parts := make([]string, len(counts))
		for i, c := range counts {
			parts[i] = fmt.Sprintf("%s %d", c.Value, c.Count)
		}
		fmt.Fprintf(w, "  %s: %s\n", name, strings.Join(parts, ", "))
	}
}

// oneLine collapses white space, so crawled text cannot break the layout.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
