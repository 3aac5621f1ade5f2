package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/extract/exteval"
)

func init() { evalCommands = append(evalCommands, newEvalExtractionCmd) }

func newEvalExtractionCmd() *cobra.Command {
	var modes, baseline string
	var workers, perPage int
	var asJSON, fastPath, withComments bool
	var failures string
	cmd := &cobra.Command{
		Use:   "extraction [--modes sonda,thesis] [--baseline trafilatura] [--per-page N] [--workers N] [--json] [DIR...]",
		Short: "Score article extraction against a baseline on the tuning set and a held-out set",
		Long: `eval extraction runs each extraction mode and the baseline over each test set DIR and
prints one row per set and mode. A DIR is laid out like Mozilla Readability's test suite
(one folder per page: source.html, expected.html, expected-metadata.json) or like Dragnet's
(html/ID.html with gold/ID.txt; a gold text is cut at its "!@#$%^&*() COMMENTS" line, the
readers' comments that follow it are not main content), or it is go-trafilatura's module
folder: the benchmark go-trafilatura was tuned on (about 980 pages, mostly German and other
languages than English), scored by strings each body must and must not contain. Without
DIR it scores the two sets in ../shared/testdata — dragnet, the set the cascade is tuned
on, and readability, held out — and that benchmark from the Go module cache (held out too,
and the baseline's own tuning set). A change that gains on one and loses on another is
overfitting.

  role            tuned (the set the cascade's decisions were tuned on) or held-out
  body P, R, F1   4-word shingles over \w+ tokens; precision and recall averaged over
                  pages, F1 from the means
                  On trafilatura-bench: every "with" string in the body is a true
                  positive, every one missing a false negative, every "without" string
                  in it a false positive; pooled over the set's strings
  vs base         body F1 minus the baseline's on the same set, same run
  title, byline, published, site, lang
                  accuracy on the pages whose ground truth has the field (Readability
                  layout only), compared after normalizing white space and case (bylines
                  without "By", times as instants or wall-clock readings to the expected
                  precision, languages by primary tag)
  meta            the mean of those five
  pub day         published time judged by its day only
  readerable      agreement of is_article with Readability's readerable flag
  docs/s          pages per second of wall time with --workers goroutines
  docs/cpu-s      pages per second of CPU time: what one core sustains

--per-page N explains the difference with the baseline: for each set and mode, the pages
grouped by the cascade stage that produced their body (sources.body: trafilatura, or
readability and distiller where the extractors' vote overruled it, article, jsonld...) with the mean F1 of the mode and of the baseline on them, then the N pages where
the mode loses most.

  sonda eval extraction
  sonda eval extraction --per-page 20 ../shared/testdata/dragnet
  GOMAXPROCS=1 sonda eval extraction --workers 1 ../shared/testdata/readability
  sonda eval extraction --modes sonda --failures byline ../shared/testdata/readability`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				for _, set := range []string{"dragnet", "readability"} {
					dir := filepath.Join("..", "shared", "testdata", set)
					if _, err := os.Stat(dir); err != nil {
						return usageError{fmt.Errorf("no test set given and %s not found (%v): give DIR, e.g. a copy of Mozilla Readability's test pages", dir, err)}
					}
					args = append(args, dir)
				}
				if dir, err := exteval.TrafilaturaBenchmark(); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "not scoring go-trafilatura's benchmark: %v\n", err)
				} else {
					args = append(args, dir)
				}
			}
			if workers <= 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			var exs []*extract.Extractor
			names := strings.Split(modes, ",")
			if baseline != "" {
				names = append([]string{baseline}, names...)
			}
			seen := map[string]bool{}
			for _, m := range names {
				m = strings.TrimSpace(m)
				if m == "" || seen[m] {
					continue
				}
				seen[m] = true
				ex, err := extract.New(extract.Options{Mode: extract.Mode(m), FastPath: fastPath})
				if err != nil {
					return usageError{err}
				}
				exs = append(exs, ex)
			}
			type setResult struct {
				name, role string
				base       *exteval.Result
				results    []exteval.Result
			}
			var sets []setResult
			for _, dir := range args {
				load := exteval.Load
				if withComments {
					load = exteval.LoadWithComments
				}
				cases, err := load(dir)
				if err != nil {
					return usageError{err}
				}
				sr := setResult{name: exteval.SetName(dir), role: exteval.Role(dir)}
				for _, ex := range exs {
					r := exteval.Run(cases, ex, workers)
					sr.results = append(sr.results, r)
				}
				if baseline != "" {
					sr.base = &sr.results[0]
				}
				sets = append(sets, sr)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				for _, sr := range sets {
					for _, r := range sr.results {
						if failures == "" {
							r.PerPage = nil
						}
						row := struct {
							Set  string `json:"set"`
							Role string `json:"role"`
							exteval.Result
						}{sr.name, sr.role, r}
						if err := enc.Encode(row); err != nil {
							return err
						}
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "set\trole\tmode\tpages\tbody P\tbody R\tbody F1\tvs base\ttitle\tbyline\tpublished\tsite\tlang\tmeta\tpub day\treaderable\tdocs/s\tdocs/cpu-s\t")
			for _, sr := range sets {
				for _, r := range sr.results {
					vs := "-"
					if sr.base != nil && r.Mode != sr.base.Mode {
						vs = fmt.Sprintf("%+.4f", r.F1-sr.base.F1)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t", sr.name, sr.role, r.Mode, r.Pages, r.Precision, r.Recall, r.F1, vs)
					for _, f := range exteval.Fields {
						fmt.Fprintf(tw, "%s\t", fraction(r.Fields[f]))
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f\t\n", metaColumn(r), fraction(r.PublishedDay), fraction(r.Readerable), r.DocsPerSecond(), r.DocsPerCPUSecond())
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if perPage > 0 {
				for _, sr := range sets {
					if sr.base == nil {
						return usageError{errors.New("--per-page compares with the baseline: do not set --baseline \"\"")}
					}
					for _, r := range sr.results {
						if r.Mode != sr.base.Mode {
							printPerPage(out, sr.name, r, *sr.base, perPage)
						}
					}
				}
			}
			if failures != "" {
				for _, sr := range sets {
					for _, r := range sr.results {
						fmt.Fprintf(out, "\n%s, %s: pages where %s was wrong\n", sr.name, r.Mode, failures)
						for _, f := range r.SortedFailures(failures) {
							fmt.Fprintf(out, "  %-40s got %q want %q\n", f[0], f[1], f[2])
						}
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&modes, "modes", "sonda,thesis", "comma-separated extraction `MODES` to score")
	cmd.Flags().StringVar(&baseline, "baseline", string(extract.ModeTrafilatura), "the `MODE` every other mode is compared with (\"\" for none)")
	cmd.Flags().IntVar(&perPage, "per-page", 0, "explain the difference with the baseline: stages, then the `N` pages lost most")
	cmd.Flags().IntVar(&workers, "workers", 0, "pages extracted at once (default: one per core)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per set and mode")
	cmd.Flags().BoolVar(&withComments, "with-comments", false, "score Dragnet against its whole gold files, the readers' comments after the separator included (how it was scored before issue 13)")
	cmd.Flags().BoolVar(&fastPath, "fast-path", false, "sonda mode: take the body from a page's <article> without go-trafilatura when it clearly holds the text")
	cmd.Flags().StringVar(&failures, "failures", "", "list the pages where `FIELD` (title, byline, published, site_name, language) was wrong")
	return cmd
}

// printPerPage prints, for one set, r against the baseline by cascade stage and the n pages
// r loses most on.
func printPerPage(out io.Writer, set string, r, base exteval.Result, n int) {
	diffs := exteval.Compare(r, base)
	fmt.Fprintf(out, "\n%s, %s against %s, by the stage that produced the body:\n", set, r.Mode, base.Mode)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "stage\tpages\tlost\twon\tF1\tbase F1\t\n")
	for _, s := range exteval.ByStage(diffs) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t\n", s.Stage, s.Pages, s.Lost, s.Won, s.MeanF1, s.MeanBaseF1)
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "pages lost most:\n")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "page\tstage\tP\tR\tF1\tbase F1\t\n")
	for i, d := range diffs {
		if i == n || d.Loss() <= 0 {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n", d.Name, d.BodyFrom, d.Precision, d.Recall, d.F1, d.Base)
	}
	_ = tw.Flush()
}

// metaColumn is the mean metadata accuracy, or "-" for a set without metadata (Dragnet,
// go-trafilatura's benchmark), where a 0 would read as every field wrong.
func metaColumn(r exteval.Result) string {
	for _, f := range exteval.Fields {
		if r.Fields[f].Total > 0 {
			return fmt.Sprintf("%.3f", r.MetadataAccuracy())
		}
	}
	return "-"
}

// fraction prints an accuracy as "0.912 (115/126)".
func fraction(f exteval.FieldScore) string {
	if f.Total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%d/%d)", f.Accuracy(), f.Correct, f.Total)
}
