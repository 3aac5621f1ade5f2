package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/testweb"
)

// The cluster acceptance tests run real processes: a NATS server (`sonda nats`, or a
// standalone nats-server built from the module version sonda embeds), three or four
// `sonda node` processes, and the test web in this process as the oracle. Each node
// sends its own User-Agent, so the test web's request log tells which node fetched what.

const (
	clusterTTL   = 3 * time.Second
	clusterDelay = 30 * time.Millisecond
	clusterConc  = 4
	clusterWait  = 300 * time.Second // bound on any one cluster crawl, however busy the machine
	// clusterStall bounds a cluster crawl by its progress: it fails when no request
	// reached the test web for this long (a crawl needs about 15 s on an idle machine and
	// makes a request every few ms; termination detection takes a few heartbeats).
	clusterStall  = 60 * time.Second
	failOverGrace = 3 * time.Second // fail-over must take at most TTL + this
)

type clusterRig struct {
	t       *testing.T
	web     *testweb.Web
	nats    string // URL
	natsP   *exec.Cmd
	natsFn  func() *exec.Cmd // (re)starts the server
	bin     string           // the sonda binary of the nodes (sondaBin)
	stayUp  bool             // nodes run without --exit-when-done (stopped by the test)
	dir     string
	nodes   map[string]*nodeProc
	started time.Time // when the rig was set up
	mu      sync.Mutex
}

type nodeProc struct {
	id     string
	cmd    *exec.Cmd
	done   chan error
	log    *os.File
	exited time.Time // when the process ended
	killed bool
}

func newClusterRig(t *testing.T, standalone bool) *clusterRig {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a NATS server and crawler node processes")
	}
	return newClusterRigOn(t, standalone, clusterWebConfig())
}

// clusterWebConfig is the test web the cluster tests crawl.
func clusterWebConfig() testweb.Config {
	return testweb.Config{Seed: 7, Hosts: 24, PagesPerHost: 14, Disable: testweb.Slow | testweb.Traps,
		KeepHeaders: true, Retries: config.Default().Politeness.MaxRetries}
}

// newClusterRigOn is newClusterRig on a test web of the given configuration; natsArgs go
// to `sonda nats` (not to a standalone server).
func newClusterRigOn(t *testing.T, standalone bool, wc testweb.Config, natsArgs ...string) *clusterRig {
	t.Helper()
	web := testweb.New(wc)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	r := &clusterRig{t: t, web: web, dir: t.TempDir(), nodes: map[string]*nodeProc{}, started: time.Now(), bin: sondaBin}
	addr := freePort(t)
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	r.nats = "nats://" + addr
	jsDir := filepath.Join(r.dir, "jetstream")
	if standalone {
		bin := natsServerBin(t)
		r.natsFn = func() *exec.Cmd {
			return exec.Command(bin, "-js", "-sd", jsDir, "-a", "127.0.0.1", "-p", strconv.Itoa(port))
		}
	} else {
		r.natsFn = func() *exec.Cmd {
			return exec.Command(sondaBin, append([]string{"nats", "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--data", jsDir}, natsArgs...)...)
		}
	}
	r.startNATS()
	t.Cleanup(func() {
		if dir := os.Getenv("CLUSTER_TEST_LOGS"); t.Failed() && dir != "" {
			// Keep what explains a failure: the node and server logs, and the test web's
			// request log with the node that made each request.
			dst := filepath.Join(dir, fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()))
			_ = os.MkdirAll(dst, 0o755)
			logs, _ := filepath.Glob(filepath.Join(r.dir, "*.log"))
			for _, l := range logs {
				if b, err := os.ReadFile(l); err == nil {
					_ = os.WriteFile(filepath.Join(dst, filepath.Base(l)), b, 0o644)
				}
			}
			var sb strings.Builder
			for _, q := range r.web.Requests() {
				fmt.Fprintf(&sb, "%s %s %s %d %s\n", q.Start.UTC().Format("15:04:05.000000"), q.End.UTC().Format("15:04:05.000000"), nodeOf(q), q.Status, q.URL)
			}
			for k, n := range r.nodes {
				fmt.Fprintf(&sb, "node %s exited %s killed %v\n", k, n.exited.UTC().Format("15:04:05.000000"), n.killed)
			}
			_ = os.WriteFile(filepath.Join(dst, "requests.txt"), []byte(sb.String()), 0o644)
		}
		for _, n := range r.nodes {
			if n.cmd.ProcessState == nil {
				_ = n.cmd.Process.Signal(syscall.SIGCONT)
				_ = n.cmd.Process.Kill()
				<-n.done
			}
		}
		if r.natsP != nil {
			_ = r.natsP.Process.Kill()
			_ = r.natsP.Wait()
		}
	})
	return r
}

