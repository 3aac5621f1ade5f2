package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/testweb"
)

// TestClusterScaling measures the aggregate fetch rate of 1, 2 and 4 nodes on loopback,
// each node capped by --budget so that the 2-core machine is not the limit, and the CPU
// each page costs a node against the same crawl in embedded mode (sonda crawl). It takes
// about two minutes, so it runs only with SONDA_BENCH=cluster:
//
//	SONDA_BENCH=cluster go test -run TestClusterScaling -v ./cmd/sonda
//
// The CPU of a cluster is given twice: the nodes' alone, and with the NATS server's (which
// does the cluster's bookkeeping on their behalf). SONDA_BENCH_NODES=1,2 measures only
// those cluster sizes; SONDA_BENCH_PROFILE=DIR writes a CPU profile of the embedded crawl
// and of every node there (go tool pprof), and each process prints its CPU per stage;
// SONDA_BENCH_WINDOW=60s measures for that long instead of 20 s (profiles with more samples).
func TestClusterScaling(t *testing.T) {
	if os.Getenv("SONDA_BENCH") != "cluster" {
		t.Skip("a benchmark: set SONDA_BENCH=cluster")
	}
	const perNode = 25 // pages/s each node may fetch (--budget)
	window := 20 * time.Second
	if v := os.Getenv("SONDA_BENCH_WINDOW"); v != "" { // longer: profiles with more samples
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("SONDA_BENCH_WINDOW=%q: want a duration such as 60s", v)
		}
		window = d
	}
	web := testweb.Bench(300)
	web.KeepHeaders = true
	sizes := []int{1, 2, 4}
	if v := os.Getenv("SONDA_BENCH_NODES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("SONDA_BENCH_NODES=%q: want cluster sizes such as 1,2,4", v)
			}
			sizes = append(sizes, n)
		}
	}
	profDir := os.Getenv("SONDA_BENCH_PROFILE")
	cpuEmbedded := embeddedCPUPerPage(t, web, perNode, window, profDir)
	t.Logf("embedded: %.2f ms CPU per page at %d pages/s", cpuEmbedded*1000, perNode)
	for _, nodes := range sizes {
		r := newClusterRigOn(t, false, web)
		var procs []*nodeProc
		for i := 0; i < nodes; i++ {
			args := []string{"--budget", fmt.Sprintf("%d/s", perNode), "--revisit", "none", "--concurrency", "8"}
			if profDir != "" {
				args = append(args, "--profile", filepath.Join(profDir, fmt.Sprintf("cluster%d-n%d.prof", nodes, i)))
			}
			procs = append(procs, r.start(fmt.Sprintf("n%d", i), i == 0, args...))
		}
		r.checkStatus(nodes) // every node serves its share
		time.Sleep(2 * time.Second)
		before := len(r.web.Requests())
		time.Sleep(window)
		pages := len(r.web.Requests()) - before
		var cpu time.Duration
		for _, p := range procs {
			p.killed = true
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			<-p.done
			p.done <- nil
			cpu += p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
		}
		total := len(r.web.Requests())
		t.Logf("%d nodes: JetStream writes per page: %s", nodes, streamWrites(t, r.nats, total))
		r.stopNATS()
		server := r.natsP.ProcessState.UserTime() + r.natsP.ProcessState.SystemTime()
		rate := float64(pages) / window.Seconds()
		perPage := cpu.Seconds() / float64(total)
		withServer := (cpu + server).Seconds() / float64(total)
		t.Logf("%d nodes: %.1f pages/s aggregate = %.2f × %d × %d/s cap; CPU per page: nodes %.2f ms (%.2f× embedded), nodes + NATS server %.2f ms (%.2f× embedded)",
			nodes, rate, rate/float64(nodes*perNode), nodes, perNode, perPage*1000, perPage/cpuEmbedded, withServer*1000, withServer/cpuEmbedded)
		for _, p := range procs {
			if profDir != "" {
				t.Logf("%s:\n%s", p.id, profileLines(p.log.Name()))
			}
		}
		r.checkPolite() // polite and one node per host at a time, also while measuring
	}
}

// embeddedCPUPerPage crawls the web with sonda crawl at the same budget for the same time.
func embeddedCPUPerPage(t *testing.T, wc testweb.Config, budget int, d time.Duration, profDir string) float64 {
	web := testweb.New(wc)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	args := []string{"crawl", "--data", filepath.Join(t.TempDir(), "embedded"), "--allow-private", "--resolve", web.Resolve(),
		"--min-delay", clusterDelay.String(), "--concurrency", "8", "--budget", strconv.Itoa(budget) + "/s", "--revisit", "none", "--duration", (d + 2*time.Second).String()}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	if profDir != "" {
		args = append(args, "--profile", filepath.Join(profDir, "embedded.prof"))
	}
	cmd := exec.Command(sondaBin, args...)
	cmd.Env = append(os.Environ(), "SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=warn")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sonda crawl: %v\n%s", err, out)
	}
	if profDir != "" {
		t.Logf("embedded:\n%s", out)
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / float64(len(web.Requests()))
}

// profileLines is the CPU-per-stage report (--profile) in a node's log.
func profileLines(log string) string {
	b, _ := os.ReadFile(log)
	s := string(b)
	if i := strings.Index(s, "CPU profile in "); i >= 0 {
		return s[i:]
	}
	return "(no profile report in " + log + ")"
}

// streamWrites is how many messages each of the cluster's streams took per page.
func streamWrites(t *testing.T, url string, pages int) string {
	nc, err := nats.Connect(url)
	if err != nil {
		return err.Error()
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	for l := js.ListStreams(ctx); ; {
		select {
		case si, ok := <-l.Info():
			if !ok {
				return strings.Join(out, ", ")
			}
			out = append(out, fmt.Sprintf("%s %.2f", si.Config.Name, float64(si.State.LastSeq)/float64(pages)))
		case <-ctx.Done():
			return strings.Join(out, ", ")
		}
	}
}
