package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/internal/procstat"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/urlnorm"
)

// rankWeb is a web of pages on a few dozen hosts whose links matter: a few hosts get most
// of them, some pages link nowhere, some targets are never fetched.
func rankWeb(seed uint64, pages, from int) map[string][]linkgraph.Link {
	rnd := rand.New(rand.NewPCG(seed, 5))
	url := func(i int) string { return fmt.Sprintf("http://www.h%d.test/p%d", i%23, i) }
	web := map[string][]linkgraph.Link{}
	for i := from; i < from+pages; i++ {
		if i%11 == 0 {
			continue
		}
		var ls []linkgraph.Link
		for range 1 + rnd.IntN(6) {
			j := rnd.IntN(pages + 30)
			if rnd.IntN(3) == 0 {
				j = j % 7 // popular pages
			}
			ls = append(ls, linkgraph.Link{URL: url(j), Anchor: fmt.Sprint("page ", j)})
		}
		web[url(i)] = ls
	}
	return web
}

// journal sends the links of web's pages as the crawling nodes' Journal does (one message
// per page), each from the node serving the page's partition.
func journal(t testing.TB, ctx context.Context, web map[string][]linkgraph.Link, crawler func(p int) *Node) {
	t.Helper()
	used := map[*Node]*pebble.Batch{}
	for src, ls := range web {
		n := crawler(0)
		from := crawler(n.partitionOf(urlnorm.HostOf(src)))
		links := make([]edgeLink, len(ls))
		for i, l := range ls {
			links[i] = edgeLink{URL: l.URL, Anchor: l.Anchor}
		}
		b := used[from]
		if b == nil {
			b = from.db.NewBatch()
			used[from] = b
		}
		key := linkgraph.KeyOf(src)
		if err := from.out.put(b, kindEdges, from.names.edges(key[:]), encodeEdges(edgesMsg{Src: src, Links: links}), fence{}); err != nil {
			t.Fatal(err)
		}
		from.outCount.Add(1) // as every writer counts its records (the relay reads only then)
	}
	for n, b := range used {
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		b.Close()
		relayAll(t, ctx, n)
	}
}

