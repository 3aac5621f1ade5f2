package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

func TestSiteTemplates(t *testing.T) {
	st := newSiteTemplates()
	const box = "Popular topics: wings, nozzles"
	for page := 1; page <= 5; page++ {
		id := fmt.Sprintf("http://a.test/%d", page)
		st.observe("a.test", id, []string{box, fmt.Sprint("Abstract ", page), box})
		if page == 2 {
			st.observe("a.test", id, []string{box}) // the same page again counts once
		}
		body := st.strip("a.test", box+"\nAbstract 1")
		if want := page >= templatePages; (body == "Abstract 1") != want {
			t.Errorf("after page %d: stripped to %q; want the box left out: %v", page, body, want)
		}
		if grown := st.takeGrown(false); (len(grown) == 1) != (page == templatePages) {
			t.Errorf("after page %d: hosts grown %v", page, grown)
		}
	}
	// Another site has its own template.
	if got := st.strip("b.test", box); got != box {
		t.Errorf("a block of a.test's template left out of b.test's page: %q", got)
	}
	// A page that is all template has no body; lines are left out whatever is around them.
	if got := st.strip("a.test", box+"\n"+box); got != "" {
		t.Errorf("all-template body stripped to %q", got)
	}
	// Bounded: hosts and blocks per host.
	for i := range templateHosts + 10 {
		st.observe(fmt.Sprintf("h%d.test", i), "p", []string{"x"})
	}
	if len(st.hosts) > templateHosts {
		t.Errorf("%d hosts remembered, at most %d", len(st.hosts), templateHosts)
	}
	for i := range templateBlocks + 10 {
		st.observe("big.test", "p", []string{fmt.Sprint("block ", i)})
	}
	if n := len(st.hosts["big.test"].seen); n > templateBlocks {
		t.Errorf("%d blocks remembered for one host, at most %d", n, templateBlocks)
	}
}

// TestRestripOfLargeHostIsBounded: a host whose template grows with every few pages (they
// share paragraphs) is read again for a restrip a number of times that grows with its
// size, not with its size squared; the end of the crawl takes it whatever its size.
func TestRestripOfLargeHostIsBounded(t *testing.T) {
	st := newSiteTemplates()
	const pages = 1600 // 400 distinct blocks: all counted (templateBlocks)
	read := 0          // pages a restrip reads: the host's pages so far
	for p := 1; p <= pages; p++ {
		// Paragraph p/4 is on four pages in a row: a new template block every four pages.
		st.observe("a.test", fmt.Sprint(p), []string{fmt.Sprint("shared paragraph ", p/4)})
		if slices.Contains(st.takeGrown(false), "a.test") {
			read += p
		}
	}
	// Restrips at once up to restripDeferFrom pages, then each time the host doubled:
	// about restripDeferFrom²/8 + 2 × pages; a restrip for every new block reads about
	// pages²/8 = 320,000.
	if bound := restripDeferFrom*restripDeferFrom/4 + 4*pages; read > bound {
		t.Errorf("restrips read %d pages of a %d-page host, want at most %d", read, pages, bound)
	}
	if grown := st.takeGrown(true); !slices.Equal(grown, []string{"a.test"}) {
		t.Errorf("at the end of the crawl, hosts to strip again: %v, want a.test", grown)
	}
	if grown := st.takeGrown(true); len(grown) != 0 {
		t.Errorf("taken twice: %v", grown)
	}
}

