package search_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/index/ireval"
)

// cranfield loads the Cranfield collection from ../shared/testdata (skips without it).
func cranfield(t testing.TB) *ireval.Collection {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "testdata", "cranfield")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the Cranfield collection is not at %s: %v", dir, err)
	}
	c, err := ireval.LoadCranfield(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// documents are the Cranfield abstracts as web pages of 16 hosts, with what a crawl gives
// a page beside its text, deterministically: a language (a tenth are tagged German, so
// two languages' statistics take part), a topic relevance (for two thirds), a date, and
// anchor text (a fifth).
func documents(c *ireval.Collection) []index.Doc {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]index.Doc, 0, len(c.Docs))
	for i, d := range c.Docs {
		h := fnv.New64a()
		h.Write([]byte(d.ID))
		x := h.Sum64()
		host := fmt.Sprintf("site%d.example", x%16)
		doc := index.Doc{
			ID: "https://" + host + "/abstract/" + d.ID, Kind: index.KindPage, Title: d.Title, Body: d.Text,
			Host: host, Lang: "en", ContentType: "text/html", Relevance: -1,
			Fetched: base.Add(time.Duration(x%900) * 24 * time.Hour),
		}
		doc.URL = doc.ID
		if i%10 == 3 {
			doc.Lang = "de"
		}
		if x%3 != 0 {
			doc.Relevance = float64(x%1000) / 1000
		}
		if i%5 == 1 {
			doc.Anchors = []string{d.Authors, "abstract " + d.ID}
		}
		docs = append(docs, doc)
	}
	return docs
}

// shardOf is a document's shard: by host, as the cluster partitions.
func shardOf(d index.Doc, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(d.Host))
	return int(h.Sum32() % uint32(shards))
}

