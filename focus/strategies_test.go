package focus

import (
	"context"
	"math"
	"testing"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

var norm = urlnorm.New(urlnorm.Options{})

// fetched builds the document of a fetched HTML page and runs the relevance analyzer on
// it, as the crawler does before scoring the page's links.
func fetched(t testing.TB, rel *Relevance, url, html string) *crawl.Document {
	t.Helper()
	u, err := norm.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parse.Parse([]byte(html), url, parse.Options{Resolver: norm})
	if err != nil {
		t.Fatal(err)
	}
	d := &crawl.Document{URL: u, Item: frontier.Item{URL: u.String(), Key: u.Key(), Host: u.HostKey()}, Page: p, Text: p.Text(),
		Record: &store.Page{URL: u.String(), Status: 200}}
	if rel != nil {
		if err := rel.Analyze(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func link(t testing.TB, d *crawl.Document, i int) crawl.Link {
	t.Helper()
	u, err := norm.Parse(d.Page.Links[i].URL)
	if err != nil {
		t.Fatal(err)
	}
	return crawl.Link{URL: u, Depth: d.Item.Depth + 1, Source: d, Index: i}
}

func seedLink(t *testing.T, url string) crawl.Link {
	u, _ := norm.Parse(url)
	return crawl.Link{URL: u, Index: -1}
}

const (
	onTopicPage = `<html><title>Reactors</title><body><p>The nuclear reactor and its uranium fuel.</p>
<p>See the <a href="/r1">reactor safety</a> page. Cake and butter <a href="/c1">recipes</a> too.</p>
<a href="/x2">two</a><a href="/x3">three</a><a href="/x4">four</a></body></html>`
	offTopicPage = `<html><title>Cakes</title><body><p>Butter, sugar and flour make a cake.</p>
<p>Read about the <a href="/n1">plant</a> next door, or <a href="/c2">cookies</a>.</p></body></html>`
)

func testRelevance(t testing.TB) *Relevance {
	t.Helper()
	rel, err := NewRelevance([]*Topic{mustTopic(t, "name: nuclear\nthreshold: 0.2\nkeywords: {en: {nuclear: 10, reactor: 2, uranium: 2, fuel: 1}}")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestRelevanceAnalyzer(t *testing.T) {
	rel := testRelevance(t)
	on := fetched(t, rel, "http://a.test/", onTopicPage)
	off := fetched(t, rel, "http://b.test/", offTopicPage)
	if !*on.Record.Relevant || *off.Record.Relevant || *on.Record.Relevance <= *off.Record.Relevance {
		t.Errorf("on-topic %v %.2f, off-topic %v %.2f", *on.Record.Relevant, *on.Record.Relevance, *off.Record.Relevant, *off.Record.Relevance)
	}
	if on.Record.Lang != "en" || len(on.Record.Topics) != 1 || off.Record.Topics != nil {
		t.Errorf("lang %q topics %v / %v", on.Record.Lang, on.Record.Topics, off.Record.Topics)
	}
	if r, j := rel.Harvest(); r != 1 || j != 2 {
		t.Errorf("harvest %d/%d, want 1/2", r, j)
	}
	if j, ok := rel.JudgmentOf(on); !ok || !j.Relevant {
		t.Errorf("JudgmentOf: %+v %v", j, ok)
	}
	if _, err := NewRelevance(nil, nil); err == nil {
		t.Error("relevance without topic or model must fail")
	}
}

func TestBestFirst(t *testing.T) {
	rel := testRelevance(t)
	s, err := NewStrategy("best-first", StrategyOptions{Relevance: rel})
	if err != nil {
		t.Fatal(err)
	}
	on := fetched(t, rel, "http://a.test/", onTopicPage)
	off := fetched(t, rel, "http://b.test/", offTopicPage)
	if got := s.Score(link(t, on, 0)); math.Abs(got-*on.Record.Relevance) > 2e-5 {
		t.Errorf("best-first gives %v, want the page's relevance %v", got, *on.Record.Relevance)
	}
	if s.Score(link(t, on, 1)) <= s.Score(link(t, off, 0)) {
		t.Error("links of a relevant page must come before those of an irrelevant one")
	}
	if math.Abs(s.Score(seedLink(t, "http://s.test/"))-seedPriority) > 2e-5 {
		t.Error("seeds first")
	}
	bn, _ := NewStrategy("best-n-first", StrategyOptions{Relevance: rel, BestN: BestNParams{N: 8}})
	if c, ok := bn.(Concurrent); !ok || c.Concurrency() != 8 || bn.Score(link(t, on, 0)) != s.Score(link(t, on, 0)) {
		t.Error("best-n-first: best-first scores with N fetches in flight")
	}
}

func TestRandomRepeats(t *testing.T) {
	a, b := NewRandom(7), NewRandom(7)
	rel := testRelevance(t)
	on := fetched(t, rel, "http://a.test/", onTopicPage)
	for i := 0; i < 5; i++ {
		x, y := a.Score(link(t, on, 0)), b.Score(link(t, on, 0))
		if x != y || x < 0 || x >= 1 {
			t.Fatalf("random priorities %v, %v", x, y)
		}
	}
}

// TestFish checks De Bra and Post's rules: a relevant page's first A·Width children get 1,
// an irrelevant page's first Width children 0.5, the rest 0; depth falls by one per
// irrelevant page, and links of an irrelevant page at depth 0 are parked.
func TestFish(t *testing.T) {
	rel := testRelevance(t)
	f := NewFish(rel, FishParams{Width: 2, A: 1.5, Depth: 2}, 0)
	seed := seedLink(t, "http://a.test/")
	f.Score(seed)
	on := fetched(t, rel, "http://a.test/", onTopicPage) // relevant, 5 links: A·Width = 3 get 1
	for i, want := range []float64{1, 1, 1, 0, 0} {
		if got := f.Score(link(t, on, i)); got != want {
			t.Errorf("child %d of a relevant page: %v, want %v", i, got, want)
		}
	}
	// The chain of irrelevant pages: /c1 (depth D=2, from a relevant page) → depth 1 → 0.
	off1 := fetched(t, rel, "http://a.test/c1", offTopicPage)
	if got := f.Score(link(t, off1, 0)); got != 0.5 {
		t.Errorf("first child of an irrelevant page: %v, want 0.5", got)
	}
	f.Score(link(t, off1, 1)) // b.test/c2 ← depth 1
	off2 := fetched(t, rel, "http://a.test/c2", offTopicPage)
	f.Score(link(t, off2, 1))                               // a.test/c2 from c2 itself: already known, keeps its depth
	d2 := fetched(t, rel, "http://a.test/n1", offTopicPage) // depth 1 (child of off1)
	f.Score(link(t, d2, 1))                                 // → a.test/c2 known
	deep := fetched(t, rel, "http://a.test/zz", offTopicPage)
	f.depths.put(deep.URL.Key(), 0)
	if got := f.Score(link(t, deep, 0)); got != parkedPriority {
		t.Errorf("link of an irrelevant page at depth 0: %v, want parked", got)
	}
}

// TestShark works Hersovici et al.'s formula on one link.
func TestShark(t *testing.T) {
	rel := testRelevance(t)
	topics := rel.Judge().Topics
	p := SharkParams{Depth: 3, Decay: 0.5, Beta: 0.8, Gamma: 0.5, Window: 8}
	s := NewShark(rel, topics, p, 0)
	s.Score(seedLink(t, "http://a.test/"))
	on := fetched(t, rel, "http://a.test/", onTopicPage)
	sim := *on.Record.Relevance
	// Link 0, anchor "reactor safety": anchor > 0, so context = 1.
	anchor := topics[0].TextCosine("reactor safety", "en")
	want := 0.5*(0.5*sim) + 0.5*(0.8*anchor+0.2*1)
	if got := s.Score(link(t, on, 0)); math.Abs(got-want) > 1e-6 {
		t.Errorf("shark(link 0) = %v, want %v", got, want)
	}
	// Link 1, anchor "recipes": no topic word, so context = sim(5 words around it).
	ctx := topics[0].TextCosine(on.Page.AnchorWindow(1, 8), "en")
	want = 0.5*(0.5*sim) + 0.5*(0.2*ctx)
	if got := s.Score(link(t, on, 1)); math.Abs(got-want) > 1e-6 || ctx == 0 {
		t.Errorf("shark(link 1) = %v, want %v (context %v)", got, want, ctx)
	}
	// A child of an off-topic page (sim 0) inherits δ·inherited(parent).
	off := fetched(t, rel, "http://a.test/c1", `<html><p>Plain words <a href="/z">z</a>.</p></html>`)
	parent, _ := s.states.get(off.URL.Key())
	if got, want := s.Score(link(t, off, 0)), 0.5*(0.5*float64(parent.inherited)); math.Abs(got-want) > 1e-6 {
		t.Errorf("shark(child of an off-topic page) = %v, want %v", got, want)
	}
}

func TestNewStrategyErrors(t *testing.T) {
	if _, err := NewStrategy("best-first", StrategyOptions{}); err == nil {
		t.Error("best-first without relevance must fail")
	}
	if _, err := NewStrategy("mlp", StrategyOptions{Relevance: testRelevance(t)}); err == nil {
		t.Error("mlp without a network must fail")
	}
	if _, err := NewStrategy("dfs", StrategyOptions{}); err == nil {
		t.Error("unknown strategy must fail")
	}
	for _, name := range Strategies() {
		if !IsStrategy(name) {
			t.Errorf("IsStrategy(%s)", name)
		}
	}
}

// TestGapCosineMatchesLinkContext: the per-page gap analysis the link features use gives
// the same cosines as analyzing parse.Page.LinkContext's text for every link and distance.
func TestGapCosineMatchesLinkContext(t *testing.T) {
	rel := testRelevance(t)
	topic := rel.Judge().Topics[0]
	html := `<html><body><p>Nuclear fuel <a href="/1">one</a> reactor <a href="/2">two</a></p>
<p>uranium and more uranium <a href="/3">three</a><a href="/4">four</a> plain words <a href="/5">five</a></p>
<p>fuel fuel <a href="/6">six</a> the end nuclear</p></body></html>`
	d := fetched(t, rel, "http://a.test/", html)
	g := newGapTerms(d.Page, topic, "en")
	for i := range d.Page.Links {
		for dist := 1; dist <= 5; dist++ {
			before, after := d.Page.LinkContext(i, dist)
			want := topic.TextCosine(joinContext(before, after), "en")
			if got := g.cosine(i, dist); math.Abs(got-want) > 1e-12 {
				t.Errorf("link %d distance %d: gap cosine %v, LinkContext cosine %v (%q | %q)", i, dist, got, want, before, after)
			}
		}
	}
}

func TestLanguageAnalyzer(t *testing.T) {
	d := fetched(t, nil, "http://a.test/", `<html lang="en"><p>A energia nuclear é uma forma de produção de eletricidade que não emite gases do efeito estufa.</p></html>`)
	d.Record.Lang = "en" // what the markup declared
	if err := (Language{}).Analyze(context.Background(), d); err != nil || d.Record.Lang != "pt" {
		t.Errorf("lang %q, %v: the text is Portuguese", d.Record.Lang, err)
	}
}
