package main

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/testweb/topical"
)

func init() { register(newTestwebCmd) }

func newTestwebCmd() *cobra.Command {
	var addr string
	var hosts, pages int
	var seed int64
	var bench bool
	var topic, labels, corpus string
	var textBytes int
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
FILE writes its ground truth, one JSON line per page with its theme.`,
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
			err = web.Serve(ln)
			fmt.Fprintf(out, "served %d requests in %s\n", len(web.Requests()), formatDuration(time.Since(start)))
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
	cmd.Flags().StringVar(&labels, "labels", "", "with --topical: write the ground truth to `FILE` (JSON lines)")
	return cmd
}
