package index

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
)

// readCountStore is an index in memory that counts the reads of each document.
type readCountStore struct {
	mu    sync.Mutex
	docs  map[string]Doc
	reads map[string]int
	puts  map[string]int
}

func (r *readCountStore) Put(_ context.Context, docs ...Doc) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range docs {
		r.docs[d.ID] = d
		r.puts[d.ID]++
	}
	return nil
}

func (r *readCountStore) Delete(_ context.Context, ids ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		delete(r.docs, id)
	}
	return nil
}

func (r *readCountStore) Document(_ context.Context, id string) (Doc, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads[id]++
	d, ok := r.docs[id]
	return d, ok, nil
}

func (r *readCountStore) counts(id string) (reads, puts int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads[id], r.puts[id]
}

// anchorTable is a link graph whose anchor texts the test sets.
type anchorTable struct {
	mu sync.Mutex
	m  map[string][]string
}

func (a *anchorTable) set(url string, anchors ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.m[url] = anchors
}

func (a *anchorTable) Signals(urls []string) ([]linkgraph.Signal, error) {
	return make([]linkgraph.Signal, len(urls)), nil
}

func (a *anchorTable) Anchors(url string, _, _ int) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.m[url]), nil
}

func (a *anchorTable) Summary() *linkgraph.RankSummary { return nil }

// TestRefreshReadsOnlyChangedAnchors: an anchor refresh of a document the sink wrote does
// not read it back from the index while the link graph gives the anchors it was written
// with (anchorMarks); once they change, it reads and rewrites it with the new ones, and a
// document the sink did not write (an earlier run's) is read as before.
func TestRefreshReadsOnlyChangedAnchors(t *testing.T) {
	ctx := context.Background()
	st := &readCountStore{docs: map[string]Doc{}, reads: map[string]int{}, puts: map[string]int{}}
	links := &anchorTable{m: map[string][]string{}}
	s := NewSink(st, links, SinkOptions{Delay: time.Hour})
	defer s.Close()

	const a, old = "http://a.test/fuel", "http://a.test/earlier"
	links.set(a, "reactor fuel")
	d := crawl.Document{Fetch: &fetch.Result{}, Text: "reactor fuel rods",
		Record: &store.Page{URL: a, Status: 200, Title: "Fuel"}}
	if err := s.Consume(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, puts := st.counts(a); puts != 1 {
		t.Fatalf("%s written %d times, want 1", a, puts)
	}

	touch := func(id string) { // new in-links, and the refresh of the end of a crawl
		t.Helper()
		s.Touch([]string{id})
		if err := s.Compact(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// New in-links with the same text: nothing to read or write.
	touch(a)
	if reads, puts := st.counts(a); reads != 0 || puts != 1 {
		t.Errorf("unchanged anchors: %d reads and %d writes of %s, want 0 and 1", reads, puts, a)
	}

	// A new anchor text: read and written again with it.
	links.set(a, "reactor fuel", "fuel rods")
	touch(a)
	if reads, puts := st.counts(a); reads != 1 || puts != 2 {
		t.Errorf("changed anchors: %d reads and %d writes of %s, want 1 and 2", reads, puts, a)
	}
	if got := st.docs[a].Anchors; !slices.Equal(got, []string{"reactor fuel", "fuel rods"}) {
		t.Errorf("anchors of %s = %q after the refresh", a, got)
	}
	// And that version is marked in turn.
	touch(a)
	if reads, puts := st.counts(a); reads != 1 || puts != 2 {
		t.Errorf("after the rewrite: %d reads and %d writes of %s, want 1 and 2", reads, puts, a)
	}

	// A document in the index that this sink did not write is read, and rewritten when its
	// stored anchors are not the graph's.
	st.docs[old] = Doc{ID: old, URL: old, Kind: KindPage, Body: "an earlier crawl's page"}
	links.set(old, "earlier")
	touch(old)
	if reads, puts := st.counts(old); reads != 1 || puts != 1 {
		t.Errorf("unmarked document: %d reads and %d writes, want 1 and 1", reads, puts)
	}

	// A document deleted through the sink loses its mark: if it comes back by another way,
	// its refresh reads it.
	if err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	st.docs[a] = Doc{ID: a, URL: a, Kind: KindPage, Body: "back", Anchors: []string{"stale"}}
	touch(a)
	if reads, _ := st.counts(a); reads != 2 {
		t.Errorf("after a deletion: %d reads of %s, want 2", reads, a)
	}
	if got := st.docs[a].Anchors; !slices.Equal(got, []string{"reactor fuel", "fuel rods"}) {
		t.Errorf("anchors of %s = %q after a deletion and a refresh", a, got)
	}
}
