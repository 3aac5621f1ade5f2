package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/revisit/sim"
)

func init() { register(newSimCmd) }

// simCommands build the subcommands of `sonda sim`.
var simCommands = []func() *cobra.Command{newSimFreshnessCmd}

func newSimCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulations (revisit policies and freshness)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, build := range simCommands {
		cmd.AddCommand(build())
	}
	return cmd
}

func newSimFreshnessCmd() *cobra.Command {
	var (
		pages                    int
		budget, horizon          float64
		mixture, policies, trace string
		writeTrace, plotFile     string
		model                    string
		seed                     uint64
		lmShare, initialAccuracy float64
		samples                  int
		asJSON                   bool
	)
	cmd := &cobra.Command{
		Use:   "freshness [--pages N] [--budget VISITS/DAY] [--horizon DAYS] [--trace FILE]",
		Short: "Compare revisit policies on one simulated (or recorded) change history",
		Long: `freshness runs every revisit policy on the same change history at the same fetch
budget and reports, per policy, the time-averaged freshness of the copy (share of pages up
to date), its age (days since the first change the copy missed), the share of visits that
found a change (seed 004's measure) and the fraction of the oracle's freshness reached. The
oracle knows every page's true change rate and spends the budget optimally (Cho &
Garcia-Molina): no policy can do better on average.

The simulated pages change as Poisson processes whose rates come from --mixture (default:
seed 004's four classes, changing every 1, 3.1, 31.8 and 96.9 days, 11/9/11/69 % of pages).
Every page is fetched once on day 0; then the crawler makes --budget visits a day, always
taking the page that is most overdue (or next due). --trace replays a recorded history
instead: one line per URL, "id first-offset" then pairs "days-since-previous-visit 0|1"
(the format --write-trace writes for a daily monitor of the simulated pages).

Examples:
  sonda sim freshness
  sonda sim freshness --pages 10000 --budget 1000 --horizon 365 --plot freshness.svg
  sonda sim freshness --policies optimal,uniform,oracle --mixture 1:0.5,30:0.5
  sonda sim freshness --trace monitor.txt --budget 200`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := splitList(policies)
			for _, n := range names {
				if n == sim.Oracle {
					continue
				}
				if _, err := revisit.New(n, revisit.Options{Budget: 1}); err != nil {
					return usageError{fmt.Errorf("--policies: %w (or oracle)", err)}
				}
			}
			var tr sim.Trace
			source := ""
			if trace != "" {
				recs, err := readTraceFile(trace)
				if err != nil {
					return err
				}
				tr = sim.FromRecorded(recs, seed)
				source = fmt.Sprintf("%d pages replayed from %s over %.0f days", len(tr.Pages), trace, tr.Horizon)
			} else {
				mix, err := sim.ParseMixture(mixture)
				if err != nil {
					return usageError{fmt.Errorf("--mixture: %w", err)}
				}
				if pages <= 0 || !(horizon > 0) {
					return usageError{fmt.Errorf("--pages and --horizon must be positive")}
				}
				tr = sim.Generate(pages, horizon, mix, lmShare, seed)
				source = fmt.Sprintf("%d pages, mixture %s (mean interval days:share), %.0f days", pages, mix, horizon)
			}
			if writeTrace != "" {
				f, err := os.Create(writeTrace)
				if err != nil {
					return err
				}
				if err := tr.WriteMonitoring(f, 1); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			if budget == 0 {
				budget = 0.3 * float64(len(tr.Pages))
			}
			opts := revisit.Options{Optimal: revisit.OptimalOptions{Model: model}}
			res, err := sim.Run(sim.Config{Budget: budget, Policies: names, Samples: samples, InitialAccuracy: initialAccuracy, Seed: seed, Options: opts}, tr)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeSimJSON(out, budget, source, res)
			}
			fmt.Fprintf(out, "%s; budget %.0f visits/day (%.3g per page per day)\n\n", source, budget, budget/float64(len(tr.Pages)))
			writeSimTable(out, res)
			if plotFile != "" {
				title := fmt.Sprintf("Freshness over time, %d pages, %.0f visits/day", len(tr.Pages), budget)
				if err := sim.Plot(res, tr.Horizon, title, plotFile); err != nil {
					return err
				}
				fmt.Fprintf(out, "\nplot: %s\n", plotFile)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&pages, "pages", 10000, "simulated pages")
	f.Float64Var(&budget, "budget", 0, "visits per day shared by all pages (default: 0.3 per page, seed 004's 90,000 a day for 300,000 pages)")
	f.Float64Var(&horizon, "horizon", 365, "simulated days")
	f.StringVar(&mixture, "mixture", sim.DefaultMixture.String(), "change-rate mixture: MEAN_INTERVAL_DAYS:SHARE,...")
	f.StringVar(&policies, "policies", "oracle,optimal,uniform,proportional,classes,classes-bayes,adaptive", "policies to compare, comma-separated")
	f.StringVar(&trace, "trace", "", "replay the recorded change history in `FILE` instead of simulating pages")
	f.StringVar(&writeTrace, "write-trace", "", "also write what a daily monitor of the pages would record to `FILE`")
	f.StringVar(&plotFile, "plot", "", "draw freshness over time per policy into `FILE` (.svg, .png or .pdf)")
	f.Uint64Var(&seed, "seed", 1, "random seed of the pages and their changes")
	f.Float64Var(&lmShare, "last-modified", 0, "share of pages whose server reports Last-Modified")
	f.Float64Var(&initialAccuracy, "initial-accuracy", 0.7436, "accuracy of the change-class policies' initial classifier (seed 004's tree: 0.7436; random: 0.25)")
	f.IntVar(&samples, "samples", 100, "points of the freshness-over-time series")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON")
	f.StringVar(&model, "model", "grid", "the optimal policy's change-rate model: grid or gamma")
	return cmd
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func writeSimTable(w io.Writer, res []sim.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tfreshness\tof oracle\tage (days)\tvisits that found a change\tvisits\ttime\t")
	for _, r := range res {
		of := "-"
		if r.OfOracle > 0 {
			of = fmt.Sprintf("%.1f%%", 100*r.OfOracle)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%s\t%.3f\t%.1f%%\t%d\t%s\t\n", r.Policy, r.Freshness, of, r.Age, 100*r.ChangeShare, r.Visits, r.Elapsed.Round(time.Millisecond))
	}
	tw.Flush()
}

func writeSimJSON(w io.Writer, budget float64, source string, res []sim.Result) error {
	type row struct {
		Policy      string    `json:"policy"`
		Freshness   float64   `json:"freshness"`
		OfOracle    float64   `json:"of_oracle,omitempty"`
		Age         float64   `json:"age_days"`
		ChangeShare float64   `json:"change_share"`
		Visits      int       `json:"visits"`
		Series      []float64 `json:"series"`
	}
	out := struct {
		Source  string  `json:"source"`
		Budget  float64 `json:"budget_per_day"`
		Results []row   `json:"results"`
	}{Source: source, Budget: budget}
	for _, r := range res {
		out.Results = append(out.Results, row{r.Policy, r.Freshness, r.OfOracle, r.Age, r.ChangeShare, r.Visits, r.Series})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
