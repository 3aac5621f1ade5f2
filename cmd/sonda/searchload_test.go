package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/internal/procstat"
	"github.com/sonda-search/sonda/internal/synthcorpus"
	"github.com/sonda-search/sonda/store"
)

// searchData makes (or, when dir already holds them, reuses) a data directory whose index
// holds pages 0..n-1 of synthcorpus seed 1 and whose store is empty: what sonda serve
// --read-only needs to answer searches.
func searchData(t testing.TB, dir string, n int) {
	t.Helper()
	db, err := store.Open(crawl.StateDir(dir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(index.DataDir(dir), index.Options{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	switch have := ix.Stats().Documents; have {
	case int64(n):
		return
	case 0:
	default:
		t.Fatalf("%s holds %d pages, not %d: remove it", dir, have, n)
	}
	c := synthcorpus.New(1)
	batch := make([]index.Doc, 0, 1000)
	for i := range n {
		p := c.Page(i)
		batch = append(batch, index.Doc{ID: p.URL, URL: p.URL, Host: p.Host, Lang: "en", ContentType: "text/html",
			Title: p.Title, Body: p.Body, Headings: p.Headings, Fetched: p.Fetched, Relevance: -1})
		if len(batch) == cap(batch) || i == n-1 {
			if err := ix.Put(context.Background(), batch...); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// startReadOnlyServe starts `sonda serve --read-only` on data with env (SONDA_BENCH
// variables removed: the binary refuses unknown SONDA_ settings) and waits until it
// listens; it is stopped with SIGTERM when the test ends, or earlier by the caller.
func startReadOnlyServe(t testing.TB, data string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, base, _ := startServeBin(t, sondaBin, data, nil, env...)
	return cmd, base
}

// startServeBin is startReadOnlyServe with the sonda binary bin and more arguments; it
// also returns the server's output.
func startServeBin(t testing.TB, bin, data string, args []string, env ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	listen := freePortTB(t)
	cmd := exec.Command(bin, append([]string{"serve", "--read-only", "--data", data, "--addr", listen}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SONDA_BENCH") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"SONDA_LOG_LEVEL=warn", "SONDA_SERVE_TOKEN=read-only-serve-token-0123"}, env...)...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "press Ctrl-C") {
		select {
		case <-exited:
			t.Fatalf("sonda serve --read-only exited: %s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("sonda serve --read-only did not start in 60 s: %s", out.String())
		}
	}
	return cmd, "http://" + listen, out
}

func freePortTB(t testing.TB) string {
	if tt, ok := t.(*testing.T); ok {
		return freePort(tt)
	}
	t.Fatal("freePortTB needs a *testing.T")
	return ""
}

// loadReport is what a search load run measured.
type loadReport struct {
	clients  int
	took     time.Duration
	codes    map[int]int
	partial  int
	busyOK   bool // every 503 had Retry-After and said the server is busy
	all      []time.Duration
	byKind   map[string][]time.Duration
	rss      []int64 // the server's RSS, sampled through the run
	failures []string
	// What the run cost, beside what it waited for: the CPU time the server process and
	// this (client) process used, how busy the machine's cores were, and its load average
	// at the start and end. A run on a shared machine is slow either because a request
	// costs much CPU or because the server got little of it; these tell which.
	serverCPU, clientCPU     time.Duration
	machineBusy, machineTime time.Duration // summed over cores
	loadStart, loadEnd       string
}

func (r *loadReport) rate() float64 { return float64(len(r.all)) / r.took.Seconds() }

// cpuPerAnswer is the server's CPU time per request answered 200: what a search costs,
// whatever the machine's load. The few 503 answers' CPU counts too, so it errs high.
func (r *loadReport) cpuPerAnswer() time.Duration {
	return r.serverCPU / time.Duration(max(1, r.codes[200]))
}

// perCPUSecond is how many requests the server answers per second of its CPU: its
// capacity on one core of its own.
func (r *loadReport) perCPUSecond() float64 {
	return float64(r.codes[200]) / max(r.serverCPU.Seconds(), 1e-9)
}

// cores is how many cores the server had on average over the run.
func (r *loadReport) cores() float64 { return r.serverCPU.Seconds() / r.took.Seconds() }

func (r *loadReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, %d requests in %s: %.0f requests/s; p50 %s, p90 %s, p99 %s, max %s; statuses %v; partial %d\n",
		r.clients, len(r.all), r.took.Round(time.Millisecond), r.rate(), pct(r.all, 0.5), pct(r.all, 0.9), pct(r.all, 0.99), pct(r.all, 1), r.codes, r.partial)
	kinds := make([]string, 0, len(r.byKind))
	for k := range r.byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		l := r.byKind[k]
		fmt.Fprintf(&b, "  %-9s %6d requests  p50 %8s  p99 %8s\n", k, len(l), pct(l, 0.5), pct(l, 0.99))
	}
	if r.serverCPU > 0 {
		cpus := r.machineTime.Seconds() / r.took.Seconds()
		fmt.Fprintf(&b, "  server CPU %.1f s: %.2f ms per answer, %.0f answers per CPU-second, %.2f of %.0f cores on average; client CPU %.1f s; machine busy %.0f%% (others %.2f cores); load average %s → %s\n",
			r.serverCPU.Seconds(), float64(r.cpuPerAnswer().Microseconds())/1e3, r.perCPUSecond(), r.cores(), cpus, r.clientCPU.Seconds(),
			100*r.machineBusy.Seconds()/max(r.machineTime.Seconds(), 1e-9), (r.machineBusy-r.serverCPU-r.clientCPU).Seconds()/r.took.Seconds(),
			r.loadStart, r.loadEnd)
	}
	if len(r.rss) > 0 {
		fmt.Fprintf(&b, "  server RSS: first %d MiB, max %d MiB, last %d MiB (%d samples)", r.rss[0]>>20, slices.Max(r.rss)>>20, r.rss[len(r.rss)-1]>>20, len(r.rss))
	}
	return b.String()
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[max(0, min(len(s)-1, i))].Round(10 * time.Microsecond)
}

// searchLoad sends the queries of log, in order, from clients concurrent clients to base's
// /api/search, each client sending its next request when the last one is answered, until
// requests have been sent or d has passed (whichever is set), sampling the RSS of the
// server process pid every 250 ms.
func searchLoad(base string, pid int, log []synthcorpus.Query, clients, requests int, d time.Duration) *loadReport {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	r := &loadReport{clients: clients, codes: map[int]int{}, busyOK: true, byKind: map[string][]time.Duration{}}
	var mu sync.Mutex
	var next atomic.Int64
	r.loadStart = procstat.LoadAverage()
	cpu0, self0 := procstat.CPUOf(pid), procstat.CPUOf(os.Getpid())
	busy0, total0 := procstat.MachineCPU()
	start := time.Now()
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss := procstat.RSSOf(pid); rss > 0 {
				mu.Lock()
				r.rss = append(r.rss, rss)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if requests > 0 && i >= requests || d > 0 && time.Since(start) > d {
					return
				}
				q := log[i%len(log)]
				t0 := time.Now()
				res, err := client.Get(base + "/api/search?q=" + url.QueryEscape(q.Text))
				var body []byte
				if err == nil {
					body, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				lat := time.Since(t0)
				var out struct {
					Partial bool    `json:"partial"`
					Took    float64 `json:"took_ms"`
					Error   string  `json:"error"`
				}
				mu.Lock()
				switch {
				case err != nil:
					r.codes[0]++
					if len(r.failures) < 5 {
						r.failures = append(r.failures, err.Error())
					}
				default:
					r.codes[res.StatusCode]++
					json.Unmarshal(body, &out)
					if out.Partial {
						r.partial++
					}
					if res.StatusCode == 503 && (res.Header.Get("Retry-After") == "" || !strings.Contains(out.Error, "busy")) {
						r.busyOK = false
					}
					if res.StatusCode != 200 && res.StatusCode != 503 && len(r.failures) < 5 {
						r.failures = append(r.failures, fmt.Sprintf("%q: %d %s", q.Text, res.StatusCode, body))
					}
				}
				r.all = append(r.all, lat)
				r.byKind[q.Kind] = append(r.byKind[q.Kind], lat)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.took = time.Since(start)
	r.serverCPU, r.clientCPU = procstat.CPUOf(pid)-cpu0, procstat.CPUOf(os.Getpid())-self0
	busy1, total1 := procstat.MachineCPU()
	r.machineBusy, r.machineTime = busy1-busy0, total1-total0
	r.loadEnd = procstat.LoadAverage()
	close(stop)
	<-sampled
	return r
}

// TestSearchUnderLoadGuard is the short run of the search load test: two `sonda serve
// --read-only` processes share one data directory (3,000 synthetic pages); one is driven
// by 8 clients with a search log (short queries, questions, a few queries of dozens of
// OR-ed words, repeated as a log repeats them) and must answer every request, over HTTP;
// the other has a time budget of a nanosecond and must answer a heavy query with the best
// results it found, marked partial. Neither may change a byte of the directory. The full
// measurement (100,000 pages, 32 clients) is TestSearchUnderLoad, behind SONDA_BENCH=search.
func TestSearchUnderLoadGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers and drives one with 8 clients")
	}
	t.Parallel()
	data := t.TempDir()
	searchData(t, data, 3000)
	before := snapshotDir(t, data)
	prof := filepath.Join(t.TempDir(), "serve.prof")
	srv, base, srvOut := startServeBin(t, sondaBin, data, []string{"--profile", prof}, "SONDA_SEARCH_TIME_BUDGET=1m") // never cut, however busy the machine
	cut, cutBase := startReadOnlyServe(t, data, "SONDA_SEARCH_TIME_BUDGET=1ns")

	heavy := strings.Join(strings.Fields(synthcorpus.New(2).Words(40)), " OR ")
	code, body := httpDo(t, "GET", cutBase+"/api/search?q="+url.QueryEscape(heavy), "", "")
	var res struct {
		Partial bool
		Total   int
		Hits    []json.RawMessage
	}
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || !res.Partial || len(res.Hits) != 10 || res.Total >= 3000 {
		t.Errorf("a heavy query over its time budget: %d, partial %v, %d hits, total %d; want 200, partial, a full page, a lower bound (%.200s)",
			code, res.Partial, len(res.Hits), res.Total, body)
	}
	code, body = httpDo(t, "GET", base+"/api/search?q="+url.QueryEscape(heavy), "", "")
	res.Partial = false
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Partial {
		t.Errorf("the same query within its budget: %d, partial %v", code, res.Partial)
	}
	if code, body := httpDo(t, "POST", base+"/api/crawl/start", "read-only-serve-token-0123", "{}"); code != 503 {
		t.Errorf("a read-only server asked to crawl: %d %s; want 503", code, body)
	}

	log := synthcorpus.New(1).Log(1500, 800)
	rep := searchLoad(base, srv.Process.Pid, log, 8, len(log), 0)
	t.Log(rep)
	if rep.codes[200] < len(log)*9/10 || rep.codes[200]+rep.codes[503] != len(log) || !rep.busyOK {
		t.Errorf("under load: statuses %v (want every request answered, at most a tenth 503 busy with Retry-After); %v", rep.codes, rep.failures)
	}
	for _, c := range []*exec.Cmd{srv, cut} {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range []*exec.Cmd{srv, cut} {
		waitExit(t, c)
	}
	// serve --profile wrote its profile on the way out, and said where the CPU went.
	for wait := time.Now().Add(5 * time.Second); !strings.Contains(srvOut.String(), "matching, scoring (Bleve)") && time.Now().Before(wait); {
		time.Sleep(20 * time.Millisecond)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 || !strings.Contains(srvOut.String(), "CPU profile in "+prof) ||
		!strings.Contains(srvOut.String(), "matching, scoring (Bleve)") {
		t.Errorf("serve --profile %s: %v; output:\n%s", prof, err, srvOut.String())
	}
	// and the allocation profile beside it.
	if st, err := os.Stat(prof + ".allocs"); err != nil || st.Size() == 0 || !strings.Contains(srvOut.String(), "allocations in "+prof+".allocs") {
		t.Errorf("serve --profile %s wrote no allocation profile: %v; output:\n%s", prof, err, srvOut.String())
	}
	if d := before.Diff(snapshotDir(t, data)); len(d) > 0 {
		t.Errorf("read-only servers changed the data directory: %v", d)
	}
}

// waitExit waits for a started process that a cleanup also waits for.
func waitExit(t *testing.T, c *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(c.Process.Pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exit within 20 s of SIGTERM", c.Process.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSearchUnderLoad measures search under load (issue 14 §5): `sonda serve --read-only`
// over 100,000 synthetic pages (SONDA_BENCH_DOCS), driven over loopback HTTP by 32
// clients (SONDA_BENCH_CLIENTS) for 30 s each (SONDA_BENCH_SECONDS) with a search log of
// short queries, questions and heavy OR queries, repeated as logs repeat (see
// synthcorpus.Log): with the default settings, with the result cache off (the plain
// baseline), with neither cache nor time budget (the full cost of every search), and the
// same without feedback; SONDA_BENCH_ONLY=defaults, cache-off, cost or cost-nofeedback
// runs one of them. It reports
// requests/s, latency percentiles by kind of query, statuses, partial answers, the
// server's RSS through the run, and what the run cost: the server's CPU time per answer
// and answers per CPU-second, the cores it got, how busy the machine was and its load
// average, so that a figure measured on a shared machine says whether searches were
// costly or the server starved. The index is built once in SONDA_BENCH_DIR (default: a
// temporary folder) and reused when it is there:
//
//	SONDA_BENCH=search SONDA_BENCH_DIR=/tmp/sonda-load go test -run TestSearchUnderLoad -v -timeout 60m ./cmd/sonda
//
// SONDA_BENCH_BEFORE=BIN runs each configuration with that sonda binary first, then with
// this tree's, one after the other on the same index (a before/after comparison under the
// same conditions); SONDA_BENCH_PROFILE=DIR writes a CPU profile of each run of this
// tree's server there (serve --profile) and logs the CPU per step of a search.
func TestSearchUnderLoad(t *testing.T) {
	if os.Getenv("SONDA_BENCH") != "search" {
		t.Skip("a benchmark: set SONDA_BENCH=search")
	}
	envInt := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
			return v
		}
		return def
	}
	docs, clients, seconds := envInt("SONDA_BENCH_DOCS", 100000), envInt("SONDA_BENCH_CLIENTS", 32), envInt("SONDA_BENCH_SECONDS", 30)
	data := os.Getenv("SONDA_BENCH_DIR")
	if data == "" {
		data = filepath.Join(t.TempDir(), "data")
	}
	t0 := time.Now()
	searchData(t, data, docs)
	t.Logf("%d pages in %s (built or reused in %s)", docs, data, time.Since(t0).Round(time.Second))
	log := synthcorpus.New(1).Log(200000, 100000)
	type build struct{ name, bin string }
	builds := []build{{"", sondaBin}}
	if before := os.Getenv("SONDA_BENCH_BEFORE"); before != "" {
		builds = []build{{"before", before}, {"after", sondaBin}}
	}
	profDir := os.Getenv("SONDA_BENCH_PROFILE")
	only := os.Getenv("SONDA_BENCH_ONLY")
	for _, run := range []struct {
		name, short string
		env         []string
	}{
		{"defaults", "defaults", nil},
		{"result cache off", "cache-off", []string{"SONDA_SEARCH_CACHE=-1"}},
		// What every search costs in full: no cache, and no time budget, which a starved
		// server reaches more often, cutting searches short (and cheap).
		{"cost (no cache, no budget)", "cost", []string{"SONDA_SEARCH_CACHE=-1", "SONDA_SEARCH_TIME_BUDGET=1m"}},
		// The same without pseudo-relevance feedback, which is about half of it.
		{"cost, feedback off", "cost-nofeedback", []string{"SONDA_SEARCH_CACHE=-1", "SONDA_SEARCH_TIME_BUDGET=1m", "SONDA_SEARCH_RANKING_FEEDBACK=0"}},
	} {
		if only != "" && only != run.short {
			continue
		}
		for _, b := range builds {
			name := strings.TrimSpace(run.name + " " + b.name)
			var args []string
			if profDir != "" && b.bin == sondaBin {
				args = []string{"--profile", filepath.Join(profDir, strings.Trim(run.short+"-"+b.name, "-")+".prof")}
			}
			srv, base, out := startServeBin(t, b.bin, data, args, run.env...)
			warm := searchLoad(base, srv.Process.Pid, log[len(log)-2000:], 4, 2000, 0) // warms the OS page cache, not the result cache (other queries)
			rep := searchLoad(base, srv.Process.Pid, log, clients, 0, time.Duration(seconds)*time.Second)
			t.Logf("%s: %s\n  warm-up: %.0f requests/s, %.2f ms CPU per answer", name, rep, warm.rate(), float64(warm.cpuPerAnswer().Microseconds())/1e3)
			if len(rep.failures) > 0 {
				t.Errorf("%s: failures %v", name, rep.failures)
			}
			srv.Process.Signal(syscall.SIGTERM)
			waitExit(t, srv)
			if args != nil {
				// The summary is written just before the process exits; its output may
				// still be on its way through the pipe.
				for wait := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), "CPU profile in") && time.Now().Before(wait); {
					time.Sleep(20 * time.Millisecond)
				}
				_, prof, _ := strings.Cut(out.String(), "CPU profile in")
				t.Logf("%s: CPU profile in%s", name, prof)
			}
		}
	}
}
