package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/cluster"
)

func init() { register(newClusterCmd) }

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Look at a cluster of sonda nodes and manage its volunteer workers",
		Args:  cobra.NoArgs,
	}
	var asJSON bool
	status := &cobra.Command{
		Use:   "status --nats URL [--cluster NAME] [--json]",
		Short: "Show a cluster's members, partitions, queues and progress",
		Long: `status reads the cluster's state from its NATS server: every live node with the
partitions (host shares) it serves, its queued and in-flight URLs, outbox (links not yet
handed to JetStream), pages fetched, pages/s over the last 10s, errors and fail-overs
(partitions it took from a node that died); then the totals, the URLs waiting in JetStream
for their owner (routing) and the partitions no node serves right now.

Example:
  sonda cluster status --nats nats://127.0.0.1:4222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, clusterFlags...)
			if err != nil {
				return err
			}
			if cfg.Cluster.NATS == "" {
				return usageError{errors.New("cluster status: give --nats URL (or cluster.nats in sonda.yaml)")}
			}
			nc, err := nats.Connect(cfg.Cluster.NATS, append(natsCreds(cfg), nats.Name("sonda cluster status"), nats.Timeout(5*time.Second))...)
			if errors.Is(err, nats.ErrAuthorization) {
				return usageError{fmt.Errorf("cluster status: the NATS server at %s refused the credentials: %w (a server started with --auth needs --creds AUTHDIR/node.creds)", cfg.Cluster.NATS, err)}
			}
			if err != nil {
				return fmt.Errorf("cluster status: cannot reach the NATS server at %s (is `sonda nats` or nats-server -js running?): %w", cfg.Cluster.NATS, err)
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			st, err := cluster.ReadStatus(ctx, js, cfg.Cluster.Name)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printClusterStatus(cmd.OutOrStdout(), st)
			return nil
		},
	}
	addClusterFlags(status.Flags())
	status.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	cmd.AddCommand(status, newWorkersCmd())
	return cmd
}

func printClusterStatus(w io.Writer, st cluster.Status) {
	fmt.Fprintf(w, "cluster %s: %d members, %d partitions (%d not served right now)\n", st.Cluster, len(st.Members), st.Partitions, st.Unassigned)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\tpartitions\tqueued\tin flight\toutbox\tpages\tpages/s\terrors\tfail-overs\t")
	row := func(name string, parts int, m cluster.MemberInfo) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\t%d\t\n", name, parts, m.Queued, m.InFlight, m.Outbox, m.Pages, m.PagesPerSec, m.Errors, m.FailOvers)
	}
	total := 0
	for _, m := range st.Members {
		row(m.Node, len(m.Partitions), m)
		total += len(m.Partitions)
	}
	row("total", total, st.Totals())
	tw.Flush()
	fmt.Fprintf(w, "routing: %d URLs waiting in JetStream for their owner; %d URLs admitted cluster-wide\n", st.Routing, st.URLStates)
}
