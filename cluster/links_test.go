package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
)

// TestEdgesDroppedWhenAPageStopsLinking: a page fetched again that no longer links into a
// partition must take its old links there out of the cluster's graph, as one machine's
// SetLinks does: the followers of that partition (the in-link counts and anchors of its
// pages) and the state stream the PageRank leader reads. Each fetch goes through Journal
// and the relay to a real embedded server; node c follows both target partitions. The
// page is fetched by a (which knows what it sent), then by b after it took the page's
// partition over (which does not: it asks the stream), by b again, and by a once it took
// the partition back, its record of the page stale (b fetched it meanwhile), with a 404.
func TestEdgesDroppedWhenAPageStopsLinking(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	b := testNode(t, nc, "b", filepath.Join(dir, "b"))
	c := testNode(t, nc, "c", filepath.Join(dir, "c"))
	t.Cleanup(func() { cancel(); a.tenures.Wait(); b.tenures.Wait(); c.tenures.Wait() })
	rec := &recordedLinks{links: map[string][]linkgraph.Link{}}
	c.ReceiveInLinks(rec, false)

	// The page's host and two target hosts, each in a partition of its own.
	var hosts []string
	used := map[int]bool{}
	for i := 0; len(hosts) < 3; i++ {
		h := fmt.Sprintf("www.site%d.test", i)
		if p := a.partitionOf(h); !used[p] {
			used[p] = true
			hosts = append(hosts, h)
		}
	}
	page := testItem(hosts[0], "/page")
	home := a.partitionOf(hosts[0])
	t1, t2 := "http://"+hosts[1]+"/one", "http://"+hosts[2]+"/two"
	q1, q2 := a.partitionOf(hosts[1]), a.partitionOf(hosts[2])
	c.follow(ctx, q1)
	c.follow(ctx, q2)

	visits := 0
	fetchPage := func(n *Node, status int, targets ...string) {
		t.Helper()
		it := page
		it.Visits = visits
		visits++
		d := &crawl.Document{Item: it, Record: &store.Page{URL: it.URL, Status: status}, Fetch: &fetch.Result{}, Page: &parse.Page{}}
		for _, u := range targets {
			d.Page.Links = append(d.Page.Links, parse.Link{URL: u, Anchor: "to " + u})
		}
		if !n.Enter(it) {
			t.Fatal("gate refused")
		}
		batch := n.db.NewBatch()
		if err := n.Route(batch, it, frontier.Outcome{Fetched: true, Revisit: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := n.Journal(d, batch); err != nil {
			t.Fatal(err)
		}
		if err := batch.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		batch.Close()
		n.Leave(it)
		relayAll(t, ctx, n)
	}
	// want: the page's links as c records them and as the stream holds them (the last
	// message of each target partition's subject), once c caught up.
	want := func(step string, targets ...string) {
		t.Helper()
		key := linkgraph.KeyOf(page.URL)
		var inStream []string
		for _, q := range []int{q1, q2} {
			m, err := a.state.GetLastMsgForSubject(ctx, a.names.edges(q, key[:]))
			if err != nil {
				t.Fatalf("%s: links message of partition %d: %v", step, q, err)
			}
			e, err := decodeEdges(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range e.Links {
				inStream = append(inStream, l.URL)
			}
		}
		slices.Sort(inStream)
		if !slices.Equal(inStream, targets) {
			t.Errorf("%s: the state stream holds links to %v, want %v", step, inStream, targets)
		}
		var got []string
		deadline := time.Now().Add(20 * time.Second)
		for {
			got = got[:0]
			for _, l := range rec.get(page.URL) {
				got = append(got, l.URL)
			}
			slices.Sort(got)
			if slices.Equal(got, targets) && c.edgesCaughtUp(ctx) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the follower records links to %v, want %v", step, got, targets)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// sweeps: how many fetches needed a look at the stream (the others knew from their
	// node's record of the page).
	sweeps := func(step string, n *Node, want int64) {
		t.Helper()
		if got := n.sweeps.Load(); got != want {
			t.Errorf("%s: node %s looked up the page's earlier links %d times, want %d", step, n.opts.NodeID, got, want)
		}
	}

	tenure := takeNow(t, ctx, a, home)
	fetchPage(a, 200, t1, t2)
	want("first fetch", t1, t2)
	fetchPage(a, 200, t1)
	want("fetched again by the same node", t1)
	sweeps("fetched again by the same node", a, 0)

	takeNow(t, ctx, b, home) // a later epoch: b serves the page's partition now
	a.lose(home, tenure)
	fetchPage(b, 200, t1, t2)
	want("fetched by the next owner", t1, t2)
	fetchPage(b, 200, t2)
	want("fetched again by the next owner", t2)
	sweeps("fetched again by the next owner", b, 1)

	// a's record of the page (links into q1 only) predates b's fetches.
	takeNow(t, ctx, a, home)
	fetchPage(a, 404)
	want("gone")
	sweeps("gone", a, 1)
}