func openIndex(t testing.TB, dir string, docs []index.Doc) *index.Index {
	t.Helper()
	// The default ranking: with pseudo-relevance feedback, which the split collection
	// applies at the gatherer (index.GatherFeedback).
	ix, err := index.Open(dir, index.Options{CacheEntries: -1, Ranking: index.DefaultRanking()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for i := 0; i < len(docs); i += 500 {
		if err := ix.Put(context.Background(), docs[i:min(i+500, len(docs))]...); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// startNATS runs an embedded NATS server on a loopback port.
func startNATS(t testing.TB) *nats.Conn {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Addr: "127.0.0.1:0", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// splitCluster is a collection in one index and split over shards served on NATS.
type splitCluster struct {
	one     *index.Index
	servers []*search.Server
	nodes   []string
	nc      *nats.Conn
}

func newSplitCluster(t testing.TB, shards int) *splitCluster {
	t.Helper()
	docs := documents(cranfield(t))
	dir := t.TempDir()
	c := &splitCluster{one: openIndex(t, filepath.Join(dir, "one"), docs), nc: startNATS(t)}
	parts := make([][]index.Doc, shards)
	for _, d := range docs {
		parts[shardOf(d, shards)] = append(parts[shardOf(d, shards)], d)
	}
	for i, part := range parts {
		if len(part) == 0 {
			t.Fatalf("shard %d is empty", i)
		}
		node := fmt.Sprintf("node-%d", i+1)
		ix := openIndex(t, filepath.Join(dir, node), part)
		s, err := search.Listen(c.nc, "", node, ix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		c.servers, c.nodes = append(c.servers, s), append(c.nodes, node)
	}
	return c
}

func (c *splitCluster) gatherer(t testing.TB, nodes []string, timeout time.Duration) *search.Gatherer {
	t.Helper()
	g, err := search.NewGatherer(c.nc, func(context.Context) ([]string, error) { return nodes, nil }, search.GathererOptions{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sameScore reports whether two scores are equal to float precision.
func sameScore(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a)) }

// compare checks that got (the cluster) is the result want (one index) gave: same totals,
// pages, facets, and at every rank the same score, document and snippet. Documents with
// exactly equal scores may come in another order (one index orders them by internal
// document number), so a run of equal scores compares as a set — on its scores only when it
// may go on over the page's edge (the caller then compares the pages' union).
func compare(t *testing.T, label string, want, got *index.Result) {
	t.Helper()
	if got.AllWords != want.AllWords {
		t.Errorf("%s: %d documents with every word, one index %d", label, got.AllWords, want.AllWords)
	}
	if got.Total != want.Total || got.Pages != want.Pages || got.Relaxed != want.Relaxed || got.Query != want.Query || got.FacetsOver != want.FacetsOver {
		t.Errorf("%s: total %d pages %d relaxed %v query %q facets over %d; one index: %d %d %v %q %d", label,
			got.Total, got.Pages, got.Relaxed, got.Query, got.FacetsOver, want.Total, want.Pages, want.Relaxed, want.Query, want.FacetsOver)
		return
	}
	if len(got.Hits) != len(want.Hits) {
		t.Errorf("%s: %d hits, one index %d", label, len(got.Hits), len(want.Hits))
		return
	}
	if len(got.Missing) > 0 {
		t.Errorf("%s: shards missing: %v", label, got.Missing)
	}
	for i := 0; i < len(want.Hits); {
		j := i + 1
		for j < len(want.Hits) && want.Hits[j].Score == want.Hits[i].Score {
			j++
		}
		var ws, gs []string
		for k := i; k < j; k++ {
			if !sameScore(got.Hits[k].Score, want.Hits[k].Score) {
				t.Errorf("%s: rank %d: score %.17g (%s), one index %.17g (%s)", label, k+1, got.Hits[k].Score, got.Hits[k].ID, want.Hits[k].Score, want.Hits[k].ID)
				return
			}
			ws, gs = append(ws, hitKey(want.Hits[k])), append(gs, hitKey(got.Hits[k]))
		}
		sort.Strings(ws)
		sort.Strings(gs)
		edge := i == 0 && want.Page > 1 || j == len(want.Hits) && want.Page < want.Pages
		if !edge && !slices.Equal(ws, gs) {
			t.Errorf("%s: ranks %d-%d: %v, one index %v", label, i+1, j, gs, ws)
			return
		}
		i = j
	}
	if want.FacetsOver < int(want.Total) {
		// Facets count the best FacetsOver results, and results with exactly the score of
		// the last one may be cut differently: counts may differ by the few of them.
		for name, wf := range want.Facets {
			for _, w := range wf {
				for _, g := range got.Facets[name] {
					if g.Value == w.Value && (g.Count < w.Count-3 || g.Count > w.Count+3) {
						t.Errorf("%s: facet %s %s: %d, one index %d", label, name, w.Value, g.Count, w.Count)
					}
				}
			}
		}
	} else if !reflect.DeepEqual(got.Facets, want.Facets) {
		t.Errorf("%s: facets\n%v\none index\n%v", label, got.Facets, want.Facets)
	}
}

// hitKey is what a hit shows, apart from its score.
func hitKey(h index.Hit) string {
	return strings.Join([]string{h.ID, h.URL, h.Title, h.Snippet, h.Host, h.Lang, h.Kind, fmt.Sprint(h.Relevance, h.InLinks, h.Fetched.Unix())}, "|")
}

// allPhases are the last tokens of the subjects a node answers searches on.
var allPhases = []string{"stats", "query", "fbdocs", "fbcounts", "fbscores", "fetch"}

// TestSplitCollection is issue 11's search acceptance, on Cranfield split by host over 4
// indexes on disk, each served by its own server on one NATS server.
func TestSplitCollection(t *testing.T) {
	c := newSplitCluster(t, 4)
	t.Run("equals one index", func(t *testing.T) { testEqualsOneIndex(t, c) })
	t.Run("shard down", func(t *testing.T) { testShardDown(t, c) })
}

// testEqualsOneIndex: the split collection answers every query — Cranfield's own (as bags
// of words, OR), phrases, field queries, exclusions, filters, a relaxed AND, deeper pages,
// facets — with the same results, order and scores as one index over all of it. The
// default ranking blends topic relevance, so the blend at the gatherer is exercised.
func testEqualsOneIndex(t *testing.T, c *splitCluster) {
	g := c.gatherer(t, c.nodes, 10*time.Second)
	ctx := context.Background()
	var reqs []index.Request
	col := cranfield(t)
	for _, q := range col.Queries[:40] {
		reqs = append(reqs, index.Request{Query: q.Text, Operator: "or", Facets: true})
	}
	for _, q := range []string{
		`"boundary layer"`, `"heat transfer" supersonic`, `title:flow`, `title:"shock wave"`, `wing OR airfoil`,
		`pressure -supersonic`, `(laminar OR turbulent) boundary`, `site:site3.example flow`, `lang:de flow`,
		`after:2025-01-01 pressure distribution`, `before:2024-06-01 heat`, `site:site5.example`, `inurl:abstract wing`,
		`xyzzyq boundary`, `boundary-layer transition`, `anchors:abstract`, `type:page nozzle`, `body:viscous`,
	} {
		reqs = append(reqs, index.Request{Query: q, Facets: true})
	}
	for page := 1; page <= 4; page++ {
		reqs = append(reqs, index.Request{Query: "flow pressure", Operator: "or", Page: page, PerPage: 10})
		reqs = append(reqs, index.Request{Query: "site:site7.example", Page: page, PerPage: 25})
	}
	reqs = append(reqs, index.Request{Query: "shock", Page: 3, PerPage: 100, Facets: true})
	// Questions as typed, with the implicit AND: when fewer than index.FillBelow abstracts
	// have every word, those with some follow (issue 13), on every page alike.
	for _, q := range col.Queries[:12] {
		reqs = append(reqs, index.Request{Query: q.Text}, index.Request{Query: q.Text, Page: 3, PerPage: 4})
	}
	var wantPaged, gotPaged []string // the pages of site:site7.example, whose scores all tie
	for _, req := range reqs {
		want, err := c.one.Search(ctx, req)
		if err != nil {
			t.Fatalf("%q: one index: %v", req.Query, err)
		}
		got, err := g.Search(ctx, req)
		if err != nil {
			t.Fatalf("%q: cluster: %v", req.Query, err)
		}
		if got.Shards != 4 {
			t.Errorf("%q: %d shards asked, want 4", req.Query, got.Shards)
		}
		compare(t, fmt.Sprintf("%q page %d", req.Query, req.Page), want, got)
		if req.Query == "site:site7.example" {
			for i := range want.Hits {
				wantPaged, gotPaged = append(wantPaged, want.Hits[i].ID), append(gotPaged, got.Hits[i].ID)
			}
		}
	}
	sort.Strings(wantPaged)
	sort.Strings(gotPaged)
	if len(wantPaged) < 50 || !slices.Equal(gotPaged, wantPaged) || len(slices.Compact(slices.Clone(gotPaged))) != len(gotPaged) {
		t.Errorf("pages of 25 tied results: %d distinct of %d, one index %d", len(slices.Compact(slices.Clone(gotPaged))), len(gotPaged), len(wantPaged))
	}
	// The acceptance sentence itself: top 10 ids in order with scores, for a query whose
	// top 10 has no ties.
	want, _ := c.one.Search(ctx, index.Request{Query: "boundary layer transition", Operator: "or"})
	got, _ := g.Search(ctx, index.Request{Query: "boundary layer transition", Operator: "or"})
	if len(want.Hits) != 10 || len(got.Hits) != 10 {
		t.Fatalf("top 10: %d and %d hits", len(got.Hits), len(want.Hits))
	}
	for i := range want.Hits {
		if got.Hits[i].ID != want.Hits[i].ID || !sameScore(got.Hits[i].Score, want.Hits[i].Score) {
			t.Errorf("rank %d: %s %.17g, one index %s %.17g", i+1, got.Hits[i].ID, got.Hits[i].Score, want.Hits[i].ID, want.Hits[i].Score)
		}
	}
	// A malformed query is the user's error, as with one index.
	_, err := g.Search(ctx, index.Request{Query: `"unclosed`})
	var qe *index.QueryError
	if !errors.As(err, &qe) {
		t.Errorf("malformed query: %v, want a *index.QueryError", err)
	}
}

// testShardDown: with one node stopped and another that never answers, the answer is the
// other shards' results, partial and naming the missing ones, without an error and within
// the timeout. It stops c's servers.
func testShardDown(t *testing.T, c *splitCluster) {
	ctx := context.Background()
	// node-5 is a member whose searches hang: it takes requests and never answers.
	for _, phase := range allPhases {
		sub, err := c.nc.Subscribe(search.Subject("", "node-5", phase), func(*nats.Msg) {})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sub.Unsubscribe() })
	}
	full, err := c.gatherer(t, c.nodes, 10*time.Second).Search(ctx, index.Request{Query: "flow"})
	if err != nil || len(full.Missing) > 0 {
		t.Fatal(err, full.Missing)
	}
	// node-p answers the statistics, query and feedback phases as node-3 does (it relays
	// them) but fails the fetch: the page keeps node-3's results in place, with ID and
	// score only, and names node-p.
	relayFailing(t, c.nc, "node-p", "node-3", "fetch", `{"error":"disk gone"}`)
	relayed, err := c.gatherer(t, []string{"node-1", "node-2", "node-4", "node-p"}, 10*time.Second).Search(ctx, index.Request{Query: "flow"})
	if err != nil || !slices.Equal(relayed.Missing, []string{"node-p"}) || relayed.Total != full.Total || len(relayed.Hits) != len(full.Hits) {
		t.Fatalf("fetch failing: %v, missing %v, total %d of %d", err, relayed.Missing, relayed.Total, full.Total)
	}
	bare := 0
	for i, h := range relayed.Hits {
		if h.ID != full.Hits[i].ID || !sameScore(h.Score, full.Hits[i].Score) {
			t.Errorf("fetch failing: rank %d is %s %v, want %s %v", i+1, h.ID, h.Score, full.Hits[i].ID, full.Hits[i].Score)
		}
		if h.Title == "" {
			bare++
			if h.URL != h.ID {
				t.Errorf("unfetched %s shows URL %q", h.ID, h.URL)
			}
		}
	}
	if bare == 0 {
		t.Errorf("no result of node-3 among the first %d: the fetch failure is not exercised", len(full.Hits))
	}
	// node-q relays every phase to node-3 but fails feedback's scores: node-3's best
	// matches keep their scores without feedback's share, and the answer names node-q.
	relayFailing(t, c.nc, "node-q", "node-3", "fbscores", `{"error":"index closed"}`)
	noScores, err := c.gatherer(t, []string{"node-1", "node-2", "node-4", "node-q"}, 10*time.Second).Search(ctx, index.Request{Query: "flow"})
	if err != nil || !slices.Equal(noScores.Missing, []string{"node-q"}) || noScores.Total != full.Total || len(noScores.Hits) != len(full.Hits) {
		t.Fatalf("feedback scores failing: %v, missing %v, total %d of %d", err, noScores.Missing, noScores.Total, full.Total)
	}
	differ := 0
	for i, h := range noScores.Hits {
		if h.ID != full.Hits[i].ID || !sameScore(h.Score, full.Hits[i].Score) {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("feedback scores failing on node-q changed no result: feedback is not exercised")
	}

	c.servers[1].Close() // node-2 stops
	g := c.gatherer(t, append(slices.Clone(c.nodes), "node-5"), 500*time.Millisecond)
	start := time.Now()
	got, err := g.Search(ctx, index.Request{Query: "flow", Facets: true})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("search with a shard down: %v", err)
	}
	if !slices.Equal(got.Missing, []string{"node-2", "node-5"}) || got.Shards != 5 {
		t.Errorf("missing %v of %d shards, want [node-2 node-5] of 5", got.Missing, got.Shards)
	}
	if took > 5*time.Second {
		t.Errorf("took %v with a 500 ms timeout per phase", took)
	}
	// The answer is the live shards': every hit is on one of them, the total theirs.
	if got.Total == 0 || got.Total >= full.Total {
		t.Errorf("partial total %d, whole collection %d", got.Total, full.Total)
	}
	for _, h := range got.Hits {
		if h.Title == "" {
			t.Errorf("hit %s not fetched", h.ID)
		}
	}
	// Every node down: an empty partial answer, still no error.
	for _, s := range c.servers {
		s.Close()
	}
	got, err = g.Search(ctx, index.Request{Query: "flow"})
	if err != nil || len(got.Hits) != 0 || len(got.Missing) != 5 {
		t.Errorf("all down: %v, %d hits, missing %v", err, len(got.Hits), got.Missing)
	}
}

// relayFailing makes node answer every search phase as to (relaying the requests to it),
// except phase, which it answers with reply.
func relayFailing(t *testing.T, nc *nats.Conn, node, to, phase, reply string) {
	t.Helper()
	for _, p := range allPhases {
		sub, err := nc.Subscribe(search.Subject("", node, p), func(m *nats.Msg) {
			if p == phase {
				m.Respond([]byte(reply))
				return
			}
			rep, err := nc.Request(search.Subject("", to, p), m.Data, 10*time.Second)
			if err == nil {
				m.Respond(rep.Data)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sub.Unsubscribe() })
	}
}
