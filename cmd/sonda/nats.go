package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/cluster"
)

func init() { register(newNATSCmd) }

func newNATSCmd() *cobra.Command {
	var addr, authDir string
	cmd := &cobra.Command{
		Use:   "nats [--addr HOST:PORT] [--data DIR] [--auth AUTHDIR]",
		Short: "Run a NATS server with JetStream for a cluster of sonda nodes",
		Long: `nats runs the NATS server (with JetStream) that the nodes of a cluster share, for
users who have none: the same server as a standalone nats-server of the version sonda
embeds. JetStream keeps its streams in DIR (default ./sonda-nats): the routed URLs, what
became of every URL, the membership. Stop it with Ctrl-C; start it again on the same
directory and the nodes reconnect and carry on.

A standalone server works just as well: nats-server -js -sd DIR.

With --auth AUTHDIR the server admits only signed credentials (NATS operator mode), which
a cluster with volunteer workers needs: the first start creates AUTHDIR (keep it secret:
it can issue and revoke credentials) with node.creds, the trusted user that nodes, serve
and the cluster commands pass as --creds, and nats-server.conf, the same trust for a
standalone nats-server (nats-server -c AUTHDIR/nats-server.conf). Workers get their own
credentials from ` + "`sonda cluster workers add`" + `.

Examples:
  sonda nats                                  # nats://127.0.0.1:4222, data in ./sonda-nats
  sonda nats --addr 0.0.0.0:4222 --data /var/lib/sonda-nats
  sonda node --nats nats://127.0.0.1:4222 --seed https://example.org/
  sonda nats --auth ./sonda-auth             # then: sonda node --creds ./sonda-auth/node.creds ...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _ := cmd.Flags().GetString("data")
			if dir == "" {
				dir = "sonda-nats"
			}
			var auth *cluster.Auth
			if authDir != "" {
				var err error
				if auth, err = cluster.InitAuth(authDir); err != nil {
					return err
				}
			}
			s, err := cluster.StartServer(cluster.ServerOptions{Addr: addr, Dir: dir, Auth: auth})
			if err != nil {
				return err
			}
			defer s.Shutdown()
			fmt.Fprintf(cmd.OutOrStdout(), "NATS with JetStream on %s (data in %s)\n", s.URL(), dir)
			if auth != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "credentials required (operator mode, keys in %s)\n", authDir)
				fmt.Fprintf(cmd.OutOrStdout(), "start nodes with: sonda node --nats %s --creds %s --seed URL\n", s.URL(), auth.NodeCreds())
				fmt.Fprintf(cmd.OutOrStdout(), "admit a worker with: sonda cluster workers add NAME --nats %s --auth %s\n", s.URL(), authDir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "start nodes with: sonda node --nats %s --seed URL\n", s.URL())
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4222", "listen on `HOST:PORT` (port 0 picks a free one)")
	cmd.Flags().StringVar(&authDir, "auth", "", "require credentials signed by the keys in `AUTHDIR` (created on first use); needed for volunteer workers")
	return cmd
}
