package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/config"
)

// newWorkersCmd is `sonda cluster workers`: volunteer workers' credentials and standing.
func newWorkersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "Admit, revoke and list volunteer workers",
		Long: `workers manages the volunteer workers of a cluster whose NATS server runs with
` + "`sonda nats --auth AUTHDIR`" + `. A worker (` + "`sonda worker`" + `) only fetches and parses the
URLs the nodes give it; its credential lets it read its own task subject and write its
own result subject, nothing else. add and revoke need AUTHDIR (the keys); quarantine
and list need the trusted credentials only.`,
		Args: cobra.NoArgs,
	}
	var authDir, out string
	var asJSON bool
	authFlag := func(f *pflag.FlagSet) {
		f.StringVar(&authDir, "auth", "", "the `AUTHDIR` of `sonda nats --auth` (its keys sign and revoke credentials)")
	}
	// connect opens the trusted connection: --creds, else AUTHDIR/node.creds.
	connect := func(cmd *cobra.Command, what string) (config.Config, *nats.Conn, jetstream.JetStream, error) {
		cfg, err := loadConfig(cmd, clusterFlags...)
		if err != nil {
			return cfg, nil, nil, err
		}
		if cfg.Cluster.NATS == "" {
			return cfg, nil, nil, usageError{fmt.Errorf("workers %s: give --nats URL (or cluster.nats in sonda.yaml)", what)}
		}
		if cfg.Cluster.Creds == "" && authDir != "" {
			cfg.Cluster.Creds = filepath.Join(authDir, cluster.NodeCredsFile)
		}
		if cfg.Cluster.Creds == "" {
			return cfg, nil, nil, usageError{fmt.Errorf("workers %s: give --auth AUTHDIR (or --creds AUTHDIR/node.creds): workers need a server started with `sonda nats --auth`", what)}
		}
		nc, err := nats.Connect(cfg.Cluster.NATS, append(natsCreds(cfg), nats.Name("sonda cluster workers"), nats.Timeout(5*time.Second))...)
		if err != nil {
			return cfg, nil, nil, fmt.Errorf("workers %s: cannot reach the NATS server at %s with %s: %w", what, cfg.Cluster.NATS, cfg.Cluster.Creds, err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return cfg, nil, nil, err
		}
		return cfg, nc, js, nil
	}
	needAuth := func(what string) (*cluster.Auth, error) {
		if authDir == "" {
			return nil, usageError{fmt.Errorf("workers %s: give --auth AUTHDIR, the directory of `sonda nats --auth` that holds the keys", what)}
		}
		return cluster.OpenAuth(authDir)
	}

	add := &cobra.Command{
		Use:   "add NAME --nats URL --auth AUTHDIR [--out FILE]",
		Short: "Issue a credential for a new worker",
		Long: `add issues a credential for worker NAME (letters, digits, '-', '_') and writes it to
FILE (default NAME.creds, mode 0600; never overwritten). Give the file to the volunteer:
  sonda worker --nats URL --creds NAME.creds

Example:
  sonda cluster workers add alice --nats nats://10.0.0.5:4222 --auth ./sonda-auth`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			a, err := needAuth("add")
			if err != nil {
				return err
			}
			if out == "" {
				out = name + ".creds"
			}
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return usageError{fmt.Errorf("workers add: %w (pick another --out)", err)}
			}
			cfg, nc, js, err := connect(cmd, "add")
			if err != nil {
				f.Close()
				os.Remove(out)
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			creds, err := cluster.AddWorker(ctx, js, a, cfg.Cluster.Name, name)
			if err == nil {
				_, err = f.Write(creds)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(out)
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "worker %s admitted; credential in %s\nrun it with: sonda worker --nats %s --creds %s\n", name, out, cfg.Cluster.NATS, out)
			return nil
		},
	}
	authFlag(add.Flags())
	addClusterFlags(add.Flags())
	add.Flags().StringVar(&out, "out", "", "write the credential to `FILE` (default NAME.creds)")

	revoke := &cobra.Command{
		Use:   "revoke NAME --nats URL --auth AUTHDIR",
		Short: "Revoke a worker's credential at once",
		Long: `revoke revokes worker NAME's credential on the server: the server closes its
connection at once and refuses it from then on; nothing restarts. Tasks it held go to
other workers when their deadline passes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := needAuth("revoke")
			if err != nil {
				return err
			}
			cfg, nc, js, err := connect(cmd, "revoke")
			if err != nil {
				return err
			}
			defer nc.Close()
			sys, err := nats.Connect(cfg.Cluster.NATS, nats.UserCredentials(filepath.Join(authDir, cluster.SystemCredsFile)), nats.Name("sonda cluster workers revoke"), nats.Timeout(5*time.Second))
			if err != nil {
				return fmt.Errorf("workers revoke: connect as the system account: %w", err)
			}
			defer sys.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			if err := cluster.RevokeWorker(ctx, js, sys, a, cfg.Cluster.Name, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "worker %s revoked\n", args[0])
			return nil
		},
	}
	authFlag(revoke.Flags())
	addClusterFlags(revoke.Flags())

	var reason string
	quarantine := &cobra.Command{
		Use:   "quarantine NAME --nats URL (--auth AUTHDIR | --creds FILE) [--reason TEXT]",
		Short: "Distrust a worker: no more tasks, its pages purged and fetched again",
		Long: `quarantine does by hand what a node does when its checks catch a worker lying: the
worker gets no more tasks, and every node removes from its index the pages whose copy it
took from the worker unchecked and fetches them again (a node that is down does so when
it starts: it records where each page came from in its database). The credential stays
valid; revoke it as well to close the worker's connection. A revoked worker cannot be
quarantined: quarantine first, then revoke.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, nc, js, err := connect(cmd, "quarantine")
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			rec, err := cluster.GetWorker(ctx, js, cfg.Cluster.Name, args[0])
			if err != nil {
				return err
			}
			if rec.State == cluster.WorkerRevoked {
				return fmt.Errorf("workers quarantine: worker %s is revoked already; the nodes forgot which pages came from it", args[0])
			}
			if err := cluster.SetWorkerState(ctx, js, cfg.Cluster.Name, args[0], cluster.WorkerQuarantined, reason); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "worker %s quarantined: the nodes purge its pages and fetch them again\n", args[0])
			return nil
		},
	}
	authFlag(quarantine.Flags())
	addClusterFlags(quarantine.Flags())
	quarantine.Flags().StringVar(&reason, "reason", "quarantined by an operator", "why, shown by `list`")

	list := &cobra.Command{
		Use:   "list --nats URL (--auth AUTHDIR | --creds FILE) [--json]",
		Short: "Show each worker's state, tasks, throughput and reputation",
		Long: `list shows every worker: its state (active, quarantined: caught lying or fetching
past its deadlines, its pages refetched; revoked), tasks it completed, tasks reissued
after it missed a deadline, complete results that came well after their deadline (late:
it fetched when the node may no longer ask the host), pages/s since its first task,
checks against trusted fetches and canaries (passed / failed), certain lies (a result contradicting its own body) and its reputation, the
posterior mean share of checks it passes (Beta(1+passed, 1+failed)), which sets how often
its results are checked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, nc, js, err := connect(cmd, "list")
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			ws, err := cluster.ListWorkers(ctx, js, cfg.Cluster.Name)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(ws)
			}
			printWorkers(cmd.OutOrStdout(), ws)
			return nil
		},
	}
	authFlag(list.Flags())
	addClusterFlags(list.Flags())
	list.Flags().BoolVar(&asJSON, "json", false, "print the workers as JSON")
	cmd.AddCommand(add, revoke, quarantine, list)
	return cmd
}

func printWorkers(w io.Writer, ws []cluster.WorkerView) {
	if len(ws) == 0 {
		fmt.Fprintln(w, "no workers (sonda cluster workers add NAME admits one)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "worker\tstate\ttasks\treissued\tlate\tpages/s\tchecked\tfailed\tlies\treputation\treason")
	for _, v := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2f\t%d\t%d\t%d\t%.3f\t%s\n", v.Name, v.State, v.Tasks, v.Reissued, v.Late, v.PagesPerSec,
			v.Checked, v.Failed, v.Lies, v.Reputation, v.Reason)
	}
	tw.Flush()
}
