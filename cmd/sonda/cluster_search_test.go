package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// TestClusterCrawlThenSearch: three `sonda node` processes crawl a test web as one
// cluster; their indexes, each holding the pages its node crawled, are then served as the
// cluster's search shards and searched through `sonda serve --nats`, which answers as one
// index over every page the cluster crawled. No page is in two nodes' indexes.
func TestClusterCrawlThenSearch(t *testing.T) {
	r := newClusterRig(t, false)
	a := r.start("a", true)
	b := r.start("b", false)
	c := r.start("c", false)
	r.wait(time.Now().Add(clusterWait), a, b, c)
	indexes := map[string]*index.Index{}
	for _, node := range []string{"a", "b", "c"} {
		ix, err := index.Open(index.DataDir(filepath.Join(r.dir, "node-"+node)), index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		indexes[node] = ix
	}
	searchAsOneIndex(t, r, indexes, nil)
}

// searchAsOneIndex serves the indexes of the rig's nodes (by node id; each with the
// node's link graph or none) as the cluster's search shards, and checks that `sonda serve
// --nats` answers as one index over all their pages does, ranked with oneLinks (nil: no
// link graph), with the default ranking.
func searchAsOneIndex(t *testing.T, r *clusterRig, indexes map[string]*index.Index, oneLinks index.Links) {
	t.Helper()
	ctx := context.Background()
	nc, err := nats.Connect(r.nats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// The default ranking on both sides, pseudo-relevance feedback included (the gatherer
	// applies it as one index does: index.GatherFeedback).
	one, err := index.Open(filepath.Join(t.TempDir(), "one"), index.Options{Ranking: index.DefaultRanking(), Links: oneLinks})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { one.Close() })
	owner := map[string]string{}
	var words, sites []string
	for _, node := range slices.Sorted(maps.Keys(indexes)) {
		ix := indexes[node]
		ids, _, err := ix.SearchIDs(ctx, "type:page", 100000, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			t.Fatalf("node %s indexed nothing", node)
		}
		var docs []index.Doc
		for _, id := range ids {
			if other, dup := owner[id]; dup {
				t.Errorf("%s is in the indexes of nodes %s and %s", id, other, node)
			}
			owner[id] = node
			d, ok, err := ix.Document(ctx, id)
			if err != nil || !ok {
				t.Fatalf("%s: %v %v", id, ok, err)
			}
			docs = append(docs, d)
			if h := urlnorm.HostOf(id); len(docs)%40 == 1 && !slices.Contains(sites, "site:"+h) {
				sites = append(sites, "site:"+h)
			}
			if f := strings.Fields(d.Title); len(f) > 0 && len(words) < 12 && len(docs)%7 == 1 {
				words = append(words, strings.ToLower(strings.Trim(f[len(f)-1], ".,:;!?\"'()")))
			}
		}
		if err := one.Put(ctx, docs...); err != nil {
			t.Fatal(err)
		}
		srv, err := search.Listen(nc, "", "node-"+node, ix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
	}
	if len(owner) < len(r.web.Reachable())/2 {
		t.Fatalf("%d pages indexed of %d reachable", len(owner), len(r.web.Reachable()))
	}
	sort.Strings(words)
	// A query without words ranks its matches by the link prior alone. One index blends
	// the best Window (200) matches by text score, and those all score alike, so which of
	// them it blends depends on its internal document order when more match: with a link
	// graph the filter asks for fewer pages, on several nodes.
	filter := "type:page"
	if oneLinks != nil {
		filter = strings.Join(sites, " OR ")
	}
	queries := []string{filter}
	for i, w := range words {
		if w == "" {
			continue
		}
		queries = append(queries, w)
		if i > 0 {
			queries = append(queries, fmt.Sprintf("%s OR %s", words[i-1], w))
		}
	}
	base := startServeNATS(t, r.nats, "sonda", "type:page")
	fedBack := 0 // queries with more matches than feedback's model reads (10): feedback applies
	for _, q := range queries {
		want, err := one.Search(ctx, index.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		sameAsOneIndex(t, q, want, apiSearch(t, base, q))
		if q == filter && oneLinks != nil && (want.Total < 20 || want.Total > uint64(index.DefaultRanking().Window)) {
			t.Errorf("%q matches %d pages: the test wants more than 20 and at most the blend's window", q, want.Total)
		}
		if q != filter && want.Total > 10 {
			fedBack++
		}
	}
	if fedBack < 3 {
		t.Errorf("only %d queries match more than 10 pages: feedback over the cluster is hardly exercised", fedBack)
	}
	t.Logf("%d pages over %d nodes, %d queries", len(owner), len(indexes), len(queries))
}

// TestClusterInLinks: the in-link counts (the link graph each node ranks its pages with),
// the link rank and prior, and the anchor texts each node's index holds for its pages are
// those one machine crawling the same web gives them, although the links to a page come
// from pages crawled on every node: each page's links travel to the owners of their
// targets, and the cluster's leader ranks the whole graph (cluster.global-ranks). So the
// cluster's search with the default ranking (link weight 0.1, PageRank prior) answers as
// one index over the same pages ranked with one machine's link graph. With
// SONDA_CLUSTER_GLOBAL_RANKS=false in the test's environment (the nodes rank their own
// share of the links) the ranks and the search differ, and the test fails.
func TestClusterInLinks(t *testing.T) {
	r := newClusterRig(t, false)
	a := r.start("a", true)
	b := r.start("b", false)
	c := r.start("c", false)
	r.wait(time.Now().Add(clusterWait), a, b, c)

	// One machine crawls a fresh copy of the same web (the test web answers some URLs by
	// how often they were asked: retries, rate limits).
	web := testweb.New(clusterWebConfig())
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	single := filepath.Join(r.dir, "single")
	args := []string{"crawl", "--data", single, "--allow-private", "--resolve", web.Resolve(), "--min-delay", clusterDelay.String(),
		"--concurrency", strconv.Itoa(clusterConc)}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	if _, errOut, code := run(t, clusterCrawlEnv("single"), args...); code != 0 {
		t.Fatalf("single-node crawl exited %d: %s", code, errOut)
	}
	ctx := context.Background()
	one, oneGraph := openShard(t, single)
	compared, linked, differ, rankDiffer := 0, 0, 0, 0
	graphs := map[string]*linkgraph.Graph{}
	indexes := map[string]*index.Index{}
	for _, node := range []string{"a", "b", "c"} {
		indexes[node], graphs[node] = openShard(t, filepath.Join(r.dir, "node-"+node))
	}
	for _, node := range []string{"a", "b", "c"} {
		ix, g := indexes[node], graphs[node]
		ids, _, err := ix.SearchIDs(ctx, "type:page", 100000, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			got, _, err := ix.Document(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want, ok, err := one.Document(ctx, id)
			if err != nil || !ok {
				continue // a page the single crawl did not index (none expected: both are complete)
			}
			gotIn, err1 := g.InLinks(id)
			wantIn, err2 := oneGraph.InLinks(id)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			gotSig, err1 := g.Signals([]string{id})
			wantSig, err2 := oneGraph.Signals([]string{id})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if gs, ws := gotSig[0], wantSig[0]; gs.Rank != ws.Rank || gs.Prior != ws.Prior || gs.InLinkPrior != ws.InLinkPrior {
				rankDiffer++
				if rankDiffer <= 5 {
					t.Errorf("%s (node %s): rank %.17g, prior %.17g, in-link prior %.17g; one machine: %.17g, %.17g, %.17g",
						id, node, gs.Rank, gs.Prior, gs.InLinkPrior, ws.Rank, ws.Prior, ws.InLinkPrior)
				}
			}
			compared++
			if wantIn > 0 {
				linked++
			}
			ga, wa := slices.Sorted(slices.Values(got.Anchors)), slices.Sorted(slices.Values(want.Anchors))
			if gotIn != wantIn || !slices.Equal(ga, wa) {
				differ++
				if differ <= 10 {
					t.Errorf("%s (node %s): %d in-links, anchors %q; one machine: %d, %q", id, node, gotIn, ga, wantIn, wa)
				}
				if differ <= 2 {
					t.Logf("  linked from (one machine): %v", linkedFrom(t, oneGraph, id))
					for _, other := range []string{"a", "b", "c"} {
						t.Logf("  linked from in node %s's graph: %v", other, linkedFrom(t, graphs[other], id))
					}
				}
			}
		}
	}
	if compared < len(r.web.Reachable())/2 || linked < compared/2 {
		t.Fatalf("compared %d pages (%d with in-links) of %d reachable", compared, linked, len(r.web.Reachable()))
	}
	t.Logf("%d pages compared, %d with in-links, %d differ in in-links or anchors, %d in rank", compared, linked, differ, rankDiffer)
	searchAsOneIndex(t, r, indexes, oneGraph)
}

// openShard opens the link graph of data directory data and its search index, ranked
// with the graph.
func openShard(t *testing.T, data string) (*index.Index, *linkgraph.Graph) {
	t.Helper()
	db, err := store.Open(crawl.StateDir(data), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	g, err := linkgraph.Open(db, linkgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ix, err := index.Open(index.DataDir(data), index.Options{Links: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, g
}

// linkedFrom lists the pages linking to url in g.
func linkedFrom(t *testing.T, g *linkgraph.Graph, url string) []string {
	t.Helper()
	edges, _, err := g.Relations(context.Background(), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	from := make([]string, len(edges))
	for i, e := range edges {
		from[i] = e.URL
	}
	return from
}
