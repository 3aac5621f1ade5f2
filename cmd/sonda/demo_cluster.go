package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/testweb"
)

// demoCluster runs the demo as a cluster: an embedded NATS server, nodes `sonda node`
// processes on data/node-N and the test web, printing `sonda cluster status` as they
// crawl. Serving, the nodes stay up after the crawl and the UI searches all of them
// (sonda serve --nats); with --no-serve they exit when the whole cluster is done.
func demoCluster(ctx context.Context, data string, nodes int, web *testweb.Web, noServe bool, serveAddr string, out, errOut io.Writer) error {
	srv, err := cluster.StartServer(cluster.ServerOptions{Addr: "127.0.0.1:0", Dir: filepath.Join(data, "nats")})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	fmt.Fprintf(out, "NATS with JetStream on %s; starting %d nodes (logs in %s/node-N.log)\n", srv.URL(), nodes, data)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	const minDelay = 50 * time.Millisecond
	procs := make([]*exec.Cmd, nodes)
	exited := make(chan error, nodes)
	for i := range procs {
		id := "node" + strconv.Itoa(i+1)
		args := []string{"node", "--nats", srv.URL(), "--node-id", id, "--data", filepath.Join(data, id),
			"--allow-private", "--resolve", web.Resolve(), "--min-delay", minDelay.String(), "--concurrency", "16"}
		if noServe {
			args = append(args, "--exit-when-done")
		}
		if i == 0 {
			for _, s := range web.Seeds() {
				args = append(args, "--seed", s)
			}
		}
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "SONDA_SCOPE_FOLLOW=any", "SONDA_SCOPE_ALLOW_DOMAINS=test", "SONDA_CLUSTER_TTL=3s",
			"SONDA_FETCH_FIRST_BYTE_TIMEOUT=1s", "SONDA_FETCH_BODY_TIMEOUT=2s", "SONDA_POLITENESS_RETRY_DELAY=100ms",
			"SONDA_ROBOTS_RETRY_DELAY=100ms", "SONDA_ROBOTS_MAX_FAILURES=2", "SONDA_LOG_LEVEL=warn")
		logf, err := os.Create(filepath.Join(data, id+".log"))
		if err != nil {
			return err
		}
		defer logf.Close()
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return err
		}
		procs[i] = cmd
		go func() { exited <- cmd.Wait() }()
	}
	running := nodes
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for ; running > 0; running-- {
			<-exited
		}
	}()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if !noServe {
		cfg := config.Default()
		cfg.Cluster.NATS, cfg.Serve.Addr, cfg.Log.Level = srv.URL(), serveAddr, "error"
		go func() {
			if err := serveCluster(ctx, cfg, out); err != nil && ctx.Err() == nil {
				fmt.Fprintln(errOut, "serve:", err)
			}
		}()
	}
	// Report every few seconds until the crawl is over: every node exited (--no-serve) or
	// the cluster was quiet for three reports in a row (serving).
	var last cluster.Status
	quiet := 0
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for running > 0 && quiet < 3 {
		select {
		case <-ctx.Done():
			return nil
		case err := <-exited:
			running--
			if err != nil {
				return fmt.Errorf("a node failed: %w (see %s/node-N.log)", err, data)
			}
			continue
		case <-tick.C:
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := cluster.ReadStatus(sctx, js, "")
		cancel()
		if err != nil {
			continue
		}
		fmt.Fprintln(out)
		printClusterStatus(out, st)
		t := st.Totals()
		if len(st.Members) == nodes && t.Queued == 0 && t.InFlight == 0 && t.Outbox == 0 && st.Routing == 0 && st.Unassigned == 0 && t.Pages == last.Totals().Pages {
			quiet++
		} else {
			quiet = 0
		}
		last = st
	}
	demoVerdict(out, web, minDelay, 1) // across the cluster: one node per host at a time
	if noServe {
		return nil
	}
	fmt.Fprintln(out, "\nthe nodes stay up and the UI above searches all of them; Ctrl-C stops everything")
	<-ctx.Done()
	return nil
}
