package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/revisit/changeweb"
	"github.com/sonda-search/sonda/revisit/liveeval"
	"github.com/sonda-search/sonda/revisit/sim"
)

func init() { evalCommands = append(evalCommands, newEvalRevisitCmd) }

func newEvalRevisitCmd() *cobra.Command {
	var (
		mixture, budget, policies, windows, plotFile string
		kinds                                        string
		hosts, pages                                 int
		duration, politeness, step                   time.Duration
		minInterval, maxInterval                     time.Duration
		seed                                         uint64
		asJSON                                       bool
	)
	cmd := &cobra.Command{
		Use:   "revisit [--mixture M] [--budget N/s] [--duration D] [--plot FILE]",
		Short: "Measure revisit policies live against an oracle that knows the true change rates",
		Long: `revisit crawls a test web whose pages change in real time, once per policy, all at once,
at the same fetch budget and on the same change history, and reports each crawl's
time-averaged freshness (the share of changing pages whose copy is up to date) over the
whole crawl and over --windows, from the test web's own logs of changes and responses.

Beside sonda's policies it crawls with an oracle that is given every page's true change
rate and spends the same budget optimally: "of oracle" is the share of the freshness that
was attainable on this web at this fetch rate. The simulator's figure for the same rates
and budget (every page known from the start, fetched only once due) is printed below.

The pages change as Poisson processes with mean intervals from --mixture (durations, or
never); the crawls run for --duration with the budget shared by discovery and revisits,
exactly as sonda crawl --budget does. Time here is compressed (pages change in seconds,
not days), so the revisit bounds default to 1s and none.

With --page-kinds the pages look like what they are, as on real sites: a page's URL
section (/news/, /blog/, /docs/, /about/) and whether its text shows when it was last
updated follow its change rate, each kept with probability FIDELITY (default 0.8) and
random otherwise. natural gives the fastest pages news, shuffled a permutation of that
(a feature→rate mapping nothing was tuned on), random kinds unrelated to rates. The
default policy learns during the crawl which kinds change how often and starts new pages
from that (its feature prior); the policy optimal-nofeatures is the same without it.

Examples:
  sonda eval revisit
  sonda eval revisit --mixture 5s:0.25,1m:0.25,10m:0.25,never:0.25 --duration 10m --plot fresh.svg
  sonda eval revisit --mixture 30s:0.5,2m:0.5 --policies optimal,uniform,oracle,adaptive
  sonda eval revisit --page-kinds shuffled --policies optimal,optimal-nofeatures,uniform,oracle`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mix, err := changeweb.ParseMixture(mixture)
			if err != nil {
				return usageError{fmt.Errorf("--mixture: %w", err)}
			}
			b, err := config.ParseRate(budget)
			if err != nil {
				return usageError{fmt.Errorf("--budget: %w", err)}
			}
			pk, err := changeweb.ParseKinds(kinds)
			if err != nil {
				return usageError{fmt.Errorf("--page-kinds: %w", err)}
			}
			ws, err := parseWindows(windows)
			if err != nil {
				return usageError{fmt.Errorf("--windows: %w", err)}
			}
			rv := config.Default().Revisit
			rv.MinInterval, rv.MaxInterval = minInterval, maxInterval
			ec := liveeval.Config{
				Mixture: mix, Kinds: pk, Hosts: hosts, Pages: pages, Budget: b.PerSecond(), Duration: duration,
				Politeness: politeness, Policies: splitList(policies), Revisit: &rv, Windows: ws, Step: step, Seed: seed,
			}
			out := cmd.OutOrStdout()
			if !asJSON {
				fmt.Fprintf(out, "%d changing pages on %d hosts, mixture %s, page kinds %s, budget %s, politeness %v, %v per crawl; crawling %s at once...\n",
					pages/hosts*hosts, hosts, changeweb.FormatMixture(mix), kinds, b, politeness, duration, strings.Join(ec.Policies, ", "))
			}
			res, err := liveeval.Evaluate(cmd.Context(), ec)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(res); err != nil {
					return err
				}
			} else {
				writeLiveEval(out, res)
			}
			if plotFile != "" {
				var rs []sim.Result
				for _, r := range res.Runs {
					rs = append(rs, sim.Result{Policy: r.Policy, Freshness: r.Freshness, Series: r.Series})
				}
				title := fmt.Sprintf("Live freshness, %d pages, %s, mixture %s", pages/hosts*hosts, b, changeweb.FormatMixture(mix))
				if err := sim.PlotAxis(rs, duration.Minutes(), "minute", title, plotFile); err != nil {
					return err
				}
				if !asJSON {
					fmt.Fprintf(out, "\nplot: %s\n", plotFile)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mixture, "mixture", "5s:0.25,1m:0.25,10m:0.25,never:0.25", "change-rate mixture: MEAN_INTERVAL:SHARE,... (intervals as durations or never)")
	f.IntVar(&hosts, "hosts", 4, "hosts of the test web")
	f.IntVar(&pages, "pages", 200, "changing pages, spread evenly over the hosts")
	f.StringVar(&budget, "budget", "2/s", "requests per second each crawl may make, shared by discovery and revisits")
	f.DurationVar(&duration, "duration", 10*time.Minute, "length of each crawl")
	f.DurationVar(&politeness, "politeness", 0, "delay between two requests to one host (politeness.min-delay; 0: none)")
	f.StringVar(&policies, "policies", "optimal,uniform,oracle", "policies to crawl with, comma-separated (sonda's revisit policies, oracle, optimal-nofeatures)")
	f.StringVar(&kinds, "page-kinds", "none", "how pages look by their change rate: none, natural, shuffled or random, optionally :FIDELITY (natural:0.8)")
	f.StringVar(&windows, "windows", "0-3m,5m-10m", "spans of the crawl to report freshness over, FROM-TO,...")
	f.DurationVar(&step, "step", 10*time.Second, "resolution of the freshness-over-time series and plot")
	f.DurationVar(&minInterval, "min-interval", time.Second, "revisit.min-interval of every crawl")
	f.DurationVar(&maxInterval, "max-interval", 0, "revisit.max-interval of every crawl (0: none)")
	f.StringVar(&plotFile, "plot", "", "draw freshness over time per policy into `FILE` (.svg, .png or .pdf)")
	f.Uint64Var(&seed, "seed", 1, "seed of the pages' rates and change times")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// parseWindows reads "0-3m,5m-10m" (a bare 0 is allowed for the start).
func parseWindows(s string) ([]liveeval.Window, error) {
	var out []liveeval.Window
	for _, part := range splitList(s) {
		a, b, ok := strings.Cut(part, "-")
		from, err1 := parseOffset(a)
		to, err2 := parseOffset(b)
		if !ok || err1 != nil || err2 != nil || to <= from {
			return nil, fmt.Errorf("%q: want FROM-TO with durations, e.g. 5m-10m", part)
		}
		out = append(out, liveeval.Window{From: from, To: to})
	}
	return out, nil
}

func parseOffset(s string) (time.Duration, error) {
	if s = strings.TrimSpace(s); s == "0" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

func writeLiveEval(out io.Writer, res liveeval.Result) {
	oracleOf := func(runs []liveeval.Run) *liveeval.Run {
		for i := range runs {
			if runs[i].Policy == liveeval.Oracle {
				return &runs[i]
			}
		}
		return nil
	}
	table := func(title string, runs []liveeval.Run, live bool) {
		fmt.Fprintf(out, "\n%s\n", title)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "policy\tfreshness\t"
		for _, w := range res.Config.Windows {
			head += w.String() + "\tof oracle\t"
		}
		if live {
			head += "requests/s\tfetches\tfound changed\tall fetched by\tended by\t"
		}
		fmt.Fprintln(tw, head)
		or := oracleOf(runs)
		for _, r := range runs {
			line := fmt.Sprintf("%s\t%.3f\t", r.Policy, r.Freshness)
			for i, f := range r.Windows {
				of := "-"
				if or != nil && or.Windows[i] > 0 {
					of = fmt.Sprintf("%.3f", f/or.Windows[i])
				}
				line += fmt.Sprintf("%.3f\t%s\t", f, of)
			}
			if live {
				by := "never"
				if r.Discovered > 0 {
					by = r.Discovered.Round(time.Second).String()
				}
				line += fmt.Sprintf("%.2f\t%d\t%.0f%%\t%s\t%s\t", r.Requests, r.Fetches, 100*r.Changed, by, r.Reason)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	table("live crawls (freshness from the test web's logs):", res.Runs, true)
	writeComponents(out, res)
	table("simulator, same rates and budget (every page known at the start, fetched only once due):", res.Sim, false)
}

// writeComponents breaks the last window down by mixture component: each policy's
// fetches of the component's pages (of them, of pages that send Last-Modified) and their
// freshness. Against the oracle's, it shows where a policy's budget went astray.
func writeComponents(out io.Writer, res liveeval.Result) {
	ws := res.Config.Windows
	if len(ws) == 0 || len(res.Runs) == 0 || len(res.Runs[0].Components) != len(ws) {
		return
	}
	last := len(ws) - 1
	fmt.Fprintf(out, "\nby change rate, %v: fetches (of pages sending Last-Modified) and freshness\n", ws[last])
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\t"
	for _, c := range res.Runs[0].Components[last] {
		iv := "never"
		if c.MeanInterval > 0 {
			iv = c.MeanInterval.String()
		}
		head += fmt.Sprintf("%s (%d pages)\t\t", iv, c.Pages)
	}
	fmt.Fprintln(tw, head)
	for _, r := range res.Runs {
		if len(r.Components) != len(ws) {
			continue
		}
		line := r.Policy + "\t"
		for _, c := range r.Components[last] {
			line += fmt.Sprintf("%d (%d)\t%.3f\t", c.Fetches, c.Validated, c.Freshness)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
