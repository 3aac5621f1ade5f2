package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/revisit"
)

func init() { register(newCrawlCmd) }

func newCrawlCmd() *cobra.Command {
	var seeds []string
	cmd := &cobra.Command{
		Use:   "crawl [-c sonda.yaml] [--data DIR] [--seed URL]...",
		Short: "Run or resume a crawl",
		Long: `crawl fetches the seeds and what they link to, politely, into the data directory:
page records and the frontier in DIR/state, raw captures in DIR/warc (WARC 1.1).

Running it again on the same data directory resumes: queued URLs are kept, pages already
fetched are not fetched again. Ctrl-C (or SIGTERM) stops cleanly: no new fetch starts and
those in flight get crawl.stop-grace (5s) to finish and be recorded. A second Ctrl-C stops
at once; like kill -9, it loses nothing but the pages that were in flight.

Without a revisit policy the crawl ends when no URL is left to fetch; --budget without
--revisit revisits with the default policy (optimal) and runs until --duration or Ctrl-C.
A progress line shows
pages/s, the queue, hosts and errors, how far the search index lags (it indexes behind the
crawl, from a durable queue: --index), and with a topic the running harvest rate (relevant
pages / judged pages); ` + "`sonda status --data DIR`" + ` reads the same figures from another
terminal.

A topic (--topic FILE, YAML: weighted keywords, example pages, rules) or a trained page
classifier (--page-model FILE) focuses the crawl: every page gets a relevance (0..1) and a
relevant flag, and links likely to lead to relevant pages are fetched first (by default
the online learner; see --link-strategy).

Examples:
  sonda crawl --seed https://example.org/ --max-pages 1000
  sonda crawl -c mycrawl/sonda.yaml --duration 2h
  sonda crawl --topic topics/nuclear.yaml --seed https://en.wikipedia.org/wiki/Nuclear_power
  sonda crawl --render auto --seed https://portal.example.org/   # script-built sites; needs chromium
  sonda crawl --seed https://docs.example.org/ --scope '^https://docs\.example\.org/en/'
  sonda crawl --data /tmp/t --seed http://www.site00.test/ --scope any --allow-private \
      --resolve '*.test=127.0.0.1:8080' --min-delay 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, crawlFlags...)
			if err != nil {
				return err
			}
			var prof *cpuProfile
			if path, _ := cmd.Flags().GetString("profile"); path != "" {
				if prof, err = startCPUProfile(path, crawlStages); err != nil {
					return usageError{err}
				}
			}
			sum, err := runCrawl(cmd.Context(), cfg, seeds, cmd.ErrOrStderr())
			if prof != nil {
				// After runCrawl: the index's last batches and PageRank count too.
				if perr := prof.stop(cmd.ErrOrStderr(), sum.Pages); perr != nil && err == nil {
					err = perr
				}
			}
			if errors.Is(err, crawl.ErrNothingFetched) {
				// The summary says what each host did; the exit status says it failed.
				printSummary(cmd.OutOrStdout(), cfg.Data, sum)
				return err
			}
			if err != nil {
				return err
			}
			printSummary(cmd.OutOrStdout(), cfg.Data, sum)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&seeds, "seed", nil, "start `URL` (repeatable); added to crawl.seeds")
	f.String("profile", "", "write a CPU profile of the whole crawl to `FILE` and print the CPU per stage (index, parse, fingerprint, WARC, store...) per page; the allocations go to FILE.allocs")
	addCrawlFlags(f)
	return cmd
}

// addCrawlFlags declares the flags of crawlFlags (sonda crawl and sonda node).
func addCrawlFlags(f *pflag.FlagSet) {
	f.Int64("max-pages", 0, "stop after `N` page fetches (0: no limit)")
	f.Duration("duration", 0, "stop after this long, e.g. 30m (0: no limit)")
	addAllowPrivateFlag(f)
	f.String("scope", "", scopeFlagHelp)
	f.Duration("min-delay", 0, "minimum pause between requests to one host, e.g. 500ms (0: none)")
	f.Int("per-host", 0, "requests one host may have in flight at once")
	f.Int("concurrency", 0, "requests in flight at once, across hosts")
	f.String("link-strategy", "", linkStrategyHelp())
	f.StringArray("topic", nil, "focus the crawl on the topic in `FILE` (YAML, repeatable); adds to focus.topics")
	f.String("page-model", "", "judge relevance with the page classifier in `FILE` (from sonda train page)")
	f.String("link-model", "", "the link network in `FILE` for --link-strategy mlp (from sonda train links)")
	f.StringArray("resolve", nil, "dial `HOST=ADDR` for matching hosts (e.g. '*.test=127.0.0.1:8080'), like curl --resolve")
	f.String("metrics-addr", "", "serve Prometheus /metrics on `HOST:PORT` while crawling")
	f.String("revisit", "", "revisit fetched pages with `POLICY`: "+strings.Join(revisit.PolicyNames, ", ")+" (optimal needs --budget)")
	f.String("budget", "", "requests per second shared by discovery and revisits, e.g. 10/s, 600/min, 90000/d; pages are\n"+
		"revisited with --revisit, or the default policy ("+revisit.DefaultPolicy+") when it is not given (--revisit none: fetch each page once, paced)")
	f.String("render", "", "run pages' JavaScript in headless Chromium: `never`, auto (pages that look script-built, on hosts where it pays) or always (see render: in sonda.yaml)")
	addIndexFlag(f)
}

// addIndexFlag adds --index, shared by crawl and serve.
func addIndexFlag(f *pflag.FlagSet) {
	f.String("index", "", "how crawls feed the search index: async (in batches behind the crawl, the default), sync (each page searchable before the crawl moves on) or off")
}

// indexFlag applies --index (search.index and search.index-mode).
var indexFlag = settingFlag{"index", func(c *config.Config, f *pflag.FlagSet) error {
	mode, err := f.GetString("index")
	if err != nil {
		return err
	}
	return c.Search.SetIndex(mode)
}}

// crawlFlags bind the crawl command's setting flags to the configuration.
var crawlFlags = []settingFlag{
	indexFlag,
	{"max-pages", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Crawl.MaxPages, err = f.GetInt64("max-pages")
		return
	}},
	{"duration", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Crawl.Duration, err = f.GetDuration("duration")
		return
	}},
	scopeFlag,
	{"allow-private", func(c *config.Config, f *pflag.FlagSet) error {
		v, err := f.GetString("allow-private")
		if err != nil {
			return err
		}
		switch strings.ToLower(v) {
		case "all", "true":
			c.Fetch.AllowPrivate = true
		case "false", "none":
			c.Fetch.AllowPrivate = false
		default:
			for _, it := range strings.Split(v, ",") {
				if it = strings.TrimSpace(it); it != "" {
					c.Fetch.AllowPrivateTo = append(c.Fetch.AllowPrivateTo, it)
				}
			}
		}
		return nil
	}},
	{"min-delay", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Politeness.MinDelay, err = f.GetDuration("min-delay")
		return
	}},
	{"per-host", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Politeness.PerHost, err = f.GetInt("per-host")
		return
	}},
	{"concurrency", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Crawl.Concurrency, err = f.GetInt("concurrency")
		return
	}},
	{"link-strategy", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Crawl.LinkStrategy, err = f.GetString("link-strategy")
		return
	}},
	{"topic", func(c *config.Config, f *pflag.FlagSet) error {
		t, err := f.GetStringArray("topic")
		c.Focus.Topics = append(c.Focus.Topics, t...)
		return err
	}},
	{"page-model", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Focus.PageModel, err = f.GetString("page-model")
		return
	}},
	{"link-model", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Focus.LinkModel, err = f.GetString("link-model")
		return
	}},
	{"resolve", func(c *config.Config, f *pflag.FlagSet) error {
		r, err := f.GetStringArray("resolve")
		c.Fetch.Resolve = append(c.Fetch.Resolve, r...)
		return err
	}},
	{"metrics-addr", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Crawl.MetricsAddr, err = f.GetString("metrics-addr")
		return
	}},
	{"revisit", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Revisit.Policy, err = f.GetString("revisit")
		return
	}},
	{"render", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Render.Mode, err = f.GetString("render")
		return
	}},
	{"budget", func(c *config.Config, f *pflag.FlagSet) error {
		s, err := f.GetString("budget")
		if err != nil {
			return err
		}
		if c.Crawl.Budget, err = config.ParseRate(s); err != nil {
			return err
		}
		// A budget is for a crawl that keeps its copies fresh (issue 13): without --revisit
		// (and with no policy configured) it revisits with the default policy.
		if !f.Changed("revisit") && (c.Revisit.Policy == "" || c.Revisit.Policy == "none") {
			c.Revisit.Policy = revisit.DefaultPolicy
		}
		return nil
	}},
}

// addAllowPrivateFlag defines --allow-private (crawl, geo crawl, train): alone it permits
// every non-public address; with a list, only those.
func addAllowPrivateFlag(f *pflag.FlagSet) {
	f.String("allow-private", "", "permit loopback, private and link-local addresses (test webs, intranets): all of them,\n"+
		"or with =`LIST` only these CIDR ranges, addresses and host names, e.g.\n"+
		"--allow-private=10.20.0.0/16,wiki.corp.example,*.corp.example (fetch.allow-private-to)")
	f.Lookup("allow-private").NoOptDefVal = "all"
}

// scopeFlagHelp teaches --scope (crawl and check url).
const scopeFlagHelp = "which discovered links to follow, one of `seeds|domain|any|REGEX`:\n" +
	"seeds: the seeds' hosts only; domain: their registrable domains (example.co.uk and\n" +
	"its subdomains; the default); any: every host; a regular expression (e.g.\n" +
	"'^https://docs\\.example\\.org/en/'): every URL it matches, on any host\n" +
	"(sets scope.follow, and scope.allow for a REGEX)"

// scopeFlag applies --scope.
var scopeFlag = settingFlag{"scope", func(c *config.Config, f *pflag.FlagSet) error {
	v, err := f.GetString("scope")
	if err != nil {
		return err
	}
	switch v {
	case "seeds", "host", "domain", "any":
		c.Scope.Follow = v
		return nil
	}
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("%q is not seeds, domain or any, nor a regular expression: %w", v, err)
	}
	c.Scope.Follow, c.Scope.Allow = "any", append(c.Scope.Allow, v)
	return nil
}}

// budgetNote says what a budget without a revisit policy does: it paces fetching, and no
// fetched page is fetched again (issue 13: users took --budget alone for a revisiting crawl).
func budgetNote(cfg config.Config) string {
	if cfg.Crawl.Budget <= 0 || (cfg.Revisit.Policy != "" && cfg.Revisit.Policy != "none") {
		return ""
	}
	return fmt.Sprintf("budget %s paces every fetch; no page is revisited with revisit policy none (leave out --revisit none, or give --revisit %s)", cfg.Crawl.Budget, revisit.DefaultPolicy)
}

// runCrawl runs one crawl with a progress display on w.
func runCrawl(ctx context.Context, cfg config.Config, seeds []string, w io.Writer) (crawl.Summary, error) {
	log := newLogger(cfg)
	in, err := openApp(cfg, app.Options{Logger: log, Crawl: true})
	if err != nil {
		return crawl.Summary{}, err
	}
	defer in.Close() // deferred first, so it runs after the crawler's Close
	opts, err := in.CrawlOptions(&cfg)
	if err != nil {
		return crawl.Summary{}, err
	}
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		return crawl.Summary{}, err
	}
	defer c.Close()
	if cfg.Crawl.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.Crawl.MetricsAddr)
		if err != nil {
			return crawl.Summary{}, fmt.Errorf("crawl.metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", c.Registry())
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	}
	if note := budgetNote(cfg); note != "" {
		fmt.Fprintln(w, note)
	}
	sum, err := c.Run(ctx, seeds, progressPrinter(w))
	if errors.Is(err, crawl.ErrNothingFetched) {
		if cerr := c.Close(); cerr != nil {
			return sum, cerr
		}
		return sum, errors.Join(err, in.Close())
	}
	if err != nil {
		return sum, err
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintln(w, "stopped; run the same command again to resume")
	}
	if err := c.Close(); err != nil {
		return sum, err
	}
	return sum, in.Close()
}

// openApp opens a data directory through package app; a directory another process holds
// is a usage error (exit status 2) that says what to do.
func openApp(cfg config.Config, o app.Options) (*app.Instance, error) {
	in, err := app.Open(cfg, o)
	if errors.Is(err, app.ErrInUse) {
		return nil, usageError{err}
	}
	return in, err
}

// progressPrinter redraws one line on a terminal every second, or prints a plain line
// every 10 seconds when stderr is a file or pipe (CI logs).
func progressPrinter(w io.Writer) func(crawl.Progress) {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	n := 0
	return func(p crawl.Progress) {
		n++
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", p)
			return
		}
		if n%10 == 0 {
			fmt.Fprintln(w, p)
		}
	}
}

func printSummary(w io.Writer, data string, s crawl.Summary) {
	fmt.Fprintf(w, "\ncrawl %s after %s: %s, %s, %.0f pages/s, %s received\n",
		s.Reason, formatDuration(s.Elapsed), plural(s.Pages, "page fetched", "pages fetched"),
		plural(s.RobotsTxt, "robots.txt", "robots.txt files"), s.PagesPerSecond(), crawl.FormatBytes(s.Bytes))
	fmt.Fprintf(w, "  links: %d found, %d queued; %d URLs disallowed by robots.txt\n", s.LinksFound, s.LinksQueued, s.Disallowed)
	fmt.Fprintf(w, "  frontier: %d queued, %d seen, %d hosts active\n", s.Frontier.Queued, s.Frontier.Seen, s.Frontier.Hosts)
	if s.Judged > 0 {
		fmt.Fprintf(w, "  harvest: %d of %d judged pages relevant (%.1f%%)\n", s.Relevant, s.Judged, 100*float64(s.Relevant)/float64(s.Judged))
	}
	if s.Freshness != nil {
		fmt.Fprintf(w, "  expected freshness of the revisit plan: %.1f%%\n", 100**s.Freshness)
	}
	if len(s.Statuses) > 0 {
		fmt.Fprintf(w, "  responses: %s\n", joinCounts(s.Statuses))
	}
	if len(s.Errors) > 0 {
		fmt.Fprintf(w, "  errors: %s\n", joinCounts(s.Errors))
	}
	if len(s.Rejected) > 0 {
		fmt.Fprintf(w, "  links left out by scope: %s\n", joinCounts(s.Rejected))
	}
	if r := s.Render; r.Mode != "" && r.Mode != "never" {
		fmt.Fprintf(w, "  rendering (%s): %d pages rendered (p50 %dms, p99 %dms), %d failed, %d links only in rendered pages, %d subresource requests (%d from cache), %d browser restarts\n",
			r.Mode, r.Renders, r.P50Ms, r.P99Ms, r.Failures, r.LinksAdded, r.Subrequests, r.CacheHits, r.Restarts)
		if r.Mode == "auto" {
			fmt.Fprintf(w, "    auto: %d pages looked script-built, %d of them left raw on hosts where rendering did not pay\n", r.Detected, r.SkippedLearned)
		}
		if len(r.Blocked) > 0 {
			fmt.Fprintf(w, "    requests of rendered pages refused: %s\n", joinCounts(r.Blocked))
		}
	}
	if len(s.Waiting) > 0 {
		fmt.Fprintf(w, "  waiting for a retry (run the same command again to retry them): %s\n", plural(int64(len(s.Waiting)), "host", "hosts"))
		for _, h := range s.Waiting {
			fmt.Fprintf(w, "    %s: %s (%s queued, retry after %s)\n", h.Host, h.Reason, plural(h.Queued, "URL", "URLs"), h.Until.Format(time.TimeOnly))
		}
	}
	fmt.Fprintf(w, "  data: %s (sonda status --data %s; sonda export --data %s --what pages)\n", data, data, data)
}

func joinCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
