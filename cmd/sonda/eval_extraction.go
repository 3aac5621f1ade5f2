package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/extract/exteval"
)

func init() { evalCommands = append(evalCommands, newEvalExtractionCmd) }

func newEvalExtractionCmd() *cobra.Command {
	var modes string
	var workers int
	var asJSON, noFastPath bool
	var failures string
	cmd := &cobra.Command{
		Use:   "extraction [--modes sonda,trafilatura,thesis] [--workers N] [--json] DIR",
		Short: "Score article extraction on a Readability-style test set",
		Long: `eval extraction runs each extraction mode over DIR, a test set laid out like Mozilla
Readability's (one folder per page: source.html, expected.html, expected-metadata.json;
../shared/testdata/readability is one), and prints one row per mode:

  body P, R, F1   4-word shingles over \w+ tokens; precision and recall averaged over
                  pages, F1 from the means
  title, byline, published, site, lang
                  accuracy on the pages whose ground truth has the field, compared after
                  normalizing white space and case (bylines without "By", times as instants
                  or wall-clock readings to the expected precision, languages by primary tag)
  meta            the mean of those five
  pub day         published time judged by its day only
  readerable      agreement of is_article with Readability's readerable flag
  docs/s          pages per second of wall time with --workers goroutines
  docs/cpu-s      pages per second of CPU time: what one core sustains

  sonda eval extraction ../shared/testdata/readability
  GOMAXPROCS=1 sonda eval extraction --workers 1 ../shared/testdata/readability
  sonda eval extraction --modes sonda --failures byline ../shared/testdata/readability`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("give one test-set folder (got %d arguments), e.g. ../shared/testdata/readability", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cases, err := exteval.Load(args[0])
			if err != nil {
				return usageError{err}
			}
			var results []exteval.Result
			for _, m := range strings.Split(modes, ",") {
				ex, err := extract.New(extract.Options{Mode: extract.Mode(strings.TrimSpace(m)), NoFastPath: noFastPath})
				if err != nil {
					return usageError{err}
				}
				if workers <= 0 {
					workers = runtime.GOMAXPROCS(0)
				}
				results = append(results, exteval.Run(cases, ex, workers))
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				for _, r := range results {
					if failures == "" {
						r.PerPage = nil
					}
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "mode\tpages\tbody P\tbody R\tbody F1\ttitle\tbyline\tpublished\tsite\tlang\tmeta\tpub day\treaderable\tdocs/s\tdocs/cpu-s\t")
			for _, r := range results {
				fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t", r.Mode, r.Pages, r.Precision, r.Recall, r.F1)
				for _, f := range exteval.Fields {
					fmt.Fprintf(tw, "%s\t", fraction(r.Fields[f]))
				}
				fmt.Fprintf(tw, "%.3f\t%s\t%s\t%.1f\t%.1f\t\n", r.MetadataAccuracy(), fraction(r.PublishedDay), fraction(r.Readerable), r.DocsPerSecond(), r.DocsPerCPUSecond())
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if failures != "" {
				for _, r := range results {
					fmt.Fprintf(out, "\n%s: pages where %s was wrong\n", r.Mode, failures)
					for _, f := range r.SortedFailures(failures) {
						fmt.Fprintf(out, "  %-40s got %q want %q\n", f[0], f[1], f[2])
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&modes, "modes", "sonda,trafilatura,thesis", "comma-separated extraction `MODES` to score")
	cmd.Flags().IntVar(&workers, "workers", 0, "pages extracted at once (default: one per core)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per mode")
	cmd.Flags().BoolVar(&noFastPath, "no-fast-path", false, "sonda mode: always run the full body extractor")
	cmd.Flags().StringVar(&failures, "failures", "", "list the pages where `FIELD` (title, byline, published, site_name, language) was wrong")
	return cmd
}

// fraction prints an accuracy as "0.912 (115/126)".
func fraction(f exteval.FieldScore) string {
	if f.Total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%d/%d)", f.Accuracy(), f.Correct, f.Total)
}
