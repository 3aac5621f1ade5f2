package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/cluster/volunteer"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
)

func init() { register(newNodeCmd) }

// clusterFlags bind the cluster flags to the configuration.
var clusterFlags = []settingFlag{
	{"nats", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Cluster.NATS, err = f.GetString("nats")
		return
	}},
	{"cluster", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Cluster.Name, err = f.GetString("cluster")
		return
	}},
	{"creds", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Cluster.Creds, err = f.GetString("creds")
		return
	}},
}

// natsCreds is the connect option for cluster.creds (none when empty): the trusted user of
// a server started with `sonda nats --auth`.
func natsCreds(cfg config.Config) []nats.Option {
	if cfg.Cluster.Creds == "" {
		return nil
	}
	return []nats.Option{nats.UserCredentials(cfg.Cluster.Creds)}
}

func addClusterFlags(f *pflag.FlagSet) {
	f.String("nats", "", "`URL` of the cluster's NATS server, e.g. nats://127.0.0.1:4222 (cluster.nats)")
	f.String("cluster", "", "cluster `NAME` (cluster.name, default sonda): clusters sharing a server are told apart by it")
	f.String("creds", "", "NATS credentials `FILE` when the server requires them: AUTHDIR/node.creds of `sonda nats --auth` (cluster.creds)")
}