// portalPage is a CMS page of plain <div>s: a menu and related links (link dense), the
// abstract, and a "popular topics" box the site repeats on every page.
func portalPage(t testing.TB, n int) *parse.Page {
	t.Helper()
	html := fmt.Sprintf(`<title>Abstract %d</title><div class="menu"><a href="/">Home</a> | <a href="/list">Browse</a></div>
<div id="content"><h2>Abstract %d</h2><div class="text">Text of abstract %d about shock waves and the boundary layer of wing number %d.</div>
<div class="related"><ul><li><a href="/doc/%d">Title of another abstract</a></li></ul></div></div>
<div id="sidebar"><h3>Popular topics</h3><p>Boundary layers · Heat transfer</p></div>`, n, n, n, n, n+7)
	p, err := parse.Parse([]byte(html), fmt.Sprintf("http://portal.test/doc/%d", n), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPageTextLeavesOutSiteTemplate: the menu and related links go at once (link dense);
// the "popular topics" box goes from every page once the site has shown it on
// templatePages pages, the earlier pages included.
func TestPageTextLeavesOutSiteTemplate(t *testing.T) {
	st := newSiteTemplates()
	own := func(n int) []string {
		return []string{fmt.Sprint("Abstract ", n), fmt.Sprintf("Text of abstract %d about shock waves and the boundary layer of wing number %d.", n, n)}
	}
	for n := 1; n <= templatePages+1; n++ {
		body, kept := pageText(portalPage(t, n))
		st.observe("portal.test", fmt.Sprint(n), kept)
		want := own(n)
		if n < templatePages {
			want = append(want, "Popular topics", "Boundary layers · Heat transfer")
		}
		if got := st.strip("portal.test", body); !slices.Equal(strings.Split(got, "\n"), want) {
			t.Errorf("page %d as it comes: %q, want %q", n, got, want)
		}
	}
	body, _ := pageText(portalPage(t, 1))
	if got := st.strip("portal.test", body); !slices.Equal(strings.Split(got, "\n"), own(1)) {
		t.Errorf("page 1 stripped again: %q, want %q", got, own(1))
	}
}

// TestSinkBodiesDoNotDependOnOrder: the same pages indexed in different orders and batches
// (a crawl's workers, a catch-up after a crash, a rebuild all give different orders) make
// the same index: every page's body is the same, the site's template left out of all.
func TestSinkBodiesDoNotDependOnOrder(t *testing.T) {
	const pages = 12
	norm := urlnorm.New(urlnorm.DefaultOptions())
	docs := make([]*crawl.Document, pages)
	for i := range docs {
		u, err := norm.Parse(fmt.Sprintf("http://portal.test/doc/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		p := portalPage(t, i)
		docs[i] = &crawl.Document{URL: u, Fetch: &fetch.Result{}, Page: p, Text: p.Text(),
			Record: &store.Page{URL: u.String(), Status: 200, Title: p.Title, Lang: "en", FetchedAt: time.Unix(1.7e9, 0)}}
	}
	// index writes a batch every batch pages.
	index := func(order []int, batch int) map[string]string {
		ix := openTest(t, Options{})
		s := NewSink(ix, nil, SinkOptions{Delay: time.Hour})
		ctx := context.Background()
		for n, i := range order {
			if err := s.Consume(ctx, docs[i]); err != nil {
				t.Fatal(err)
			}
			if (n+1)%batch == 0 {
				if err := s.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		bodies := map[string]string{}
		for _, d := range docs {
			doc, ok, err := ix.Document(ctx, d.Record.URL)
			if err != nil || !ok {
				t.Fatalf("%s: %v, in the index: %v", d.Record.URL, err, ok)
			}
			bodies[doc.ID] = doc.Body
		}
		return bodies
	}
	inOrder := make([]int, pages)
	for i := range inOrder {
		inOrder[i] = i
	}
	want := index(inOrder, 1)
	for id, body := range want {
		if strings.Contains(body, "Popular topics") {
			t.Errorf("%s indexed with the site's template: %q", id, body)
		}
		if !strings.Contains(body, "shock waves") {
			t.Errorf("%s indexed without its own text: %q", id, body)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, batch := range []int{1, 3, 100} {
		order := slices.Clone(inOrder)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		got := index(order, batch)
		for id, body := range want {
			if got[id] != body {
				t.Errorf("order %v, batches of %d: %s indexed with %q, in crawl order with %q", order, batch, id, got[id], body)
			}
		}
	}
}

// TestSinkStripsLargeHostAtCompact: on a host past restripDeferFrom pages whose template
// keeps growing, pages indexed before their blocks became template may keep them while
// the crawl runs, and lose them when it ends (Sink.Compact): the index is then what
// stripping every page once with the whole template gives.
func TestSinkStripsLargeHostAtCompact(t *testing.T) {
	const pages = 2*restripDeferFrom + 40
	norm := urlnorm.New(urlnorm.DefaultOptions())
	ix := openTest(t, Options{})
	s := NewSink(ix, nil, SinkOptions{Delay: time.Hour})
	ctx := context.Background()
	ids := make([]string, pages)
	for i := range pages {
		u, err := norm.Parse(fmt.Sprintf("http://quotes.test/doc/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		// Every paragraph is quoted on four pages in a row, so the host's template grows
		// every four pages.
		html := fmt.Sprintf(`<title>Document %d</title><div id="content"><p>Own words of document %d on gliders.</p>
<p>Quoted paragraph number %d about the boundary layer.</p></div>`, i, i, i/4)
		p, err := parse.Parse([]byte(html), u.String(), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = u.String()
		d := &crawl.Document{URL: u, Fetch: &fetch.Result{}, Page: p, Text: p.Text(),
			Record: &store.Page{URL: u.String(), Status: 200, Title: p.Title, Lang: "en", FetchedAt: time.Unix(1.7e9, 0)}}
		if err := s.Consume(ctx, d); err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 { // batches that split the groups of four pages
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	quoting := func() (n int) {
		for _, id := range ids {
			doc, ok, err := ix.Document(ctx, id)
			if err != nil || !ok {
				t.Fatalf("%s: %v, in the index: %v", id, err, ok)
			}
			if !strings.Contains(doc.Body, "gliders") {
				t.Errorf("%s indexed without its own words: %q", id, doc.Body)
			}
			if strings.Contains(doc.Body, "Quoted paragraph") {
				n++
			}
		}
		return n
	}
	// The last four pages' paragraph is a template only if all four came: the last group
	// is complete (pages is a multiple of four).
	t.Logf("pages still holding a template block before the end: %d of %d", quoting(), pages)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := quoting(); n > 0 {
		t.Errorf("after the crawl's end %d of %d pages still hold a block of their site's template", n, pages)
	}
}

// TestStripCopiesOnlyWhatChanges: strip gives what a plain filter of the lines gives
// (empty lines and a trailing newline included), allocates nothing for a body with no
// template line and once for one with some.
func TestStripCopiesOnlyWhatChanges(t *testing.T) {
	st := newSiteTemplates()
	const box = "Popular topics: wings, nozzles"
	for page := range templatePages {
		st.observe("a.test", fmt.Sprint("http://a.test/", page), []string{box})
	}
	filter := func(body string) string { // the rule, plainly
		var kept []string
		rest := body
		for rest != "" {
			line, after, _ := strings.Cut(rest, "\n")
			rest = after
			if line != box && (line != "" || len(kept) > 0) {
				kept = append(kept, line)
			}
		}
		return strings.Join(kept, "\n")
	}
	own := strings.Repeat("A paragraph of the page's own text.\n", 300)
	for _, body := range []string{
		"", "\n", box, "\n" + box, box + "\n", "a\n" + box + "\nb", "\n\na\n\n" + box + "\n\nb\n",
		box + "\n\n" + own, own + box + "\n" + own + box, "a\nb\n\nc\n",
	} {
		want := filter(body)
		if !strings.Contains(body, box) {
			want = body // unchanged: returned as it is
		}
		if got := st.strip("a.test", body); got != want {
			t.Errorf("strip(%.40q) = %.40q, want %.40q", body, got, want)
		}
	}
	if n := testing.AllocsPerRun(50, func() { st.strip("a.test", own) }); n != 0 {
		t.Errorf("%v allocations to strip a body with no template line, want 0", n)
	}
	withBox := own + box + "\n" + own
	if n := testing.AllocsPerRun(50, func() { st.strip("a.test", withBox) }); n != 1 {
		t.Errorf("%v allocations to strip a body with a template line, want 1", n)
	}
}

// putCounter is an *Index that counts the index batches written to it.
type putCounter struct {
	*Index
	puts int
}

func (c *putCounter) Put(ctx context.Context, docs ...Doc) error {
	c.puts++
	return c.Index.Put(ctx, docs...)
}

// TestSinkRestripsInTheBatch: the documents a flush strips again (their host's template
// grew) are written in the same index batch as the flush's own documents, so each flush
// makes one segment, not two for scorch to merge; and the index is still stripped.
func TestSinkRestripsInTheBatch(t *testing.T) {
	norm := urlnorm.New(urlnorm.DefaultOptions())
	ix := &putCounter{Index: openTest(t, Options{})}
	s := NewSink(ix, nil, SinkOptions{Delay: time.Hour})
	ctx := context.Background()
	const pages = templatePages + 3
	for i := range pages {
		u, err := norm.Parse(fmt.Sprintf("http://portal.test/doc/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		p := portalPage(t, i)
		d := &crawl.Document{URL: u, Fetch: &fetch.Result{}, Page: p, Text: p.Text(),
			Record: &store.Page{URL: u.String(), Status: 200, Title: p.Title, Lang: "en", FetchedAt: time.Unix(1.7e9, 0)}}
		if err := s.Consume(ctx, d); err != nil {
			t.Fatal(err)
		}
		before := ix.puts
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if n := ix.puts - before; n != 1 {
			t.Errorf("flush of page %d wrote %d index batches, want 1", i, n)
		}
	}
	if got := s.Stats().Restripped; got == 0 {
		t.Fatal("no page was stripped again: the test's host never grew a template")
	}
	for i := range pages {
		doc, ok, err := ix.Document(ctx, fmt.Sprintf("http://portal.test/doc/%d", i))
		if err != nil || !ok {
			t.Fatalf("page %d: %v, in the index: %v", i, err, ok)
		}
		if strings.Contains(doc.Body, "Popular topics") || !strings.Contains(doc.Body, "shock waves") {
			t.Errorf("page %d indexed as %q", i, doc.Body)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
