package volunteer

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// TestPurgeReachesPagesInProcess: a worker's page the node took unchecked is still on its
// way through the crawl (between FetchPage and the sinks) while the worker is quarantined
// and its pages purged; the page reaches the search index after the purge deleted it.
// The dispatcher, the sink after the index's, purges it again then, so no tampered page
// is left in the index, even though its refetch may never replace it (this test does not
// refetch: in a cluster another node may serve the page's partition by then, or the
// refetch may answer 5xx, which leaves the index as it is). A page that reached the sinks
// before the quarantine is purged once, by the worker's purge. Real NATS, Pebble, Bleve
// and worker; the crawl's steps are the test's.
func TestPurgeReachesPagesInProcess(t *testing.T) {
	r := newRig(t, testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 15,
		Disable: testweb.Slow | testweb.Traps | testweb.Errors | testweb.Redirects | testweb.NonHTML | testweb.Compression | testweb.Charsets})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	r.running("subtle", subtle)
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	sink := index.NewSink(ix, nil, index.SinkOptions{})
	defer sink.Close()
	var mu sync.Mutex
	purged := map[string]int{}
	// What a node's purge does to its index (app.Instance.DeleteDocs), without the refetch.
	d, err := Start(ctx, r.node, r.js, Options{Cluster: "c", Node: "n1", Fetcher: r.own(), UserAgent: "sonda-test",
		TaskTimeout: 2 * time.Second, Seed: 7, Canary: -1, DB: openDB(t, t.TempDir()).Pebble(),
		Purge: func(ctx context.Context, items []frontier.Item) error {
			ids := make([]string, len(items))
			mu.Lock()
			for i, it := range items {
				purged[it.URL]++
				ids[i] = it.URL
			}
			mu.Unlock()
			return sink.Delete(ctx, ids...)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	waitHello(t, ctx, d, "subtle")

	// Two pages the node takes unchecked from the worker: done reaches the sinks before
	// the quarantine, inProcess after the purge.
	norm := urlnorm.New(urlnorm.DefaultOptions())
	var docs []*crawl.Document
	for _, u := range r.web.Reachable() {
		nu, err := norm.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		it := frontier.Item{URL: u, Key: nu.Key(), Host: nu.HostKey()}
		res := d.FetchPage(ctx, it, fetch.Request{URL: u}, 0)
		if res.Err != nil || res.Status != 200 {
			t.Fatalf("%s: %d %v", u, res.Status, res.Err)
		}
		if bytes.Contains(res.UTF8, []byte(tamperWord)) {
			docs = append(docs, &crawl.Document{URL: nu, Item: it, Fetch: res, Text: string(res.UTF8),
				Record: &store.Page{URL: u, Status: 200, FetchedAt: res.StartedAt}})
		}
		if len(docs) == 2 {
			break
		}
	}
	if len(docs) < 2 {
		t.Fatalf("%d pages taken unchecked from the worker: the test needs 2", len(docs))
	}
	done, inProcess := docs[0], docs[1]
	consume := func(doc *crawl.Document) {
		t.Helper()
		for _, s := range []crawl.Sink{sink, d} { // the node's order: the index's sink, then the dispatcher
			if err := s.Consume(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	consume(done)

	if err := cluster.SetWorkerState(ctx, r.js, "c", "subtle", cluster.WorkerQuarantined, "caught by another node"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the purge of the quarantined worker's pages to end", func() bool {
		mu.Lock()
		both := purged[done.Item.URL] > 0 && purged[inProcess.Item.URL] > 0
		mu.Unlock()
		return both && purgesIdle(d)
	})
	mu.Lock()
	first := purged[inProcess.Item.URL]
	mu.Unlock()
	if first != 1 {
		t.Fatalf("the page in process was purged %d times by the worker's purge, want 1", first)
	}
	// The crawl is done with the page only now: it reaches the index after its purge.
	consume(inProcess)
	d.purging.Wait()
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		if got, ok, err := ix.Document(ctx, doc.Item.URL); err != nil {
			t.Fatal(err)
		} else if ok {
			t.Errorf("%s: a quarantined worker's page is in the index after its purge (tampered: %v)", doc.Item.URL, strings.Contains(got.Body, tamperWord))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if purged[done.Item.URL] != 1 || purged[inProcess.Item.URL] != 2 {
		t.Errorf("purged the page that reached the sinks before the quarantine %d times (want 1), the one in process %d times (want 2)",
			purged[done.Item.URL], purged[inProcess.Item.URL])
	}
	if n := ledgerPages(t, d, "subtle"); n != 0 {
		t.Errorf("the ledger still holds %d pages of the purged worker", n)
	}
}

// purgesIdle says whether no purge of d runs.
func purgesIdle(d *Dispatcher) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.purges {
		if p.runs {
			return false
		}
	}
	return true
}

// TestReadmittedWorker: a worker's name revoked and admitted again is another worker. A
// node that purged the first one (quarantined) still purges the second when it is
// quarantined in turn; a node down while a worker was quarantined, revoked and its name
// admitted again purges the quarantined one's pages when it starts, and not the new
// one's. Each purge takes exactly the pages the node took unchecked from that worker.
func TestReadmittedWorker(t *testing.T) {
	r := newRig(t, testweb.Config{Seed: 5, Hosts: 4, PagesPerHost: 15,
		Disable: testweb.Slow | testweb.Traps | testweb.Errors | testweb.Redirects | testweb.NonHTML | testweb.Compression | testweb.Charsets})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	own := r.own()
	dir := filepath.Join(t.TempDir(), "node")
	var purged purgeCounts
	start := func(db *store.DB) *Dispatcher { return r.startNode(ctx, own, db.Pebble(), &purged) }
	norm := urlnorm.New(urlnorm.DefaultOptions())
	next := 0
	// take fetches pages through d until it took n of the worker's copies unchecked.
	take := func(d *Dispatcher, n int) map[string]bool {
		t.Helper()
		got := map[string]bool{}
		for len(got) < n {
			u := r.web.Reachable()[next%len(r.web.Reachable())]
			next++
			nu, err := norm.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			res := d.FetchPage(ctx, frontier.Item{URL: u, Key: nu.Key(), Host: nu.HostKey()}, fetch.Request{URL: u}, 0)
			if bytes.Contains(res.UTF8, []byte(tamperWord)) {
				got[u] = true
			}
			if ctx.Err() != nil {
				t.Fatal("timed out taking pages")
			}
		}
		return got
	}
	// purgedExactly waits for the purge of want's pages, then checks it took exactly them.
	purgedExactly := func(d *Dispatcher, what string, want map[string]bool) {
		t.Helper()
		waitFor(t, ctx, what, func() bool {
			purged.mu.Lock()
			n := 0
			for u := range want {
				n += purged.n[u]
			}
			purged.mu.Unlock()
			return n >= len(want) && purgesIdle(d)
		})
		purged.mu.Lock()
		defer purged.mu.Unlock()
		for u, k := range purged.n {
			if k != 1 || !want[u] {
				t.Errorf("%s: %s purged %d times (want once, and only the %d pages taken from that worker)", what, u, k, len(want))
			}
		}
		clear(purged.n)
	}
	active := func(d *Dispatcher, key string) {
		t.Helper()
		waitFor(t, ctx, "the worker admitted again", func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			w := d.workers["x"]
			return w != nil && w.key != key && w.state == cluster.WorkerActive && time.Since(w.lastSeen) < time.Second
		})
	}
	keyOf := func(d *Dispatcher) string {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.workers["x"].key
	}
	readmit := func(stop func()) func() {
		t.Helper()
		stop()
		if err := cluster.SetWorkerState(ctx, r.js, "c", "x", cluster.WorkerRevoked, "revoked"); err != nil {
			t.Fatal(err)
		}
		return r.running("x", subtle)
	}
	quarantine := func() {
		t.Helper()
		if err := cluster.SetWorkerState(ctx, r.js, "c", "x", cluster.WorkerQuarantined, "caught"); err != nil {
			t.Fatal(err)
		}
	}

	db := openDB(t, dir)
	d := start(db)
	stop := r.running("x", subtle)
	waitHello(t, ctx, d, "x")
	first := take(d, 3)
	quarantine()
	purgedExactly(d, "the first worker's purge", first)
	key1 := keyOf(d)
	stop = readmit(stop)
	active(d, key1)
	second := take(d, 3)
	quarantine()
	purgedExactly(d, "the purge of the worker admitted again, quarantined in turn", second)

	// The node down while the name's third worker is quarantined, revoked and the name
	// admitted again.
	key2 := keyOf(d)
	stop = readmit(stop)
	active(d, key2)
	third := take(d, 3)
	key3 := keyOf(d)
	d.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	quarantine()
	stop = readmit(stop)
	db = openDB(t, dir)
	d = start(db)
	defer d.Close()
	purgedExactly(d, "the purge, at the start, of a worker quarantined while the node was down", third)
	active(d, key3)
	fourth := take(d, 3)
	if n := ledgerPages(t, d, "x"); n != len(fourth) {
		t.Errorf("the ledger holds %d pages of the name's fourth worker, want the %d taken from it", n, len(fourth))
	}
	stop()
}

// TestNotModifiedKeepsProvenance: a page the node took unchecked from a worker, fetched
// again by the node itself with a conditional request (a revisit) that answers 304 Not
// Modified, keeps the worker's copy, so it is still the worker's page: the worker's
// quarantine purges it. (The node used to forget who delivered it, as if a copy of its
// own had replaced it, and the tampered copy stayed.)
func TestNotModifiedKeepsProvenance(t *testing.T) {
	r := newRig(t, testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 15,
		Disable: testweb.Slow | testweb.Traps | testweb.Errors | testweb.Redirects | testweb.NonHTML | testweb.Compression | testweb.Charsets})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	stop := r.running("subtle", subtle)
	var purged purgeCounts
	d := r.startNode(ctx, r.own(), openDB(t, t.TempDir()).Pebble(), &purged)
	defer d.Close()
	waitHello(t, ctx, d, "subtle")
	norm := urlnorm.New(urlnorm.DefaultOptions())
	var it frontier.Item
	etag := ""
	for _, u := range r.web.Reachable() {
		nu, err := norm.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		it = frontier.Item{URL: u, Key: nu.Key(), Host: nu.HostKey()}
		if res := d.FetchPage(ctx, it, fetch.Request{URL: u}, 0); bytes.Contains(res.UTF8, []byte(tamperWord)) {
			etag = res.Header.Get("ETag")
			break
		}
	}
	if etag == "" {
		t.Fatal("no page with an ETag taken unchecked from the worker")
	}
	// The worker leaves; the node revisits the page itself.
	stop()
	waitFor(t, ctx, "the worker to be gone", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return time.Since(d.workers["subtle"].lastSeen) > helloTTL
	})
	if res := d.FetchPage(ctx, it, fetch.Request{URL: it.URL, ETag: etag}, 0); res.Status != 304 {
		t.Fatalf("the revisit answered %d (%v), want 304", res.Status, res.Err)
	}
	if n := ledgerPages(t, d, "subtle"); n != 1 {
		t.Fatalf("after a 304 the ledger holds %d of the worker's pages, want the 1 still in its copy", n)
	}
	if err := cluster.SetWorkerState(ctx, r.js, "c", "subtle", cluster.WorkerQuarantined, "caught elsewhere"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the purge", func() bool {
		purged.mu.Lock()
		n := purged.n[it.URL]
		purged.mu.Unlock()
		return n > 0 && purgesIdle(d)
	})
}
