package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/revisit/classify"
	"github.com/sonda-search/sonda/revisit/estimate"
	"github.com/sonda-search/sonda/revisit/sim"
)

func init() { trainCommands = append(trainCommands, newTrainRevisitCmd) }

func newTrainRevisitCmd() *cobra.Command {
	var (
		trace, features, out, learner, selectWith string
		k, folds                                  int
		sweep, noBalance, noSelect                bool
		seed                                      uint64
	)
	cmd := &cobra.Command{
		Use:   "revisit --trace FILE --features FILE [--out MODEL]",
		Short: "Find change classes and train the initial change-class classifier (seed 004)",
		Long: `train revisit runs seed 004's offline pipeline on a monitored change history:

  1. the change rate of every page (Cho & Garcia-Molina's r̂ = −ln((n − X + 0.5)/(n + 0.5))
     per visit interval for regular visits, the maximum-likelihood rate otherwise);
  2. k-means over the rates to find change classes (--k, default 4; --sweep prints k = 2..6
     as the dissertation's Table 5 does), numbered from the most frequent;
  3. the classes joined with the pages' features, balanced by sampling every class down to
     the smallest (--no-balance keeps them as they are);
  4. backward elimination of features with --select-with (default the tree), 10-fold
     cross-validated (--no-select keeps every feature);
  5. every learner cross-validated on the selected features: the C4.5-style tree pruned and
     unpruned, Gaussian naive Bayes, 1-NN and 2-NN, and the majority and random baselines,
     with resubstitution and test error, tree size and time for the test folds; then the
     chosen learner's confusion matrix with precision, recall, specificity, NPV and F;
  6. the chosen learner (--learner) trained on all of it and written to --out, with the
     classes' periods: revisit.class-model and revisit.class-periods use them.

--trace is the recorded-trace format (one line per URL: "id first-offset" then pairs
"days-since-previous-visit 0|1"; sonda sim freshness --write-trace writes one). --features
is CSV with a header: an id column matching the trace's ids, then any of
` + strings.Join(revisit.FeatureNames, ", ") + ` (the names sonda computes at a page's
first visit; the crawler can only use a model over those).

Example:
  sonda train revisit --trace monitor.txt --features features.csv --out classes.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trace == "" || features == "" {
				return usageError{fmt.Errorf("give --trace FILE and --features FILE")}
			}
			w := cmd.OutOrStdout()
			recs, err := readTraceFile(trace)
			if err != nil {
				return err
			}
			var values []float64
			var ids []string
			var observed = map[string]float64{}
			var changes = map[string]int{}
			for _, r := range recs {
				rate, days, x := pageRate(r)
				observed[r.ID], changes[r.ID] = days, x
				values = append(values, rate)
				ids = append(ids, r.ID)
			}
			if sweep {
				fmt.Fprintln(w, "k-means over the change rate (pages, mean change interval in days):")
				for kk := 2; kk <= 6; kk++ {
					cents, assign := classify.KMeans1D(values, kk)
					fmt.Fprintf(w, "  k=%d:", kk)
					for _, g := range groupStats(cents, assign, ids, observed, changes) {
						fmt.Fprintf(w, "  %d (%.2f)", g.pages, g.meanInterval)
					}
					fmt.Fprintln(w)
				}
				fmt.Fprintln(w)
			}
			cents, assign := classify.KMeans1D(values, k)
			groups := groupStats(cents, assign, ids, observed, changes)
			// Classes are numbered from the most frequent (highest rate) down: class c is
			// k-means group len(cents)-1-c.
			classOf := map[string]int{}
			for i, id := range ids {
				classOf[id] = len(cents) - 1 - assign[i]
			}
			var classNames, periods []string
			fmt.Fprintf(w, "change classes (k-means, k=%d, over %d pages):\n", len(cents), len(ids))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "class\tpages\trate centroid (/day)\tmean change interval (days)\tperiod\t")
			for c := range cents {
				g := len(cents) - 1 - c
				gs := groups[g]
				period := time.Duration(math.Min(gs.meanInterval, 3650) * 24 * float64(time.Hour)).Round(time.Hour)
				classNames = append(classNames, strconv.Itoa(c))
				periods = append(periods, period.String())
				fmt.Fprintf(tw, "%d\t%d\t%.4f\t%.2f\t%s\t\n", c, gs.pages, cents[g], gs.meanInterval, period)
			}
			tw.Flush()
			ds, err := readFeatureCSV(features, classOf, classNames)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "\n%d of %d pages have features (%s)\n", len(ds.X), len(ids), strings.Join(ds.Features, ", "))
			rng := rand.New(rand.NewPCG(seed, 2))
			if !noBalance {
				ds = ds.Balance(rng)
				fmt.Fprintf(w, "balanced to %d instances (%v per class)\n", len(ds.X), ds.ClassCounts())
			}
			learners := map[string]classify.Learner{
				"tree": classify.Tree{}, "tree-unpruned": classify.Tree{NoPrune: true}, "bayes": classify.NaiveBayes{},
				"1nn": classify.KNN{K: 1}, "2nn": classify.KNN{K: 2}, "majority": classify.ZeroR{},
			}
			chosen, ok := learners[learner]
			if !ok || learner == "majority" {
				return usageError{fmt.Errorf("--learner %q: choose tree, tree-unpruned, bayes, 1nn or 2nn", learner)}
			}
			if !noSelect {
				sel, ok := learners[selectWith]
				if !ok {
					return usageError{fmt.Errorf("--select-with %q: choose tree, bayes, 1nn or 2nn", selectWith)}
				}
				steps, err := classify.BackwardElimination(ds, sel, folds, 0, seed)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "\nbackward elimination with %s (%d-fold accuracy):\n", sel.Name(), folds)
				for _, s := range steps {
					fmt.Fprintf(w, "  %.4f  %s\n", s.Accuracy, strings.Join(s.Features, ", "))
				}
				if ds, err = ds.Columns(steps[len(steps)-1].Features); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "\n%d-fold cross-validation on %s:\n", folds, strings.Join(ds.Features, ", "))
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "learner\tresubstitution error\ttest error\tmacro F\tsize\ttime for test\t")
			var chosenConf *classify.Confusion
			names := []string{"tree", "tree-unpruned", "bayes", "1nn", "2nn", "majority"}
			for _, name := range names {
				l := learners[name]
				resub, model, err := classify.Resubstitution(ds, l)
				if err != nil {
					return err
				}
				started := time.Now()
				conf, err := classify.CrossValidate(ds, l, folds, rand.New(rand.NewPCG(seed, 3)))
				if err != nil {
					return err
				}
				elapsed := time.Since(started)
				size := "-"
				if tm, ok := model.(*classify.TreeModel); ok {
					n, leaves := tm.Size()
					size = fmt.Sprintf("%d/%d", n, leaves)
				}
				fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%.3f\t%s\t%s\t\n", l.Name(), 100*(1-resub.Accuracy()), 100*(1-conf.Accuracy()), conf.MacroF(), size, elapsed.Round(time.Millisecond))
				if name == learner {
					chosenConf = conf
				}
			}
			random, _ := classify.CrossValidate(ds, classify.Random{Seed: seed}, folds, rand.New(rand.NewPCG(seed, 3)))
			fmt.Fprintf(tw, "random\t-\t%.1f%%\t%.3f\t-\t-\t\n", 100*(1-random.Accuracy()), random.MacroF())
			tw.Flush()
			fmt.Fprintf(w, "\n%s, %d-fold cross-validation:\n%s", chosen.Name(), folds, chosenConf)
			if out == "" {
				return nil
			}
			model, err := chosen.Fit(ds)
			if err != nil {
				return err
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := classify.Save(f, model, ds.Features, ds.Classes, periods); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(w, "\nwrote %s; use it with\n  revisit:\n    policy: classes\n    class-model: %s\n    class-periods: [%s]\n    class-windows: [...one window per class]\n", out, out, strings.Join(periods, ", "))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&trace, "trace", "", "monitored change history in the recorded-trace `FILE` format")
	f.StringVar(&features, "features", "", "page features, CSV `FILE` with a header and an id column")
	f.StringVar(&out, "out", "", "write the trained model to `FILE` (JSON)")
	f.IntVar(&k, "k", 4, "number of change classes")
	f.BoolVar(&sweep, "sweep", false, "also print k-means for k = 2..6")
	f.StringVar(&learner, "learner", "tree", "model to write: tree, tree-unpruned, bayes, 1nn or 2nn")
	f.StringVar(&selectWith, "select-with", "tree", "learner that drives backward elimination")
	f.BoolVar(&noSelect, "no-select", false, "keep every feature")
	f.BoolVar(&noBalance, "no-balance", false, "do not sample the classes down to the smallest")
	f.IntVar(&folds, "folds", 10, "cross-validation folds")
	f.Uint64Var(&seed, "seed", 1, "random seed for balancing and folds")
	return cmd
}

func readTraceFile(path string) ([]sim.Recorded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := sim.ReadRecorded(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// pageRate is a page's change rate per day: Cho & Garcia-Molina's estimator when its
// visits are regular, the maximum-likelihood rate (bounded) otherwise; with the days
// observed and the changes seen.
func pageRate(r sim.Recorded) (rate, days float64, changes int) {
	regular := true
	var ivs []estimate.Interval
	for i, v := range r.Visits {
		days += v.Since
		if v.Changed {
			changes++
		}
		regular = regular && (i == 0 || v.Since == r.Visits[0].Since)
		ivs = append(ivs, estimate.Interval{Length: v.Since, Changed: v.Changed})
	}
	if len(r.Visits) == 0 {
		return 0, 0, 0
	}
	if regular {
		return estimate.ChoGarciaMolina(len(r.Visits), changes) / r.Visits[0].Since, days, changes
	}
	rate = estimate.MLE(ivs)
	if math.IsInf(rate, 1) {
		shortest := math.Inf(1)
		for _, v := range r.Visits {
			shortest = math.Min(shortest, v.Since)
		}
		rate = estimate.ChoGarciaMolina(len(r.Visits), changes) / shortest
	}
	return rate, days, changes
}

type groupStat struct {
	pages        int
	meanInterval float64 // days: Σ observed days / Σ changes over the group (seed 004's measure)
}

func groupStats(cents []float64, assign []int, ids []string, observed map[string]float64, changes map[string]int) []groupStat {
	out := make([]groupStat, len(cents))
	days := make([]float64, len(cents))
	x := make([]int, len(cents))
	for i, id := range ids {
		g := assign[i]
		out[g].pages++
		days[g] += observed[id]
		x[g] += changes[id]
	}
	for g := range out {
		out[g].meanInterval = estimate.MeanChangeInterval(days[g], x[g])
		if math.IsInf(out[g].meanInterval, 1) && out[g].pages > 0 {
			out[g].meanInterval = days[g] / float64(out[g].pages) // never changed: at least the observation
		}
	}
	return out
}

// readFeatureCSV reads page features for the pages that have a class.
func readFeatureCSV(path string, classOf map[string]int, classes []string) (*classify.Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: read the header: %w", path, err)
	}
	if len(header) < 2 || strings.ToLower(strings.TrimSpace(header[0])) != "id" {
		return nil, fmt.Errorf("%s: the first column must be id, then feature columns (got %v)", path, header)
	}
	ds := &classify.Dataset{Classes: classes}
	for _, h := range header[1:] {
		ds.Features = append(ds.Features, strings.TrimSpace(h))
	}
	var unknown []string
	for _, n := range ds.Features {
		if !slices.Contains(revisit.FeatureNames, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: columns %v are not features sonda computes (%s)", path, unknown, strings.Join(revisit.FeatureNames, ", "))
	}
	line := 1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c, ok := classOf[strings.TrimSpace(rec[0])]
		if !ok {
			continue
		}
		row := make([]float64, len(ds.Features))
		for j := range row {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[j+1]), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s line %d, column %s: %q is not a number", path, line, ds.Features[j], rec[j+1])
			}
			row[j] = v
		}
		ds.X = append(ds.X, row)
		ds.Y = append(ds.Y, c)
	}
	if len(ds.X) == 0 {
		return nil, fmt.Errorf("%s: no row's id matches a page of the trace", path)
	}
	return ds, nil
}
