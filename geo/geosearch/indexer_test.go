package geosearch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
)

// gatedWriter holds every Put until its gate opens, and records what was written.
type gatedWriter struct {
	entered chan struct{} // one value per Put that started
	gate    chan struct{}
	mu      sync.Mutex
	ids     []string
}

func (w *gatedWriter) Put(_ context.Context, docs ...index.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	w.entered <- struct{}{}
	<-w.gate
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range docs {
		w.ids = append(w.ids, d.ID)
	}
	return nil
}

func (w *gatedWriter) Delete(context.Context, ...string) error { return nil }

func (w *gatedWriter) written() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.ids...)
}

// TestFlushWaitsForBackgroundWrite: a Flush that finds nothing pending because the
// background loop just took the batch must not return before that batch is written; a
// caller who flushed and then searched would otherwise miss the dataset (this failed
// the geo end-to-end test on a loaded CI machine).
func TestFlushWaitsForBackgroundWrite(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat := catalog.New(db)
	w := &gatedWriter{entered: make(chan struct{}, 4), gate: make(chan struct{})}
	x := NewIndexer(cat, w, IndexerOptions{Delay: 10 * time.Millisecond})
	defer func() { close(w.gate); x.Close() }()

	u := "http://data.example/rivers.zip"
	box := geom.BBox{MinX: -71.2, MinY: 42.2, MaxX: -70.9, MaxY: 42.5}
	d := &catalog.Dataset{URL: u, Name: "rivers.zip", Kind: "archive", Geographic: true, BBox: box,
		Metadata: &geo.Dataset{File: u, Format: "shapefile", BBox: box,
			Layers: []*geo.Layer{{Name: "rivers", Format: "shapefile", Features: 3, BBoxWGS84: box}}}}
	if err := cat.PutDataset(KeyOf(u), d); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.entered: // the background loop has the batch and is writing it
	case <-time.After(10 * time.Second):
		t.Fatal("the background loop never wrote the queued dataset")
	}
	flushed := make(chan error, 1)
	go func() { flushed <- x.Flush(context.Background()) }()
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while the background write of %s was still in progress", err, u)
	case <-time.After(200 * time.Millisecond):
	}
	w.gate <- struct{}{}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if got := w.written(); len(got) != 1 || got[0] != DocID(u) {
		t.Fatalf("written %v, want [%s]", got, DocID(u))
	}
}
