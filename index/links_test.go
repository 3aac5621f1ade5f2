package index

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/query"
	"github.com/sonda-search/sonda/urlnorm"
)

type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

func memGraph(t testing.TB) *linkgraph.Graph {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), Logger: quietPebble{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	g, err := linkgraph.OpenPebble(db, linkgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func page(name string) string { return "http://www." + name + ".test/" }

// TestSeed002InLinkRanking reproduces seed 002's search: MySQL boolean mode (implicit OR,
// +required, -excluded) over pages kept in countLinks order, so results come back by
// in-link count, whatever their text scores. sonda does that with operator or,
// link-signal inlinks and link weight 1; each result shows its in-link count, and the
// relations of a result are its in-links and out-links.
func TestSeed002InLinkRanking(t *testing.T) {
	g := memGraph(t)
	// Six pages about search engines; in-links: portal 4, busca 3, indice 2, crawler 1,
	// tese 0, outro 0 (outro does not mention the words).
	links := map[string][]linkgraph.Link{
		page("portal"):  {{URL: page("busca"), Anchor: "busca"}, {URL: page("indice"), Anchor: "índice"}},
		page("busca"):   {{URL: page("portal"), Anchor: "portal"}, {URL: page("crawler"), Anchor: "crawler"}},
		page("indice"):  {{URL: page("portal"), Anchor: "portal"}, {URL: page("busca"), Anchor: "busca"}},
		page("crawler"): {{URL: page("portal"), Anchor: "portal"}, {URL: page("busca"), Anchor: "sistema de busca"}},
		page("tese"):    {{URL: page("portal"), Anchor: "portal"}, {URL: page("indice"), Anchor: "índice"}},
	}
	for src, ls := range links {
		if _, err := g.SetLinks(src, ls); err != nil {
			t.Fatal(err)
		}
	}
	ix := openTest(t, Options{Links: g, Ranking: Ranking{Title: 1, Body: 1, K1: 1.2, B: 0.75, Link: 1, LinkSignal: "inlinks"}, Implicit: query.Or})
	texts := map[string]string{
		page("portal"):  "Portal com links para sistemas de busca.",
		page("busca"):   "Sistemas de busca: busca, busca e mais busca na web.",
		page("indice"):  "Como um sistema de busca monta seu índice invertido.",
		page("crawler"): "O crawler de um sistema de busca coleta páginas.",
		page("tese"):    "Tese sobre sistemas de busca distribuídos e busca incremental.",
		page("outro"):   "Receitas de bolo de cenoura.",
	}
	for url, body := range texts {
		load(t, ix, Doc{ID: url, URL: url, Host: urlnorm.HostOf(url), Lang: "pt", Title: "página", Body: body})
	}
	wantOrder := []string{page("portal"), page("busca"), page("indice"), page("crawler"), page("tese")}
	wantLinks := []int{4, 3, 2, 1, 0}
	for _, q := range []string{"sistemas de busca", "busca", "+sistemas +busca"} {
		r := find(t, ix, q)
		if got := ids(r); !reflect.DeepEqual(got, wantOrder) {
			t.Errorf("%q: order %v, want by in-links %v", q, got, wantOrder)
			continue
		}
		for i, h := range r.Hits {
			if h.InLinks != wantLinks[i] {
				t.Errorf("%q: %s shows %d in-links, want %d", q, h.ID, h.InLinks, wantLinks[i])
			}
		}
	}
	// "+sistemas -busca": one word required, the other excluded (seed 002's Quadro 25).
	if r := find(t, ix, "+busca -crawler -tese"); !reflect.DeepEqual(ids(r), []string{page("portal"), page("busca"), page("indice")}) {
		t.Errorf("+busca -crawler -tese: %v", ids(r))
	}
	// The relations page of the top result: who links to it and where it links.
	in, out, err := g.Relations(context.Background(), page("portal"), 0)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := []linkgraph.Edge{{URL: page("busca"), Anchor: "portal"}, {URL: page("crawler"), Anchor: "portal"}, {URL: page("indice"), Anchor: "portal"}, {URL: page("tese"), Anchor: "portal"}}
	wantOut := []linkgraph.Edge{{URL: page("busca"), Anchor: "busca"}, {URL: page("indice"), Anchor: "índice"}}
	if !reflect.DeepEqual(in, wantIn) || !reflect.DeepEqual(out, wantOut) {
		t.Errorf("relations of portal:\n in  %v\n out %v", in, out)
	}
}

// TestLinkBlend checks that the link prior reorders results whose text scores are close,
// and leaves clearly better text matches on top.
func TestLinkBlend(t *testing.T) {
	g := memGraph(t)
	for i := 0; i < 6; i++ {
		if _, err := g.SetLinks(page(fmt.Sprint("fan", i)), []linkgraph.Link{{URL: page("popular")}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.ComputePageRank(context.Background()); err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, Options{Links: g})
	load(t, ix,
		Doc{ID: page("popular"), URL: page("popular"), Host: "www.popular.test", Lang: "en", Title: "Reactor notes", Body: "Notes about a reactor and other things.", Relevance: -1},
		Doc{ID: page("obscure"), URL: page("obscure"), Host: "www.obscure.test", Lang: "en", Title: "Reactor notes", Body: "Notes about a reactor and other stuff.", Relevance: -1},
		Doc{ID: page("expert"), URL: page("expert"), Host: "www.expert.test", Lang: "en", Title: "Reactor reactor design", Body: "Reactor cores, reactor fuel, reactor safety: a reactor handbook.", Relevance: -1},
	)
	r := find(t, ix, "reactor")
	if got := ids(r); len(got) != 3 || got[0] != page("expert") || got[1] != page("popular") {
		t.Errorf("order %v: want the best text match first, then the linked page before its textual twin", got)
	}
	if r.Hits[1].InLinks != 6 {
		t.Errorf("popular shows %d in-links", r.Hits[1].InLinks)
	}
	// No document has a topic relevance: the relevance weight changes nothing.
	noTopic := DefaultRanking()
	noTopic.Relevance = 0
	if err := ix.SetRanking(noTopic); err != nil {
		t.Fatal(err)
	}
	r2 := find(t, ix, "reactor")
	for i := range r.Hits {
		if r2.Hits[i].ID != r.Hits[i].ID || math.Abs(r2.Hits[i].Score-r.Hits[i].Score) > 1e-12 {
			t.Errorf("hit %d: %s %g with relevance weight %g, %s %g without", i+1, r.Hits[i].ID, r.Hits[i].Score, DefaultRanking().Relevance, r2.Hits[i].ID, r2.Hits[i].Score)
		}
	}
}

// TestRelevanceBlend: among pages with the same text, the one more relevant to the topic
// comes first, by exactly the relevance weight times the difference in relevance.
func TestRelevanceBlend(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix,
		Doc{ID: "off", URL: "http://a.test/off", Host: "a.test", Lang: "en", Title: "Reactor notes", Body: "Notes about a reactor.", Relevance: 0.1},
		Doc{ID: "on", URL: "http://a.test/on", Host: "a.test", Lang: "en", Title: "Reactor notes", Body: "Notes about a reactor.", Relevance: 0.9, Relevant: true},
		Doc{ID: "best", URL: "http://a.test/best", Host: "a.test", Lang: "en", Title: "Reactor reactor", Body: "Reactor, reactor, reactor: the reactor book.", Relevance: 0.1},
	)
	r := find(t, ix, "reactor")
	score := map[string]float64{}
	for _, h := range r.Hits {
		score[h.ID] = h.Score
	}
	if got := ids(r); !reflect.DeepEqual(got, []string{"on", "best", "off"}) {
		t.Errorf("order %v, want on, best, off", got)
	}
	if d, want := score["on"]-score["off"], DefaultRanking().Relevance*0.8; math.Abs(d-want) > 1e-9 {
		t.Errorf("relevance lifts by %g, want %g", d, want)
	}
	if score["best"] <= score["off"] {
		t.Errorf("with equal relevance the better text match is not first: %v", score)
	}
}

// TestResultCacheFollowsPageRank: a PageRank run changes link priors, so results cached
// before it are not served after it.
func TestResultCacheFollowsPageRank(t *testing.T) {
	g := memGraph(t)
	ix := openTest(t, Options{Links: g})
	load(t, ix, corpus...)
	if r := find(t, ix, "reactor"); r.Cached {
		t.Fatal("the first search came from the cache")
	}
	if r := find(t, ix, "reactor"); !r.Cached {
		t.Fatal("the second search did not come from the cache")
	}
	if _, err := g.SetLinks(page("fan"), []linkgraph.Link{{URL: "http://www.reactor.test/fuel"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.ComputePageRank(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := find(t, ix, "reactor"); r.Cached {
		t.Error("a result cached before a PageRank run was served after it")
	}
}
