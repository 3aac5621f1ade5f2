package index

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
)

// refreshRaceStore is an index in memory whose deletion of one document (target) is
// interleaved with an anchor refresh: when the deletion starts, a link to the document
// appears (Touch) and a Flush runs; the refresh's read of the document is held until the
// deletion is done, which waits (a bounded time) for that read. A sink that lets a refresh
// run beside a deletion writes the deleted document back.
type refreshRaceStore struct {
	sink    *Sink
	target  string
	mu      sync.Mutex
	docs    map[string]Doc
	armed   bool
	read    chan struct{} // closed when the refresh read the target
	deleted chan struct{} // closed when the target is deleted
	flushed chan error    // the Flush started by the deletion
}

func (r *refreshRaceStore) Put(_ context.Context, docs ...Doc) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range docs {
		r.docs[d.ID] = d
	}
	return nil
}

func (r *refreshRaceStore) Delete(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if id != r.target {
			continue
		}
		r.mu.Lock()
		r.armed = true
		r.mu.Unlock()
		r.sink.Touch([]string{id}) // a page found meanwhile links to it
		go func() { r.flushed <- r.sink.Flush(ctx) }()
		select {
		case <-r.read:
		case <-time.After(2 * time.Second): // the sink holds the refresh back: it never reads
		}
	}
	r.mu.Lock()
	for _, id := range ids {
		delete(r.docs, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		if id == r.target {
			close(r.deleted)
		}
	}
	return nil
}

func (r *refreshRaceStore) Document(_ context.Context, id string) (Doc, bool, error) {
	r.mu.Lock()
	d, ok := r.docs[id]
	hold := r.armed && id == r.target && ok
	r.mu.Unlock()
	if hold {
		close(r.read)
		select {
		case <-r.deleted:
		case <-time.After(10 * time.Second):
		}
	}
	return d, ok, nil
}

// anchorsAlways gives every document one anchor text, so a refresh rewrites any
// document written without it.
type anchorsAlways struct{}

func (anchorsAlways) Signals(urls []string) ([]linkgraph.Signal, error) {
	return make([]linkgraph.Signal, len(urls)), nil
}
func (anchorsAlways) Anchors(string, int, int) ([]string, error) { return []string{"spam"}, nil }
func (anchorsAlways) Summary() *linkgraph.RankSummary            { return nil }

// TestSinkDeleteHoldsRefreshBack: a document deleted through the sink (a quarantined
// worker's page, purged) is not written back by an anchor refresh that read it just
// before the deletion (the refresh reads the indexed document and writes it with its new
// anchors).
func TestSinkDeleteHoldsRefreshBack(t *testing.T) {
	ctx := context.Background()
	const target = "http://a.test/tampered"
	st := &refreshRaceStore{target: target, docs: map[string]Doc{}, read: make(chan struct{}), deleted: make(chan struct{}),
		flushed: make(chan error, 1)}
	s := NewSink(st, anchorsAlways{}, SinkOptions{Delay: time.Hour, RefreshShare: 4})
	st.sink = s
	defer s.Close()
	st.docs[target] = Doc{ID: target, URL: target, Kind: KindPage, Body: "tampered"}
	// A page written earns the refreshes their credit.
	d := crawl.Document{Fetch: &fetch.Result{}, Text: "reactor fuel", Record: &store.Page{URL: "http://a.test/fuel", Status: 200}}
	if err := s.Consume(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := <-st.flushed; err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if doc, ok := st.docs[target]; ok {
		t.Errorf("the deleted document was written back by an anchor refresh: %+v", doc)
	}
	if _, ok := st.docs["http://a.test/fuel"]; !ok {
		t.Error("the page queued before the deletion was not written")
	}
}
