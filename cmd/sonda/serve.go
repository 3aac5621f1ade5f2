package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/web"
	webcluster "github.com/sonda-search/sonda/web/cluster"
	"github.com/sonda-search/sonda/web/local"
)

func init() { register(newServeCmd) }

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--data DIR | --nats URL [--cluster NAME]] [--addr HOST:PORT]",
		Short: "Serve the web UI, the HTTP API and /metrics over a data directory (or search a cluster)",
		Long: `serve opens the data directory and serves, on one address:
  /            search, results, cached documents and link relations
  /dashboard   the crawl dashboard: live figures and charts, start and stop
  /api/...     the JSON API (described at /api/openapi.json)
  /metrics     Prometheus metrics, the running crawl's included

Pebble lets one process open a data directory, so serve owns it: crawls run inside the
server, started from the dashboard or with POST /api/crawl/start, and stop with it.
With --read-only, serve only reads the directory (no crawls, no byte changed), and
several read-only servers, and sonda search, can share it.

Searches are bounded (search.time-budget, search.max-searches, search.queue-wait): one
stops after 50ms of matching and answers with the best found so far, marked partial;
at most two per CPU run at once, the others wait their turn up to 1s and then get 503
with Retry-After.

Memory: serve's Go memory limit is memory-limit plus the bounds of the search's caches
(search.facet-cache, forward-cache and postings-cache; 384 + 128 + 256 + 128 MiB = 896
MiB by default), which it fills once and keeps; memory-limit is left for the rest (searches'
garbage, crawls). GOMEMLIMIT, when set, wins. With --nats no index is open: memory-limit.

Crawls use the crawl settings of sonda.yaml and SONDA_* variables (seeds, scope,
politeness); seeds can also be given when starting.

Write requests (crawl control) need the token, sent as "Authorization: Bearer TOKEN".
It comes from serve.token in sonda.yaml or SONDA_SERVE_TOKEN; when neither is set, serve
makes a random one and prints it.

With --nats, serve opens no data directory: it searches a whole cluster of sonda nodes
through the NATS server at URL. Every query goes to every node of the cluster (those its
membership lists and those that answer a ping), and the answers merge into the ranking one
index over all their pages would give; the search settings (ranking, operator,
max-results) are this configuration's, for every node. A node that does not answer within
cluster.search-timeout (2s) is left out and the page says which; one that stops is
reported missing for ten minutes, then forgotten. Cached documents, link relations and the
crawl dashboard belong to the nodes.

Examples:
  sonda serve --data mycrawl/sonda-data
  sonda serve --data mycrawl/sonda-data --read-only
  SONDA_SERVE_TOKEN=$(cat token) sonda serve -c mycrawl/sonda.yaml --addr 0.0.0.0:8080
  sonda serve --nats nats://127.0.0.1:4222 --cluster sonda`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, serveFlags...)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("nats") {
				return serveCluster(cmd.Context(), cfg, cmd.OutOrStdout())
			}
			// The index's caches are bounded and long-lived: the memory limit counts them.
			setMemoryLimit(cfg.SearchMemoryLimit())
			// Listen first: a busy port must not leave a data directory created for nothing.
			ln, err := net.Listen("tcp", cfg.Serve.Addr)
			if err != nil {
				return usageError{fmt.Errorf("serve.addr %s: %w", cfg.Serve.Addr, err)}
			}
			defer ln.Close()
			readOnly, _ := cmd.Flags().GetBool("read-only")
			d, err := openServeData(cfg, readOnly)
			if err != nil {
				return err
			}
			defer d.Close()
			var prof *cpuProfile
			if path, _ := cmd.Flags().GetString("profile"); path != "" {
				if prof, err = startCPUProfile(path, searchStages); err != nil {
					return usageError{err}
				}
			}
			err = serveData(cmd.Context(), d, cfg, ln, cmd.OutOrStdout())
			if prof != nil {
				if perr := prof.stop(cmd.ErrOrStderr(), 0); perr != nil && err == nil {
					err = perr
				}
			}
			return err
		},
	}
	cmd.Flags().String("addr", "", "listen on `HOST:PORT` (default serve.addr: 127.0.0.1:8080; port 0 picks a free one)")
	cmd.Flags().Bool("read-only", false, "serve search and documents without changing one byte of the data directory: no crawls (several read-only servers and sonda search may share a directory; a crawl excludes them)")
	cmd.Flags().String("profile", "", "write a CPU profile of the server, from start to stop, to `FILE` and print the CPU per step of answering searches (matching, facets, feedback, snippets, stored documents, JSON...); the allocations go to FILE.allocs")
	cmd.Flags().String("nats", "", "search a cluster through the NATS server at `URL` (nats://HOST:PORT) instead of a data directory")
	cmd.Flags().String("cluster", "", "the cluster's `NAME` on that NATS server, with --nats (cluster.name, default sonda)")
	cmd.Flags().String("creds", "", "NATS credentials `FILE` when the server requires them, with --nats (cluster.creds)")
	addIndexFlag(cmd.Flags())
	return cmd
}

