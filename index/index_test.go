package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/sonda-search/sonda/query"
)

var ctx = context.Background()

func openTest(t testing.TB, opts Options) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "index"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// corpus is a small multilingual web.
var corpus = []Doc{
	{ID: "http://www.reactor.test/", URL: "http://www.reactor.test/", Host: "www.reactor.test", Lang: "en", ContentType: "text/html",
		Title: "Nuclear reactors", Body: "A nuclear reactor uses fuel rods. Reactors make power from nuclear fission.",
		Fetched: day("2024-02-10"), Relevance: 0.9, Relevant: true, Topics: []string{"nuclear"}},
	{ID: "http://www.reactor.test/fuel", URL: "http://www.reactor.test/fuel", Host: "www.reactor.test", Lang: "en", ContentType: "text/html",
		Title: "Fuel", Body: "Fuel rods hold uranium pellets. The rods are replaced every few years.",
		Fetched: day("2024-03-05"), Relevance: 0.7, Relevant: true, Topics: []string{"nuclear"}},
	{ID: "http://www.solar.test/", URL: "http://www.solar.test/", Host: "www.solar.test", Lang: "en", ContentType: "text/html",
		Title: "Solar power", Body: "Solar panels make power from sunlight. No reactor, no fuel.",
		Fetched: day("2024-01-20"), Relevance: 0.1},
	{ID: "http://www.energia.test/usinas", URL: "http://www.energia.test/usinas", Host: "www.energia.test", Lang: "pt-BR", ContentType: "text/html",
		Title: "Usinas nucleares", Body: "As usinas nucleares produzem energia elétrica a partir da fissão nuclear. A geração é contínua.",
		Fetched: day("2024-02-01"), Relevance: 0.8, Relevant: true},
	{ID: "http://docs.reactor.test/manual.pdf", URL: "http://docs.reactor.test/manual.pdf", Host: "docs.reactor.test", ContentType: "application/pdf",
		Title: "Reactor manual", Body: "Operating manual of the research reactor.", Fetched: day("2023-06-01"), Relevance: -1},
	{ID: "article:1", Kind: KindArticle, URL: "http://news.test/a1", Host: "news.test", Lang: "en",
		Title: "Reactor restarted", Body: "The old reactor was restarted after repairs.", Fetched: day("2024-03-10"), Relevance: -1,
		Fields: map[string]any{"authors": []string{"Ana Souza"}, "published": day("2024-03-09"), "words": 7}},
}

func load(t testing.TB, ix *Index, docs ...Doc) {
	t.Helper()
	if err := ix.Put(ctx, docs...); err != nil {
		t.Fatal(err)
	}
}

func ids(r *Result) []string {
	out := []string{}
	for _, h := range r.Hits {
		out = append(out, h.ID)
	}
	return out
}

