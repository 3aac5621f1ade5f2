package linkgraph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestRankerEqualsGraph: a web whose pages' links arrive split by the tag of their
// targets (as a cluster's leader reads them, one message per page and partition) ranks in
// a Ranker exactly as in one Graph holding every page's links, and a Graph given those
// ranks (SetRanks, as a cluster node stores them for its share) gives every URL the same
// signals as the Graph that computed them, to the last bit.
func TestRankerEqualsGraph(t *testing.T) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(3, 11))
	const pages, tags = 300, 5
	url := func(i int) string { return fmt.Sprintf("http://h%d.test/p%d", i%37, i) }
	tagOf := func(s string) uint32 {
		var h uint32
		for _, c := range s[:len("http://h")+2] {
			h = h*31 + uint32(c)
		}
		return h % tags
	}
	web := map[string][]Link{}
	for i := range pages {
		if i%9 == 0 {
			continue // a page without links (a leaf)
		}
		var ls []Link
		for range rnd.IntN(8) {
			j := rnd.IntN(pages + 40) // some targets never fetched
			ls = append(ls, Link{URL: url(j), Anchor: fmt.Sprint("to ", j)})
		}
		ls = append(ls, Link{URL: url(i)}) // a self-link: no edge
		web[url(i)] = ls
	}
	one := openMem(t, Options{})
	loadFixture(t, one, web)
	want, err := one.ComputePageRank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRanker(filepath.Join(t.TempDir(), "ranker"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for src, ls := range web {
		byTag := map[uint32][]Link{}
		for _, l := range ls {
			byTag[tagOf(l.URL)] = append(byTag[tagOf(l.URL)], l)
		}
		for tag, part := range byTag {
			if err := r.Add(src, tagOf(src), part, tag); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := r.Rank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != want.Nodes || got.Edges != want.Edges || got.Iterations != want.Iterations || got.MeanInDegree != want.MeanInDegree {
		t.Fatalf("ranker: %+v; one graph: %+v", got, want)
	}
	// Each tag's ranks, stored in a graph of its own, as a node stores its partitions'.
	all := map[string]bool{}
	for src, ls := range web {
		all[src] = true
		for _, l := range ls {
			all[l.URL] = true
		}
	}
	for tag := range uint32(tags) {
		var keys []Key
		var ranks []float64
		if err := r.Ranks(tag, func(k Key, rank float64) error {
			keys, ranks = append(keys, k), append(ranks, rank)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		share := openMem(t, Options{})
		if err := share.SetRanks(got, keys, ranks); err != nil {
			t.Fatal(err)
		}
		checked := 0
		for u := range all {
			if tagOf(u) != tag {
				continue
			}
			w, err1 := one.Signals([]string{u})
			g, err2 := share.Signals([]string{u})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if w[0].Rank != g[0].Rank || w[0].Prior != g[0].Prior {
				t.Errorf("%s: rank %v prior %v; one graph %v, %v", u, g[0].Rank, g[0].Prior, w[0].Rank, w[0].Prior)
			}
			checked++
		}
		if checked < 20 {
			t.Errorf("tag %d: %d URLs checked", tag, checked)
		}
	}
	if err := one.SetRanks(want, []Key{KeyOf(url(2)), KeyOf(url(2))}, []float64{1, 2}); err == nil {
		t.Error("SetRanks took a key twice")
	}
}
