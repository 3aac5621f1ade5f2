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
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/urlnorm"
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
// (A Sink also leaves out of the body the blocks the page's site repeats on its pages:
// see siteTemplates.)
func DocFromCrawl(d *crawl.Document) (Doc, Action) { return docFromCrawlWith(d, nil) }

// docFromCrawlWith is DocFromCrawl learning and leaving out the site's template blocks
// with t (nil: none).
func docFromCrawlWith(d *crawl.Document, t *siteTemplates) (Doc, Action) {
	doc, action := docFromCrawl(d, t)
	if action == Add {
		for _, r := range d.Results {
			if s, ok := r.(Shaper); ok {
				s.ShapeDoc(&doc)
			}
		}
	}
	return doc, action
}

// actionOf says what a crawled document means for the index, without building it.
func actionOf(d *crawl.Document) Action {
	rec := d.Record
	switch {
	case rec == nil:
		return Keep
	case rec.Error == "robots-disallowed":
		return Remove
	case d.Fetch == nil || rec.Status == 0 || rec.Status == 304:
		return Keep
	case rec.Status == 404 || rec.Status == 410:
		return Remove
	case rec.Status >= 300 && rec.Status < 400:
		return Remove // the content, if any, is indexed under the target's URL
	case rec.Status < 200 || rec.Status >= 300:
		return Keep
	case rec.NoIndex || rec.DuplicateOf != "":
		return Remove
	case d.Text == "" && rec.Title == "":
		return Remove // nothing to search: a binary file, an empty page
	}
	return Add
}

// docID is a crawled document's index ID: its canonical URL.
func docID(d *crawl.Document) string {
	if !d.URL.IsZero() {
		return d.URL.String()
	}
	return d.Record.URL
}

