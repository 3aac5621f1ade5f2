package index

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/text"
)

// Action is what a crawled document means for the index.
type Action int

const (
	// Keep leaves the index as it is: the fetch says nothing new (304 Not Modified, a
	// timeout, a 5xx that will be retried).
	Keep Action = iota
	// Add adds or replaces the document.
	Add
	// Remove deletes it: the page is gone (404, 410), moved (a redirect), excluded
	// (noindex, robots.txt) or a copy of another page.
	Remove
)

// maxIndexedText bounds the body text a page contributes (the parser caps it too).
const maxIndexedText = 1 << 20

// Shaper is an analyzer result (in crawl.Document.Results) that shapes its page's index
// document: the news vertical's article makes the page an article, with the extracted
// title, text, dates and authors.
type Shaper interface {
	ShapeDoc(doc *Doc)
}

// DocFromCrawl makes the index document of a crawled page and says what to do with it.
func DocFromCrawl(d *crawl.Document) (Doc, Action) {
	doc, action := docFromCrawl(d)
	if action == Add {
		for _, r := range d.Results {
			if s, ok := r.(Shaper); ok {
				s.ShapeDoc(&doc)
			}
		}
	}
	return doc, action
}

func docFromCrawl(d *crawl.Document) (Doc, Action) {
	rec := d.Record
	if rec == nil {
		return Doc{}, Keep
	}
	id := rec.URL
	if !d.URL.IsZero() {
		id = d.URL.String()
	}
	doc := Doc{ID: id, Kind: KindPage, URL: id}
	switch {
	case rec.Error == "robots-disallowed":
		return doc, Remove
	case d.Fetch == nil || rec.Status == 0 || rec.Status == 304:
		return doc, Keep
	case rec.Status == 404 || rec.Status == 410:
		return doc, Remove
	case rec.Status >= 300 && rec.Status < 400:
		return doc, Remove // the content, if any, is indexed under the target's URL
	case rec.Status < 200 || rec.Status >= 300:
		return doc, Keep
	case rec.NoIndex || rec.DuplicateOf != "":
		return doc, Remove
	case d.Text == "" && rec.Title == "":
		return doc, Remove // nothing to search: a binary file, an empty page
	}
	doc.Title = rec.Title
	doc.Body = text.CutBytes(d.Text, maxIndexedText)
	doc.Host = d.URL.Hostname()
	if doc.Host == "" {
		doc.Host = hostOf(id)
	}
	doc.Lang = rec.Lang
	if doc.Lang == "" {
		if l, conf := text.DetectLanguage(doc.Title + "\n" + doc.Body); conf >= 0.5 {
			doc.Lang = l
		}
	}
	doc.ContentType = rec.ContentType
	doc.Fetched = rec.FetchedAt
	doc.Relevance = -1
	if rec.Relevance != nil {
		doc.Relevance = *rec.Relevance
	}
	if rec.Relevant != nil {
		doc.Relevant = *rec.Relevant
	}
	doc.Topics = rec.Topics
	if p := d.Page; p != nil {
		doc.Description = p.Description
		var hs []string
		for _, b := range p.Blocks {
			if len(b.Tag) == 2 && b.Tag[0] == 'h' && b.Tag[1] >= '1' && b.Tag[1] <= '6' {
				hs = append(hs, b.Text)
			}
		}
		doc.Headings = strings.Join(hs, "\n")
	}
	return doc, Add
}

func hostOf(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.ToLower(rest)
}

// SinkOptions tune a Sink. The zero value is usable.
type SinkOptions struct {
	// BatchSize is how many documents are written together (default 256).
	BatchSize int
	// Delay is the longest a document waits to be written (default 1s).
	Delay time.Duration
	// Anchors is how many distinct anchor texts of in-links a document gets (default 64).
	Anchors int
	Logger  *slog.Logger
}

// SinkStore is what a Sink needs of the index: *Index is one.
type SinkStore interface {
	Put(ctx context.Context, docs ...Doc) error
	Delete(ctx context.Context, ids ...string) error
	Document(ctx context.Context, id string) (Doc, bool, error)
}

// Sink indexes a crawl as it goes: give it to crawl.WithSinks. Documents are queued and
// written in batches, at the latest Delay after they arrive; Close writes what is queued.
// A crash loses the queue; see the package doc for how the index recovers.
//
// With a link graph, a document gets the anchor text of the links to it when it is
// written, and Touch (wired to linkgraph.NewSink's onChange) queues documents whose
// in-links changed after they were written, so their anchor text follows the graph.
type Sink struct {
	ix    SinkStore
	links Links
	opts  SinkOptions

	// flushing is held for a whole Flush. Without it, a Flush could find the queue empty
	// because the background writer had just taken it and return before that batch is
	// in the index (a caller who flushed, then searched, would miss documents), and two
	// Flushes could write two versions of a document in the wrong order.
	flushing sync.Mutex
	mu       sync.Mutex
	pending  map[string]pendingOp
	touched  map[string]struct{}

	kick chan struct{}
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once

	indexed, removed, refreshed, failed, dropped atomic.Int64
}

type pendingOp struct {
	doc    Doc
	remove bool
}

// maxTouched bounds the set of documents waiting for an anchor refresh; beyond it, new
// ones are dropped (SinkStats.Dropped counts them): `sonda index rebuild` brings every
// document's anchors up to date.
const maxTouched = 1 << 20

