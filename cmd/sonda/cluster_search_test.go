package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
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

	ctx := context.Background()
	nc, err := nats.Connect(r.nats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	one, err := index.Open(filepath.Join(t.TempDir(), "one"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { one.Close() })
	owner := map[string]string{}
	var words []string
	for _, node := range []string{"a", "b", "c"} {
		ix, err := index.Open(index.DataDir(filepath.Join(r.dir, "node-"+node)), index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
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
	queries := []string{"type:page"}
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
	for _, q := range queries {
		want, err := one.Search(ctx, index.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		sameAsOneIndex(t, q, want, apiSearch(t, base, q))
	}
	t.Logf("%d pages over 3 nodes, %d queries", len(owner), len(queries))
}