func find(t testing.TB, ix *Index, q string) *Result {
	t.Helper()
	r, err := ix.Search(ctx, Request{Query: q, PerPage: 20})
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return r
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestSearchLanguage(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	tests := []struct {
		q    string
		want []string
	}{
		// Stemming: "reactors" finds "reactor"; implicit AND (the pages with only some of
		// the words that fill the page after these are TestSearchFillsWithSomeWords's).
		{"+reactors +fuel", []string{"http://www.reactor.test/", "http://www.solar.test/"}},
		{`"fuel rods"`, []string{"http://www.reactor.test/", "http://www.reactor.test/fuel"}},
		{"+reactor -fuel", []string{"http://docs.reactor.test/manual.pdf", "article:1"}},
		{"solar OR uranium", []string{"http://www.solar.test/", "http://www.reactor.test/fuel"}},
		// Portuguese stems and accent folding: "usina" finds "usinas", "eletrica" finds "elétrica".
		{"usina eletrica", []string{"http://www.energia.test/usinas"}},
		{"lang:pt nuclear", []string{"http://www.energia.test/usinas"}},
		{"site:reactor.test", []string{"http://www.reactor.test/", "http://www.reactor.test/fuel", "http://docs.reactor.test/manual.pdf"}},
		{"site:docs.reactor.test reactor", []string{"http://docs.reactor.test/manual.pdf"}},
		{"type:pdf", []string{"http://docs.reactor.test/manual.pdf"}},
		{"type:article reactor", []string{"article:1"}},
		{"topic:nuclear", []string{"http://www.reactor.test/", "http://www.reactor.test/fuel"}},
		{"title:fuel", []string{"http://www.reactor.test/fuel"}},
		{"inurl:manual", []string{"http://docs.reactor.test/manual.pdf"}},
		// The fuel page has "reactor" in its URL only.
		{"reactor date:2024-03", []string{"article:1", "http://www.reactor.test/fuel"}},
		{"reactor after:2024-02-01 before:2024-03-01", []string{"http://www.reactor.test/"}},
		// Kind-specific fields are searchable text.
		{"souza", []string{"article:1"}},
		// Stop words (of any language in the index) alone find nothing, and do not block
		// the other words.
		{"the", []string{}},
		{"the fission", []string{"http://www.reactor.test/"}},
		{"the uranium", []string{"http://www.reactor.test/fuel"}},
	}
	for _, tt := range tests {
		r := find(t, ix, tt.q)
		if got := ids(r); !sameSet(got, tt.want) {
			t.Errorf("%q: got %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestSearchRelaxesToOr(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	r := find(t, ix, "uranium sunlight")
	if !r.Relaxed || !sameSet(ids(r), []string{"http://www.solar.test/", "http://www.reactor.test/fuel"}) {
		t.Errorf("relaxed %v, hits %v", r.Relaxed, ids(r))
	}
	if r := find(t, ix, "+uranium +sunlight"); r.Total != 0 {
		t.Errorf("explicit + was relaxed: %v", ids(r))
	}
}

// TestSearchFillsWithSomeWords: when fewer pages have every word than fill the page, those
// come first and pages with some of the words follow, ranked below them, on every page of
// results alike; the result says how many had them all.
func TestSearchFillsWithSomeWords(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	all := []string{"http://www.reactor.test/", "http://www.solar.test/"}
	r := find(t, ix, "reactors fuel")
	got := ids(r)
	if len(got) < 4 || !sameSet(got[:2], all) || !r.Relaxed || r.AllWords != 2 {
		t.Fatalf("hits %v relaxed %v all-words %d: the two pages with both words first, then the rest", got, r.Relaxed, r.AllWords)
	}
	if !slices.Contains(got[2:], "http://www.reactor.test/fuel") || r.Total != uint64(len(got)) {
		t.Errorf("pages with one of the words missing or miscounted: %v, total %d", got, r.Total)
	}
	for i := 1; i < len(r.Hits); i++ {
		if r.Hits[i].Score > r.Hits[i-1].Score {
			t.Errorf("scores not descending at %d: %v then %v", i, r.Hits[i-1].Score, r.Hits[i].Score)
		}
	}
	// Page by page, the same order and the same total.
	var paged []string
	for page := 1; page <= 10; page++ {
		p, err := ix.Search(ctx, Request{Query: "reactors fuel", Page: page, PerPage: 1})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != r.Total || p.Pages != len(got) {
			t.Errorf("page %d: total %d, %d pages; one page of 20: total %d", page, p.Total, p.Pages, r.Total)
		}
		if len(p.Hits) == 0 {
			break
		}
		paged = append(paged, ids(p)...)
	}
	if !slices.Equal(paged, got) {
		t.Errorf("one per page gives %v, one page gives %v", paged, got)
	}
}

func TestSearchRanking(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	r := find(t, ix, "fuel")
	if len(r.Hits) < 2 || r.Hits[0].ID != "http://www.reactor.test/fuel" {
		t.Errorf("title match not first: %v", ids(r))
	}
	for i := 1; i < len(r.Hits); i++ {
		if r.Hits[i].Score > r.Hits[i-1].Score {
			t.Errorf("scores not descending: %v", r.Hits)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	for _, q := range []string{`"open`, "a (b", "site:", "-only", "date:2024-13"} {
		_, err := ix.Search(ctx, Request{Query: q})
		var qe *QueryError
		if !errors.As(err, &qe) {
			t.Errorf("%q: error %v is not a *QueryError", q, err)
		}
	}
	if r, err := ix.Search(ctx, Request{Query: "   "}); err != nil || r.Total != 0 {
		t.Errorf("blank query: %v %v", r, err)
	}
}

func TestSnippetsAndFields(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, Doc{ID: "x", URL: "http://x.test/", Host: "x.test", Lang: "en", Title: "<script>alert(1)</script>",
		Body: "Intro text. The <b>reactor</b> core & the reactors' fuel. Other words follow here."})
	r := find(t, ix, "reactor")
	if len(r.Hits) != 1 {
		t.Fatalf("hits %v", ids(r))
	}
	h := r.Hits[0]
	want := "Intro text. The &lt;b&gt;<mark>reactor</mark>&lt;/b&gt; core &amp; the <mark>reactors</mark>&#39; fuel. Other words follow here."
	if h.Snippet != want {
		t.Errorf("snippet\n got %s\nwant %s", h.Snippet, want)
	}
	if h.Title != "<script>alert(1)</script>" {
		t.Errorf("title %q (titles are plain text, escaped by the page that shows them)", h.Title)
	}
}

func TestDocumentRoundTrip(t *testing.T) {
	ix := openTest(t, Options{})
	in := corpus[5]
	in.Anchors = []string{"restart news", "reactor"}
	in.Headings = "Repairs"
	in.Description = "A reactor is back"
	in.InLinks = 3
	in.ContentType = "text/html"
	load(t, ix, in)
	got, ok, err := ix.Document(ctx, in.ID)
	if err != nil || !ok {
		t.Fatalf("Document: %v %v", ok, err)
	}
	in.Fields = map[string]any{"authors": []any{"Ana Souza"}, "published": day("2024-03-09"), "words": float64(7)}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, in)
	}
	if _, ok, err := ix.Document(ctx, "nope"); ok || err != nil {
		t.Errorf("missing document: %v %v", ok, err)
	}
}

func TestDeleteAndReplace(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	if err := ix.Delete(ctx, "http://www.solar.test/", "not-there"); err != nil {
		t.Fatal(err)
	}
	if r := find(t, ix, "solar"); r.Total != 0 {
		t.Errorf("deleted document found: %v", ids(r))
	}
	changed := corpus[1]
	changed.Body = "Now about thorium."
	load(t, ix, changed)
	if r := find(t, ix, "uranium"); r.Total != 0 {
		t.Errorf("old text still found: %v", ids(r))
	}
	if r := find(t, ix, "thorium"); r.Total != 1 {
		t.Errorf("new text not found: %v", ids(r))
	}
	if s := ix.Stats(); s.Documents != int64(len(corpus)-1) {
		t.Errorf("Stats().Documents = %d, want %d", s.Documents, len(corpus)-1)
	}
}

func TestStatsSurviveReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	load(t, ix, corpus...)
	before := ix.stats
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Stats().Unclean {
		t.Error("a cleanly closed index reports unclean")
	}
	if !reflect.DeepEqual(ix.stats.langs, before.langs) || ix.stats.docs != before.docs {
		t.Errorf("stats after reopen %+v, before %+v", ix.stats, before)
	}
	for name, f := range before.fields {
		if g := ix.stats.fields[name]; g == nil || *g != *f {
			t.Errorf("field %s: %+v after reopen, %+v before", name, g, f)
		}
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
}

func TestPaginationAndFacets(t *testing.T) {
	ix := openTest(t, Options{})
	var docs []Doc
	for i := 0; i < 35; i++ {
		host := []string{"a.test", "b.test", "c.test"}[i%3]
		docs = append(docs, Doc{ID: host + "/" + strings.Repeat("x", i+1), URL: "http://" + host + "/" + strings.Repeat("x", i+1), Host: host, Lang: "en",
			Title: "page", Body: "common words " + strings.Repeat("common ", i%5), Fetched: time.Now().Add(-time.Duration(i) * 24 * time.Hour)})
	}
	load(t, ix, docs...)
	seen := map[string]bool{}
	for page := 1; page <= 4; page++ {
		r, err := ix.Search(ctx, Request{Query: "common", Page: page, Facets: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Total != 35 || r.Pages != 4 {
			t.Fatalf("page %d: total %d pages %d", page, r.Total, r.Pages)
		}
		wantLen := 10
		if page == 4 {
			wantLen = 5
		}
		if len(r.Hits) != wantLen {
			t.Errorf("page %d has %d hits", page, len(r.Hits))
		}
		for _, h := range r.Hits {
			if seen[h.ID] {
				t.Errorf("%s on two pages", h.ID)
			}
			seen[h.ID] = true
		}
		if page == 1 {
			site := r.Facets[FacetSite]
			if len(site) != 3 || site[0].Count != 12 || site[0].Filter != "site:a.test" {
				t.Errorf("site facet %+v", site)
			}
			date := r.Facets[FacetDate]
			if len(date) == 0 || date[0].Value != "past day" || !strings.HasPrefix(date[0].Filter, "after:") {
				t.Errorf("date facet %+v", date)
			}
			total := 0
			for _, d := range date {
				total += d.Count
			}
			if total < 35 { // past day ⊂ past week ⊂ ...: buckets overlap, older does not
				t.Errorf("date facet counts %d documents", total)
			}
		}
	}
	r, err := ix.Search(ctx, Request{Query: "common", Page: 200})
	if err != nil || len(r.Hits) != 0 {
		t.Errorf("page beyond the end: %v %v", r, err)
	}
}

func TestResultCache(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	r1 := find(t, ix, "reactor")
	r2 := find(t, ix, "reactor")
	if r1.Cached || !r2.Cached || !reflect.DeepEqual(ids(r1), ids(r2)) {
		t.Errorf("cache: first %v second %v", r1.Cached, r2.Cached)
	}
	load(t, ix, Doc{ID: "new", URL: "http://new.test/", Host: "new.test", Lang: "en", Title: "reactor", Body: "reactor"})
	r3 := find(t, ix, "reactor")
	if r3.Cached || r3.Total != r1.Total+1 {
		t.Errorf("after a write: cached %v total %d (was %d)", r3.Cached, r3.Total, r1.Total)
	}
}

func TestOperatorOption(t *testing.T) {
	ix := openTest(t, Options{Implicit: query.Or})
	load(t, ix, corpus...)
	r := find(t, ix, "uranium sunlight")
	if r.Relaxed || r.Total != 2 {
		t.Errorf("implicit OR: relaxed %v total %d", r.Relaxed, r.Total)
	}
	r, err := ix.Search(ctx, Request{Query: "uranium sunlight", Operator: "and"})
	if err != nil || !r.Relaxed {
		t.Errorf("per-request AND: %+v %v", r, err)
	}
}

func TestPutValidates(t *testing.T) {
	ix := openTest(t, Options{})
	for _, d := range []Doc{{}, {ID: "x", Kind: "Bad Kind"}, {ID: "x", Fields: map[string]any{"Bad": 1}}, {ID: "x", Fields: map[string]any{"n": func() {}}}} {
		if err := ix.Put(ctx, d); err == nil {
			t.Errorf("Put(%+v) succeeded", d)
		}
	}
}

func TestCheckpointAndSync(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Checkpoint().IsZero() {
		t.Errorf("new index has checkpoint %v", ix.Checkpoint())
	}
	load(t, ix, corpus...) // latest fetch: 2024-03-10
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	old := corpus[0]
	old.Fetched = day("2020-01-01") // an older fetch does not move the checkpoint back
	load(t, ix, old)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := ix.Checkpoint(); !got.Equal(day("2024-03-10")) {
		t.Errorf("checkpoint after reopen %v, want 2024-03-10", got)
	}
	if ix.Stats().Documents != int64(len(corpus)) {
		t.Errorf("%d documents after reopen", ix.Stats().Documents)
	}
}

// TestConcurrentSearchAndWrites runs searches while documents are written and the
// ranking changes (run it with -race).
func TestConcurrentSearchAndWrites(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			d := corpus[i%len(corpus)]
			d.Body += " extra"
			if err := ix.Put(ctx, d); err != nil {
				t.Error(err)
				return
			}
			r := DefaultRanking()
			r.Title = float64(1 + i%3)
			if err := ix.SetRanking(r); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 50; i++ {
		if _, err := ix.Search(ctx, Request{Query: "reactor OR fuel", Facets: i%2 == 0}); err != nil {
			t.Fatal(err)
		}
	}
	<-done
}

// TestFacetsMatchTheirFilters: the type, language and site facets count the results by
// kind, language and host, and each value's filter, added to the query, finds exactly the
// results it counted.
func TestFacetsMatchTheirFilters(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus...)
	const q = "reactor OR nuclear OR solar OR usinas"
	r, err := ix.Search(ctx, Request{Query: q, Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != uint64(len(corpus)) {
		t.Fatalf("%q finds %d documents, want all %d", q, r.Total, len(corpus))
	}
	want := map[string][]FacetCount{
		FacetType: {{Value: "page", Count: 5, Filter: "type:page"}, {Value: "article", Count: 1, Filter: "type:article"}},
		FacetLang: {{Value: "en", Count: 4, Filter: "lang:en"}, {Value: "pt", Count: 1, Filter: "lang:pt"}},
	}
	for name, w := range want {
		if !reflect.DeepEqual(r.Facets[name], w) {
			t.Errorf("%s facet %+v, want %+v", name, r.Facets[name], w)
		}
	}
	for _, name := range []string{FacetType, FacetLang, FacetSite} {
		if len(r.Facets[name]) == 0 {
			t.Errorf("no %s facet", name)
		}
		for _, f := range r.Facets[name] {
			fr, err := ix.Search(ctx, Request{Query: "(" + q + ") " + f.Filter, PerPage: 50})
			if err != nil {
				t.Fatalf("%s facet %q: %v", name, f.Filter, err)
			}
			if int(fr.Total) != f.Count {
				t.Errorf("%s facet %s counts %d, its filter finds %d", name, f.Value, f.Count, fr.Total)
			}
		}
	}
}

// TestOpenRecreatesUnfinishedIndex: a crash while an index was being created must not leave
// a directory that every later Open refuses ("error parsing mapping JSON"). Open creates an
// index atomically, and makes anew one whose creation never finished, saying so
// (Stats.Created) so that its owner replays the crawl into it.
func TestOpenRecreatesUnfinishedIndex(t *testing.T) {
	writeFile := func(name, content string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name        string
		leave       func(t *testing.T, dir string) // what a crash left
		wantCreated bool
		wantDocs    int64
	}{
		{"no index", func(*testing.T, string) {}, true, 0},
		{"empty index_meta.json", writeFile("index_meta.json", ""), true, 0},
		{"truncated index_meta.json", writeFile("index_meta.json", `{"storage":"sco`), true, 0},
		{"folder without index_meta.json", writeFile("store.tmp", "x"), true, 0},
		{"leftover of a creation, no index", func(t *testing.T, dir string) {
			writeFile("index_meta.json", "")(t, dir+".creating")
			if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}, true, 0},
		{"mapping never persisted", func(t *testing.T, dir string) {
			// How a sonda that created indexes with unsafe batches left one when killed
			// at once: scorch had not persisted the mapping (bleve's internal key
			// "_mapping") yet.
			bi, err := bleve.NewUsing(dir, newMapping(), scorch.Name, scorch.Name, map[string]any{"unsafe_batch": false})
			if err != nil {
				t.Fatal(err)
			}
			if err := bi.DeleteInternal([]byte("_mapping")); err != nil {
				t.Fatal(err)
			}
			if err := bi.Close(); err != nil {
				t.Fatal(err)
			}
		}, true, 0},
		{"complete index beside a leftover", func(t *testing.T, dir string) {
			ix, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			load(t, ix, corpus[0])
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			writeFile("index_meta.json", "")(t, dir+".creating")
		}, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data", "index")
			c.leave(t, dir)
			ix, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("Open after a crash during creation: %v", err)
			}
			if got := ix.Stats(); got.Created != c.wantCreated || got.Documents != c.wantDocs {
				t.Errorf("Created %v with %d documents; want %v with %d", got.Created, got.Documents, c.wantCreated, c.wantDocs)
			}
			// The index works: it takes and finds a document, and reopens as complete.
			load(t, ix, corpus[1])
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			ix, err = Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if st := ix.Stats(); st.Created || st.Documents != c.wantDocs+1 {
				t.Errorf("reopened: Created %v with %d documents; want false with %d", st.Created, st.Documents, c.wantDocs+1)
			}
			if _, err := os.Stat(dir + creatingSuffix); !os.IsNotExist(err) {
				t.Errorf("the creation's leftover folder is still there (%v)", err)
			}
		})
	}
}

// TestTitleOutranksURLWord is issue 13's "museum import": in the demo a page titled
// "Museum Import Rain" ranked third, below pages that had "import" only in their URL and
// "museum" once in passing. The URL field took its IDF from URLs alone, where the word
// is rare, although most pages' text has it: a word's IDF must be the word's.
func TestTitleOutranksURLWord(t *testing.T) {
	ix := openTest(t, Options{})
	filler := "river valley report survey energy market council school harbor season"
	var docs []Doc
	add := func(url, title, body string) {
		docs = append(docs, Doc{ID: url, URL: url, Host: "www.site.test", Lang: "en", Title: title, Body: body, Relevance: -1})
	}
	// "import" and "museum" are common words of the collection's text...
	for i := range 40 {
		words := filler
		if i%4 != 0 {
			words += " import"
		}
		if i%2 == 0 {
			words += " museum"
		}
		add(fmt.Sprintf("http://www.site.test/page-%d.html", i), fmt.Sprintf("Page %d", i), words+" "+filler)
	}
	// ...but rare in URLs: two pages have "import" in theirs and "museum" in passing.
	add("http://www.site.test/library/search-import-854.html", "Modern Coast Medicine", filler+" museum "+filler+" museum "+filler)
	add("http://www.site.test/archive/energy-import-704.html", "Gold Music Whale", filler+" museum "+filler)
	add("http://www.site.test/docs/", "Museum Import Rain", "Museum Import Rain. "+strings.Repeat(filler+" ", 4))
	load(t, ix, docs...)
	for _, q := range []string{"museum import", "import museum"} {
		r := find(t, ix, q)
		if len(r.Hits) == 0 || r.Hits[0].Title != "Museum Import Rain" {
			var got []string
			for _, h := range r.Hits[:min(3, len(r.Hits))] {
				got = append(got, fmt.Sprintf("%s (%s, %.3f)", h.Title, h.URL, h.Score))
			}
			t.Errorf("%q: the page titled with both words is not first: %v", q, got)
		}
	}
}

// TestFeedbackRescoresMatchesOnly: pseudo-relevance feedback lifts a page that answers a
// query in the words the best matches share, above pages that only mention the query's
// word in passing, and never changes which pages match.
func TestFeedbackRescoresMatchesOnly(t *testing.T) {
	ix := openTest(t, Options{})
	var docs []Doc
	add := func(id, title, body string) {
		docs = append(docs, Doc{ID: id, URL: "http://a.test/" + id, Host: "a.test", Lang: "en", Title: title, Body: body, Relevance: -1})
	}
	for i := range 12 {
		add(fmt.Sprint("cone", i), fmt.Sprintf("Cone study %d", i), fmt.Sprintf("Pressure distribution on a slender cone at supersonic speed, case %d, measured in a wind tunnel.", i))
	}
	for i := range 8 {
		add(fmt.Sprint("dessert", i), fmt.Sprintf("Dessert %d", i), "An ice cream cone with vanilla.")
	}
	add("answer", "Slender bodies", "Pressure distribution over slender bodies at supersonic speed measured in a wind tunnel; a cone is one such body, and so are ogives, cylinders and flared skirts of many shapes.")
	for i := range 10 {
		add(fmt.Sprint("other", i), fmt.Sprintf("Harbour %d", i), "Boats in the harbour at dawn.")
	}
	load(t, ix, docs...)
	rank := func(feedback float64) (map[string]int, *Result) {
		r := DefaultRanking()
		r.Feedback = feedback
		res, err := ix.Search(ctx, Request{Query: "cone", PerPage: 100, Ranking: &r})
		if err != nil {
			t.Fatal(err)
		}
		at := map[string]int{}
		for i, h := range res.Hits {
			at[h.ID] = i + 1
		}
		return at, res
	}
	without, r0 := rank(0)
	with, r1 := rank(DefaultRanking().Feedback)
	if r0.Total != 21 || r1.Total != r0.Total || !sameSet(ids(r0), ids(r1)) {
		t.Fatalf("feedback changed what matches: %d %v without, %d %v with", r0.Total, ids(r0), r1.Total, ids(r1))
	}
	if without["answer"] < without["dessert0"] {
		t.Fatalf("the test is not testing: without feedback the answer (%d) is already above the desserts (%d)", without["answer"], without["dessert0"])
	}
	for i := range 8 {
		if d := with[fmt.Sprint("dessert", i)]; with["answer"] > d {
			t.Errorf("with feedback the answer ranks %d, below dessert%d at %d (without: %d)", with["answer"], i, d, without["answer"])
		}
	}
}

// TestDocumentAtMatchesDocument: a result page's document read by its number in the
// search's snapshot (documentAt) is the document Document reads by ID, for every document
// of an index of several segments with deleted and replaced documents, typed fields,
// anchors and documents without a date; and a search's hits are the documents of their IDs.
func TestDocumentAtMatchesDocument(t *testing.T) {
	ix := openTest(t, Options{CacheEntries: -1, SyncWrites: true, keepSegments: true})
	for b := range 3 {
		var batch []Doc
		for i := range 30 {
			d := columnDoc(b*30 + i)
			d.Anchors = []string{"anchor one", fmt.Sprintf("anchor %d", i)}
			d.Headings = "heading"
			batch = append(batch, d)
		}
		load(t, ix, batch...)
	}
	if err := ix.Delete(ctx, columnDoc(4).ID); err != nil {
		t.Fatal(err)
	}
	changed := columnDoc(8)
	changed.Title, changed.Host = "changed page", "moved.test"
	load(t, ix, changed)
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap := r.(*scorch.IndexSnapshot)
	if len(snap.Segments()) < 2 {
		t.Fatalf("%d segments; the test needs several", len(snap.Segments()))
	}
	seen, first := 0, uint64(0)
	for _, s := range snap.Segments() {
		for local := range s.Segment().Count() {
			n := first + local
			if del := s.Deleted(); del != nil && del.Contains(uint32(local)) {
				continue
			}
			id, err := snap.ExternalID(bindex.NewIndexInternalID(nil, n))
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := ix.documentAt(ctx, snap, n, id)
			if !ok || err != nil {
				t.Fatalf("document %d (%s): ok %v, %v", n, id, ok, err)
			}
			want, ok, err := ix.Document(ctx, id)
			if !ok || err != nil {
				t.Fatalf("document %s: ok %v, %v", id, ok, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("document %d by number:\n%+v\nby ID:\n%+v", n, got, want)
			}
			seen++
		}
		first += s.Segment().Count()
	}
	if seen != 89 {
		t.Errorf("%d live documents, want 89", seen)
	}
	res, err := ix.Search(ctx, Request{Query: "common", PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 89 {
		t.Fatalf("%d hits, want 89", len(res.Hits))
	}
	for _, h := range res.Hits {
		d, _, err := ix.Document(ctx, h.ID)
		if err != nil || h.Title != d.Title || h.Host != d.Host || h.URL != d.URL || !reflect.DeepEqual(h.Fields, d.Fields) || !h.Fetched.Equal(d.Fetched) {
			t.Fatalf("hit %s: %+v; its document %+v (%v)", h.ID, h, d, err)
		}
	}
}