var (
	natsBinOnce sync.Once
	natsBinPath string
	natsBinErr  error
)

// natsServerBin builds the standalone nats-server at the version in go.mod.
func natsServerBin(t *testing.T) string {
	natsBinOnce.Do(func() {
		natsBinPath = filepath.Join(filepath.Dir(sondaBin), "nats-server")
		out, err := exec.Command("go", "build", "-o", natsBinPath, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			natsBinErr = fmt.Errorf("build nats-server: %v\n%s", err, out)
		}
	})
	if natsBinErr != nil {
		t.Fatal(natsBinErr)
	}
	return natsBinPath
}

func (r *clusterRig) startNATS() {
	r.t.Helper()
	cmd := r.natsFn()
	f, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("nats-%d.log", time.Now().UnixNano())))
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.natsP = cmd
	addr := strings.TrimPrefix(r.nats, "nats://")
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("NATS server did not listen on %s within 30s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *clusterRig) stopNATS() {
	_ = r.natsP.Process.Signal(syscall.SIGTERM)
	_ = r.natsP.Wait()
}

// start launches node id on its own data directory; seeds only on the first.
func (r *clusterRig) start(id string, seeds bool, extra ...string) *nodeProc {
	r.t.Helper()
	args := []string{"node", "--nats", r.nats, "--node-id", id, "--data", filepath.Join(r.dir, "node-"+id),
		"--allow-private", "--resolve", r.web.Resolve(), "--min-delay", clusterDelay.String(),
		"--concurrency", strconv.Itoa(clusterConc)}
	if !r.stayUp {
		args = append(args, "--exit-when-done")
	}
	if seeds {
		for _, s := range r.web.Seeds() {
			args = append(args, "--seed", s)
		}
	}
	args = append(args, extra...)
	cmd := exec.Command(r.bin, args...)
	cmd.Env = append(os.Environ(), clusterCrawlEnv(id)...)
	f, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("node-%s-%d.log", id, time.Now().UnixNano())))
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	n := &nodeProc{id: id, cmd: cmd, done: make(chan error, 1), log: f}
	go func() {
		err := cmd.Wait()
		n.exited = time.Now()
		n.done <- err
	}()
	r.mu.Lock()
	r.nodes[id+strconv.Itoa(len(r.nodes))] = n
	r.mu.Unlock()
	return n
}

// clusterCrawlEnv is the crawl settings of the cluster tests' nodes (the single-node crawl
// they are compared with uses the same), with the User-Agent naming id.
func clusterCrawlEnv(id string) []string {
	return []string{"SONDA_SCOPE_FOLLOW=any", "SONDA_FETCH_USER_AGENT=sonda-node-" + id,
		"SONDA_CLUSTER_TTL=" + clusterTTL.String(), "SONDA_CLUSTER_PARTITIONS=32",
		"SONDA_POLITENESS_RETRY_DELAY=50ms", "SONDA_ROBOTS_RETRY_DELAY=50ms", "SONDA_ROBOTS_MAX_FAILURES=2",
		"SONDA_FETCH_FIRST_BYTE_TIMEOUT=5s", "SONDA_LOG_LEVEL=info"}
}