func docFromCrawl(d *crawl.Document, t *siteTemplates) (Doc, Action) {
	action := actionOf(d)
	if action == Keep {
		return Doc{}, Keep
	}
	rec := d.Record
	id := docID(d)
	doc := Doc{ID: id, Kind: KindPage, URL: id}
	if action == Remove {
		return doc, Remove
	}
	doc.Title = rec.Title
	doc.Host = d.URL.Hostname()
	if doc.Host == "" {
		doc.Host = urlnorm.HostOf(id)
	}
	body := d.Text
	if d.Page != nil {
		var blocks []string
		body, blocks = pageText(d.Page)
		if t != nil && len(blocks) > 0 {
			t.observe(doc.Host, id, blocks)
		}
	}
	doc.Body = text.CutBytes(body, maxIndexedText)
	doc.Lang = rec.Lang
	if doc.Lang == "" {
		if l, conf := text.DetectLanguage(doc.Title + "\n" + doc.Body); conf >= 0.5 {
			doc.Lang = l
		}
	}
	if t != nil {
		// After the language is found from the whole body: the language must not depend on
		// what was known of the site's template when the page came.
		doc.Body = t.strip(doc.Host, doc.Body)
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

// linkDense is the share of a block's text inside links above which the block is taken
// for navigation: Kohlschütter, Fankhauser and Nejdl's boilerplate classifier
// ("Boilerplate detection using shallow text features", WSDM 2010) splits at a link
// density of a third before any other feature.
const linkDense = 1.0 / 3

// pageText is the text a page is indexed with, and the blocks it keeps: its own text,
// without its site's navigation, side boxes and page-wide header and footer when they are
// marked as such (parse.Block.Chrome), and without blocks whose text is mostly link text —
// menus, breadcrumbs, "related" lists, pagers — which sites build from <div>s as often as
// from landmarks. Words a site repeats on every page, or that name other pages, say
// nothing about this one, yet they matched queries ("aeronautical" in an archive's
// footer, the titles of other abstracts in a "readers also viewed" box), lengthened every
// body and would fill the feedback model (feedback.go). A page that would keep nothing
// keeps its whole text (a page that is all links is its links). The blocks its site
// repeats on its pages are left out later (siteTemplates), from the kept blocks counted.
func pageText(p *parse.Page) (body string, kept []string) {
	links := p.Links
	kept = make([]string, 0, len(p.Blocks))
	dropped := false
	for _, bl := range p.Blocks {
		from, to := bl.Start, bl.Start+len(bl.Text)
		// Link text inside the block (links are ordered by TextStart).
		for len(links) > 0 && links[0].TextEnd <= from {
			links = links[1:]
		}
		inLinks := 0
		for _, l := range links {
			if l.TextStart >= to {
				break
			}
			inLinks += max(0, min(l.TextEnd, to)-max(l.TextStart, from))
		}
		if bl.Chrome || float64(inLinks) > linkDense*float64(len(bl.Text)) {
			dropped = true
			continue
		}
		kept = append(kept, bl.Text)
	}
	if !dropped || len(kept) == 0 {
		return p.Text(), kept
	}
	return strings.Join(kept, "\n"), kept
}

// SinkOptions tune a Sink. The zero value is usable.
type SinkOptions struct {
	// BatchSize is how many waiting documents make the writer start a batch (default 256);
	// it then writes every document waiting, in index batches of BatchSize, and waits for
	// them to be persisted once.
	BatchSize int
	// Delay is the longest a document waits for the writer (default 1s).
	Delay time.Duration
	// MaxBacklog bounds the documents consumed and not yet written (default 4 × BatchSize):
	// when the writer is that far behind, Consume waits for it, so the sink's memory and the
	// index's lag stay bounded. The writer takes the whole backlog at once, so up to twice
	// this many documents are in memory (about 14 KB each on a page of 11 KB of text: at
	// 16 × BatchSize they were 45 % of a 20,000-page crawl's Go heap); a longer backlog
	// does not make a crawl finish sooner where the crawl and the index share the CPU.
	MaxBacklog int
	// MaxBacklogText bounds the text those documents hold, in bytes (default 64 MiB):
	// 4,096 waiting pages of a megabyte of text each would otherwise hold 4 GiB.
	MaxBacklogText int
	// BatchText bounds the text of one index batch, in bytes (default 3 MiB, which 256
	// ordinary pages of 11 KB do not reach): Bleve holds a batch's analyzed fields in
	// memory, tens of times its text while the batch is built, so a batch of BatchSize pages
	// of a megabyte each would take gigabytes.
	BatchText int
	// Sync makes Consume return only once its document is searchable: read-your-writes, at
	// the cost of the crawl waiting for the index (search.index-mode sync).
	Sync bool
	// Queue, when set, is the durable queue: Journal records every document the crawl
	// commits in the commit's own batch, and the sink removes the entries of a batch once
	// the batch is persisted in the index. Without it a crash loses what was not persisted.
	Queue *Queue
	// Anchors is how many distinct anchor texts of in-links a document gets (default 64).
	Anchors int
	// RefreshShare bounds anchor refreshes while a crawl runs: documents rewritten because
	// links to them appeared after they were written, at most this many per document
	// written or removed (default 0.25; when no page waits, a batch's worth at every
	// Delay). A fetched page so costs the same whatever the size of the index; Compact
	// (called by Close) rewrites the rest.
	RefreshShare float64
	Logger       *slog.Logger
}

// SinkStore is what a Sink needs of the index: *Index is one.
type SinkStore interface {
	Put(ctx context.Context, docs ...Doc) error
	Delete(ctx context.Context, ids ...string) error
	Document(ctx context.Context, id string) (Doc, bool, error)
}

// syncer is a SinkStore that can wait until its writes are persisted (*Index): a sink with
// a Queue removes entries only after that.
type syncer interface {
	Sync(ctx context.Context) error
}

// Sink indexes a crawl behind it: give it to crawl.WithSinks. Consume only queues a
// document (in memory, bounded by MaxBacklog); a writer goroutine takes everything queued,
// at the latest Delay after it arrived, and writes it in one index batch. With a Queue,
// every document is also journaled in the crawl's commit (Journal), and its entry removed
// once the index has persisted it, so a crash loses nothing: the entries left are indexed
// again when the data directory is opened next (package app).
//
// With a link graph, a document gets the anchor text of the links to it when it is
// written, and Touch (wired to linkgraph.NewSink's onChange) notes documents whose
// in-links changed after they were written: they are rewritten with their new anchors,
// a bounded share per batch (RefreshShare) and the rest by Compact, so anchor text lags the
// graph by at most one crawl.
type Sink struct {
	ix    SinkStore
	links Links
	opts  SinkOptions

	// flushing is held for a whole Flush. Without it, a Flush could find the queue empty
	// because the background writer had just taken it and return before that batch is
	// in the index (a caller who flushed, then searched, would miss documents), and two
	// Flushes could write two versions of a document in the wrong order.
	flushing    sync.Mutex
	mu          sync.Mutex
	cond        *sync.Cond // on mu: a batch was taken, written or failed; the sink closed
	pending     map[string]pendingOp
	pendingText int       // text bytes of the pending documents (Doc.textBytes)
	seqs        []uint64  // queue entries of the pending documents
	since       time.Time // arrival of the oldest pending document
	taken       int       // documents of the batch being written
	takenAt     time.Time // arrival of its oldest document
	batches     uint64    // batches taken
	okBatch     uint64    // the latest batch written
	badBatch    uint64    // the latest batch that failed, with badErr
	badErr      error
	closed      bool
	journal     map[*crawl.Document]uint64 // queue entries of documents journaled, not yet consumed
	touched     map[string]struct{}
	credit      float64 // anchor refreshes the batches written so far allow (RefreshShare)
	// templates are the blocks each site repeats, left out of its pages' bodies.
	templates *siteTemplates
	// marks are the anchors each document was written with (nil without a link graph).
	marks *anchorMarks

	kick chan struct{}
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once

	indexed, removed, refreshed, failed, dropped atomic.Int64
	restripped                                   atomic.Int64
}

type pendingOp struct {
	doc    Doc
	remove bool
}

// maxTouched bounds the set of documents waiting for an anchor refresh; beyond it, new
// ones are dropped (SinkStats.Dropped counts them): `sonda index rebuild` brings every
// document's anchors up to date. With an *Index, the set holds only documents in the index
// (docIDs), so the bound is reached only by an index of more documents.
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
	if opts.MaxBacklog <= 0 {
		opts.MaxBacklog = 4 * opts.BatchSize
	}
	if opts.MaxBacklogText <= 0 {
		opts.MaxBacklogText = 64 << 20
	}
	if opts.BatchText <= 0 {
		opts.BatchText = 3 << 20
	}
	if opts.Anchors <= 0 {
		opts.Anchors = 64
	}
	if opts.RefreshShare <= 0 {
		opts.RefreshShare = 0.25
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sink{ix: ix, links: links, opts: opts, pending: map[string]pendingOp{}, touched: map[string]struct{}{},
		journal: map[*crawl.Document]uint64{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), templates: newSiteTemplates()}
	if links != nil {
		s.marks = newAnchorMarks()
	}
	s.cond = sync.NewCond(&s.mu)
	s.done.Add(1)
	go s.loop()
	return s
}

// Name implements crawl.Sink.
func (s *Sink) Name() string { return "index" }

// Journal implements crawl.JournaledSink: inside the batch that commits d, it adds d to
// the durable queue (when the sink has one and d changes the index).
func (s *Sink) Journal(d *crawl.Document, w store.Writer) error {
	if s.opts.Queue == nil || actionOf(d) == Keep {
		return nil
	}
	seq, err := s.opts.Queue.Add(w, docID(d))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.journal[d] = seq
	s.mu.Unlock()
	return nil
}

// Consume implements crawl.Sink: it queues d for the writer. It waits while the writer
// is MaxBacklog documents behind, and with SinkOptions.Sync until d is searchable.
func (s *Sink) Consume(ctx context.Context, d *crawl.Document) error {
	doc, action := docFromCrawlWith(d, s.templates)
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, journaled := s.journal[d]
	delete(s.journal, d)
	if action == Keep {
		return nil
	}
	for (len(s.pending) >= s.opts.MaxBacklog || s.pendingText >= s.opts.MaxBacklogText) && !s.closed {
		s.kickWriter()
		s.cond.Wait()
	}
	if len(s.pending) == 0 {
		s.since = time.Now()
	}
	if old, ok := s.pending[doc.ID]; ok { // a newer version replaces it
		s.pendingText -= old.doc.textBytes()
	}
	s.pending[doc.ID] = pendingOp{doc: doc, remove: action == Remove}
	s.pendingText += doc.textBytes()
	if journaled {
		s.seqs = append(s.seqs, seq)
	}
	if s.closed {
		return nil // Close writes it
	}
	if !s.opts.Sync {
		if len(s.pending) >= s.opts.BatchSize {
			s.kickWriter()
		}
		return nil
	}
	// Read-your-writes: the batch after the one being written takes d.
	target := s.batches + 1
	s.kickWriter()
	for {
		switch {
		case s.okBatch >= target:
			return nil
		case s.badBatch >= target:
			return s.badErr // d stays queued: a later batch writes it
		case s.closed:
			return nil
		}
		s.cond.Wait()
	}
}

// kickWriter wakes the writer without waiting for it.
func (s *Sink) kickWriter() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// docHolder is a SinkStore that knows which documents it certainly lacks (*Index, docIDs).
type docHolder interface {
	lacks(id string) bool
	expect(ids []string)
}

// Touch notes documents whose in-links changed, so their anchor text is refreshed. URLs
// the index does not hold (most: pages not fetched yet) are left out: when one is written,
// it gets the anchors the link graph has then.
func (s *Sink) Touch(urls []string) {
	if s.links == nil {
		return
	}
	held, _ := s.ix.(docHolder)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, u := range urls {
		if held != nil && held.lacks(u) {
			continue
		}
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
		s.mu.Lock()
		idle := len(s.pending) == 0
		if idle && len(s.touched) > 0 {
			// Nothing new to write: refresh as much as a full batch would allow.
			s.credit = max(s.credit, s.opts.RefreshShare*float64(s.opts.BatchSize))
		}
		skip := idle && (len(s.touched) == 0 || s.credit < 1)
		s.mu.Unlock()
		if skip {
			continue
		}
		if err := s.Flush(context.Background()); err != nil {
			s.opts.Logger.Warn("search index write failed; the documents stay queued", "error", err)
		}
	}
}

// Flush writes the queued documents and refreshes the anchors of as many touched ones as
// RefreshShare allows. When it returns, every document queued before the call is written
// (or the error says why not), including those a concurrent Flush had taken; with a
// Queue, they are persisted and their entries removed.
func (s *Sink) Flush(ctx context.Context) error {
	s.flushing.Lock()
	defer s.flushing.Unlock()
	return s.flush(ctx, false)
}

// Delete removes documents from the index: what is queued is written first (so a version
// queued before the call does not come back after it), and the documents' pending anchor
// refreshes are dropped. It holds the writer for the whole time, so that no anchor refresh
// (which reads a document from the index and writes it back) can read one of them before
// the deletion and write it back after: a purged page stays purged.
func (s *Sink) Delete(ctx context.Context, ids ...string) error {
	s.flushing.Lock()
	defer s.flushing.Unlock()
	if err := s.flush(ctx, false); err != nil {
		return err
	}
	s.mu.Lock()
	for _, id := range ids {
		delete(s.touched, id)
	}
	s.mu.Unlock()
	s.forgetMarks(ids)
	return s.ix.Delete(ctx, ids...)
}

// flush is Flush, with s.flushing held; with allHosts it strips again the pages of every
// host whose template grew, the large ones too (siteTemplates.takeGrown).
func (s *Sink) flush(ctx context.Context, allHosts bool) error {
	s.mu.Lock()
	batch, seqs := s.pending, s.seqs
	s.pending, s.seqs, s.pendingText = make(map[string]pendingOp, len(batch)), nil, 0
	s.taken, s.takenAt, s.since = len(batch), s.since, time.Time{}
	s.batches++
	no := s.batches
	for u := range s.touched {
		if _, queued := batch[u]; queued {
			delete(s.touched, u) // written below with fresh anchors
		}
	}
	s.cond.Broadcast() // room for Consume
	s.mu.Unlock()

	// What the site templates learnt since these documents were made (siteTemplates):
	// a document made before a block of its host was found to be a template loses it now,
	// and so do the indexed documents of the hosts whose template grew, rewritten in the
	// same index batch as this one's documents: a batch of their own would make a segment
	// of its own, which scorch merges away again (a flush with a restrip made two).
	grown := s.templates.takeGrown(allHosts)
	for id, op := range batch {
		if !op.remove {
			op.doc.Body = s.templates.strip(op.doc.Host, op.doc.Body)
			batch[id] = op
		}
	}
	restripped, err := s.restrip(ctx, grown, batch)
	if err == nil {
		err = s.writeBatch(ctx, batch, restripped)
	}
	if err == nil && len(seqs) > 0 {
		err = s.persist(ctx, seqs)
	}

	s.mu.Lock()
	s.taken, s.takenAt = 0, time.Time{}
	if err != nil {
		s.templates.regrow(grown)
		// Put the batch back, unless newer versions arrived meanwhile.
		for id, op := range batch {
			if _, newer := s.pending[id]; !newer {
				if len(s.pending) == 0 {
					s.since = time.Now()
				}
				s.pending[id] = op
				s.pendingText += op.doc.textBytes()
			}
		}
		s.seqs = append(s.seqs, seqs...)
		s.badBatch, s.badErr = no, err
	} else {
		s.okBatch = no
		s.credit += s.opts.RefreshShare * float64(len(batch))
	}
	s.cond.Broadcast()
	var touched []string
	for u := range s.touched {
		if len(touched) >= min(int(s.credit), 4*s.opts.BatchSize) {
			break
		}
		touched = append(touched, u)
		delete(s.touched, u)
	}
	s.credit -= float64(len(touched))
	s.mu.Unlock()
	if err != nil {
		s.failed.Add(int64(len(batch)))
		return err
	}
	return s.refresh(ctx, touched)
}

// writeBatch writes a batch of documents, with the documents restripped rewritten: the
// additions in one index batch, then the removals.
func (s *Sink) writeBatch(ctx context.Context, batch map[string]pendingOp, restripped []Doc) error {
	var puts []Doc
	var removes, ids []string
	for id, op := range batch {
		if op.remove {
			removes = append(removes, id)
		} else {
			ids = append(ids, id)
		}
	}
	if held, ok := s.ix.(docHolder); ok && s.links != nil {
		// Before their anchors are read: a Touch from now on keeps them (docIDs).
		held.expect(ids)
	}
	for _, id := range ids {
		puts = append(puts, s.withLinks(batch[id].doc))
	}
	if err := s.write(ctx, append(puts, restripped...), removes); err != nil {
		return err
	}
	s.indexed.Add(int64(len(puts)))
	s.removed.Add(int64(len(removes)))
	s.restripped.Add(int64(len(restripped)))
	return nil
}

// persist waits until the index has persisted what was written, then removes the queue
// entries seqs.
func (s *Sink) persist(ctx context.Context, seqs []uint64) error {
	if sy, ok := s.ix.(syncer); ok {
		if err := sy.Sync(ctx); err != nil {
			return err
		}
	}
	return s.opts.Queue.Remove(seqs)
}

func (s *Sink) write(ctx context.Context, puts []Doc, removes []string) error {
	var errs []error
	// A Bleve batch holds every document's analyzed fields in memory, several times the
	// text: batches of at most BatchSize documents and BatchText bytes of text keep that
	// bounded (4,096 pages of 11 KB in one batch took the crawl's RSS to 4.8 GiB; a batch
	// of a dozen pages of a megabyte of text each, 200–300 MB more for the second it was
	// built); the sink still persists once per Flush.
	for len(puts) > 0 {
		n, text := 0, 0
		for n < len(puts) && n < s.opts.BatchSize {
			text += puts[n].textBytes()
			if n > 0 && text > s.opts.BatchText {
				break
			}
			n++
		}
		err := s.ix.Put(ctx, puts[:n]...)
		if s.marks != nil && err == nil {
			for _, d := range puts[:n] {
				if d.ID == d.URL { // refresh looks a touched URL up as the document's ID
					s.marks.wrote(d.ID, d.Anchors)
				} else {
					s.marks.forget(d.ID)
				}
			}
		}
		errs = append(errs, err)
		puts = puts[n:]
	}
	if len(removes) > 0 {
		s.forgetMarks(removes)
		errs = append(errs, s.ix.Delete(ctx, removes...))
	}
	return errors.Join(errs...)
}

// forgetMarks drops the anchor marks of documents being removed.
func (s *Sink) forgetMarks(ids []string) {
	if s.marks != nil {
		s.marks.forget(ids...)
	}
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

// hostLister is a SinkStore that can list the documents of a host (*Index).
type hostLister interface {
	hostDocIDs(ctx context.Context, host string) ([]string, error)
}

// restrip returns the indexed documents of hosts whose site template grew, without the
// template's blocks (siteTemplates), for the caller to write; documents of batch are left
// out (its version replaces the indexed one, stripped already). It reads every document
// of such a host; a host's template shows itself on its first pages, when it has few,
// and each block becomes a template once, so this is rare after a host's start.
func (s *Sink) restrip(ctx context.Context, hosts []string, batch map[string]pendingOp) ([]Doc, error) {
	hl, ok := s.ix.(hostLister)
	if !ok {
		return nil, nil
	}
	var puts []Doc
	for _, host := range hosts {
		ids, err := hl.hostDocIDs(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if _, queued := batch[id]; queued {
				continue
			}
			d, ok, err := s.ix.Document(ctx, id)
			if err != nil {
				return nil, err
			}
			if !ok || d.Kind != KindPage {
				continue
			}
			if body := s.templates.strip(host, d.Body); body != d.Body {
				d.Body = body
				puts = append(puts, d)
			}
		}
	}
	return puts, nil
}

// refresh rewrites indexed documents whose anchor text changed.
func (s *Sink) refresh(ctx context.Context, urls []string) error {
	var puts []Doc
	for _, u := range urls {
		if s.marks != nil {
			// Written by this sink with the anchors the graph gives now: nothing to read
			// back or rewrite (anchorMarks).
			if anchors, err := s.links.Anchors(u, s.opts.Anchors, 8<<10); err == nil && s.marks.same(u, anchors) {
				continue
			}
		}
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

// Compact writes what is queued and strips every host's pages of its template as it
// stands, then rewrites every touched document whose anchors changed, whatever
// RefreshShare allows: the anchor text in the index is then the graph's.
// Long-lived processes call it when a crawl ends (app.Instance.AfterCrawl); Close does.
func (s *Sink) Compact(ctx context.Context) error {
	s.flushing.Lock()
	err := s.flush(ctx, true)
	s.flushing.Unlock()
	if err != nil {
		return err
	}
	for {
		s.mu.Lock()
		var touched []string
		for u := range s.touched {
			if len(touched) >= 4*s.opts.BatchSize {
				break
			}
			touched = append(touched, u)
			delete(s.touched, u)
		}
		s.mu.Unlock()
		if len(touched) == 0 {
			return nil
		}
		// With the writer held, as in Flush (see Delete).
		s.flushing.Lock()
		err := s.refresh(ctx, touched)
		s.flushing.Unlock()
		if err != nil {
			return err
		}
	}
}

// SinkStats counts what a Sink did.
type SinkStats struct {
	Indexed, Removed, Refreshed, Failed int64
	Dropped                             int64 // anchor refreshes dropped (see maxTouched)
	// Restripped are documents written again without blocks found to be their site's
	// template after they were indexed (siteTemplates).
	Restripped int64
	Queued     int // documents consumed and not yet written
	Touched    int // documents waiting for an anchor refresh
}

// Stats returns the sink's counters.
func (s *Sink) Stats() SinkStats {
	s.mu.Lock()
	q, t := len(s.pending)+s.taken, len(s.touched)
	s.mu.Unlock()
	return SinkStats{Indexed: s.indexed.Load(), Removed: s.removed.Load(), Refreshed: s.refreshed.Load(), Failed: s.failed.Load(),
		Dropped: s.dropped.Load(), Restripped: s.restripped.Load(), Queued: q, Touched: t}
}

// Backlog implements crawl.Backlogger: the documents consumed and not yet written (with a
// Queue: committed and not yet persisted, which includes them) and the age of the oldest.
func (s *Sink) Backlog() crawl.Backlog {
	s.mu.Lock()
	n, oldest := len(s.pending)+s.taken, s.since
	if !s.takenAt.IsZero() {
		oldest = s.takenAt
	}
	s.mu.Unlock()
	if q := s.opts.Queue; q != nil {
		n = max(n, q.Len())
	}
	b := crawl.Backlog{Documents: n}
	if !oldest.IsZero() {
		b.Lag = time.Since(oldest)
	}
	return b
}

// Close writes what is queued, refreshes every touched document (Compact), and stops the
// writer. The index stays open.
func (s *Sink) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.done.Wait()
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	ctx := context.Background()
	for {
		if err := s.Compact(ctx); err != nil {
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