func newNodeCmd() *cobra.Command {
	var seeds []string
	var exitWhenDone bool
	cmd := &cobra.Command{
		Use:   "node --nats URL [--node-id NAME] [-c sonda.yaml] [--data DIR] [--seed URL]... [crawl flags]",
		Short: "Run a crawler node of a cluster",
		Long: `node joins a cluster of sonda nodes that share one crawl through a NATS server with
JetStream (` + "`sonda nats`" + ` or nats-server -js). Each node owns a share of the hosts (grouped
by registrable domain) and crawls them with the whole single-node engine on its own data
directory (politeness, robots.txt, WARC, analyzers, index). Links to hosts another node
owns are sent to it; --seed on any node adds seeds to the whole cluster.

A node runs like a server until stopped (Ctrl-C hands its hosts over to the others at
once). If it dies (kill -9, a crash, a lost machine), the others take its hosts after the
cluster's TTL (cluster.ttl, 10s) and rebuild their queues from JetStream: nothing queued is
lost, even if its disk never comes back. Started again with the same --node-id, it takes
its share back. With --exit-when-done every node exits once the whole cluster has no URL
left. ` + "`sonda cluster status --nats URL`" + ` shows the members and their progress.

A node with an index answers the cluster's searches, so its Go memory limit is, as sonda
serve's, memory-limit plus the search caches' bounds (search.facet-cache, forward-cache,
postings-cache: 896 MiB by default); with --index off, memory-limit.

Examples:
  sonda nats &
  sonda node --nats nats://127.0.0.1:4222 --node-id a --data a --seed https://example.org/
  sonda node --nats nats://127.0.0.1:4222 --node-id b --data b
  sonda node --nats nats://10.0.0.5:4222 -c sonda.yaml --exit-when-done`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, append(append([]settingFlag{}, crawlFlags...), append(clusterFlags, settingFlag{"node-id", func(c *config.Config, f *pflag.FlagSet) (err error) {
				c.Cluster.NodeID, err = f.GetString("node-id")
				return
			}}, settingFlag{"workers", func(c *config.Config, f *pflag.FlagSet) (err error) {
				c.Cluster.Workers, err = f.GetBool("workers")
				return
			}})...)...)
			if err != nil {
				return err
			}
			if cfg.Search.Index {
				// A node answers the cluster's searches from its index, whose caches are
				// bounded and long-lived: the memory limit counts them.
				setMemoryLimit(cfg.SearchMemoryLimit())
			}
			var prof *cpuProfile
			if path, _ := cmd.Flags().GetString("profile"); path != "" {
				if prof, err = startCPUProfile(path, crawlStages); err != nil {
					return usageError{err}
				}
			}
			pages, err := runNode(cmd.Context(), cfg, seeds, exitWhenDone, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if prof != nil {
				if perr := prof.stop(cmd.ErrOrStderr(), pages); perr != nil && err == nil {
					err = perr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	addClusterFlags(f)
	f.String("node-id", "", "this node's `NAME`, unique in the cluster and kept across restarts (cluster.node-id; default: the host name)")
	f.Bool("workers", false, "hand page fetches to volunteer workers (sonda worker; needs a server with --auth) and check what they return (cluster.workers)")
	f.BoolVar(&exitWhenDone, "exit-when-done", false, "exit once the whole cluster has no URL left (not just this node)")
	f.StringArrayVar(&seeds, "seed", nil, "start `URL` (repeatable), added to the whole cluster")
	f.String("profile", "", "write a CPU profile of the node to `FILE` and print the CPU per stage (cluster routing, NATS client, index, parse...) per page; the allocations go to FILE.allocs")
	addCrawlFlags(f)
	return cmd
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// defaultNodeID is the machine's host name, made a valid id.
func defaultNodeID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "node"
	}
	h = strings.Trim(unsafeID.ReplaceAllString(h, "-"), "-")
	if len(h) > 64 {
		h = h[:64]
	}
	if h == "" {
		return "node"
	}
	return h
}

// connectNATS connects to the cluster's server, retrying in the background: a node started
// before its server, or whose server restarts, waits for it.
func connectNATS(url, name string, log func(string, ...any), extra ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, append(extra, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.Timeout(5*time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log("lost the NATS server; fetching stops within cluster.ttl/2 and resumes when it is back", "error", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log("reconnected to NATS", "url", c.ConnectedUrlRedacted()) }))...)
}

// runNode runs a node until it stops; it returns the pages this node fetched.
func runNode(ctx context.Context, cfg config.Config, seeds []string, exitWhenDone bool, stdout, stderr io.Writer) (int64, error) {
	if cfg.Cluster.NATS == "" {
		return 0, usageError{errors.New("node: no NATS server: give --nats URL (or cluster.nats in sonda.yaml); `sonda nats` runs one")}
	}
	if exitWhenDone && cfg.Revisit.Policy != "" && cfg.Revisit.Policy != "none" {
		return 0, usageError{fmt.Errorf("node: --exit-when-done with revisit policy %q: revisits keep the cluster busy forever; drop one of them", cfg.Revisit.Policy)}
	}
	id := cfg.Cluster.NodeID
	if id == "" {
		id = defaultNodeID()
	}
	log := newLogger(cfg)
	nc, err := connectNATS(cfg.Cluster.NATS, "sonda node "+id, func(msg string, args ...any) { log.Warn(msg, args...) }, natsCreds(cfg)...)
	if err != nil {
		return 0, fmt.Errorf("node: NATS server %s: %w", cfg.Cluster.NATS, err)
	}
	defer nc.Close()
	var node *cluster.Node
	for {
		jctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		node, err = cluster.Join(jctx, nc, cluster.Options{Cluster: cfg.Cluster.Name, NodeID: id, TTL: cfg.Cluster.TTL,
			Partitions: cfg.Cluster.Partitions, ExitWhenDone: exitWhenDone, Unconfirmed: 2 * cfg.Crawl.Concurrency, Logger: log})
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if last := nc.LastError(); errors.Is(last, nats.ErrAuthorization) || errors.Is(last, nats.ErrAuthRevoked) || errors.Is(last, nats.ErrAuthExpired) {
			return 0, usageError{fmt.Errorf("node: the NATS server at %s refused the credentials: %w (a server started with --auth needs --creds AUTHDIR/node.creds)", cfg.Cluster.NATS, last)}
		}
		if !nc.IsConnected() {
			err = fmt.Errorf("cannot reach the NATS server at %s (is `sonda nats` or nats-server -js running?): %w", cfg.Cluster.NATS, err)
		}
		log.Warn("node: joining the cluster failed; retrying", "error", err)
		sleepCtx(ctx, 2*time.Second)
	}
	// With global ranks the node's link graph takes the ranks the cluster's leader computed
	// over every node's links, and never computes its own.
	globalRanks := cfg.Cluster.GlobalRanks && cfg.Search.Index
	in, err := openApp(cfg, app.Options{Logger: log, Crawl: true, RanksFromElsewhere: globalRanks})
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if in.Index != nil {
		// This node's shard of the cluster's search (sonda serve --nats gathers them).
		srv, err := search.Listen(nc, cfg.Cluster.Name, id, in.Index)
		if err != nil {
			return 0, fmt.Errorf("node: answer searches: %w", err)
		}
		defer srv.Close()
	}
	opts, err := in.CrawlOptions(&cfg)
	if err != nil {
		return 0, err
	}
	// The node is also a sink: each page's links go, in the page's batch, to the owners of
	// their targets, whose link graphs count them (in-links and anchors are cluster-wide).
	opts = append(opts, crawl.WithRouter(node), crawl.WithGate(node), crawl.WithSinks(node))
	if ls := in.LinkSink(); ls != nil {
		node.ReceiveInLinks(ls, cfg.Search.Index) // the crawler records its own pages' links in ls when it indexes
	}
	if globalRanks && in.Graph != nil {
		node.ReceiveRanks(in.Graph, cfg.Data, cfg.Search.PageRankInterval)
	}
	var dispatcher *volunteer.Dispatcher
	if cfg.Cluster.Workers {
		d, closeDispatcher, err := startDispatcher(ctx, cfg, nc, id, node, in, log)
		if err != nil {
			return 0, err
		}
		defer closeDispatcher()
		dispatcher = d
		// A sink after the index's: it purges again a page of a quarantined worker that
		// reached the index's queue during the worker's purge.
		opts = append(opts, crawl.WithPageFetcher(d), crawl.WithSinks(d))
	}
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := node.Attach(c); err != nil {
		return 0, err
	}
	all, err := node.AddSeeds(ctx, seeds)
	if err != nil {
		return 0, err
	}
	if cfg.Crawl.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.Crawl.MetricsAddr)
		if err != nil {
			return 0, fmt.Errorf("crawl.metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		gatherers := prometheus.Gatherers{c.Gatherer(), node.Gatherer()}
		if dispatcher != nil {
			reg := prometheus.NewRegistry()
			reg.MustRegister(dispatcher)
			gatherers = append(gatherers, reg)
		}
		mux.Handle("/metrics", promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
	}
	fmt.Fprintf(stderr, "node %s joined cluster %s on %s (TTL %s, %d partitions)\n", id, cfg.Cluster.Name, cfg.Cluster.NATS, node.TTL(), node.Partitions())

	crawlCtx, stopCrawl := context.WithCancel(ctx)
	defer stopCrawl()
	nodeCtx, stopNode := context.WithCancel(ctx)
	defer stopNode()
	type result struct {
		sum crawl.Summary
		err error
	}
	crawled := make(chan result, 1)
	go func() {
		sum, err := c.Run(crawlCtx, all, progressPrinter(stderr))
		stopNode() // max-pages, duration, or a failure: this node leaves
		crawled <- result{sum, err}
	}()
	nodeErr := node.Run(nodeCtx)
	stopCrawl()
	res := <-crawled
	if res.err != nil {
		return 0, res.err
	}
	reason := res.sum.Reason
	switch {
	case errors.Is(nodeErr, cluster.ErrDone):
		reason = "cluster done"
	case nodeErr != nil && ctx.Err() == nil:
		return 0, nodeErr
	}
	res.sum.Reason = reason
	printSummary(stdout, cfg.Data, res.sum)
	return res.sum.Pages, nil
}

// startDispatcher lets volunteer workers fetch this node's pages: a page a quarantined
// worker delivered leaves the index and is queued again.
func startDispatcher(ctx context.Context, cfg config.Config, nc *nats.Conn, id string, node *cluster.Node, in *app.Instance, log *slog.Logger) (*volunteer.Dispatcher, func(), error) {
	fo, err := crawl.FetchOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, nil, err
	}
	own, err := fetch.New(fo)
	if err != nil {
		return nil, nil, err
	}
	purge := func(ctx context.Context, items []frontier.Item) error {
		defer node.Hold()() // the cluster is not done while pages are to be queued again
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.URL
		}
		// A page still on its way to the index when this runs is written after the
		// deletion, then replaced when it is fetched again.
		if err := in.DeleteDocs(ctx, ids...); err != nil {
			return err
		}
		return node.Refetch(ctx, items)
	}
	d, err := volunteer.Start(ctx, nc, js, volunteer.Options{Cluster: cfg.Cluster.Name, Node: id, Fetcher: own,
		UserAgent: cfg.Fetch.UserAgent, MaxBody: fo.MaxBodyBytes, TaskTimeout: cfg.Cluster.WorkerTimeout,
		MinCheck: cfg.Cluster.WorkerCheck, Canary: canary(cfg.Cluster.WorkerCanary), Purge: purge, DB: in.DB.Pebble(), Logger: log})
	if err != nil {
		own.Close()
		return nil, nil, fmt.Errorf("node: volunteer workers: %w", err)
	}
	return d, func() { d.Close(); own.Close() }, nil
}

// canary maps cluster.worker-canary to volunteer.Options.Canary, where 0 means the default.
func canary(share float64) float64 {
	if share == 0 {
		return -1
	}
	return share
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
