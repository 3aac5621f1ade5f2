package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/testweb"
)

// TestClusterScaling measures the aggregate fetch rate of 1, 2 and 4 nodes on loopback,
// each node capped by --budget so that the 2-core machine is not the limit, and the CPU
// each page costs a node against the same crawl in embedded mode (sonda crawl). It takes
// a minute per cluster size, so it runs only with SONDA_BENCH=cluster:
//
//	SONDA_BENCH=cluster go test -run TestClusterScaling -v ./cmd/sonda
//
// CPU per page is counted over the measuring window only (the processes' CPU from
// /proc/PID/stat at its start and end, against the requests the test web saw in between),
// so that start-up and shut-down, which a long crawl amortizes, do not count; the whole
// processes' figure is printed too. The embedded crawl is measured again before each
// cluster size. The CPU of a cluster is given twice: the nodes' alone, and with the NATS
// server's (which does the cluster's bookkeeping on their behalf).
//
//   - SONDA_BENCH_NODES=1,4,4: only those cluster sizes, in that order (repeats allowed);
//   - SONDA_BENCH_WINDOW=60s: measure for that long instead of 20 s;
//   - SONDA_BENCH_BASE=BIN: also measure, at each size right after (or before) this code's
//     nodes, nodes of another sonda binary (the code before a change), against the same
//     embedded run: before and after on the same machine state;
//   - SONDA_BENCH_SIDE=1: for N > 1 nodes, also run N embedded crawls side by side (each on
//     its own copy of the web), which load the machine as N nodes do;
//   - SONDA_BENCH_PROFILE=DIR: a CPU profile of every crawl and node there (go tool pprof),
//     and each process's CPU per stage in the output;
//   - SONDA_BENCH_STEADY=1: every window (embedded and cluster) opens only once the crawl
//     asked for the robots.txt of 95 % of the web's hosts, so that the windows compare the
//     same work (see clusterWindow); the embedded crawls then run a minute or more first;
//   - SONDA_BENCH_MATCH=1: after each cluster, an embedded crawl measured over the same
//     stretch of the crawl as the cluster's window (the same request numbers on its own
//     copy of the web), not the same time after its start (see clusterWindow).
//   - SONDA_BENCH_PERF=DIR: a perf profile (perf record -g) of every crawl and node over its
//     measuring window only (the --profile ones cover whole processes, start-up and the
//     crawl's early stretch included), as DIR/<run>.perf for perf report --children;
//   - SONDA_BENCH_JOINED=1: every node but the last joins (without seeds) and serves its
//     share before the last one joins with the seeds, so that no host is fetched by a node
//     that hands it over later (by default the first node, which has the seeds, serves
//     every partition until the others join).
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
	sideBySide := os.Getenv("SONDA_BENCH_SIDE") != "" // also N embedded crawls at once
	matched := os.Getenv("SONDA_BENCH_MATCH") != ""   // also embedded over the cluster's stretch
	steady := 0                                       // robots.txt files asked for before a window opens
	if os.Getenv("SONDA_BENCH_STEADY") != "" {
		steady = web.Hosts * 95 / 100
	}
	// SONDA_BENCH_BASE=BIN: another sonda binary (the code before a change) whose nodes are
	// measured right after this one's at each size, on the same machine state.
	bins := []string{sondaBin}
	if base := os.Getenv("SONDA_BENCH_BASE"); base != "" {
		bins = append(bins, base)
	}
	for i, nodes := range sizes {
		// The embedded crawl is measured next to every cluster size: the machine's load
		// moves between runs, and a ratio is only as good as its two figures' conditions.
		emb := embeddedCPUPerPage(t, web, 1, perNode, window, steady, filepath.Join(profDir, fmt.Sprintf("embedded-%d-%d", i, nodes)), profDir != "")
		t.Logf("embedded: %.1f pages/s; CPU per page over the window %.2f ms, whole process %.2f ms", emb.rate, emb.window*1000, emb.whole*1000)
		if nodes > 1 && sideBySide {
			side := embeddedCPUPerPage(t, web, nodes, perNode, window, steady, filepath.Join(profDir, fmt.Sprintf("side-%d-%d", i, nodes)), profDir != "")
			t.Logf("%d embedded crawls side by side: %.1f pages/s each; CPU per page over the window %.2f ms (%.2f× one alone), whole processes %.2f ms",
				nodes, side.rate, side.window*1000, side.window/emb.window, side.whole*1000)
			emb.side = side.window
		}
		for j := range bins {
			bin := bins[(i+j)%len(bins)] // each binary goes first as often as the other
			label := fmt.Sprintf("%d nodes", nodes)
			if len(bins) > 1 {
				label += map[bool]string{true: " (this code)", false: " (SONDA_BENCH_BASE)"}[bin == sondaBin]
			}
			w := clusterScalingRun(t, bin, label, web, nodes, perNode, window, steady, emb, filepath.Join(profDir, fmt.Sprintf("cluster-%d-%d-%d", i, j, nodes)), profDir != "")
			if matched {
				m := embeddedOverRequests(t, web, perNode, w.from, w.to)
				t.Logf("%s against an embedded crawl over the same requests (%d to %d of the crawl): embedded %.2f ms per page (robots.txt %d of %d requests; cluster %d of %d); nodes %.2f ms = %.2f× embedded, nodes + NATS server %.2f×",
					label, w.from, w.to, m.cpu*1000, m.robots, m.pages, w.robots, w.pages, w.nodes*1000, w.nodes/m.cpu, (w.nodes+w.server)/m.cpu)
			}
		}
	}
}