// NewSink returns a sink writing to ix, with anchor text and in-link counts from links
// (nil: none). It starts the background writer; Close stops it.
func NewSink(ix SinkStore, links Links, opts SinkOptions) *Sink {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Delay <= 0 {
		opts.Delay = time.Second
	}
	if opts.Anchors <= 0 {
		opts.Anchors = 64
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sink{ix: ix, links: links, opts: opts, pending: map[string]pendingOp{}, touched: map[string]struct{}{},
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	s.done.Add(1)
	go s.loop()
	return s
}

// Name implements crawl.Sink.
func (s *Sink) Name() string { return "index" }

// Consume implements crawl.Sink.
func (s *Sink) Consume(ctx context.Context, d *crawl.Document) error {
	doc, action := DocFromCrawl(d)
	if action == Keep {
		return nil
	}
	s.mu.Lock()
	s.pending[doc.ID] = pendingOp{doc: doc, remove: action == Remove}
	n := len(s.pending)
	s.mu.Unlock()
	switch {
	case n >= 8*s.opts.BatchSize:
		// The writer is behind: write from here, so the queue stays bounded.
		return s.Flush(ctx)
	case n >= s.opts.BatchSize:
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Touch queues documents whose in-links changed, so their anchor text is refreshed.
func (s *Sink) Touch(urls []string) {
	if s.links == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, u := range urls {
		if len(s.touched) >= maxTouched {
			s.dropped.Add(int64(len(urls) - i))
			return
		}
		s.touched[u] = struct{}{}
	}
}

func (s *Sink) loop() {
	defer s.done.Done()
	t := time.NewTicker(s.opts.Delay)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.kick:
		}
		if err := s.Flush(context.Background()); err != nil {
			s.opts.Logger.Warn("search index write failed; the documents stay queued", "error", err)
		}
	}
}

// Flush writes the queued documents and refreshes a bounded number of touched ones.
// When it returns, every document queued before the call is written (or the error says
// why not), including those a concurrent Flush had taken.
func (s *Sink) Flush(ctx context.Context) error {
	s.flushing.Lock()
	defer s.flushing.Unlock()
	s.mu.Lock()
	batch := s.pending
	s.pending = make(map[string]pendingOp, len(batch))
	var touched []string
	for u := range s.touched {
		if _, queued := batch[u]; queued {
			delete(s.touched, u) // written below with fresh anchors
			continue
		}
		if len(touched) >= 4*s.opts.BatchSize {
			break
		}
		touched = append(touched, u)
		delete(s.touched, u)
	}
	s.mu.Unlock()

	var puts []Doc
	var removes []string
	for id, op := range batch {
		if op.remove {
			removes = append(removes, id)
			continue
		}
		puts = append(puts, s.withLinks(op.doc))
	}
	err := s.write(ctx, puts, removes)
	if err != nil {
		// Put the batch back, unless newer versions arrived meanwhile.
		s.mu.Lock()
		for id, op := range batch {
			if _, newer := s.pending[id]; !newer {
				s.pending[id] = op
			}
		}
		s.mu.Unlock()
		s.failed.Add(int64(len(batch)))
		return err
	}
	s.indexed.Add(int64(len(puts)))
	s.removed.Add(int64(len(removes)))
	return s.refresh(ctx, touched)
}

func (s *Sink) write(ctx context.Context, puts []Doc, removes []string) error {
	var errs []error
	for i := 0; i < len(puts); i += s.opts.BatchSize {
		errs = append(errs, s.ix.Put(ctx, puts[i:min(i+s.opts.BatchSize, len(puts))]...))
	}
	if len(removes) > 0 {
		errs = append(errs, s.ix.Delete(ctx, removes...))
	}
	return errors.Join(errs...)
}

// withLinks fills in a document's anchor text and in-link count from the link graph.
func (s *Sink) withLinks(d Doc) Doc {
	if s.links == nil {
		return d
	}
	if anchors, err := s.links.Anchors(d.URL, s.opts.Anchors, 8<<10); err == nil {
		d.Anchors = anchors
	}
	if sig, err := s.links.Signals([]string{d.URL}); err == nil {
		d.InLinks = sig[0].InLinks
	}
	return d
}

// refresh rewrites indexed documents whose anchor text changed.
func (s *Sink) refresh(ctx context.Context, urls []string) error {
	var puts []Doc
	for _, u := range urls {
		d, ok, err := s.ix.Document(ctx, u)
		if err != nil {
			return err
		}
		if !ok {
			continue // not indexed (yet): it gets its anchors when it is
		}
		nd := s.withLinks(d)
		if slices.Equal(nd.Anchors, d.Anchors) {
			continue // only the in-link count moved: searches read it from the graph
		}
		puts = append(puts, nd)
	}
	if len(puts) == 0 {
		return nil
	}
	if err := s.write(ctx, puts, nil); err != nil {
		return err
	}
	s.refreshed.Add(int64(len(puts)))
	return nil
}

// SinkStats counts what a Sink did.
type SinkStats struct {
	Indexed, Removed, Refreshed, Failed int64
	Dropped                             int64 // anchor refreshes dropped (see maxTouched)
	Queued                              int
}

// Stats returns the sink's counters.
func (s *Sink) Stats() SinkStats {
	s.mu.Lock()
	q := len(s.pending)
	s.mu.Unlock()
	return SinkStats{Indexed: s.indexed.Load(), Removed: s.removed.Load(), Refreshed: s.refreshed.Load(), Failed: s.failed.Load(),
		Dropped: s.dropped.Load(), Queued: q}
}

// Close writes what is queued, refreshes every touched document, and stops the writer.
// The index stays open.
func (s *Sink) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.done.Wait()
	ctx := context.Background()
	for {
		if err := s.Flush(ctx); err != nil {
			return err
		}
		s.mu.Lock()
		left := len(s.pending) + len(s.touched)
		s.mu.Unlock()
		if left == 0 {
			return nil
		}
	}
}