// rankGraph opens a link graph in pebble database db (a node's crawler database, as sonda
// node keeps it; nil: a database in memory, for the graphs the nodes are compared with).
func rankGraph(t testing.TB, db *pebble.DB) *linkgraph.Graph {
	t.Helper()
	if db == nil {
		mem, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Close() })
		db = mem
	}
	g, err := linkgraph.OpenPebble(db, linkgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestRanksGlobal: nodes that each hold a share of a web's links rank its pages exactly as
// one link graph holding all of them does (the same rank and prior, to the last bit), with
// the ranks the leader computes over the whole cluster's graph; each node's own PageRank
// over its share does not. When the leader leaves, the next lowest node leads: the ranks
// follow the links sent after, and the nodes that took over its partitions store their
// ranks too.
func TestRanksGlobal(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	ids := []string{"a", "b", "c"}
	nodes := map[string]*Node{}
	graphs := map[string]*linkgraph.Graph{}
	for _, id := range ids {
		n := testNode(t, nc, id, filepath.Join(dir, id))
		graphs[id] = rankGraph(t, n.db)
		n.ReceiveRanks(graphs[id], filepath.Join(dir, id), time.Hour)
		nodes[id] = n
		go n.watchRanks(ctx)
	}
	// Every node sees the members given, as its heartbeats would show them.
	members := func(live ...string) {
		for _, n := range nodes {
			n.mu.Lock()
			n.memberView = map[string]memberSeen{}
			for _, id := range live {
				n.memberView[id] = memberSeen{info: MemberInfo{Node: id, Ranks: true}, at: time.Now().Add(time.Hour)}
			}
			n.mu.Unlock()
		}
	}
	// Partitions 0 and 1 are a's, 2 b's, 3 c's: each node records (follows) the links of
	// its partitions, and stores their ranks.
	owner := map[int]string{0: "a", 1: "a", 2: "b", 3: "c"}
	follow := func() {
		for p, id := range owner {
			n := nodes[id]
			n.mu.Lock()
			n.follows[p] = true
			n.mu.Unlock()
		}
	}
	members(ids...)
	follow()
	crawler := func(p int) *Node { return nodes[owner[p]] }

	one := rankGraph(t, nil)
	add := func(web map[string][]linkgraph.Link) {
		for src, ls := range web {
			if _, err := one.SetLinks(src, ls); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := one.ComputePageRank(ctx); err != nil {
			t.Fatal(err)
		}
		journal(t, ctx, web, crawler)
	}
	all := map[string]bool{}
	note := func(web map[string][]linkgraph.Link) {
		for src, ls := range web {
			all[src] = true
			for _, l := range ls {
				all[l.URL] = true
			}
		}
	}
	// compare checks every URL's signals on the node that owns its partition against one
	// graph's, and returns how many differ.
	compare := func(g func(p int) *linkgraph.Graph, report bool) (differ int) {
		t.Helper()
		checked := 0
		for u := range all {
			p := nodes["b"].partitionOf(urlnorm.HostOf(u))
			want, err1 := one.Signals([]string{u})
			got, err2 := g(p).Signals([]string{u})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			checked++
			if got[0].Rank != want[0].Rank || got[0].Prior != want[0].Prior {
				differ++
				if report && differ <= 5 {
					t.Errorf("%s (partition %d, node %s): rank %v prior %v; one graph: %v, %v", u, p, owner[p], got[0].Rank, got[0].Prior, want[0].Rank, want[0].Prior)
				}
			}
		}
		if checked < 100 {
			t.Fatalf("only %d URLs compared", checked)
		}
		return differ
	}
	step := func(leader string) {
		t.Helper()
		runs := map[string]int64{}
		for id, n := range nodes {
			runs[id] = n.rankedRuns.Load()
		}
		nodes[leader].rankStep(ctx, true)
		run := nodes[leader].currentRun()
		for _, id := range ids {
			if id == leader {
				continue
			}
			for cur := nodes[id].currentRun(); cur == nil || cur.ID != run.ID; cur = nodes[id].currentRun() {
				if ctx.Err() != nil {
					t.Fatalf("node %s did not see run %s", id, run.ID)
				}
				time.Sleep(5 * time.Millisecond)
			}
			nodes[id].rankStep(ctx, false)
		}
		for id, n := range nodes {
			if n.rankedRuns.Load() == runs[id] && (owner[0] == id || owner[2] == id || owner[3] == id) {
				t.Fatalf("node %s stored no new run", id)
			}
		}
	}

	web := rankWeb(1, 300, 0)
	note(web)
	add(web)
	step("a")
	if d := compare(func(p int) *linkgraph.Graph { return graphs[owner[p]] }, true); d > 0 {
		t.Errorf("%d URLs rank unlike one graph", d)
	}
	for _, id := range ids {
		// What a node stored says it is the cluster's (sonda index rebuild keeps it).
		if s := graphs[id].Summary(); s == nil || s.Cluster != nodes[id].names.cluster {
			t.Errorf("node %s stored ranks under summary %+v, want one naming cluster %q", id, s, nodes[id].names.cluster)
		}
	}
	// The control: each node's own PageRank over its share of the links (the pages it
	// crawled and the links routed to its partitions) ranks otherwise.
	local := map[string]*linkgraph.Graph{}
	for _, id := range ids {
		local[id] = rankGraph(t, nil)
	}
	for src, ls := range web {
		for _, id := range ids {
			var mine []linkgraph.Link
			for _, l := range ls {
				if owner[nodes[id].partitionOf(urlnorm.HostOf(src))] == id || owner[nodes[id].partitionOf(urlnorm.HostOf(l.URL))] == id {
					mine = append(mine, l)
				}
			}
			if len(mine) > 0 {
				if _, err := local[id].SetLinks(src, mine); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, g := range local {
		if _, err := g.ComputePageRank(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := compare(func(p int) *linkgraph.Graph { return local[owner[p]] }, false); d < len(all)/2 {
		t.Errorf("node-local PageRank differs from one graph's for only %d of %d URLs: the test shows little", d, len(all))
	}

	// a leaves; b takes partition 0, c partition 1, and more pages are crawled.
	members("b", "c")
	delete(nodes, "a")
	ids = []string{"b", "c"}
	owner[0], owner[1] = "b", "c"
	follow()
	first := nodes["b"].currentRun().ID
	more := rankWeb(2, 200, 300)
	note(more)
	add(more)
	step("b")
	if d := compare(func(p int) *linkgraph.Graph { return graphs[owner[p]] }, true); d > 0 {
		t.Errorf("after the leader left: %d URLs rank unlike one graph", d)
	}
	if run := nodes["c"].currentRun(); !strings.HasPrefix(run.ID, "b-") || run.Prev != first {
		t.Errorf("the run after a left is %s (after %s), want b's after %s", run.ID, run.Prev, first)
	}
	// A third run purges the first one's chunks (the second's stay for nodes reading it).
	extra := map[string][]linkgraph.Link{"http://www.h1.test/new": {{URL: "http://www.h2.test/p2"}}}
	note(extra)
	add(extra)
	step("b")
	info, err := nodes["b"].rankStream.Info(ctx, jetstream.WithSubjectFilter(nodes["b"].names.prefix()+"ranks.>"))
	if err != nil {
		t.Fatal(err)
	}
	for subj := range info.State.Subjects {
		if strings.Contains(subj, "."+first+".") {
			t.Errorf("chunks of the first run remain: %s", subj)
		}
	}
	if d := compare(func(p int) *linkgraph.Graph { return graphs[owner[p]] }, true); d > 0 {
		t.Errorf("third run: %d URLs rank unlike one graph", d)
	}
}

// BenchmarkRanks measures one PageRank run over a whole cluster's graph: the leader reads
// every page's links from the state stream, ranks them and publishes the partitions'
// ranks (publish), and a node stores the ranks of a quarter of the partitions (store).
// It reports the process's CPU time of each step and how far the Go heap grew above
// where it stood before the step (sampled every 20 ms). SONDA_BENCH_PAGES
// sets the web's size (default 20,000 pages, about 3.5 links each).
//
//	SONDA_BENCH_PAGES=20000 go test -run '^$' -bench Ranks -benchtime 1x ./cluster
func BenchmarkRanks(b *testing.B) {
	pages := 20000
	if v, err := strconv.Atoi(os.Getenv("SONDA_BENCH_PAGES")); err == nil && v > 0 {
		pages = v
	}
	nc := startTestServer(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := b.TempDir()
	a := testNode(b, nc, "a", filepath.Join(dir, "a"))
	g := rankGraph(b, a.db)
	a.ReceiveRanks(g, filepath.Join(dir, "a"), time.Hour)
	a.mu.Lock()
	a.memberView = map[string]memberSeen{"a": {info: MemberInfo{Node: "a", Ranks: true}, at: time.Now().Add(time.Hour)}}
	a.follows[0] = true
	a.mu.Unlock()
	web := rankWeb(1, pages, 0)
	edges := 0
	for _, ls := range web {
		edges += len(ls)
	}
	for from := 0; from < pages; from += 5000 {
		part := map[string][]linkgraph.Link{}
		for src, ls := range web {
			if i := strings.LastIndex(src, "/p"); i > 0 {
				if n, _ := strconv.Atoi(src[i+2:]); n >= from && n < from+5000 {
					part[src] = ls
				}
			}
		}
		journal(b, ctx, part, func(int) *Node { return a })
	}
	measure := func(name string, f func()) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak := procstat.SampleHeap(20 * time.Millisecond)
		cpu0, start := procstat.CPUOf(os.Getpid()), time.Now()
		f()
		cpu, wall := procstat.CPUOf(os.Getpid())-cpu0, time.Since(start)
		b.ReportMetric(float64(cpu.Milliseconds()), name+"-cpu-ms")
		b.ReportMetric(float64(wall.Milliseconds()), name+"-wall-ms")
		b.ReportMetric((float64(peak())-float64(ms.HeapInuse))/(1<<20), name+"-heap-growth-MiB")
	}
	b.ResetTimer()
	for range b.N {
		measure("publish", func() {
			upto, err := a.lastEdges(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := a.publishRanks(ctx, upto); err != nil {
				b.Fatal(err)
			}
		})
		measure("store", func() {
			a.storedRun = ""
			if err := a.storeRanks(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
	run := a.currentRun()
	b.ReportMetric(float64(run.Summary.Nodes), "URLs")
	b.ReportMetric(float64(run.Summary.Edges), "edges")
}