// clusterWindow is what a cluster did over its measuring window: the requests the web saw
// (from the from-th to the to-th of the crawl; robots of them for robots.txt) and the CPU
// per page of its nodes and of its NATS server.
//
// The window opens once the partitions settled, later in the crawl than an embedded
// crawl's window (3 s after its start) and later still the more nodes there are; early
// on a crawl meets new hosts, each first costing a robots.txt request, which is cheap
// to a crawler: a window earlier in the crawl holds more of them and its CPU per request
// looks lower (in a 4-node run a third of the embedded window's requests against a ninth
// of the cluster's). An embedded crawl measured over the same requests of its own crawl
// of the same web (embeddedOverRequests) does the same work in its window.
type clusterWindow struct {
	from, to, pages, robots int
	nodes, server           float64
}

// clusterScalingRun starts a cluster of nodes nodes of binary bin, each capped at perNode
// pages/s, and measures over window its rate and the CPU per page of its nodes and of its
// NATS server, against the embedded crawl emb.
func clusterScalingRun(t *testing.T, bin, label string, web testweb.Config, nodes, perNode int, window time.Duration, steady int, emb embeddedRun, prof string, profile bool) clusterWindow {
	r := newClusterRigOn(t, false, web)
	r.bin = bin
	var procs []*nodeProc
	joined := os.Getenv("SONDA_BENCH_JOINED") != ""
	// Without seeds, an empty cluster has no URL left: nodes that must wait for the seeds
	// stay up until the benchmark stops them, as it stops every node.
	r.stayUp = joined
	for i := 0; i < nodes; i++ {
		args := []string{"--budget", fmt.Sprintf("%d/s", perNode), "--revisit", "none", "--concurrency", "8"}
		if profile {
			args = append(args, "--profile", fmt.Sprintf("%s-n%d.prof", prof, i))
		}
		seeds := i == 0
		if joined && nodes > 1 {
			// Every other node is a member, serving its share, before the last one joins
			// with the seeds: no host is fetched by a node that hands it over later.
			seeds = i == nodes-1
			if seeds {
				r.checkStatus(nodes - 1)
				t.Logf("%s: %d nodes settled without seeds in %v; the last joins with the seeds", label, nodes-1, r.waitBalanced(nodes-1).Round(100*time.Millisecond))
			}
		}
		procs = append(procs, r.start(fmt.Sprintf("n%d", i), seeds, args...))
	}
	r.checkStatus(nodes) // every partition served
	// Partitions are served before they are where they belong: the first node up claims
	// them all and hands most over as the others join. A window that opens during those
	// hand-overs measures them, not the crawl.
	t.Logf("%s: partitions settled on their owners %v after every one was served", label, r.waitBalanced(nodes).Round(100*time.Millisecond))
	time.Sleep(2 * time.Second)
	if steady > 0 {
		waitRobots(t, r.web, steady)
	}
	before := len(r.web.Requests())
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	stopPerf := perfWindow(t, filepath.Base(prof), pids)
	cpu0, server0 := procsCPU(t, procs), cpuOf(t, r.natsP.Process.Pid)
	rates := sampleRates(r.web, window, 5*time.Second)
	cpu1, server1 := procsCPU(t, procs), cpuOf(t, r.natsP.Process.Pid)
	stopPerf()
	end := time.Now()
	inWindow := r.web.Requests()[before:]
	pages := len(inWindow)
	robots := robotsRequests(inWindow)
	var cpu time.Duration
	for _, p := range procs {
		p.killed = true
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		p.done <- nil
		cpu += p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	}
	total := len(r.web.Requests())
	t.Logf("%s: JetStream writes per page: %s", label, streamWrites(t, r.nats, total))
	r.stopNATS()
	server := r.natsP.ProcessState.UserTime() + r.natsP.ProcessState.SystemTime()
	rate := float64(pages) / window.Seconds()
	perPage := cpu.Seconds() / float64(total)
	withServer := (cpu + server).Seconds() / float64(total)
	var winCPU time.Duration
	for i := range procs {
		winCPU += cpu1[i] - cpu0[i]
	}
	winNodes := winCPU.Seconds() / float64(pages)
	winServer := (server1 - server0).Seconds() / float64(pages)
	t.Logf("%s: %.1f pages/s aggregate = %.2f × %d × %d/s cap (per %v: %s; %d requests in all, the web has %d pages); embedded %.2f × cap",
		label, rate, rate/float64(nodes*perNode), nodes, perNode, 5*time.Second, rates, total, len(r.web.Reachable()), emb.rate/float64(perNode))
	t.Logf("%s: CPU per page over the window: nodes %.2f ms (%.2f× embedded), nodes + NATS server %.2f ms (%.2f×); per node: %s",
		label, winNodes*1000, winNodes/emb.window, (winNodes+winServer)*1000, (winNodes+winServer)/emb.window, perNodeCPU(procs, cpu0, cpu1, inWindow))
	// robots.txt requests cost a crawler little: a window with more of them looks cheaper
	// per request. Per page other than robots.txt, the two windows compare at equal work.
	winPages := winCPU.Seconds() / float64(pages-robots)
	t.Logf("%s: robots.txt requests in the window: %d of %d (embedded %d of %d); CPU per page without them: nodes %.2f ms (%.2f× embedded's %.2f ms)",
		label, robots, pages, emb.robots, emb.pages, winPages*1000, winPages/emb.noRobots, emb.noRobots*1000)
	if emb.side > 0 {
		t.Logf("%s: CPU per page over the window against as many embedded crawls side by side: nodes %.2f×, nodes + NATS server %.2f×",
			label, winNodes/emb.side, (winNodes+winServer)/emb.side)
	}
	t.Logf("%s: CPU per page, whole processes: nodes %.2f ms (%.2f× embedded), nodes + NATS server %.2f ms (%.2f× embedded)",
		label, perPage*1000, perPage/emb.whole, withServer*1000, withServer/emb.whole)
	// What a node warned about while it was measured (a lost membership, partitions
	// moving, JetStream errors; not its shut-down) explains a run whose rate fell short.
	for _, p := range procs {
		var warns []string
		for _, l := range lines(p.log.Name(), warnRe) {
			if at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(strings.Fields(l)[0], "time=")); err != nil || at.Before(end) {
				warns = append(warns, l)
			}
		}
		if len(warns) > 0 {
			t.Logf("%s: %s: %d warnings or errors while measured, the first: %s", label, p.id, len(warns), strings.Join(warns[:min(len(warns), 5)], "\n"))
		}
	}
	for _, p := range procs {
		if profile {
			t.Logf("%s:\n%s", p.id, profileLines(p.log.Name()))
		}
	}
	r.checkPolite() // polite and one node per host at a time, also while measuring
	return clusterWindow{from: before, to: before + pages, pages: pages, robots: robots, nodes: winNodes, server: winServer}
}

