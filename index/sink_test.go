package index

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
)

func TestDocFromCrawl(t *testing.T) {
	ok := &fetch.Result{}
	rel := 0.7
	yes := true
	page := &parse.Page{Description: "About reactors", Blocks: []parse.Block{{Text: "Reactors", Tag: "h1"}, {Text: "Body text", Tag: "p"}, {Text: "Fuel", Tag: "h2"}}}
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		d    crawl.Document
		want Action
	}{
		{"html page", crawl.Document{Fetch: ok, Page: page, Text: "Reactors\nBody text\nFuel", Record: &store.Page{URL: "http://a.test/", Status: 200, Title: "Reactors", Lang: "en", FetchedAt: at, Relevance: &rel, Relevant: &yes}}, Add},
		{"plain text", crawl.Document{Fetch: ok, Text: "just text", Record: &store.Page{URL: "http://a.test/t.txt", Status: 200}}, Add},
		{"noindex", crawl.Document{Fetch: ok, Page: page, Text: "x", Record: &store.Page{URL: "http://a.test/", Status: 200, NoIndex: true}}, Remove},
		{"duplicate", crawl.Document{Fetch: ok, Page: page, Text: "x", Record: &store.Page{URL: "http://a.test/", Status: 200, DuplicateOf: "http://b.test/"}}, Remove},
		{"404", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 404}}, Remove},
		{"410", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 410}}, Remove},
		{"redirect", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 301, FinalURL: "http://a.test/b"}}, Remove},
		{"robots", crawl.Document{Record: &store.Page{URL: "http://a.test/", Error: "robots-disallowed"}}, Remove},
		{"binary", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/f.pdf", Status: 200}}, Remove},
		{"not modified", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 304}}, Keep},
		{"server error", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 503}}, Keep},
		{"timeout", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Error: "timeout-first-byte"}}, Keep},
	}
	for _, tt := range tests {
		doc, action := DocFromCrawl(&tt.d)
		if action != tt.want {
			t.Errorf("%s: action %v, want %v", tt.name, action, tt.want)
		}
		if tt.name == "html page" {
			if doc.Headings != "Reactors\nFuel" || doc.Description != "About reactors" || doc.Host != "a.test" || doc.Relevance != 0.7 ||
				!doc.Relevant || !doc.Fetched.Equal(at) || doc.Kind != KindPage || doc.Lang != "en" {
				t.Errorf("html page: %+v", doc)
			}
		}
		if tt.name == "plain text" && (doc.Relevance != -1 || doc.Body != "just text") {
			t.Errorf("plain text: %+v", doc)
		}
	}
}

// gatedStore holds every Put until its gate opens and records the IDs written.
type gatedStore struct {
	entered chan struct{} // one value per Put that started
	gate    chan struct{}
	mu      sync.Mutex
	ids     []string
}

func (g *gatedStore) Put(_ context.Context, docs ...Doc) error {
	if len(docs) == 0 {
		return nil
	}
	g.entered <- struct{}{}
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range docs {
		g.ids = append(g.ids, d.ID)
	}
	return nil
}

func (g *gatedStore) Delete(context.Context, ...string) error { return nil }
func (g *gatedStore) Document(context.Context, string) (Doc, bool, error) {
	return Doc{}, false, nil
}

func (g *gatedStore) written() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.ids...)
}

// TestSinkFlushWaitsForBackgroundWrite: a Flush that finds the queue empty because the
// background writer just took it must not return before that batch is written, or a
// caller who flushed (sonda serve after each crawl) could search and miss the pages.
func TestSinkFlushWaitsForBackgroundWrite(t *testing.T) {
	g := &gatedStore{entered: make(chan struct{}, 4), gate: make(chan struct{})}
	s := NewSink(g, nil, SinkOptions{Delay: 10 * time.Millisecond})
	defer func() { close(g.gate); s.Close() }()
	d := crawl.Document{Fetch: &fetch.Result{}, Text: "reactor fuel",
		Record: &store.Page{URL: "http://a.test/fuel", Status: 200, FetchedAt: time.Unix(1.7e9, 0)}}
	if err := s.Consume(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.entered: // the background writer has the batch
	case <-time.After(10 * time.Second):
		t.Fatal("the background writer never wrote the queued page")
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(context.Background()) }()
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while the background write was still in progress", err)
	case <-time.After(200 * time.Millisecond):
	}
	g.gate <- struct{}{}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if got := g.written(); len(got) != 1 {
		t.Fatalf("written %v, want the one page", got)
	}
}

