package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/cluster/volunteer"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
)

func init() { register(newWorkerCmd) }

// workerFlags are the crawl flags a worker honours: which addresses its fetcher may reach.
var workerFlags = func() []settingFlag {
	var out []settingFlag
	for _, f := range crawlFlags {
		if f.name == "allow-private" || f.name == "resolve" {
			out = append(out, f)
		}
	}
	return out
}()

func newWorkerCmd() *cobra.Command {
	var natsURL, creds string
	var concurrency int
	cmd := &cobra.Command{
		Use:   "worker --nats URL --creds FILE [--concurrency N]",
		Short: "Fetch pages for a cluster as a volunteer worker",
		Long: `worker lends this machine's network to a sonda cluster: it fetches the pages the
cluster's nodes give it and sends them back. It keeps no crawl state and decides
nothing: the nodes choose every URL and when to fetch it (robots.txt, politeness and
scope stay with them), and give each task a deadline (a task started after it is
dropped). The credential (from ` + "`sonda cluster workers add NAME`" + `) lets this worker read its
own task subject and write its own result subject on the NATS server, nothing else:
it cannot see other workers' tasks, the cluster's membership, its links or its index.

Do not expect your results to be taken on trust: the nodes re-parse every page you
return, fetch a share of them again themselves, and quarantine a worker whose pages
differ from theirs (its pages are then removed from the index and fetched again).
The operator sees each worker's tasks, throughput and reputation in
` + "`sonda cluster workers list`" + `, and can revoke a credential at any time.

Example:
  sonda worker --nats nats://crawl.example.org:4222 --creds alice.creds --concurrency 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, workerFlags...)
			if err != nil {
				return err
			}
			if natsURL == "" {
				natsURL = cfg.Cluster.NATS
			}
			if natsURL == "" || creds == "" {
				return usageError{errors.New("worker: give --nats URL and --creds FILE (the credential `sonda cluster workers add` wrote)")}
			}
			if concurrency < 1 || concurrency > 256 {
				return usageError{fmt.Errorf("worker: --concurrency %d: use 1 to 256", concurrency)}
			}
			id, err := volunteer.ReadIdentity(creds)
			if err != nil {
				return usageError{err}
			}
			return runWorker(cmd, cfg, natsURL, creds, id, concurrency)
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", "", "`URL` of the cluster's NATS server (cluster.nats)")
	f.StringVar(&creds, "creds", "", "the worker's credentials `FILE` (from `sonda cluster workers add`)")
	f.IntVar(&concurrency, "concurrency", 4, "fetch up to `N` pages at once")
	f.StringArray("resolve", nil, "dial `HOST=ADDR` for matching hosts, like curl --resolve")
	f.String("allow-private", "", "permit loopback, private and link-local addresses (test webs): all, or a list of CIDRs and hosts")
	f.Lookup("allow-private").NoOptDefVal = "all"
	return cmd
}

// runWorker runs a worker until the command's context ends or the server refuses its
// credential (revoked).
func runWorker(cmd *cobra.Command, cfg config.Config, natsURL, creds string, id volunteer.Identity, concurrency int) error {
	fo, err := crawl.FetchOptions(cfg)
	if err != nil {
		return usageError{err}
	}
	log := newLogger(cfg)
	ctx, stop := context.WithCancelCause(cmd.Context())
	defer stop(nil)
	refused := func(err error) {
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) {
			stop(fmt.Errorf("worker: the NATS server refused this credential (revoked, or not of this server): %w", err))
		}
	}
	nc, err := nats.Connect(natsURL, nats.UserCredentials(creds), nats.Name("sonda worker "+id.Name),
		nats.MaxReconnects(-1), nats.ReconnectWait(time.Second), nats.Timeout(5*time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Warn("NATS", "error", err); refused(err) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				refused(err)
			}
		}))
	if err != nil {
		return fmt.Errorf("worker: NATS server %s: %w", natsURL, err)
	}
	defer nc.Close()
	w := volunteer.NewWorker(nc, id, volunteer.WorkerOptions{Fetch: fo, Concurrency: concurrency, Logger: log})
	defer w.Close()
	fmt.Fprintf(cmd.ErrOrStderr(), "worker %s of cluster %s on %s, %d at a time\n", id.Name, id.Cluster, natsURL, concurrency)
	if err := w.Run(ctx); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil && cmd.Context().Err() == nil {
		return err
	}
	return nil
}
