package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/focus"
)

func init() { trainCommands = append(trainCommands, newTrainPageCmd, newTrainLinksCmd) }

func newTrainPageCmd() *cobra.Command {
	var pos, neg []string
	var out, name string
	var folds int
	var lambda, threshold, prior float64
	cmd := &cobra.Command{
		Use:   "page --pos DIR --neg DIR [--out FILE]",
		Short: "Train a page relevance classifier from example pages",
		Long: `train page fits a page classifier (L2-regularized logistic regression on TF-IDF) to
example pages: relevant ones under --pos, irrelevant ones under --neg (HTML or plain text
files, searched recursively; each page's language is detected and its words stemmed).
Unless --lambda or --threshold is given, it chooses both by cross-validation (the L2
strength and the probability threshold with the best F1 over held-out folds: with few
relevant examples a fixed 0.5 misses relevant pages). It prints the cross-validated
precision and recall, then trains on every example and writes the model, which
--page-model gives to a crawl.

Examples:
  sonda train page --pos examples/nuclear --neg examples/other --out nuclear-model.json
  sonda crawl --page-model nuclear-model.json --seed https://www.iaea.org/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			examples, err := readExamples(pos, true)
			if err != nil {
				return err
			}
			negs, err := readExamples(neg, false)
			if err != nil {
				return err
			}
			examples = append(examples, negs...)
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%d relevant and %d irrelevant examples\n", len(examples)-len(negs), len(negs))
			o := focus.TrainOptions{Name: name, Lambda: lambda, Threshold: threshold, Prior: prior}
			var cv focus.CVResult
			if cmd.Flags().Changed("lambda") || cmd.Flags().Changed("threshold") {
				cv, err = focus.CrossValidate(examples, o, folds, 1)
			} else {
				o, cv, err = focus.Tune(examples, o, folds, 1)
				if err == nil {
					fmt.Fprintf(w, "chosen by cross-validation: lambda %g, threshold %.3f\n", o.Lambda, o.Threshold)
				}
			}
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintf(w, "%d-fold cross-validation: precision %.3f, recall %.3f, F1 %.3f, accuracy %.3f (tp %d, fp %d, fn %d, tn %d)\n",
				cv.Folds, cv.Precision, cv.Recall, cv.F1, cv.Accuracy, cv.TP, cv.FP, cv.FN, cv.TN)
			m, err := focus.TrainPageModel(examples, o)
			if err != nil {
				return err
			}
			m.CV = &cv
			printWeights(w, m)
			if err := m.Save(out); err != nil {
				return err
			}
			fmt.Fprintf(w, "model written to %s (use: sonda crawl --page-model %s)\n", out, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&pos, "pos", nil, "`DIR` (or file) of relevant example pages (repeatable)")
	f.StringArrayVar(&neg, "neg", nil, "`DIR` (or file) of irrelevant example pages (repeatable)")
	f.StringVar(&out, "out", "page-model.json", "where to write the model")
	f.StringVar(&name, "name", "relevant", "topic `NAME` relevant pages are labelled with")
	f.IntVar(&folds, "folds", 5, "cross-validation folds")
	f.Float64Var(&prior, "prior", 0, "share of relevant pages expected where the crawl goes (e.g. 0.03): the threshold is chosen for F1 at that share instead of the examples' own, trading recall for precision")
	f.Float64Var(&lambda, "lambda", 1e-3, "L2 regularization strength (default: chosen by cross-validation)")
	f.Float64Var(&threshold, "threshold", 0.5, "probability at which a page is relevant (default: chosen by cross-validation)")
	cmd.MarkFlagRequired("pos")
	cmd.MarkFlagRequired("neg")
	return cmd
}

// readExamples reads every regular file under the given paths.
func readExamples(paths []string, relevant bool) ([]focus.Example, error) {
	var out []focus.Example
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name()[0] == '.' {
				return err
			}
			title, body, err := focus.ReadDocument(path)
			if err != nil {
				return err
			}
			out = append(out, focus.Example{Page: focus.NewPageText("", title, body, ""), Relevant: relevant})
			return nil
		})
		if err != nil {
			return nil, usageError{fmt.Errorf("examples: %w", err)}
		}
	}
	if len(out) == 0 {
		return nil, usageError{fmt.Errorf("examples: no files under %v", paths)}
	}
	return out, nil
}

func printWeights(w io.Writer, m *focus.PageModel) {
	type tw struct {
		t string
		w float64
	}
	var all []tw
	for t, x := range m.Weights {
		all = append(all, tw{t, x})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].w > all[j].w || all[i].w == all[j].w && all[i].t < all[j].t })
	show := func(label string, ts []tw) {
		fmt.Fprintf(w, "%s:", label)
		for _, x := range ts {
			fmt.Fprintf(w, " %s (%.2f)", x.t, x.w)
		}
		fmt.Fprintln(w)
	}
	n := min(10, len(all))
	show("terms for relevance", all[:n])
	rev := make([]tw, 0, n)
	for i := len(all) - 1; i >= len(all)-n; i-- {
		rev = append(rev, all[i])
	}
	show("terms against", rev)
}

func newTrainLinksCmd() *cobra.Command {
	var seeds []string
	var out string
	cmd := &cobra.Command{
		Use:   "links --topic FILE --seed URL... --max-pages N [--out FILE]",
		Short: "Train seed 001's link network (7-4-1 MLP) on a random-order crawl",
		Long: `train links is the training stage of the seed 001 thesis: it crawls from the seeds in
random order (every fetch a uniform sample of the frontier), records for every link its
seven features (cosine of the topic with the anchor, with the text blocks at link distance
1 to 5, and with the whole page) and, once the page is fetched, its post-score; then it
trains the 7-4-1 network by backpropagation (learning rate 0.1, momentum 0.5, 1,000 epochs)
and writes it. ` + "`sonda crawl --link-strategy mlp --link-model FILE`" + ` is the retrieval stage.

The training crawl goes to a temporary directory unless --data is given.

Examples:
  sonda train links --topic nuclear --seed https://en.wikipedia.org/wiki/Nuclear_power \
      --max-pages 1000 --out nuclear-links.json
  sonda crawl --topic nuclear --link-strategy mlp --link-model nuclear-links.json --seed ...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, crawlFlags...)
			if err != nil {
				return err
			}
			if d, _ := cmd.Flags().GetString("data"); d == "" {
				tmp, err := os.MkdirTemp("", "sonda-train-links-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				cfg.Data = tmp
			}
			if cfg.Crawl.MaxPages == 0 {
				return usageError{fmt.Errorf("--max-pages: the training crawl needs a size (the thesis: 1,000 pages per seed)")}
			}
			return trainLinks(cmd.Context(), cfg, seeds, out, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&seeds, "seed", nil, "start `URL` (repeatable)")
	f.StringVar(&out, "out", "link-model.json", "where to write the network")
	f.Int64("max-pages", 1000, "fetches of the training crawl")
	f.StringArray("topic", nil, "the topic `FILE` (or built-in name) whose cosines are the features")
	f.String("page-model", "", "judge post-scores with this page classifier instead of the topic cosine")
	addAllowPrivateFlag(f)
	f.Duration("min-delay", 0, "minimum pause between requests to one host")
	f.StringArray("resolve", nil, "dial `HOST=ADDR` for matching hosts")
	return cmd
}

// trainLinks runs the training stage and writes the network.
func trainLinks(ctx context.Context, cfg config.Config, seeds []string, out string, w, progress io.Writer) error {
	cfg.Crawl.LinkStrategy = "bfs" // the sampler below replaces it
	s, err := app.LoadFocus(&cfg)
	if err != nil {
		return err
	}
	if s == nil {
		return usageError{fmt.Errorf("--topic: the link features are cosines with a topic; give one")}
	}
	sampler := focus.NewLinkSampler(s.Relevance, nil, focus.NewRandom(cfg.Focus.Seed), focus.ContextDisjoint, 0)
	s.Relevance.AddObserver(sampler)
	c, err := crawl.New(cfg, crawl.WithAnalyzers(s.Relevance), crawl.WithLinkScorer(sampler), crawl.WithLogger(newLogger(cfg)))
	if err != nil {
		return err
	}
	sum, err := c.Run(ctx, seeds, progressPrinter(progress))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	samples := sampler.Samples()
	fmt.Fprintf(w, "training crawl: %d pages fetched in random order, %d training pairs, harvest %d/%d\n",
		sum.Pages, len(samples), sum.Relevant, sum.Judged)
	p := focus.MLPDefaults
	p.Seed = cfg.Focus.Seed
	net, err := focus.TrainLinkMLP(samples, p)
	if err != nil {
		return err
	}
	for _, e := range []int{1, 10, 100, 500, 1000} {
		if e <= len(net.SSE) {
			fmt.Fprintf(w, "epoch %4d: SSE %.2f\n", e, net.SSE[e-1])
		}
	}
	if err := net.Save(out); err != nil {
		return err
	}
	fmt.Fprintf(w, "network written to %s (use: sonda crawl --link-strategy mlp --link-model %s)\n", out, out)
	return nil
}