// TestSinkBacklogIsBounded: when the writer is MaxBacklog documents behind, Consume waits
// for it instead of queueing more, and Backlog reports how far behind it is.
func TestSinkBacklogIsBounded(t *testing.T) {
	g := &gatedStore{entered: make(chan struct{}, 4), gate: make(chan struct{})}
	s := NewSink(g, nil, SinkOptions{BatchSize: 2, MaxBacklog: 3, Delay: time.Hour})
	defer func() { close(g.gate); s.Close() }()
	page := func(i int) *crawl.Document {
		return &crawl.Document{Fetch: &fetch.Result{}, Text: "reactor fuel",
			Record: &store.Page{URL: "http://a.test/" + string(rune('a'+i)), Status: 200}}
	}
	// Two pages start a batch, which the store holds.
	for i := range 2 {
		if err := s.Consume(context.Background(), page(i)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer never took the first batch")
	}
	// Three more wait; the sixth must wait for room.
	for i := 2; i < 5; i++ {
		if err := s.Consume(context.Background(), page(i)); err != nil {
			t.Fatal(err)
		}
	}
	if b := s.Backlog(); b.Documents != 5 || b.Lag <= 0 {
		t.Errorf("backlog %+v, want 5 documents and a positive lag", b)
	}
	consumed := make(chan error, 1)
	go func() { consumed <- s.Consume(context.Background(), page(5)) }()
	select {
	case err := <-consumed:
		t.Fatalf("Consume returned (%v) with the backlog full", err)
	case <-time.After(200 * time.Millisecond):
	}
	g.gate <- struct{}{} // the first batch is written: the writer takes the next three
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}
}

// textStore records the text of each batch it is given.
type textStore struct {
	gatedStore
	batches []int // text bytes per Put
}

func (s *textStore) Put(ctx context.Context, docs ...Doc) error {
	text := 0
	for i := range docs {
		text += docs[i].textBytes()
	}
	s.mu.Lock()
	s.batches = append(s.batches, text)
	for _, d := range docs {
		s.ids = append(s.ids, d.ID)
	}
	s.mu.Unlock()
	return nil
}

// TestSinkBatchesBoundedByText: an index batch holds at most BatchText bytes of text
// (unless one document alone is larger), whatever BatchSize allows: Bleve holds a batch's
// analyzed fields in memory, and a dozen pages of a megabyte of text in one batch took a
// crawl 200–300 MB over its memory bound.
func TestSinkBatchesBoundedByText(t *testing.T) {
	st := &textStore{}
	s := NewSink(st, nil, SinkOptions{BatchSize: 100, BatchText: 3000, Delay: time.Hour})
	defer s.Close()
	big := strings.Repeat("reactor fuel rods ", 60) // 1,080 bytes
	for i := range 30 {
		text := "reactor fuel"
		if i%3 == 0 {
			text = big
		}
		d := &crawl.Document{Fetch: &fetch.Result{}, Text: text,
			Record: &store.Page{URL: fmt.Sprintf("http://a.test/%d", i), Status: 200}}
		if err := s.Consume(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.ids) != 30 {
		t.Fatalf("%d documents written, want 30", len(st.ids))
	}
	if len(st.batches) < 4 {
		t.Errorf("batches of %v text bytes: 10 pages of 1,080 bytes fit in no fewer than 4 batches of 3,000", st.batches)
	}
	for _, b := range st.batches {
		if b > 3000 {
			t.Errorf("a batch of %d text bytes, want at most 3,000 (batches: %v)", b, st.batches)
		}
	}
}

// TestSinkBacklogTextIsBounded: when the documents waiting for the writer hold
// MaxBacklogText bytes of text, Consume waits for it, however few they are.
func TestSinkBacklogTextIsBounded(t *testing.T) {
	g := &gatedStore{entered: make(chan struct{}, 4), gate: make(chan struct{})}
	s := NewSink(g, nil, SinkOptions{BatchSize: 100, MaxBacklog: 100, MaxBacklogText: 2500, Delay: time.Hour})
	defer func() { close(g.gate); s.Close() }()
	big := strings.Repeat("reactor fuel rods ", 60) // 1,080 bytes
	page := func(i int) *crawl.Document {
		return &crawl.Document{Fetch: &fetch.Result{}, Text: big,
			Record: &store.Page{URL: fmt.Sprintf("http://a.test/%d", i), Status: 200}}
	}
	consume := func(i int) <-chan error {
		done := make(chan error, 1)
		go func() { done <- s.Consume(context.Background(), page(i)) }()
		return done
	}
	for i := range 3 { // 3,240 bytes waiting
		if err := <-consume(i); err != nil {
			t.Fatal(err)
		}
	}
	// The fourth waits for the writer, which takes the three and is held by the store.
	fourth := consume(3)
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer never took the waiting pages")
	}
	if err := <-fourth; err != nil {
		t.Fatal(err)
	}
	for i := 4; i < 6; i++ {
		if err := <-consume(i); err != nil {
			t.Fatal(err)
		}
	}
	seventh := consume(6)
	select {
	case err := <-seventh:
		t.Fatalf("Consume returned (%v) with 3,240 bytes of text waiting, bound 2,500", err)
	case <-time.After(200 * time.Millisecond):
	}
	g.gate <- struct{}{} // the first batch is written; the writer takes the next
	if err := <-seventh; err != nil {
		t.Fatal(err)
	}
}
