package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// TestClusterScaling measures the aggregate fetch rate of 1, 2 and 4 nodes on loopback,
// each node capped by --budget so that the 2-core machine is not the limit, and the CPU
// each page costs a node against the same crawl in embedded mode (sonda crawl). It takes
// about two minutes, so it runs only with SONDA_BENCH=cluster:
//
//	SONDA_BENCH=cluster go test -run TestClusterScaling -v ./cmd/sonda
func TestClusterScaling(t *testing.T) {
	if os.Getenv("SONDA_BENCH") != "cluster" {
		t.Skip("a benchmark: set SONDA_BENCH=cluster")
	}
	const (
		perNode = 25 // pages/s each node may fetch (--budget)
		window  = 20 * time.Second
	)
	web := testweb.Bench(300)
	web.KeepHeaders = true
	cpuEmbedded := embeddedCPUPerPage(t, web, perNode, window)
	t.Logf("embedded: %.2f ms CPU per page at %d pages/s", cpuEmbedded*1000, perNode)
	for _, nodes := range []int{1, 2, 4} {
		r := newClusterRigOn(t, false, web)
		var procs []*nodeProc
		for i := 0; i < nodes; i++ {
			procs = append(procs, r.start(fmt.Sprintf("n%d", i), i == 0, "--budget", fmt.Sprintf("%d/s", perNode), "--concurrency", "8"))
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
		rate := float64(pages) / window.Seconds()
		perPage := cpu.Seconds() / float64(total)
		t.Logf("%d nodes: %.1f pages/s aggregate = %.2f × %d × %d/s cap; %.2f ms CPU per page (%.2f× embedded)",
			nodes, rate, rate/float64(nodes*perNode), nodes, perNode, perPage*1000, perPage/cpuEmbedded)
		r.checkPolite() // polite and one node per host at a time, also while measuring
	}
}

// embeddedCPUPerPage crawls the web with sonda crawl at the same budget for the same time.
func embeddedCPUPerPage(t *testing.T, wc testweb.Config, budget int, d time.Duration) float64 {
	web := testweb.New(wc)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	args := []string{"crawl", "--data", filepath.Join(t.TempDir(), "embedded"), "--allow-private", "--resolve", web.Resolve(),
		"--min-delay", clusterDelay.String(), "--concurrency", "8", "--budget", strconv.Itoa(budget) + "/s", "--duration", (d + 2*time.Second).String()}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	cmd := exec.Command(sondaBin, args...)
	cmd.Env = append(os.Environ(), "SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=warn")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sonda crawl: %v\n%s", err, out)
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / float64(len(web.Requests()))
}