// wait waits for every given node to exit 0. It gives up at deadline, or sooner when the
// crawl stalls: no request reached the test web for clusterStall.
func (r *clusterRig) wait(deadline time.Time, nodes ...*nodeProc) {
	r.t.Helper()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for _, n := range nodes {
	waiting:
		for {
			select {
			case err := <-n.done:
				n.done <- err
				if err != nil {
					r.t.Errorf("node %s: %v\n%s", n.id, err, tail(n.log.Name(), 40))
				}
				break waiting
			case <-tick.C:
				idle := time.Since(r.lastRequest())
				if idle < clusterStall && time.Now().Before(deadline) {
					continue
				}
				r.t.Fatalf("node %s did not finish (no request for %v, deadline %v); its log:\n%s\n%d of %d reachable pages fetched",
					n.id, idle.Round(time.Second), clusterWait, tail(n.log.Name(), 40), r.fetchedReachable(), len(r.web.Reachable()))
			}
		}
	}
}

// lastRequest is when the last request to the test web started (the rig's start before any).
func (r *clusterRig) lastRequest() time.Time {
	last := r.started
	for _, q := range r.web.Requests() {
		if q.Start.After(last) {
			last = q.Start
		}
	}
	return last
}

// signal sends sig to node n; a node that already exited fails the test with its log.
func (r *clusterRig) signal(n *nodeProc, sig syscall.Signal) {
	r.t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		select {
		case werr := <-n.done:
			n.done <- werr
			r.t.Fatalf("node %s: %v: it had exited (%v); its log:\n%s", n.id, sig, werr, tail(n.log.Name(), 60))
		case <-time.After(5 * time.Second):
			r.t.Fatalf("node %s: %v: %v", n.id, sig, err)
		}
	}
}

