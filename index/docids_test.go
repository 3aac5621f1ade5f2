package index

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
)

// linkFrom records src's links (to, with anchor text anchor) in g and touches what
// changed, as linkgraph.NewSink(g, s.Touch) does for a crawled page.
func linkFrom(t *testing.T, g *linkgraph.Graph, s *Sink, src, anchor string, to ...string) {
	t.Helper()
	var links []linkgraph.Link
	for _, u := range to {
		links = append(links, linkgraph.Link{URL: u, Anchor: anchor})
	}
	changed, err := g.SetLinks(src, links)
	if err != nil {
		t.Fatal(err)
	}
	s.Touch(changed)
}

func consumePage(t *testing.T, s *Sink, url, text string) {
	t.Helper()
	d := crawl.Document{Fetch: &fetch.Result{}, Text: text, Record: &store.Page{URL: url, Status: 200, Title: text}}
	if err := s.Consume(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func anchorsOf(t *testing.T, ix *Index, id string) []string {
	t.Helper()
	d, ok, err := ix.Document(ctx, id)
	if err != nil || !ok {
		t.Fatalf("document %s: %v, %v", id, ok, err)
	}
	return d.Anchors
}

// TestTouchKeepsOnlyIndexedDocuments: the anchor refreshes a sink waits to do are of
// documents in the index, not of every URL a crawl finds links to: the set of them does not
// grow with the frontier (docIDs). Documents of an earlier run (in the index when it opens)
// are refreshed, deleted ones are not.
func TestTouchKeepsOnlyIndexedDocuments(t *testing.T) {
	g := memGraph(t)
	dir := t.TempDir()
	ix, err := Open(dir, Options{Links: g})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSink(ix, g, SinkOptions{Delay: time.Hour})

	const fuel = "http://a.test/fuel"
	consumePage(t, s, fuel, "reactor fuel rods")
	var frontier []string // linked, never fetched
	for i := range 1000 {
		frontier = append(frontier, fmt.Sprintf("http://b.test/page-%d", i))
	}
	linkFrom(t, g, s, "http://b.test/", "fuel", append(frontier, fuel)...)
	if n := s.Stats().Touched; n != 1 {
		t.Errorf("%d documents wait for an anchor refresh after a page linked to 1 indexed and 1,000 unfetched URLs, want 1", n)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := anchorsOf(t, ix, fuel); !slices.Equal(got, []string{"fuel"}) {
		t.Errorf("anchors of %s = %q after the refresh, want [fuel]", fuel, got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// The next run: the page is in the index from the start, and its new in-links count.
	ix, err = Open(dir, Options{Links: g})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	s = NewSink(ix, g, SinkOptions{Delay: time.Hour})
	defer s.Close()
	linkFrom(t, g, s, "http://c.test/", "rods", append(frontier, fuel)...)
	if n := s.Stats().Touched; n != 1 {
		t.Errorf("reopened: %d documents wait for an anchor refresh, want 1", n)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := anchorsOf(t, ix, fuel); !slices.Equal(got, []string{"fuel", "rods"}) {
		t.Errorf("reopened: anchors of %s = %q after the refresh, want [fuel rods]", fuel, got)
	}

	// Deleted, it is not refreshed.
	if err := s.Delete(ctx, fuel); err != nil {
		t.Fatal(err)
	}
	linkFrom(t, g, s, "http://d.test/", "core", fuel)
	if n := s.Stats().Touched; n != 0 {
		t.Errorf("deleted: %d documents wait for an anchor refresh, want 0", n)
	}
}

// hookedLinks is a link graph that calls hook (once) after a document's anchors are read.
type hookedLinks struct {
	*linkgraph.Graph
	once sync.Once
	hook func()
}

func (h *hookedLinks) Anchors(url string, limit, maxBytes int) ([]string, error) {
	a, err := h.Graph.Anchors(url, limit, maxBytes)
	h.once.Do(h.hook)
	return a, err
}

// TestTouchWhileWriting: a link found while the sink writes its target (after it was queued,
// before the index has it) is not lost: the sink announces the documents to the index before
// it reads their anchors, so the touch is kept and the refresh brings the new anchor in.
func TestTouchWhileWriting(t *testing.T) {
	g := memGraph(t)
	ix := openTest(t, Options{Links: g})
	const fuel = "http://a.test/fuel"
	links := &hookedLinks{Graph: g}
	s := NewSink(ix, links, SinkOptions{Delay: time.Hour})
	defer s.Close()
	links.hook = func() {
		// Just after the sink read fuel's anchors (none) to write it, a page linking to it
		// is crawled.
		linkFrom(t, g, s, "http://b.test/", "late", fuel)
	}
	consumePage(t, s, fuel, "reactor fuel rods")
	if got := anchorsOf(t, ix, fuel); len(got) != 0 {
		t.Fatalf("anchors of %s = %q as first written, want none", fuel, got)
	}
	if n := s.Stats().Touched; n != 1 {
		t.Errorf("%d documents wait for an anchor refresh, want 1 (the link found while it was written)", n)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := anchorsOf(t, ix, fuel); !slices.Equal(got, []string{"late"}) {
		t.Errorf("anchors of %s = %q, want [late]", fuel, got)
	}
}