// waitBalanced waits, up to a minute, until each of the members members serves exactly
// the partitions cluster.Owner gives it, and says how long that took.
func (r *clusterRig) waitBalanced(members int) time.Duration {
	r.t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < time.Minute {
		out, _, code := run(r.t, nil, "cluster", "status", "--nats", r.nats, "--json")
		var st cluster.Status
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil && len(st.Members) == members && balanced(st) {
			return time.Since(start)
		}
		last = out
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Logf("the partitions did not settle on their owners within a minute; last status:\n%s", last)
	return time.Since(start)
}

// balanced says every member of st serves exactly the partitions cluster.Owner gives it.
func balanced(st cluster.Status) bool {
	ids := make([]string, len(st.Members))
	for i, m := range st.Members {
		ids[i] = m.Node
	}
	for _, m := range st.Members {
		want := 0
		for p := 0; p < st.Partitions; p++ {
			if cluster.Owner(p, ids) == m.Node {
				want++
				if !slices.Contains(m.Partitions, p) {
					return false
				}
			}
		}
		if len(m.Partitions) != want {
			return false
		}
	}
	return true
}

// warnRe matches a node's log lines of level WARN or ERROR.
var warnRe = regexp.MustCompile(`level=(WARN|ERROR)`)

// embeddedRun is what embedded crawls measured: pages/s (of each) and CPU per page over
// the measuring window, and CPU per page of the whole processes (start-up and shut-down
// too).
type embeddedRun struct {
	rate, window, whole float64
	pages, robots       int     // requests in the window, and how many of them were for robots.txt
	noRobots            float64 // window CPU per request other than robots.txt
	side                float64 // window CPU per page of as many crawls side by side as nodes (0: not measured)
}

// embeddedCPUPerPage runs n sonda crawls side by side, each on its own copy of the web at
// the same budget, and measures the same window after the same warm-up as a cluster's.
// n > 1 loads the machine with as many crawling processes as a cluster of n nodes has:
// what n nodes cost beyond it is the cluster's own work, not n processes sharing the
// cores.
//
// steady > 0 opens the window only once each crawl asked for steady robots.txt files
// instead of 3 s after the start (waitRobots), and stops the crawls after it.
func embeddedCPUPerPage(t *testing.T, wc testweb.Config, n, budget int, d time.Duration, steady int, prof string, profile bool) embeddedRun {
	const warmup = 3 * time.Second
	duration := d + warmup + 2*time.Second
	if steady > 0 {
		duration = d + 10*time.Minute // stopped after the window
	}
	type crawl struct {
		web *testweb.Web
		cmd *exec.Cmd
		out strings.Builder
	}
	crawls := make([]*crawl, n)
	for i := range crawls {
		c := &crawl{web: testweb.New(wc)}
		crawls[i] = c
		if _, err := c.web.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.web.Close()
		args := []string{"crawl", "--data", filepath.Join(t.TempDir(), "embedded"), "--allow-private", "--resolve", c.web.Resolve(),
			"--min-delay", clusterDelay.String(), "--concurrency", "8", "--budget", strconv.Itoa(budget) + "/s", "--revisit", "none", "--duration", duration.String()}
		for _, s := range c.web.Seeds() {
			args = append(args, "--seed", s)
		}
		if profile {
			args = append(args, "--profile", fmt.Sprintf("%s-%d.prof", prof, i))
		}
		c.cmd = exec.Command(sondaBin, args...)
		c.cmd.Env = append(os.Environ(), "SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=warn")
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if steady > 0 {
		for _, c := range crawls {
			waitRobots(t, c.web, steady)
		}
	} else {
		time.Sleep(warmup)
	}
	before := make([]int, n)
	var cpu0, cpu1 time.Duration
	var pids []int
	for _, c := range crawls {
		pids = append(pids, c.cmd.Process.Pid)
	}
	stopPerf := perfWindow(t, filepath.Base(prof), pids)
	for i, c := range crawls {
		before[i] = len(c.web.Requests())
		cpu0 += cpuOf(t, c.cmd.Process.Pid)
	}
	time.Sleep(d)
	stopPerf()
	var pages, total, robots int
	var whole time.Duration
	for i, c := range crawls {
		cpu1 += cpuOf(t, c.cmd.Process.Pid)
		reqs := c.web.Requests()[before[i]:]
		pages += len(reqs)
		robots += robotsRequests(reqs)
	}
	for _, c := range crawls {
		if steady > 0 {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
		if err := c.cmd.Wait(); err != nil && !(steady > 0 && c.cmd.ProcessState.ExitCode() == exitSignal) {
			t.Fatalf("sonda crawl: %v\n%s", err, c.out.String())
		}
		if profile {
			t.Logf("embedded:\n%s", c.out.String())
		}
		total += len(c.web.Requests())
		whole += c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
	}
	return embeddedRun{
		rate:     float64(pages) / d.Seconds() / float64(n),
		window:   (cpu1 - cpu0).Seconds() / float64(pages),
		whole:    whole.Seconds() / float64(total),
		pages:    pages,
		robots:   robots,
		noRobots: (cpu1 - cpu0).Seconds() / float64(pages-robots),
	}
}

// embeddedOverRequests runs sonda crawl on its own copy of the web wc, capped at budget
// pages/s, and measures its CPU per request from its from-th request to its to-th: the
// same stretch of the same crawl as a cluster's window (clusterWindow).
func embeddedOverRequests(t *testing.T, wc testweb.Config, budget, from, to int) (m struct {
	cpu           float64
	pages, robots int
}) {
	web := testweb.New(wc)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	limit := time.Duration(2*to/budget)*time.Second + time.Minute // far more than it needs
	args := []string{"crawl", "--data", filepath.Join(t.TempDir(), "embedded"), "--allow-private", "--resolve", web.Resolve(),
		"--min-delay", clusterDelay.String(), "--concurrency", "8", "--budget", strconv.Itoa(budget) + "/s", "--revisit", "none", "--duration", limit.String()}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	cmd := exec.Command(sondaBin, args...)
	cmd.Env = append(os.Environ(), "SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=warn")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// waitFor polls the web's log until it holds n requests and returns their count and the
	// crawl's CPU at that moment (a poll every 20 ms: under one request at the cap).
	waitFor := func(n int) (int, time.Duration) {
		for {
			select {
			case err := <-exited:
				t.Fatalf("sonda crawl ended after %d requests, before the %d-th: %v\n%s", len(web.Requests()), n, err, out.String())
			case <-time.After(20 * time.Millisecond):
			}
			if got := len(web.Requests()); got >= n {
				return got, cpuOf(t, cmd.Process.Pid)
			}
		}
	}
	n0, cpu0 := waitFor(from)
	n1, cpu1 := waitFor(to)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-exited
	reqs := web.Requests()[n0:n1]
	m.pages, m.robots = len(reqs), robotsRequests(reqs)
	m.cpu = (cpu1 - cpu0).Seconds() / float64(m.pages)
	return m
}

// waitRobots waits until the web saw n requests for robots.txt (a crawler asks for one on
// its first contact with each host): from then on a crawl of the bench web fetches pages,
// as a long crawl does most of the time, and two crawls' windows do the same work (see
// clusterWindow). It gives up after five minutes, saying so.
func waitRobots(t *testing.T, web *testweb.Web, n int) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 5*time.Minute; time.Sleep(100 * time.Millisecond) {
		if robotsRequests(web.Requests()) >= n {
			return
		}
	}
	t.Logf("the crawl asked for %d robots.txt files in five minutes, not %d: measuring anyway", robotsRequests(web.Requests()), n)
}

// robotsRequests counts the requests for robots.txt among reqs.
func robotsRequests(reqs []testweb.Request) int {
	n := 0
	for _, q := range reqs {
		if q.Path == "/robots.txt" {
			n++
		}
	}
	return n
}

// cpuOf is the CPU (user and system, every thread) process pid used so far, from
// /proc/PID/stat: the benchmark's window excludes start-up and shut-down, which a
// process's total (rusage) cannot.
func cpuOf(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU of process %d: %v (the benchmark needs Linux's /proc)", pid, err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // field 3 (state) on
	utime, err1 := strconv.ParseInt(f[11], 10, 64)           // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64)           // field 15
	if err1 != nil || err2 != nil {
		t.Fatalf("CPU of process %d: cannot read %q", pid, s)
	}
	const userHz = 100 // clock ticks per second of /proc's times (USER_HZ, fixed in Linux's ABI)
	return time.Duration(utime+stime) * time.Second / userHz
}

// procsCPU is cpuOf every node, in order.
func procsCPU(t *testing.T, procs []*nodeProc) []time.Duration {
	out := make([]time.Duration, len(procs))
	for i, p := range procs {
		out[i] = cpuOf(t, p.cmd.Process.Pid)
	}
	return out
}

// perNodeCPU says each node's pages and CPU per page over the window.
func perNodeCPU(procs []*nodeProc, cpu0, cpu1 []time.Duration, reqs []testweb.Request) string {
	pages := map[string]int{}
	for _, q := range reqs {
		pages[nodeOf(q)]++
	}
	var out []string
	for i, p := range procs {
		out = append(out, fmt.Sprintf("%s %d pages %.2f ms", p.id, pages[p.id], (cpu1[i]-cpu0[i]).Seconds()*1000/float64(max(pages[p.id], 1))))
	}
	return strings.Join(out, ", ")
}

// sampleRates waits d and says the web's request rate over each step of it.
func sampleRates(web *testweb.Web, d, step time.Duration) string {
	var out []string
	last := len(web.Requests())
	for end := time.Now().Add(d); time.Until(end) > 0; {
		s := min(step, time.Until(end))
		time.Sleep(s)
		n := len(web.Requests())
		out = append(out, strconv.Itoa(int(float64(n-last)/s.Seconds())))
		last = n
	}
	return strings.Join(out, " ")
}

// perfWindow starts perf record on the processes pids when SONDA_BENCH_PERF names a
// directory, writing DIR/name.perf, and returns what stops it (nothing to do otherwise).
func perfWindow(t *testing.T, name string, pids []int) func() {
	dir := os.Getenv("SONDA_BENCH_PERF")
	if dir == "" {
		return func() {}
	}
	var ps []string
	for _, p := range pids {
		ps = append(ps, strconv.Itoa(p))
	}
	cmd := exec.Command("perf", "record", "-q", "-F", "499", "-g", "-p", strings.Join(ps, ","), "-o", filepath.Join(dir, name+".perf"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("SONDA_BENCH_PERF: %v", err)
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	}
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
			if strings.HasSuffix(si.Config.Name, "_state") {
				// Pages' links: one message per page and partition of their targets before
				// session 27, one per page since (a crawl without revisits writes each once).
				if st, err := js.Stream(ctx, si.Config.Name); err == nil {
					if in, err := st.Info(ctx, jetstream.WithSubjectFilter("sonda.*.edges.>")); err == nil {
						out = append(out, fmt.Sprintf("of which pages' links %.2f", float64(len(in.State.Subjects))/float64(pages)))
					}
				}
			}
		case <-ctx.Done():
			return strings.Join(out, ", ")
		}
	}
}
