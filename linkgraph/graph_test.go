package linkgraph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"gonum.org/v1/gonum/graph/network"
	"gonum.org/v1/gonum/graph/simple"
)

func openMem(t testing.TB, opts Options) *Graph {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	g, err := OpenPebble(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

func u(name string) string { return "http://www." + name + ".test/" }

// seed002Fixture is a small web in the spirit of seed 002's experiment: a university home
// page everybody links to, department pages, and a leaf.
var seed002Fixture = map[string][]Link{
	u("furb"): {{u("inf"), "Informática"}, {u("bib"), "Biblioteca"}, {u("news"), "Notícias"}},
	u("inf"):  {{u("furb"), "FURB"}, {u("bib"), "Biblioteca"}, {u("inf"), "self link"}},
	u("bib"):  {{u("furb"), "Universidade"}, {u("news"), "news"}},
	u("news"): {{u("furb"), "FURB"}, {u("furb"), "home again"}, {u("leaf"), "a leaf"}},
}

func loadFixture(t testing.TB, g *Graph, f map[string][]Link) {
	t.Helper()
	for src, links := range f {
		if _, err := g.SetLinks(src, links); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSeed002Relations reproduces seed 002's ranking signal and connectivity page on a
// fixture graph: countLinks is the number of distinct pages linking to a URL, and a URL's
// relations are the pages linking to it and the pages it links to.
func TestSeed002Relations(t *testing.T) {
	g := openMem(t, Options{})
	loadFixture(t, g, seed002Fixture)
	counts := map[string]int{u("furb"): 3, u("bib"): 2, u("news"): 2, u("inf"): 1, u("leaf"): 1, u("nobody"): 0}
	for url, want := range counts {
		if got, err := g.InLinks(url); err != nil || got != want {
			t.Errorf("InLinks(%s) = %d, %v; want %d", url, got, err, want)
		}
	}
	in, out, err := g.Relations(context.Background(), u("furb"), 0)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := []Edge{{u("bib"), "Universidade"}, {u("inf"), "FURB"}, {u("news"), "FURB"}}
	wantOut := []Edge{{u("bib"), "Biblioteca"}, {u("inf"), "Informática"}, {u("news"), "Notícias"}}
	if !reflect.DeepEqual(in, wantIn) || !reflect.DeepEqual(out, wantOut) {
		t.Errorf("Relations(furb):\n in  %v\n out %v\nwant\n in  %v\n out %v", in, out, wantIn, wantOut)
	}
	if in, _, _ := g.Relations(context.Background(), u("furb"), 2); len(in) != 2 {
		t.Errorf("limit 2 gave %d in-links", len(in))
	}
	if n, err := g.Edges(); err != nil || n != 9 {
		t.Errorf("Edges() = %d, %v; want 9 (self link and repeated target dropped)", n, err)
	}
}

func TestSetLinksReplaces(t *testing.T) {
	g := openMem(t, Options{})
	loadFixture(t, g, seed002Fixture)
	// news is re-crawled: it dropped its link to furb and now links to inf.
	changed, err := g.SetLinks(u("news"), []Link{{u("leaf"), "a leaf"}, {u("inf"), "Computing"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{u("furb"), u("inf")}; !reflect.DeepEqual(changed, want) {
		t.Errorf("changed = %v, want %v", changed, want)
	}
	if n, _ := g.InLinks(u("furb")); n != 2 {
		t.Errorf("furb in-links = %d after news dropped its link, want 2", n)
	}
	if n, _ := g.InLinks(u("inf")); n != 2 {
		t.Errorf("inf in-links = %d, want 2", n)
	}
	// The same links again change nothing.
	if changed, err := g.SetLinks(u("news"), []Link{{u("inf"), "Computing"}, {u("leaf"), "a leaf"}}); err != nil || changed != nil {
		t.Errorf("unchanged links reported %v, %v", changed, err)
	}
	// A new anchor is a change, with no count change.
	if changed, _ := g.SetLinks(u("news"), []Link{{u("inf"), "CS"}, {u("leaf"), "a leaf"}}); !reflect.DeepEqual(changed, []string{u("inf")}) {
		t.Errorf("anchor change reported %v", changed)
	}
	if _, err := g.Remove(u("news")); err != nil {
		t.Fatal(err)
	}
	if n, _ := g.InLinks(u("leaf")); n != 0 {
		t.Errorf("leaf in-links = %d after its only source was removed", n)
	}
	if n, _ := g.Edges(); n != 7 {
		t.Errorf("edges = %d, want 7", n)
	}
}

// TestSetLinksWhere: a share of a page's links replaced, the others kept, as a cluster
// node records the links routed to the hosts it owns.
func TestSetLinksWhere(t *testing.T) {
	g := openMem(t, Options{})
	src := "http://a.test/page"
	onB := func(dst string) bool { return strings.HasPrefix(dst, "http://b.test/") }
	if _, err := g.SetLinks(src, []Link{{"http://b.test/1", "one"}, {"http://c.test/1", "see c"}}); err != nil {
		t.Fatal(err)
	}
	// The page's links into b.test are now b/2 (not b/1), and a link to c.test given here
	// is outside the share: ignored.
	changed, err := g.SetLinksWhere(src, []Link{{"http://b.test/2", "two"}, {"http://c.test/9", "ignored"}}, onB)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://b.test/1", "http://b.test/2"}; !reflect.DeepEqual(changed, want) {
		t.Errorf("changed = %v, want %v", changed, want)
	}
	for url, want := range map[string]int{"http://b.test/1": 0, "http://b.test/2": 1, "http://c.test/1": 1, "http://c.test/9": 0} {
		if n, _ := g.InLinks(url); n != want {
			t.Errorf("%s in-links = %d, want %d", url, n, want)
		}
	}
	if a, _ := g.Anchors("http://b.test/2", 10, 1000); !reflect.DeepEqual(a, []string{"two"}) {
		t.Errorf("anchors of b/2 = %v", a)
	}
	if n, _ := g.Edges(); n != 2 {
		t.Errorf("edges = %d, want 2", n)
	}
}

func TestAnchors(t *testing.T) {
	g := openMem(t, Options{})
	loadFixture(t, g, seed002Fixture)
	got, err := g.Anchors(u("furb"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 { // FURB (twice, case-insensitively once) and Universidade
		t.Errorf("Anchors(furb) = %q, want 2 distinct", got)
	}
	if got, _ := g.Anchors(u("furb"), 1, 0); len(got) != 1 {
		t.Errorf("limit 1 gave %q", got)
	}
	long := string(make([]byte, 500))
	if _, err := g.SetLinks(u("x"), []Link{{u("y"), "  many   spaces  " + long}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Anchors(u("y"), 0, 0); len(got) != 1 || len(got[0]) != maxAnchor || got[0][:12] != "many spaces " {
		t.Errorf("anchor not cleaned and cut: %q", got)
	}
}

// TestPageRankMatchesGonum checks the power iteration against gonum's independent
// implementation (same model: uniform teleport, dangling pages jump uniformly), from memory
// and streamed from disk.
func TestPageRankMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 5; trial++ {
		n := 5 + rng.IntN(60)
		ref := simple.NewDirectedGraph()
		links := map[string][]Link{}
		for i := 0; i < n; i++ {
			ref.AddNode(simple.Node(i))
		}
		for i := 0; i < n; i++ {
			if rng.IntN(5) == 0 {
				continue // dangling
			}
			for k := rng.IntN(6); k > 0; k-- {
				j := rng.IntN(n)
				if j == i {
					continue
				}
				links[u(fmt.Sprint(i))] = append(links[u(fmt.Sprint(i))], Link{URL: u(fmt.Sprint(j))})
				ref.SetEdge(simple.Edge{F: simple.Node(i), T: simple.Node(j)})
			}
		}
		want := network.PageRank(ref, 0.85, 1e-12)
		for _, budget := range []int64{0, 1} { // default: in memory; 1 byte: from disk
			g := openMem(t, Options{Tolerance: 1e-13, MaxIterations: 1000, MemoryBudget: budget})
			loadFixture(t, g, links)
			s, err := g.ComputePageRank(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if s.FromDisk != (budget == 1) || !s.Converged {
				t.Fatalf("summary %+v", s)
			}
			// gonum ranks every node, ours only those with a link. Every node gets the same
			// teleport and dangling share, so the ranks of linked nodes are proportional in
			// the two: compare them after normalizing over the linked nodes.
			var sumWant, sumGot float64
			got := map[int]float64{}
			for i := 0; i < n; i++ {
				r, err := g.rank(KeyOf(u(fmt.Sprint(i))))
				if err != nil {
					t.Fatal(err)
				}
				if r == 0 {
					continue // isolated
				}
				got[i] = r
				sumGot += got[i]
				sumWant += want[int64(i)]
			}
			for i := range got {
				if d := math.Abs(got[i]/sumGot - want[int64(i)]/sumWant); d > 1e-6 {
					t.Fatalf("trial %d budget %d node %d: rank %g, gonum %g", trial, budget, i, got[i]/sumGot, want[int64(i)]/sumWant)
				}
			}
		}
	}
}

// TestPageRankWorkedExample checks a graph small enough to solve by hand: A→B, B→A, C→A.
// With d = 0.85 and N = 3, C gets only the teleport share 0.05, and A and B solve
// a = 0.05 + 0.85(b + c), b = 0.05 + 0.85a.
func TestPageRankWorkedExample(t *testing.T) {
	g := openMem(t, Options{Tolerance: 1e-14, MaxIterations: 1000})
	loadFixture(t, g, map[string][]Link{u("a"): {{u("b"), ""}}, u("b"): {{u("a"), ""}}, u("c"): {{u("a"), ""}}})
	if _, err := g.ComputePageRank(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := 0.05
	a := (0.05 + 0.85*0.05 + 0.85*c) / (1 - 0.85*0.85)
	b := 0.05 + 0.85*a
	sig, err := g.Signals([]string{u("a"), u("b"), u("c")})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{a, b, c} {
		if math.Abs(sig[i].Rank-want) > 1e-9 {
			t.Errorf("rank %d = %.9f, want %.9f", i, sig[i].Rank, want)
		}
	}
	if sig[0].Prior <= sig[1].Prior || sig[1].Prior <= sig[2].Prior {
		t.Errorf("priors not ordered like ranks: %+v", sig)
	}
	if math.Abs(a+b+c-1) > 1e-9 {
		t.Errorf("ranks sum to %g", a+b+c)
	}
}

func TestPageRankDropsStaleRanks(t *testing.T) {
	g := openMem(t, Options{})
	loadFixture(t, g, seed002Fixture)
	if _, err := g.ComputePageRank(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Remove(u("news")); err != nil { // leaf loses its only in-link
		t.Fatal(err)
	}
	if g.Changes() == 0 {
		t.Fatal("Changes() = 0 after a removal")
	}
	s, err := g.ComputePageRank(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := g.rank(KeyOf(u("leaf"))); r != 0 {
		t.Errorf("leaf still has rank %g", r)
	}
	if s.Nodes != 4 {
		t.Errorf("nodes = %d, want 4", s.Nodes)
	}
	// A fresh Graph on the same database reads the summary back.
	g2, err := OpenPebble(g.db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g2.Summary() == nil || g2.Summary().Nodes != 4 {
		t.Errorf("summary not persisted: %+v", g2.Summary())
	}
}

func TestPageRankCanceled(t *testing.T) {
	g := openMem(t, Options{})
	loadFixture(t, g, seed002Fixture)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.ComputePageRank(ctx); err == nil {
		t.Fatal("canceled run succeeded")
	}
	if g.Changes() == 0 {
		t.Error("a failed run forgot that the graph changed")
	}
}

func TestEmptyGraph(t *testing.T) {
	g := openMem(t, Options{})
	s, err := g.ComputePageRank(context.Background())
	if err != nil || s.Nodes != 0 {
		t.Fatalf("%+v %v", s, err)
	}
	sig, err := g.Signals([]string{u("a")})
	if err != nil || sig[0] != (Signal{}) {
		t.Errorf("%+v %v", sig, err)
	}
}

func BenchmarkSetLinks(b *testing.B) {
	g := openMem(b, Options{})
	links := make([]Link, 40)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range links {
			links[j] = Link{URL: u(fmt.Sprintf("p%d", (i*7+j*13)%5000)), Anchor: "anchor text"}
		}
		if _, err := g.SetLinks(u(fmt.Sprintf("p%d", i%5000)), links); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPageRank100k ranks a 100,000-page graph with 10 links per page.
func BenchmarkPageRank100k(b *testing.B) {
	g := openMem(b, Options{})
	rng := rand.New(rand.NewPCG(3, 4))
	links := make([]Link, 10)
	for i := 0; i < 100000; i++ {
		for j := range links {
			// Preferential-ish: low ids are linked far more often.
			links[j] = Link{URL: u(fmt.Sprint(int(math.Pow(rng.Float64(), 3) * 100000)))}
		}
		if _, err := g.SetLinks(u(fmt.Sprint(i)), links); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		s, err := g.ComputePageRank(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Iterations), "iterations")
	}
}

// TestStartRankingRecomputesInTheBackground: the loop runs PageRank only when edges
// changed since the last run, picks up later changes, and Close stops it.
func TestStartRankingRecomputesInTheBackground(t *testing.T) {
	g := openMem(t, Options{})
	waitRanks := func(nodes int) *RankSummary {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if s := g.Summary(); s != nil && s.Nodes == nodes && g.Changes() == 0 {
				return s
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("no background PageRank run over %d nodes within 10 s (summary %+v, %d changes pending)", nodes, g.Summary(), g.Changes())
		return nil
	}
	g.StartRanking(10 * time.Millisecond)
	// Nothing changed yet: no run.
	time.Sleep(50 * time.Millisecond)
	if s := g.Summary(); s != nil {
		t.Fatalf("PageRank ran over an unchanged graph: %+v", s)
	}
	loadFixture(t, g, seed002Fixture)
	first := waitRanks(5)
	if r, _ := g.rank(KeyOf(u("furb"))); r <= 0 {
		t.Errorf("furb has rank %g after the background run", r)
	}
	// An unchanged graph is not recomputed: the summary stays the same run.
	time.Sleep(50 * time.Millisecond)
	if s := g.Summary(); s != first {
		t.Errorf("PageRank recomputed without a change: %+v then %+v", first, s)
	}
	// A new page is picked up by a later run.
	if _, err := g.SetLinks(u("leaf"), []Link{{u("extra"), "extra"}}); err != nil {
		t.Fatal(err)
	}
	waitRanks(6)
	if r, _ := g.rank(KeyOf(u("extra"))); r <= 0 {
		t.Errorf("the new page has rank %g after the next background run", r)
	}
	// Close stops the loop: later changes stay pending.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SetLinks(u("extra"), []Link{{u("furb"), "home"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if g.Changes() == 0 {
		t.Error("PageRank ran after Close")
	}
}