var serveFlags = append([]settingFlag{
	indexFlag,
	{"addr", func(c *config.Config, f *pflag.FlagSet) (err error) {
		c.Serve.Addr, err = f.GetString("addr")
		return
	}},
}, clusterFlags...)

// openData opens cfg.Data for serving (package web/local, which assembles it with package
// app as sonda crawl does); progress, when not nil, gets the progress of the crawls the
// server runs.
func openData(cfg config.Config, progress func(crawl.Progress)) (*local.Data, error) {
	d, err := local.Open(cfg, local.Options{Logger: newLogger(cfg), Progress: progress})
	if errors.Is(err, local.ErrInUse) {
		return nil, usageError{err}
	}
	return d, err
}

// openServeData opens cfg.Data for sonda serve, read-only when asked (no crawls).
func openServeData(cfg config.Config, readOnly bool) (*local.Data, error) {
	if !readOnly {
		return openData(cfg, nil)
	}
	d, err := local.Open(cfg, local.Options{Logger: newLogger(cfg), ReadOnly: true})
	if errors.Is(err, local.ErrInUse) {
		return nil, usageError{err}
	}
	return d, err
}

// serveCluster serves the search UI and API over the cluster cluster.name on the NATS
// server at cluster.nats until ctx ends.
func serveCluster(ctx context.Context, cfg config.Config, out io.Writer) error {
	url, name := cfg.Cluster.NATS, cfg.Cluster.Name
	if url == "" {
		return usageError{errors.New("serve: --nats needs the NATS server's URL, e.g. --nats nats://127.0.0.1:4222")}
	}
	ixo, err := app.IndexOptions(cfg, newLogger(cfg))
	if err != nil {
		return usageError{err}
	}
	nc, err := nats.Connect(url, append(natsCreds(cfg), nats.Name("sonda serve"), nats.MaxReconnects(-1))...)
	if err != nil {
		return usageError{fmt.Errorf("--nats %s: %w (is a NATS server running there? sonda nats starts one)", url, err)}
	}
	defer nc.Close()
	// The nodes: those the membership lists (when JetStream has it) and those that answer
	// pings, each remembered for a while after it was last seen.
	var listed func(context.Context) ([]string, error)
	if js, err := jetstream.New(nc); err == nil {
		listed = func(ctx context.Context) ([]string, error) { return cluster.LiveMembers(ctx, js, name) }
	}
	dir, err := search.NewDirectory(nc, name, 0, 0, listed)
	if err != nil {
		return usageError{err}
	}
	defer dir.Close()
	g, err := search.NewGatherer(nc, dir.Members, search.GathererOptions{Cluster: name, Timeout: cfg.Cluster.SearchTimeout, Ranking: ixo.Ranking,
		Operator: ixo.Implicit.String(), MaxResults: ixo.MaxResults})
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", cfg.Serve.Addr)
	if err != nil {
		return usageError{fmt.Errorf("serve.addr %s: %w", cfg.Serve.Addr, err)}
	}
	opts := webcluster.New(g).WebOptions()
	opts.Logger = newLogger(cfg)
	if js, err := jetstream.New(nc); err == nil { // the dashboard lists the volunteer workers
		opts.Workers = webcluster.WorkerLister(func(ctx context.Context) ([]cluster.WorkerView, error) {
			return cluster.ListWorkers(ctx, js, name)
		})
		opts.Cluster = webcluster.StatusReader(func(ctx context.Context) (cluster.Status, error) {
			return cluster.ReadStatus(ctx, js, name)
		})
	}
	return serveUI(ctx, opts, cfg, fmt.Sprintf("cluster %s at %s", name, url), ln, out)
}

// serveData serves d's UI and API on ln until ctx ends, then shuts the server down
// gracefully (the caller closes d, which stops a running crawl).
func serveData(ctx context.Context, d *local.Data, cfg config.Config, ln net.Listener, out io.Writer) error {
	return serveUI(ctx, d.WebOptions(), cfg, cfg.Data, ln, out)
}

// serveUI serves the UI and API with the backends of opts, over what (a data directory
// or a cluster), on ln until ctx ends, then shuts the server down gracefully.
func serveUI(ctx context.Context, opts web.Options, cfg config.Config, what string, ln net.Listener, out io.Writer) error {
	token, generated := cfg.Serve.Token, false
	if token == "" {
		var err error
		if token, err = newToken(); err != nil {
			return err
		}
		generated = true
	}
	opts.Token = token
	opts.Hosts = append([]string{}, cfg.Serve.Hosts...) // never nil: the Host check is on
	handler, err := web.New(opts)
	if err != nil {
		return usageError{err}
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(out, "serving %s on http://%s/ (dashboard: http://%s/dashboard)\n", what, ln.Addr(), ln.Addr())
	if generated {
		fmt.Fprintf(out, "write token for crawl control (generated for this run; set SONDA_SERVE_TOKEN to choose one): %s\n", token)
	}
	fmt.Fprintln(out, "press Ctrl-C to stop")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	fmt.Fprintln(out, "server stopped")
	return nil
}

// newToken makes a random write token: 24 bytes from the system's CSPRNG, base64url.
func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a serve token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
