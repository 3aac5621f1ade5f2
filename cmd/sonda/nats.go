package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/cluster"
)

func init() { register(newNATSCmd) }

func newNATSCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "nats [--addr HOST:PORT] [--data DIR]",
		Short: "Run a NATS server with JetStream for a cluster of sonda nodes",
		Long: `nats runs the NATS server (with JetStream) that the nodes of a cluster share, for
users who have none: the same server as a standalone nats-server of the version sonda
embeds. JetStream keeps its streams in DIR (default ./sonda-nats): the routed URLs, what
became of every URL, the membership. Stop it with Ctrl-C; start it again on the same
directory and the nodes reconnect and carry on.

A standalone server works just as well: nats-server -js -sd DIR.

Examples:
  sonda nats                                  # nats://127.0.0.1:4222, data in ./sonda-nats
  sonda nats --addr 0.0.0.0:4222 --data /var/lib/sonda-nats
  sonda node --nats nats://127.0.0.1:4222 --seed https://example.org/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _ := cmd.Flags().GetString("data")
			if dir == "" {
				dir = "sonda-nats"
			}
			s, err := cluster.StartServer(cluster.ServerOptions{Addr: addr, Dir: dir})
			if err != nil {
				return err
			}
			defer s.Shutdown()
			fmt.Fprintf(cmd.OutOrStdout(), "NATS with JetStream on %s (data in %s)\n", s.URL(), dir)
			fmt.Fprintf(cmd.OutOrStdout(), "start nodes with: sonda node --nats %s --seed URL\n", s.URL())
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4222", "listen on `HOST:PORT` (port 0 picks a free one)")
	return cmd
}
