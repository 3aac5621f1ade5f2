package geosearch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
)

// Writer is what the indexer needs of the search index (*index.Index).
type Writer interface {
	Put(ctx context.Context, docs ...index.Doc) error
	Delete(ctx context.Context, ids ...string) error
}

// IndexerOptions tune an Indexer. The zero value is usable.
type IndexerOptions struct {
	// Delay is the longest a changed dataset waits to be written (default 1s): a producer
	// page records links to many datasets at once, and they go in one batch.
	Delay time.Duration
	// BatchSize writes at once when that many datasets are waiting (default 256).
	BatchSize int
	Logger    *slog.Logger
}

// Indexer keeps the dataset documents in the index in step with a catalog: it hears of
// every dataset whose record or links change (catalog.OnChange) and, at most Delay later,
// writes its document, or deletes it when the dataset left search (not geographic, or
// gone). As a crawl.Sink it marks a dataset gone when a revisit answers 404 or 410.
//
// Like the page index, it is derived data: a crash loses at most the last Delay of
// changes, and Reindex (sonda index rebuild) rewrites every dataset from the catalog.
type Indexer struct {
	cat  *catalog.Catalog
	ix   Writer
	opts IndexerOptions

	cancel func() // stops hearing of catalog changes
	// flushing is held for a whole Flush: a Flush that finds nothing pending because the
	// background loop just took it must still wait until that write is done, or a caller
	// who flushed could search before the document is in the index.
	flushing sync.Mutex
	mu       sync.Mutex
	pending  map[store.URLKey]struct{}
	kick     chan struct{}
	stop     chan struct{}
	done     sync.WaitGroup
	once     sync.Once

	written, deleted, failed atomic.Int64
}

// NewIndexer starts an indexer writing the datasets of cat to ix. Close it to write what
// is waiting.
func NewIndexer(cat *catalog.Catalog, ix Writer, opts IndexerOptions) *Indexer {
	if opts.Delay <= 0 {
		opts.Delay = time.Second
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	x := &Indexer{cat: cat, ix: ix, opts: opts, pending: map[store.URLKey]struct{}{},
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	x.cancel = cat.OnChange(x.Queue)
	x.done.Add(1)
	go x.loop()
	return x
}

// Queue asks for the dataset with key to be (re)written.
func (x *Indexer) Queue(k store.URLKey) {
	x.mu.Lock()
	x.pending[k] = struct{}{}
	n := len(x.pending)
	x.mu.Unlock()
	if n >= x.opts.BatchSize {
		select {
		case x.kick <- struct{}{}:
		default:
		}
	}
}

func (x *Indexer) loop() {
	defer x.done.Done()
	t := time.NewTicker(x.opts.Delay)
	defer t.Stop()
	for {
		select {
		case <-x.stop:
			return
		case <-t.C:
		case <-x.kick:
		}
		if err := x.Flush(context.Background()); err != nil {
			x.opts.Logger.Warn("indexing datasets failed; sonda index rebuild restores them", "error", err)
		}
	}
}

// Flush writes every waiting dataset now. When it returns, every dataset queued before
// the call is written, including those a concurrent Flush had taken.
func (x *Indexer) Flush(ctx context.Context) error {
	x.flushing.Lock()
	defer x.flushing.Unlock()
	x.mu.Lock()
	keys := make([]store.URLKey, 0, len(x.pending))
	for k := range x.pending {
		keys = append(keys, k)
	}
	clear(x.pending)
	x.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	sites := siteCache(x.cat)
	var puts []index.Doc
	var dels []string
	var errs []error
	for _, k := range keys {
		d, ok, err := x.cat.Dataset(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // links to a dataset not fetched yet: its fetch will queue it again
		}
		if doc, ok := Doc(d, sites); ok {
			puts = append(puts, doc)
		} else {
			dels = append(dels, DocID(d.URL))
		}
	}
	if err := x.ix.Put(ctx, puts...); err != nil {
		// One bad document fails its batch: write the others one by one.
		for _, d := range puts {
			if err := x.ix.Put(ctx, d); err != nil {
				x.failed.Add(1)
				errs = append(errs, err)
			} else {
				x.written.Add(1)
			}
		}
	} else {
		x.written.Add(int64(len(puts)))
	}
	if err := x.ix.Delete(ctx, dels...); err != nil {
		errs = append(errs, err)
	} else {
		x.deleted.Add(int64(len(dels)))
	}
	return errors.Join(errs...)
}

// siteCache reads producer site records once per batch.
func siteCache(cat *catalog.Catalog) func(string) *catalog.Site {
	m := map[string]*catalog.Site{}
	return func(name string) *catalog.Site {
		if s, ok := m[name]; ok {
			return s
		}
		s, _, _ := cat.Site(name)
		m[name] = s
		return s
	}
}

// IndexerStats count what an indexer wrote.
type IndexerStats struct{ Written, Deleted, Failed int64 }

// Stats returns the counts so far.
func (x *Indexer) Stats() IndexerStats {
	return IndexerStats{Written: x.written.Load(), Deleted: x.deleted.Load(), Failed: x.failed.Load()}
}

// Close stops hearing of catalog changes, writes what is waiting and stops the indexer.
func (x *Indexer) Close() error {
	x.once.Do(func() {
		x.cancel()
		close(x.stop)
	})
	x.done.Wait()
	return x.Flush(context.Background())
}

// Name implements crawl.Sink.
func (x *Indexer) Name() string { return "geo-index" }

// Consume implements crawl.Sink: a dataset URL that answers 404 or 410 on a revisit is
// gone, and leaves search (the thesis's broken-link removal, §3.8.1).
func (x *Indexer) Consume(_ context.Context, d *crawl.Document) error {
	if d.Fetch == nil || (d.Fetch.Status != http.StatusNotFound && d.Fetch.Status != http.StatusGone) {
		return nil
	}
	_, _, err := x.cat.MarkGone(store.URLKey(d.URL.Key()), "http-"+strconv.Itoa(d.Fetch.Status), time.Now())
	return err // MarkGone of an unknown URL is a no-op; the change queues the deletion
}

// reindexBatch is how many documents a rebuild writes at once: each index batch waits for
// its segment to be persisted, so small batches spend a rebuild waiting on the disk.
const reindexBatch = 2048

// Reindex writes the document of every searchable dataset in cat and deletes those of
// the others (sonda index rebuild). It returns how many it wrote.
func Reindex(ctx context.Context, cat *catalog.Catalog, ix Writer) (int, error) {
	sites := siteCache(cat)
	var batch []index.Doc
	var dels []string
	n := 0
	flush := func() error {
		if err := ix.Put(ctx, batch...); err != nil {
			return err
		}
		n += len(batch)
		batch = batch[:0]
		err := ix.Delete(ctx, dels...)
		dels = dels[:0]
		return err
	}
	err := cat.Datasets(func(d *catalog.Dataset) error {
		if doc, ok := Doc(d, sites); ok {
			batch = append(batch, doc)
		} else {
			dels = append(dels, DocID(d.URL))
		}
		if len(batch) >= reindexBatch {
			return flush()
		}
		return ctx.Err()
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}
