package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
)

// edgeNodes starts three nodes a, b and c on a real embedded server, c recording in rec
// the links routed to it, and finds a host for pages and two target hosts, each in a
// partition of its own.
func edgeNodes(t *testing.T) (ctx context.Context, a, b, c *Node, rec *recordedLinks, hosts []string) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	dir := t.TempDir()
	a = testNode(t, nc, "a", filepath.Join(dir, "a"))
	b = testNode(t, nc, "b", filepath.Join(dir, "b"))
	c = testNode(t, nc, "c", filepath.Join(dir, "c"))
	t.Cleanup(func() { cancel(); a.tenures.Wait(); b.tenures.Wait(); c.tenures.Wait() })
	rec = &recordedLinks{links: map[string][]linkgraph.Link{}}
	c.ReceiveInLinks(rec, false)
	used := map[int]bool{}
	for i := 0; len(hosts) < 3; i++ {
		h := fmt.Sprintf("www.site%d.test", i)
		if p := a.partitionOf(h); !used[p] {
			used[p] = true
			hosts = append(hosts, h)
		}
	}
	return ctx, a, b, c, rec, hosts
}

// TestEdgesOnePerPage: a page's links travel as one message on a subject of the page's
// own, which replaces what the page said before, whichever node fetched it: a page
// fetched again that no longer links into a partition takes its old links there out of
// the cluster's graph, as one machine's SetLinks does, in the followers of that
// partition (the in-link counts and anchors of its pages) and in the state stream the
// PageRank leader reads. A node that starts following one more partition replays the
// stream for it. Each fetch goes through Journal and the relay to a real embedded
// server. The page is fetched by a, then by b after it took the page's partition over,
// and by a once it took it back, with a 404; node c follows one target partition, then
// both.
func TestEdgesOnePerPage(t *testing.T) {
	ctx, a, b, c, rec, hosts := edgeNodes(t)
	page := testItem(hosts[0], "/page")
	home := a.partitionOf(hosts[0])
	t1, t2 := "http://"+hosts[1]+"/one", "http://"+hosts[2]+"/two"
	c.follow(ctx, a.partitionOf(hosts[1]))

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
	// want: the page's links as the stream holds them (one subject, the page's) and as c
	// records them once it caught up.
	key := linkgraph.KeyOf(page.URL)
	want := func(step string, inStream, recorded []string) {
		t.Helper()
		info, err := a.state.Info(ctx, jetstream.WithSubjectFilter(a.names.prefix()+"edges.>"))
		if err != nil {
			t.Fatal(err)
		}
		if len(info.State.Subjects) != 1 || info.State.Subjects[a.names.edges(key[:])] != 1 {
			t.Errorf("%s: the state stream holds the page's links on %v, want one message on %s", step, info.State.Subjects, a.names.edges(key[:]))
		}
		m, err := a.state.GetLastMsgForSubject(ctx, a.names.edges(key[:]))
		if err != nil {
			t.Fatalf("%s: the page's links message: %v", step, err)
		}
		e, err := decodeEdges(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range e.Links {
			got = append(got, l.URL)
		}
		if !slices.Equal(got, inStream) {
			t.Errorf("%s: the state stream holds links to %v, want %v", step, got, inStream)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			got = got[:0]
			for _, l := range rec.get(page.URL) {
				got = append(got, l.URL)
			}
			slices.Sort(got)
			if slices.Equal(got, recorded) && c.edgesCaughtUp(ctx) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the follower records links to %v, want %v", step, got, recorded)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	tenure := takeNow(t, ctx, a, home)
	fetchPage(a, 200, t1, t2)
	want("first fetch", []string{t1, t2}, []string{t1})
	c.follow(ctx, a.partitionOf(hosts[2]))
	want("a second partition followed", []string{t1, t2}, []string{t1, t2})
	fetchPage(a, 200, t1)
	want("fetched again by the same node", []string{t1}, []string{t1})

	takeNow(t, ctx, b, home) // a later epoch: b serves the page's partition now
	a.lose(home, tenure)
	fetchPage(b, 200, t1, t2)
	want("fetched by the next owner", []string{t1, t2}, []string{t1, t2})
	fetchPage(b, 200, t2)
	want("fetched again by the next owner", []string{t2}, []string{t2})

	takeNow(t, ctx, a, home)
	fetchPage(a, 404)
	want("gone", nil, nil)
}

// TestEdgesRecordedOnlyWhereTheyChangeSomething: a node records a page's message only if
// it can change its graph. It skips a page's first fetch that links into none of its
// partitions (most pages other nodes fetch), but not a message that drops a link its own
// crawler recorded when it fetched the page earlier, also in a replay for a partition it
// starts to follow, which links of other pages' first fetches only reach.
func TestEdgesRecordedOnlyWhereTheyChangeSomething(t *testing.T) {
	ctx, a, b, c, rec, hosts := edgeNodes(t)
	c.skipOwnEdges = true // c's crawler records its pages' links in rec itself
	home, q := a.partitionOf(hosts[0]), a.partitionOf(hosts[1])
	target := "http://" + hosts[1] + "/target"
	own, other := "http://"+hosts[0]+"/own", "http://"+hosts[2]+"/other"
	// c fetched own (its crawler recorded own's link to target), then b fetched it again:
	// own links nowhere now. a fetched other for the first time, linking nowhere c follows.
	if err := rec.SetLinksWhere(own, []linkgraph.Link{{URL: target}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	c.follow(ctx, home)
	sendEdges(t, ctx, b, edgesMsg{Src: own, Run: b.run, Links: []edgeLink{{URL: "http://" + hosts[2] + "/elsewhere"}}})
	sendEdges(t, ctx, a, edgesMsg{Src: other, Run: a.run, Links: []edgeLink{{URL: "http://" + hosts[2] + "/x"}}, First: true})
	for !c.edgesCaughtUp(ctx) { // both read for home: the next replay is q's alone
		if ctx.Err() != nil {
			t.Fatal("the follower did not catch up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.follow(ctx, q) // a replay for q: own's message drops the link into q
	deadline := time.Now().Add(20 * time.Second)
	for {
		stale := slices.ContainsFunc(rec.get(own), func(l linkgraph.Link) bool { return l.URL == target })
		if !stale && c.edgesCaughtUp(ctx) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("c's graph keeps own's link to %s (%v): a message that drops it was not recorded", target, rec.get(own))
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if n := rec.calls[other]; n != 0 {
		t.Errorf("a first fetch that links into none of c's partitions was recorded %d times, want 0", n)
	}
}
