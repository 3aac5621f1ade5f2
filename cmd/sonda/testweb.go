package main

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/revisit/changeweb"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/testweb/corpusweb"
	"github.com/sonda-search/sonda/testweb/topical"
)

func init() { register(newTestwebCmd) }

func newTestwebCmd() *cobra.Command {
	var addr string
	var hosts, pages int
	var seed int64
	var bench bool
	var topic, labels, corpus, reuters, examples string
	var textBytes int
	var locality float64
	var change string
	var changePages int
	cmd := &cobra.Command{
		Use:   "testweb [--addr HOST:PORT] [--hosts N] [--seed S]",
		Short: "Serve the synthetic test web on loopback",
		Long: `testweb serves sonda's deterministic synthetic web: many virtual hosts named like
www.site07.test on one listener, with robots.txt files, sitemaps, redirects, errors, slow
and endless answers, compression, wrong charsets, crawler traps and duplicates. Point a
crawl at it with the printed --resolve mapping (the .test domain never resolves otherwise).
--bench serves plain pages only, for throughput measurements. --corpus DIR adds real prose
to every ordinary page (paragraphs of the .txt files in DIR, such as the Dragnet main texts
in the shared test data) until it has --text-bytes of it, and serves no robots.txt files:
the realistic pages of the crawl benchmark (docs/benchmarks.md).

--topical TOPIC serves the topical test web instead (sites on many themes with topical
locality; see sonda eval focus), with seeds chosen for TOPIC (nuclear or geo); --labels
FILE writes its ground truth, one JSON line per page with its theme.

--reuters CATEGORY serves the Reuters web instead (Reuters-21578 news stories as pages;
see sonda eval focus --web reuters), with four off-topic seeds for the category; --labels
FILE writes its ground truth (JSON lines with each page's categories) and --examples DIR
writes at most 50 stories about the category and 200 others that are not in the web, as
DIR/pos and DIR/neg, for sonda train page. The whole path, as a user runs it:

  sonda testweb --reuters grain --labels labels.jsonl --examples ex &
  sonda train page --pos ex/pos --neg ex/neg --name grain --out grain.json
  sonda crawl --data crawl --page-model grain.json --max-pages 5000 ...  (as printed)
  sonda eval focus --data-dir crawl --labels labels.jsonl --topic grain

--change MIXTURE adds --change-pages pages to every host whose text changes in real time,
as Poisson processes with mean intervals from the mixture (e.g. 5s:0.25,1m:0.25,10m:0.25,
never:0.25), linked from each home page; they carry volatile counters and chrome, and half
answer conditional requests. On exit (Ctrl-C) the test web prints, from its own logs, how
fresh the copies it served were over the time it ran (one crawler at a time); sonda eval
revisit runs such crawls side by side against an oracle.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := testweb.Config{Seed: seed, Hosts: hosts, PagesPerHost: pages}
			if bench {
				cfg = testweb.Bench(hosts)
				cfg.Seed, cfg.PagesPerHost = seed, pages
			}
			if corpus != "" {
				paras, err := testweb.LoadCorpus(corpus)
				if err != nil {
					return usageError{fmt.Errorf("--corpus: %w", err)}
				}
				cfg.Corpus, cfg.TextBytes = paras, textBytes
				cfg.Disable |= testweb.Robots
			}
			var set *changeweb.Set
			if change != "" {
				mix, err := changeweb.ParseMixture(change)
				if err != nil {
					return usageError{fmt.Errorf("--change: %w", err)}
				}
				set = changeweb.New(changeweb.Config{PagesPerHost: changePages, Mixture: mix, Seed: uint64(seed)})
				cfg.Extra = set.Extra
			}
			web := testweb.New(cfg)
			seeds := web.Seeds()
			if topic != "" {
				if !slices.Contains(topical.Themes(), topic) {
					return usageError{fmt.Errorf("--topical: %q is not a theme of the topical test web (%s)", topic, strings.Join(topical.Themes(), ", "))}
				}
				tw := topical.New(topical.Config{Seed: seed, Sites: hosts, MeanPages: pages})
				if labels != "" {
					if err := writeFile(labels, tw.WriteLabels); err != nil {
						return err
					}
				}
				web, seeds = tw.Web, tw.Seeds(topic)
			}
			if reuters != "" {
				if topic != "" {
					return usageError{fmt.Errorf("--reuters and --topical each choose a web: give one")}
				}
				dir, err := corpusweb.ReutersDir()
				if err != nil {
					return usageError{err}
				}
				docs, err := corpusweb.LoadReuters(dir)
				if err != nil {
					return err
				}
				cw := corpusweb.New(docs, corpusweb.Config{Seed: seed, Locality: locality})
				if cw.Count(reuters) == 0 {
					return usageError{fmt.Errorf("--reuters %q: no Reuters story has that category (the largest: %s)", reuters, strings.Join(cw.Topics(150), ", "))}
				}
				if labels != "" {
					if err := writeFile(labels, cw.WriteLabels); err != nil {
						return err
					}
				}
				if examples != "" {
					pos, neg, err := cw.WriteExamples(examples, reuters, 50, 200, uint64(seed))
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "examples: %d stories about %s in %s/pos, %d others in %s/neg (none of them in the web)\n", pos, reuters, examples, neg, examples)
				}
				web, seeds = cw.Web, cw.Seeds(reuters)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageError{fmt.Errorf("--addr: %w", err)}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "test web: %d hosts on http://%s/ (an index of the web is served there)\n", len(web.Hosts()), ln.Addr())
			fmt.Fprintf(out, "seeds:    %s\n", strings.Join(seeds, " "))
			fmt.Fprintf(out, "crawl it: sonda crawl --data /tmp/sonda-testweb --scope any --allow-private --resolve '%s'", "*.test="+ln.Addr().String())
			for _, s := range seeds {
				fmt.Fprintf(out, " --seed %s", s)
			}
			fmt.Fprintln(out)
			go func() {
				<-cmd.Context().Done()
				web.Close()
			}()
			start := time.Now()
			if set != nil {
				set.Start(start)
				fmt.Fprintf(out, "changing: %d pages per host, mixture %s\n", changePages, changeweb.FormatMixture(set.Mixture()))
			}
			err = web.Serve(ln)
			end := time.Now()
			fmt.Fprintf(out, "served %d requests in %s\n", len(web.Requests()), formatDuration(end.Sub(start)))
			if set != nil {
				rep := set.Freshness(start, end)
				fmt.Fprintf(out, "changing pages: freshness %.3f over %s, %d fetches (%.0f%% found a change, %d answered 304), %d changes\n",
					rep.Freshness, formatDuration(end.Sub(start)), rep.Fetches, 100*rep.Changed, rep.NotMod, rep.Changes)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen `address`")
	cmd.Flags().IntVar(&hosts, "hosts", 60, "number of hosts")
	cmd.Flags().IntVar(&pages, "pages", 20, "average pages per host")
	cmd.Flags().Int64Var(&seed, "seed", 1, "generator seed: the same seed serves the same web")
	cmd.Flags().BoolVar(&bench, "bench", false, "plain pages only (no slow, trap or error pages), for benchmarks")
	cmd.Flags().StringVar(&corpus, "corpus", "", "add real prose from the .txt files in `DIR` to every page (and serve no robots.txt)")
	cmd.Flags().IntVar(&textBytes, "text-bytes", 11000, "with --corpus: bytes of prose per page")
	cmd.Flags().StringVar(&topic, "topical", "", "serve the topical test web, seeded for `TOPIC` (nuclear, geo)")
	cmd.Flags().StringVar(&labels, "labels", "", "with --topical or --reuters: write the ground truth to `FILE` (JSON lines)")
	cmd.Flags().StringVar(&reuters, "reuters", "", "serve the Reuters web (npm package "+corpusweb.ReutersPackage+"), seeded for the Reuters `CATEGORY` (grain, crude, trade...)")
	cmd.Flags().Float64Var(&locality, "locality", 0.55, "with --reuters: probability that a story's link goes to a story sharing a category")
	cmd.Flags().StringVar(&examples, "examples", "", "with --reuters: write training examples into `DIR`/pos and DIR/neg")
	cmd.Flags().StringVar(&change, "change", "", "add pages that change in real time, with mean intervals from `MIXTURE` (INTERVAL:SHARE,..., e.g. 5s:0.25,1m:0.25,10m:0.25,never:0.25)")
	cmd.Flags().IntVar(&changePages, "change-pages", 50, "with --change: changing pages per host")
	return cmd
}
