package app

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/testweb"
)

// TestRebuildKeepsClusterRanks: on a cluster node's data directory, whose link graph holds
// ranks its cluster computed over every node's links (stored with a summary naming the
// cluster), sonda index rebuild keeps them: PageRank over the node's own share would
// replace them with ranks one machine would not give. Ranks of the graph's own run (no
// cluster named) are computed again, as before.
func TestRebuildKeepsClusterRanks(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 5, Hosts: 3, PagesPerHost: 6, Disable: testweb.AllFeatures &^ testweb.Robots})
	cfg := crawlWeb(t, web, nil)
	urls := web.Reachable()
	slices.SortFunc(urls, func(a, b string) int {
		ka, kb := linkgraph.KeyOf(a), linkgraph.KeyOf(b)
		return bytes.Compare(ka[:], kb[:])
	})
	ranksOf := func() []float64 {
		t.Helper()
		in, err := Open(cfg, Options{Search: true})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		sig, err := in.Graph.Signals(urls)
		if err != nil {
			t.Fatal(err)
		}
		rs := make([]float64, len(sig))
		for i, s := range sig {
			rs[i] = s.Rank
		}
		return rs
	}
	// store puts ranks unlike any PageRank run's in the graph, under summary s.
	store := func(s linkgraph.RankSummary) []float64 {
		t.Helper()
		in, err := Open(cfg, Options{Search: true})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		keys := make([]linkgraph.Key, len(urls))
		ranks := make([]float64, len(urls))
		for i, u := range urls {
			keys[i], ranks[i] = linkgraph.KeyOf(u), 1/float64(1000+i)
		}
		if err := in.Graph.SetRanks(s, keys, ranks); err != nil {
			t.Fatal(err)
		}
		return ranks
	}
	own := ranksOf()
	if n := slices.IndexFunc(own, func(r float64) bool { return r == 0 }); n >= 0 {
		t.Fatalf("the crawl's PageRank gave %s no rank: the test's URLs are not the graph's", urls[n])
	}

	set := store(linkgraph.RankSummary{Nodes: 5000, Edges: 20000, MeanInDegree: 4, Cluster: "c1"})
	st, err := Rebuild(context.Background(), cfg, RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ranksOf(); !slices.Equal(got, set) || !st.RanksKept || st.PageRank.Cluster != "c1" || st.PageRank.Nodes != 5000 {
		t.Errorf("rebuild of a node's directory: ranks %v, want the cluster's %v; stats %+v", got, set, st)
	}

	store(linkgraph.RankSummary{Nodes: 5000, Edges: 20000, MeanInDegree: 4}) // not a cluster's
	st, err = Rebuild(context.Background(), cfg, RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ranksOf(); !slices.Equal(got, own) || st.RanksKept {
		t.Errorf("rebuild of a single machine's directory: ranks %v, want its own PageRank %v; stats %+v", got, own, st)
	}
}
