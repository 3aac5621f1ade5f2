package search_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
)

// openGraph opens a link graph in its own store, as a node keeps it.
func openGraph(t *testing.T, dir string) *linkgraph.Graph {
	t.Helper()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(db, linkgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(); db.Close() })
	return g
}

// TestInLinksGlobal: in a cluster, a node's link graph holds the out-links of the pages it
// crawled and the in-links routed to its own pages with the links (issue 11 §3), so a
// page's in-link count is the whole web's, and the ranks its leader computes over the
// whole graph (a linkgraph.Ranker, tagged by shard, as package cluster does) are stored
// in each node's graph. Then the split collection's results equal one index with one link
// graph over all the pages, with the link weight 0 and with the default ranking (link
// prior: PageRank).
func TestInLinksGlobal(t *testing.T) {
	docs := documents(cranfield(t))[:400]
	// A citation web: page i links to a few pages after it, by a fixed rule.
	links := map[string][]linkgraph.Link{}
	for i, d := range docs {
		for k := 1; k <= i%5; k++ {
			to := docs[(i*7+k*13)%len(docs)]
			links[d.ID] = append(links[d.ID], linkgraph.Link{URL: to.ID, Anchor: "see " + to.Title})
		}
	}
	const shards = 4
	shardOfID := map[string]int{}
	for _, d := range docs {
		shardOfID[d.ID] = shardOf(d, shards)
	}
	dir := t.TempDir()
	ctx := context.Background()
	// The cluster's ranks: the whole graph, each URL tagged with its shard.
	ranker, err := linkgraph.NewRanker(filepath.Join(dir, "ranker"), linkgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ranker.Close()
	for src, ls := range links {
		for s := range shards {
			var to []linkgraph.Link
			for _, l := range ls {
				if shardOfID[l.URL] == s {
					to = append(to, l)
				}
			}
			if err := ranker.Add(src, uint32(shardOfID[src]), to, uint32(s)); err != nil {
				t.Fatal(err)
			}
		}
	}
	summary, err := ranker.Rank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	openWithGraph := func(name string, part []index.Doc, keep func(src, dst string) bool, shard int) *index.Index {
		g := openGraph(t, filepath.Join(dir, name+"-graph"))
		for src, ls := range links {
			var mine []linkgraph.Link
			for _, l := range ls {
				if keep(src, l.URL) {
					mine = append(mine, l)
				}
			}
			if len(mine) > 0 {
				if _, err := g.SetLinks(src, mine); err != nil {
					t.Fatal(err)
				}
			}
		}
		if shard < 0 {
			if _, err := g.ComputePageRank(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			var keys []linkgraph.Key
			var ranks []float64
			if err := ranker.Ranks(uint32(shard), func(k linkgraph.Key, r float64) error {
				keys, ranks = append(keys, k), append(ranks, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := g.SetRanks(summary, keys, ranks); err != nil {
				t.Fatal(err)
			}
		}
		ix, err := index.Open(filepath.Join(dir, name), index.Options{Links: g, CacheEntries: -1, Ranking: index.DefaultRanking()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		if err := ix.Put(ctx, part...); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	one := openWithGraph("one", docs, func(string, string) bool { return true }, -1)
	nc := startNATS(t)
	var nodes []string
	for s := range shards {
		var part []index.Doc
		for _, d := range docs {
			if shardOfID[d.ID] == s {
				part = append(part, d)
			}
		}
		// The node's graph: its pages' out-links, and the links routed to its pages.
		ix := openWithGraph(fmt.Sprint("node-", s), part, func(src, dst string) bool { return shardOfID[src] == s || shardOfID[dst] == s }, s)
		node := fmt.Sprint("node-", s)
		srv, err := search.Listen(nc, "", node, ix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		nodes = append(nodes, node)
	}
	g, err := search.NewGatherer(nc, func(context.Context) ([]string, error) { return nodes, nil }, search.GathererOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	noLinks := index.DefaultRanking()
	noLinks.Link = 0
	queries := []string{"flow", "boundary layer", "heat transfer", "wing OR body", `"shock wave"`, "pressure distribution"}
	linked := 0
	for _, q := range queries {
		for _, r := range []*index.Ranking{&noLinks, nil} {
			req := index.Request{Query: q, PerPage: 20, Ranking: r}
			want, err := one.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if r != nil {
				compare(t, fmt.Sprintf("%q, link weight 0", q), want, got)
				continue
			}
			compare(t, fmt.Sprintf("%q, default ranking", q), want, got)
			inLinks := map[string]int{}
			for _, h := range want.Hits {
				inLinks[h.ID] = h.InLinks
			}
			for _, h := range got.Hits {
				if n, ok := inLinks[h.ID]; ok && n != h.InLinks {
					t.Errorf("%q: %s has %d in-links, one index %d", q, h.ID, h.InLinks, n)
				}
				if h.InLinks > 0 {
					linked++
				}
			}
		}
	}
	if linked < 20 {
		t.Errorf("only %d results have in-links: the test shows little", linked)
	}
}