func tail(path string, lines int) string {
	b, _ := os.ReadFile(path)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// fetchedReachable counts reachable pages fetched at least once.
func (r *clusterRig) fetchedReachable() int {
	counts := r.web.Counts()
	n := 0
	for _, u := range r.web.Reachable() {
		if counts[u] > 0 {
			n++
		}
	}
	return n
}

// waitProgress waits until share of the reachable pages were fetched.
func (r *clusterRig) waitProgress(share float64) {
	r.t.Helper()
	want := int(share * float64(len(r.web.Reachable())))
	deadline := time.Now().Add(clusterWait)
	for r.fetchedReachable() < want {
		if idle := time.Since(r.lastRequest()); idle > clusterStall || time.Now().After(deadline) {
			r.t.Fatalf("the crawl did not reach %.0f%% (no request for %v, deadline %v)", 100*share, idle.Round(time.Second), clusterWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func nodeOf(req testweb.Request) string {
	return strings.TrimPrefix(req.Header.Get("User-Agent"), "sonda-node-")
}

// check verifies the oracle's verdict: complete, nothing disallowed, polite cluster-wide,
// and one node at a time per host. extraOK is how many refetches are allowed (in flight
// at a kill); it returns the refetches seen.
func (r *clusterRig) check(extraOK int) int {
	r.t.Helper()
	extra := r.oracle()
	if extra > extraOK {
		r.t.Errorf("%d pages fetched more than once, want at most %d", extra, extraOK)
	}
	// Termination: a node that exited by itself (cluster done) did so after the last
	// request of the whole cluster.
	var last time.Time
	for _, q := range r.web.Requests() {
		if q.Start.After(last) {
			last = q.Start
		}
	}
	r.mu.Lock()
	for _, n := range r.nodes {
		if !n.killed && !n.exited.IsZero() && n.exited.Before(last) {
			r.t.Errorf("node %s exited (cluster done) %v before the cluster's last request", n.id, last.Sub(n.exited))
		}
	}
	r.mu.Unlock()
	r.checkPolite()
	return extra
}

// oracle reports the test web's verdict on the fetches (missing pages, disallowed ones)
// as errors, except pages fetched more often than needed, whose surplus it returns.
func (r *clusterRig) oracle() (extra int) {
	r.t.Helper()
	for _, p := range r.web.CheckFetches() {
		if m := timesRe.FindStringSubmatch(p); m != nil {
			got, _ := strconv.Atoi(m[1])
			want, _ := strconv.Atoi(m[2])
			if got > want {
				extra += got - want
				continue
			}
		}
		r.t.Errorf("oracle: %s", p)
	}
	return extra
}

// checkPolite checks politeness cluster-wide and that two nodes never fetch a host at once.
func (r *clusterRig) checkPolite() {
	r.t.Helper()
	for _, v := range r.web.CheckPoliteness(clusterDelay, 1) {
		r.t.Errorf("politeness: %s (nodes %s then %s)", v, nodeOf(v.Prev), nodeOf(v.Next))
	}
	// One node at a time per host: two nodes' requests to a host never overlap.
	byHost := map[string][]testweb.Request{}
	for _, q := range r.web.Requests() {
		byHost[q.Host] = append(byHost[q.Host], q)
	}
	for h, reqs := range byHost {
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
		for i := 1; i < len(reqs); i++ {
			a, b := reqs[i-1], reqs[i]
			if nodeOf(a) != nodeOf(b) && b.Start.Before(a.End.Add(-testweb.PolitenessTolerance)) {
				r.t.Errorf("%s fetched by %s and %s at once", h, nodeOf(a), nodeOf(b))
			}
		}
	}
}

// checkStatus waits until `sonda cluster status` shows members nodes serving every
// partition between them.
func (r *clusterRig) checkStatus(members int) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		out, errOut, code := run(r.t, nil, "cluster", "status", "--nats", r.nats, "--json")
		if code != 0 && strings.Contains(errOut, "no cluster of that name") {
			time.Sleep(100 * time.Millisecond) // no node created it yet
			continue
		}
		if code != 0 {
			r.t.Fatalf("cluster status exited %d: %s", code, errOut)
		}
		var st cluster.Status
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			r.t.Fatalf("cluster status --json: %v\n%s", err, out)
		}
		if len(st.Members) == members && st.Unassigned == 0 && st.Partitions == 32 {
			text, _, _ := run(r.t, nil, "cluster", "status", "--nats", r.nats)
			if !strings.Contains(text, "total") || !strings.Contains(text, "pages/s") {
				r.t.Errorf("cluster status table:\n%s", text)
			}
			r.checkSearchShards(members)
			return
		}
		last = out
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Errorf("cluster status never showed %d members serving all 32 partitions; last:\n%s", members, last)
}

// checkSearchShards checks every node answers the scatter-gather search's pings with its
// shard (package cluster/search).
func (r *clusterRig) checkSearchShards(members int) {
	r.t.Helper()
	nc, err := nats.Connect(r.nats)
	if err != nil {
		r.t.Fatal(err)
	}
	defer nc.Close()
	dir, err := search.NewDirectory(nc, "", 100*time.Millisecond, time.Minute, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	defer dir.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ids, _ := dir.Members(ctx)
		cancel()
		if len(ids) == members {
			return
		}
		if time.Now().After(deadline) {
			r.t.Errorf("search shards answering: %v, want %d nodes", ids, members)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hostsBy lists, per node, the hosts it fetched.
func (r *clusterRig) hostsBy() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, q := range r.web.Requests() {
		n := nodeOf(q)
		if out[n] == nil {
			out[n] = map[string]bool{}
		}
		out[n][q.Host] = true
	}
	return out
}

func TestClusterCrawl(t *testing.T) {
	r := newClusterRig(t, false)
	ui := startServeNATS(t, r.nats, "sonda", "") // the cluster's dashboard, before any node
	metrics := freePort(t)
	a := r.start("a", true, "--metrics-addr", metrics)
	b := r.start("b", false)
	c := r.start("c", false)
	r.checkStatus(3)
	// The dashboard shows the nodes and the partitions they serve, as cluster status does.
	var page string
	waitFor(t, 20*time.Second, "the dashboard to show 3 nodes serving 32 partitions", func() bool {
		_, page = httpDo0(ui + "/dashboard")
		return strings.Contains(page, "3 nodes, 32 partitions,") && !strings.Contains(page, "not served") &&
			strings.Contains(page, `<th scope="row">a</th>`) && strings.Contains(page, `<th scope="row">b</th>`) && strings.Contains(page, `<th scope="row">c</th>`)
	})
	text := waitMetrics(t, "http://"+metrics+"/metrics")
	for _, want := range []string{`sonda_cluster_partitions{cluster="sonda",node="a"}`, "sonda_cluster_outbox_records", "sonda_cluster_failovers_total",
		"sonda_cluster_routing_lag_seconds_count", "sonda_fetch_duration_seconds"} {
		if !strings.Contains(text, want) {
			t.Errorf("node metrics lack %s", want)
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A node answers searches from its index: its Go memory limit counts the search
		// caches' bounds (facet 128 MiB, forward 256, postings 128) on top of
		// memory-limit; serve --nats opens no index and keeps memory-limit.
		if got, want := goMemoryLimit(t, text), int64(384+128+256+128)<<20; got != want {
			t.Errorf("node's Go memory limit %d, want %d", got, want)
		}
		if _, ms := httpDo0(ui + "/metrics"); goMemoryLimit(t, ms) != 384<<20 {
			t.Errorf("serve --nats: Go memory limit %d, want memory-limit's 384 MiB", goMemoryLimit(t, ms))
		}
	}
	r.wait(time.Now().Add(clusterWait), a, b, c)
	r.check(0)
	by := r.hostsBy()
	if len(by) != 3 {
		t.Errorf("nodes that fetched: %d, want 3 (every node owns a share)", len(by))
	}
	t.Logf("%d reachable pages; hosts per node: a %d, b %d, c %d", len(r.web.Reachable()), len(by["a"]), len(by["b"]), len(by["c"]))
}

func TestClusterStandaloneNATS(t *testing.T) {
	r := newClusterRig(t, true)
	a := r.start("a", true)
	b := r.start("b", false)
	c := r.start("c", false)
	r.wait(time.Now().Add(clusterWait), a, b, c)
	r.check(0)
}

var failOverRe = regexp.MustCompile(`took over a partition`)

// TestClusterKillNode kills one node with SIGKILL at about 40% and never restarts it: the
// others take its hosts after the TTL and rebuild its queues from JetStream.
func TestClusterKillNode(t *testing.T) {
	r := newClusterRig(t, false)
	a := r.start("a", true)
	b := r.start("b", false)
	c := r.start("c", false)
	r.waitProgress(0.4)
	b.killed = true
	r.signal(b, syscall.SIGKILL)
	killed := time.Now()
	<-b.done
	b.done <- nil
	r.wait(time.Now().Add(clusterWait), a, c)
	// The design's bound (cluster.Options.Unconfirmed, twice the concurrency in sonda
	// node): a dead node's next owners fetch again only the pages it was fetching and those
	// whose completion JetStream had not acknowledged yet.
	extra := r.check(2 * clusterConc)
	// Fail-over time: from the kill to the first request another node made to a host b
	// had fetched.
	hostsB := map[string]bool{}
	first := time.Time{}
	for _, q := range r.web.Requests() {
		if nodeOf(q) == "b" {
			hostsB[q.Host] = true
		}
	}
	for _, q := range r.web.Requests() {
		if nodeOf(q) != "b" && hostsB[q.Host] && q.Start.After(killed) && (first.IsZero() || q.Start.Before(first)) {
			first = q.Start
		}
	}
	if first.IsZero() {
		t.Log("no host of the killed node had work left")
		return
	}
	took := first.Sub(killed)
	t.Logf("fail-over (kill -9 to first fetch of a moved host): %v, TTL %v; %d pages refetched", took.Round(time.Millisecond), clusterTTL, extra)
	if took > clusterTTL+failOverGrace {
		t.Errorf("fail-over took %v, want at most TTL %v + %v (killed at %s)", took, clusterTTL, failOverGrace, killed.UTC().Format("15:04:05.000"))
		for _, n := range []*nodeProc{a, c} {
			t.Logf("node %s:\n%s", n.id, strings.Join(lines(n.log.Name(), failOverRe), "\n"))
		}
	}
}

// TestClusterRestartJoinPause: a node killed and restarted on its data directory takes
// its share back, a fourth node joins mid-crawl, and a node paused past its TTL never
// fetches a host that moved while it was paused.
func TestClusterRestartJoinPause(t *testing.T) {
	r := newClusterRig(t, false)
	a := r.start("a", true)
	b := r.start("b", false)
	c := r.start("c", false)
	r.waitProgress(0.2)
	b.killed = true
	r.signal(b, syscall.SIGKILL)
	<-b.done
	b.done <- nil
	b2 := r.start("b", false) // restarted on the same data directory
	d := r.start("d", false)  // joins mid-crawl
	r.waitProgress(0.5)
	r.signal(c, syscall.SIGSTOP)
	paused := time.Now()
	time.Sleep(clusterTTL + clusterTTL/2) // past its TTL: its hosts move
	r.signal(c, syscall.SIGCONT)
	r.wait(time.Now().Add(clusterWait), a, b2, c, d)
	// Two nodes lost their partitions without handing them over (the kill and the
	// pause), each costing at most its unconfirmed pages (2 × concurrency, see
	// TestClusterKillNode).
	r.check(4 * clusterConc)
	// A host moved off c while it was paused, and c may take it back once it rejoined,
	// after the other node handed it over: after the pause, once c fetched a host no other
	// node may fetch it again (runs X, c, X or c, X mean c fetched a host another node
	// owned). Hosts may move between the other nodes (b and d joined just before).
	runs := map[string][]string{}
	for _, q := range r.web.Requests() { // in start order
		n := nodeOf(q)
		if q.Start.Before(paused) || n == "c" && q.Start.Before(paused.Add(clusterTTL/2)) {
			continue // c's requests still in transit when it was stopped (no one else may own its hosts before a TTL)
		}
		if rs := runs[q.Host]; len(rs) == 0 || rs[len(rs)-1] != n {
			runs[q.Host] = append(rs, n)
		}
	}
	for h, rs := range runs {
		if i := slices.Index(rs, "c"); i >= 0 && i != len(rs)-1 {
			t.Errorf("%s after the pause was fetched by %v: the paused node fetched a host that had moved", h, rs)
		}
	}
	by := r.hostsBy()
	if len(by["d"]) == 0 {
		t.Error("the node that joined mid-crawl fetched nothing")
	}
}

// TestClusterNATSRestart stops the NATS server mid-crawl and starts it again on the same
// directory: the nodes wait, reconnect and finish with nothing lost.
func TestClusterNATSRestart(t *testing.T) {
	r := newClusterRig(t, false)
	a := r.start("a", true)
	b := r.start("b", false)
	c := r.start("c", false)
	r.waitProgress(0.3)
	r.stopNATS()
	time.Sleep(time.Second)
	r.startNATS()
	r.wait(time.Now().Add(clusterWait), a, b, c)
	r.check(3 * clusterConc)
}

// lines returns the lines of a log file matching re.
func lines(path string, re *regexp.Regexp) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if re.MatchString(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// TestClusterErrors: no server, or a server without JetStream, gives an error that says
// what to do.
func TestClusterErrors(t *testing.T) {
	dead := "nats://" + freePort(t)
	_, errOut, code := run(t, nil, "cluster", "status", "--nats", dead)
	if code != 1 || !strings.Contains(errOut, "cannot reach the NATS server") {
		t.Errorf("status without a server: exit %d, %s", code, errOut)
	}
	_, errOut, code = run(t, nil, "node", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "--nats URL") {
		t.Errorf("node without --nats: exit %d, %s", code, errOut)
	}
	_, errOut, code = run(t, nil, "node", "--nats", dead, "--exit-when-done", "--revisit", "uniform", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "revisit") {
		t.Errorf("node --exit-when-done with a revisit policy: exit %d, %s", code, errOut)
	}
}

// TestDemoNodes runs `sonda demo --nodes 2 --no-serve`: a cluster on the test web, judged
// complete and polite by the test web itself.
func TestDemoNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server and node processes")
	}
	out, errOut, code := run(t, nil, "demo", "--nodes", "2", "--no-serve", "--hosts", "8", "--data", filepath.Join(t.TempDir(), "demo"))
	if code != 0 {
		t.Fatalf("demo --nodes exited %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, " 0 problems; politeness: 0 violations") || !strings.Contains(out, "cluster sonda: 2 members") {
		t.Errorf("demo --nodes output:\n%s", out)
	}
}
