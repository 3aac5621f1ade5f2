package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/sonda-search/sonda/internal/crashpoint"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/query"
)

// Links is what the index asks of a link graph (package linkgraph's *Graph): the link
// signals of result URLs, the anchor text of links to a URL, and when ranks last changed.
type Links interface {
	Signals(urls []string) ([]linkgraph.Signal, error)
	Anchors(url string, limit, maxBytes int) ([]string, error)
	Summary() *linkgraph.RankSummary
}

// Options tune an Index. The zero value is usable: sonda's default ranking, implicit AND,
// no link graph.
type Options struct {
	Ranking Ranking
	// Implicit is what juxtaposed query words mean (query.And by default).
	Implicit query.Operator
	// Links provides link rank, in-link counts and anchors (nil: none).
	Links Links
	// CacheEntries is the size of the result cache (default 1024; negative: no cache).
	CacheEntries int
	// FacetCache bounds the memory of the segments' facet columns decoded for facet
	// counts (columns.go; default DefaultFacetCache; negative: none, every search reads
	// its results' values through Bleve's doc value reader).
	FacetCache int64
	// ForwardCache bounds the memory of the segments' forward term lists kept apart from
	// the documents' text for feedback (forwardcache.go; default DefaultForwardCache;
	// negative: none, each search reads them from the stored documents).
	ForwardCache int64
	// PostingsCache bounds the memory of terms' postings kept decoded between searches
	// (postingscache.go; default DefaultPostingsCache, 128 MiB; negative: none, every search
	// decodes the postings it reads).
	PostingsCache int64
	// MaxResults is the deepest result a query may page to (default 1000, as the search
	// engines seed 002 compares itself with: deep pages cost more and are never read).
	MaxResults int
	// SyncWrites makes Put and Delete wait until their batch is persisted (fsynced), not
	// only searchable; about four times slower.
	SyncWrites bool
	// ReadOnly opens an existing index without changing one byte of it: nothing is created
	// or marked open, scorch runs no persister or merger, and Put, Delete and Sync fail with
	// ErrReadOnly. Several read-only opens may share an index (sonda search, a read-only
	// sonda serve); an open for writing excludes them, and they exclude it.
	ReadOnly bool
	// Budget is how long one search may collect matches before it stops with the best it
	// has found so far, marked Result.Partial (0 or negative: no limit). It bounds the heavy
	// queries (dozens of OR-ed common words) that would otherwise hold a core for seconds.
	// sonda's configuration sets it (search.time-budget, 50 ms by default); the zero Options
	// leave it off, so that a library user or an evaluation that did not ask for cut
	// answers never gets one because the machine was busy.
	Budget time.Duration
	// MaxSearches is how many searches run at once (default 2 per CPU); answers from the
	// result cache do not count. Others wait for a turn, in order, at most QueueWait
	// (default DefaultQueueWait), then fail with ErrBusy: an overloaded server answers
	// "busy" quickly instead of slowing every search down.
	MaxSearches int
	QueueWait   time.Duration
	// BatchSize is how many documents a write usually carries (default 256, the index
	// sink's default; sonda's configuration passes search.batch-size). Scorch's merge
	// planner treats smaller segments as this size.
	BatchSize int
	Logger    *slog.Logger

	// keepSegments stops scorch's merger, for tests that need the segments their writes
	// made (merges run whenever the planner wakes, which a loaded machine delays).
	keepSegments bool
}

// DefaultQueueWait is the default of Options.QueueWait.
const DefaultQueueWait = time.Second

func (o Options) withDefaults() Options {
	o.Ranking = o.Ranking.withDefaults()
	if o.CacheEntries == 0 {
		o.CacheEntries = 1024
	}
	if o.FacetCache == 0 {
		o.FacetCache = DefaultFacetCache
	}
	if o.ForwardCache == 0 {
		o.ForwardCache = DefaultForwardCache
	}
	if o.PostingsCache == 0 {
		o.PostingsCache = DefaultPostingsCache
	}
	if o.MaxResults <= 0 {
		o.MaxResults = defaultMaxResults
	}
	if o.MaxSearches <= 0 {
		o.MaxSearches = 2 * runtime.GOMAXPROCS(0)
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 256
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Index is a search index in one directory. It is safe for concurrent use; writes are
// serialized.
type Index struct {
	bi   bleve.Index
	dir  string
	opts Options

	writeMu sync.Mutex // serializes Put/Delete and the statistics they keep
	statsMu sync.RWMutex
	stats   fieldStats

	ranking    atomic.Pointer[Ranking]
	checkpoint time.Time     // guarded by writeMu
	gen        atomic.Uint64 // bumped by every write: the result cache's validity
	cache      *resultCache
	columns    *columnCache   // the segments' facet columns, decoded
	forward    *forwardCache  // the segments' forward term lists, apart from the text
	postings   *postingsCache // terms' postings, decoded
	dfs        dfCache        // document counts of feedback's words
	tfBounds   tfBoundCache   // the largest frequencies of query words, for pruning
	ids        *docIDs        // digests of the documents' IDs (nil when read-only)
	turns      chan struct{}  // one token per search running (Options.MaxSearches)
	unclean    bool
	created    bool         // this Open created the index (it was missing or its creation never finished)
	written    atomic.Int64 // unix nanoseconds of the last write
	closed     atomic.Bool
	// exhaustive turns off the pruning of OR queries (prune.go): tests compare rankings
	// with and without it.
	exhaustive atomic.Bool
}

// internal keys the index keeps in Bleve.
var (
	keyOpen       = []byte("sonda:open")       // present while the index is open: its absence at Open means a clean close
	keyCheckpoint = []byte("sonda:checkpoint") // the latest fetch time among the documents of persisted batches
	keySync       = []byte("sonda:sync")       // written by Sync, to have a batch to wait for
)

const defaultMaxResults = 1000

// ErrLocked means another process has the index open.
var ErrLocked = errors.New("index: the index is in use by another sonda process")

// ErrReadOnly is returned by writes to an index opened with Options.ReadOnly.
var ErrReadOnly = errors.New("index: the index is open read-only")

// ErrNoIndex means a read-only Open found no complete index to open.
var ErrNoIndex = errors.New("index: there is no search index yet")

// Open opens the index in dir, creating it if needed.
func Open(dir string, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	if err := opts.Ranking.validate(); err != nil {
		return nil, err
	}
	// Batches return once their documents are searchable; scorch persists them in the
	// background (see the package doc on durability). Waiting for each batch's fsync cuts
	// indexing throughput about four times.
	config := map[string]any{"bolt_timeout": "2s", "unsafe_batch": !opts.SyncWrites}
	// The merge policy is given at each open and not written into the index's metadata
	// (index_meta.json keeps what create wrote), so it can change without touching an index.
	running := maps.Clone(config)
	running["scorchMergePlanOptions"] = mergePlan(opts.BatchSize)
	if opts.keepSegments {
		// The tiered planner merges when there are more segments than its budget: the
		// documents over the smallest segment's size (raised to the floor), at most
		// MaxSegmentsPerTier per tier.
		running["scorchMergePlanOptions"] = map[string]any{"FloorSegmentSize": 1, "MaxSegmentsPerTier": 1 << 20}
	}
	state, reason := creationState(dir)
	if opts.ReadOnly {
		return openReadOnly(dir, config, state, reason, opts)
	}
	if state == unfinished {
		// The index is derived data (Replay rebuilds it from the store and the WARC files),
		// so an index whose creation never finished is made anew rather than left to fail
		// every later Open; the caller rebuilds it (Stats.Created).
		opts.Logger.Warn("the search index was never completely created (a crash while creating it?); creating it anew and rebuilding it from the crawl's records", "dir", dir, "reason", reason)
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("index: remove the unfinished index %s (%s): %w", dir, reason, err)
		}
	}
	created := state != complete
	if created {
		if err := create(dir, config); err != nil {
			return nil, err
		}
	} else if err := os.RemoveAll(dir + creatingSuffix); err != nil {
		return nil, fmt.Errorf("index: remove the leftover of an unfinished creation: %w", err)
	}
	bi, err := openBleve(dir, running)
	if err != nil && !created && strings.Contains(err.Error(), "error parsing mapping JSON") {
		// An index created by a sonda before 2026-11 that was killed before scorch
		// persisted the mapping (bleve gives no typed error for it): unfinished too.
		opts.Logger.Warn("the search index was never completely created (a crash while creating it?); creating it anew and rebuilding it from the crawl's records", "dir", dir, "reason", "its mapping was never written")
		if err := remake(dir, config); err != nil {
			return nil, err
		}
		created = true
		bi, err = openBleve(dir, running)
	}
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("%w (%s): stop it first (a running crawl or sonda serve), or search through sonda serve", ErrLocked, dir)
		}
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	format, err := formatOf(dir, bi)
	if err != nil {
		bi.Close()
		return nil, err
	}
	if older, problem := formatProblem(dir, format); problem != nil {
		bi.Close()
		if !older {
			return nil, problem
		}
		opts.Logger.Warn("the search index was written by an older sonda in a format this one no longer reads; creating it anew and rebuilding it from the crawl's records", "dir", dir, "format", format, "this sonda's format", formatVersion)
		if err := remake(dir, config); err != nil {
			return nil, err
		}
		created = true
		if bi, err = openBleve(dir, running); err != nil {
			return nil, fmt.Errorf("index: open %s: %w", dir, err)
		}
	}
	if err := markFormat(bi); err != nil {
		bi.Close()
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	ix := newIndex(bi, dir, opts)
	ix.created = created
	ok := false
	defer func() {
		if !ok {
			bi.Close()
		}
	}()
	mark, err := bi.GetInternal(keyOpen)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	ix.unclean = mark != nil
	if cp, err := bi.GetInternal(keyCheckpoint); err == nil && cp != nil {
		ix.checkpoint, _ = time.Parse(time.RFC3339Nano, string(cp))
	}
	if ix.unclean {
		opts.Logger.Warn("the search index was not closed cleanly; documents queued when it stopped may be missing (sonda index rebuild restores them)", "dir", dir)
	}
	if err := bi.SetInternal(keyOpen, []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	if err := ix.loadStats(); err != nil {
		return nil, err
	}
	ix.ids = newDocIDs()
	if err := ix.loadDocIDs(); err != nil {
		return nil, err
	}
	if err := ix.SetRanking(opts.Ranking); err != nil {
		return nil, err
	}
	ok = true
	return ix, nil
}

// mergePlan is scorch's merge policy for an index written in batches of batch documents:
// Bleve's tiered policy (mergeplan.DefaultMergePlanOptions) with its floor at the batch
// size. Bleve's floor, 2,000 documents, counts every segment of a 256-page batch as 2,000
// pages, so the planner's budget of segments stays a few while the index is small, and it
// merges as soon as there are three: in a simulation of 20,000 pages written 256 at a time
// (the planner run after every batch) each page is rewritten 2.6 times, against 0.9 times
// with the floor at the batch size (1.9 against 2.7 at 200,000 pages), for 16 segments at
// the end instead of 11. In a 20,000-page crawl scorch's merges took 0.55 ms of CPU per
// page instead of 1.0–1.2 (docs/benchmarks.md, issue 12), and the pages of segment files
// mapped at the peak rose by about 120 MiB. Rankings do not depend on it.
// The options are the planner's JSON field names, which is how scorch reads them.
func mergePlan(batch int) map[string]any {
	return map[string]any{"FloorSegmentSize": batch}
}

// openBleve opens the Bleve index in dir. bolt, which holds scorch's list of segments,
// panics on some damaged pages ("page expected to be …"); that becomes an error naming
// the file and the way out instead of a crash of every command that searches.
func openBleve(dir string, config map[string]any) (bi bleve.Index, err error) {
	defer func() {
		if r := recover(); r != nil {
			bi, err = nil, fmt.Errorf("index: %s is damaged (%v); sonda repair rebuilds the index from the crawl's records", filepath.Join(dir, "store", "root.bolt"), r)
		}
	}()
	return bleve.OpenUsing(dir, config)
}

// newIndex wraps an open Bleve index.
func newIndex(bi bleve.Index, dir string, opts Options) *Index {
	return &Index{bi: bi, dir: dir, opts: opts, cache: newResultCache(opts.CacheEntries), columns: newColumnCache(opts.FacetCache), forward: newForwardCache(opts.ForwardCache), postings: newPostingsCache(opts.PostingsCache), turns: make(chan struct{}, opts.MaxSearches)}
}

// openReadOnly opens the complete index in dir without writing anything (Options.ReadOnly).
func openReadOnly(dir string, config map[string]any, state int, reason string, opts Options) (*Index, error) {
	switch state {
	case missing:
		return nil, fmt.Errorf("%w at %s: a crawl with search.index on makes it (sonda crawl), or sonda index rebuild from what was crawled", ErrNoIndex, dir)
	case unfinished:
		return nil, fmt.Errorf("%w at %s: its creation never finished (%s); sonda crawl, sonda serve or sonda index rebuild makes it anew", ErrNoIndex, dir, reason)
	}
	config["read_only"] = true
	bi, err := openBleve(dir, config)
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("%w (%s): stop it first (a running crawl or sonda serve), or search through sonda serve", ErrLocked, dir)
		}
		return nil, fmt.Errorf("index: open %s read-only: %w", dir, err)
	}
	format, err := formatOf(dir, bi)
	if err == nil {
		_, err = formatProblem(dir, format)
	}
	if err != nil {
		bi.Close()
		return nil, err
	}
	ix := newIndex(bi, dir, opts)
	mark, err := bi.GetInternal(keyOpen)
	if err != nil {
		bi.Close()
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	ix.unclean = mark != nil
	if cp, err := bi.GetInternal(keyCheckpoint); err == nil && cp != nil {
		ix.checkpoint, _ = time.Parse(time.RFC3339Nano, string(cp))
	}
	if err := ix.loadStats(); err != nil {
		bi.Close()
		return nil, err
	}
	if err := ix.SetRanking(opts.Ranking); err != nil {
		bi.Close()
		return nil, err
	}
	return ix, nil
}

// What Open finds in an index directory.
const (
	missing    = iota // no index: create one
	unfinished        // a creation that never finished (a crash before the rename into place, or an older sonda's crash while writing the metadata): create it anew
	complete          // an index to open
)

// creationState says whether dir holds a complete index, and if not, why.
func creationState(dir string) (state int, reason string) {
	meta, err := os.ReadFile(filepath.Join(dir, "index_meta.json"))
	// Bleve rewrites the file in place on open and may leave NUL bytes after the JSON.
	meta = bytes.TrimSpace(bytes.TrimRight(meta, "\x00"))
	switch {
	case err == nil && len(meta) > 0 && json.Valid(meta):
		return complete, ""
	case err == nil:
		return unfinished, "index_meta.json is empty or not JSON"
	case !errors.Is(err, fs.ErrNotExist):
		// Unreadable (permissions, I/O): Open reports it rather than deleting anything.
		return complete, ""
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return missing, ""
	}
	return unfinished, "index_meta.json is missing"
}

// creatingSuffix names the sibling folder in which create builds an index.
const creatingSuffix = ".creating"

// create makes an empty index at dir atomically: it is built in a sibling folder and renamed
// into place only once complete, so a crash at any moment leaves either no index or a whole
// one (plus a leftover sibling folder, removed by the next create).
func create(dir string, config map[string]any) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	tmp := dir + creatingSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("index: create %s: remove the leftover %s: %w", dir, tmp, err)
	}
	// Created with safe batches, whatever the index's own setting: with unsafe ones scorch
	// may close before persisting the mapping, leaving an index that cannot be opened.
	safe := maps.Clone(config)
	safe["unsafe_batch"] = false
	bi, err := bleve.NewUsing(tmp, newMapping(), scorch.Name, scorch.Name, safe)
	if err != nil {
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	if err := markFormat(bi); err != nil {
		bi.Close()
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	if err := bi.Close(); err != nil {
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	if err := syncTree(tmp); err != nil {
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	if err := syncPath(parent); err != nil {
		return fmt.Errorf("index: create %s: %w", dir, err)
	}
	return nil
}

// remake replaces the index at dir, which cannot be used as it is, by a new empty one.
func remake(dir string, config map[string]any) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("index: remove the index %s to make it anew: %w", dir, err)
	}
	return create(dir, config)
}

// syncTree fsyncs every file and folder under root, so that a rename of root publishes
// complete files even after a power cut.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return syncPath(path)
	})
}

// syncPath fsyncs a file or a folder.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// newMapping is the index mapping: documents are built by this package (see fields.go), so
// the mapping only selects BM25 scoring and turns dynamic fields off.
func newMapping() *mapping.IndexMappingImpl {
	m := mapping.NewIndexMapping()
	m.ScoringModel = bindex.BM25Scoring
	m.DefaultMapping.Dynamic = false
	m.IndexDynamic = false
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	return m
}

// Close flushes and closes the index, recording that it was closed cleanly.
func (ix *Index) Close() error {
	if !ix.closed.CompareAndSwap(false, true) {
		return nil
	}
	ix.forward.close() // it reads segments the close releases
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.opts.ReadOnly {
		if err := ix.bi.Close(); err != nil {
			return fmt.Errorf("index: close %s: %w", ix.dir, err)
		}
		return nil
	}
	// Scorch's Close does not wait for batches still in memory: wait for them here, with
	// the batch that records the clean close.
	b := ix.bi.NewBatch()
	b.DeleteInternal(keyOpen)
	err := ix.persist(context.Background(), b)
	if cerr := ix.bi.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index: close %s: %w", ix.dir, err)
	}
	return nil
}

// Checkpoint is the latest fetch time of the documents written by persisted batches (as
// of Open; later Puts move it on). After an unclean shutdown, documents fetched after it may
// be missing: a crawl replays the pages fetched since a little before it (see Replay).
func (ix *Index) Checkpoint() time.Time {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.checkpoint
}

// Sync waits until everything written before it is persisted.
func (ix *Index) Sync(ctx context.Context) error {
	if ix.closed.Load() {
		return errClosed
	}
	if ix.opts.ReadOnly {
		return ErrReadOnly
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	b := ix.bi.NewBatch()
	b.SetInternal(keySync, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	return ix.persist(ctx, b)
}

// persist executes b and waits until scorch has persisted it, and so every batch before
// it (batches are persisted in order). Callers hold writeMu.
func (ix *Index) persist(ctx context.Context, b *bleve.Batch) error {
	done := make(chan error, 1)
	b.SetPersistedCallback(func(err error) { done <- err })
	crashpoint.Here("index.persist")
	if err := ix.bi.Batch(b); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("index: persist: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout.C:
		return errors.New("index: batches not persisted after a minute; the disk may be full or failing")
	}
}

// Dir is the index's directory.
func (ix *Index) Dir() string { return ix.dir }

var errClosed = errors.New("index: the index is closed")

// Put adds or replaces documents. It returns once they are persisted.
func (ix *Index) Put(ctx context.Context, docs ...Doc) error {
	if len(docs) == 0 {
		return nil
	}
	if ix.closed.Load() {
		return errClosed
	}
	if ix.opts.ReadOnly {
		return ErrReadOnly
	}
	// Last one wins for repeated IDs, as in a Bleve batch.
	latest := make(map[string]int, len(docs))
	for i, d := range docs {
		latest[d.ID] = i
	}
	builtDocs := make([]*built, len(docs))
	errs := make([]error, len(docs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(docs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				builtDocs[i], errs[i] = build(docs[i])
			}
		}()
	}
	for i := range docs {
		if latest[docs[i].ID] == i {
			work <- i
		}
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.closed.Load() {
		return errClosed
	}
	ids := make([]string, 0, len(latest))
	for id := range latest {
		ids = append(ids, id)
	}
	ix.expect(ids) // before they are searchable: see docIDs
	old, err := ix.oldLengths(ids)
	if err != nil {
		return err
	}
	b := ix.bi.NewBatch()
	var newest time.Time
	roster := true
	for i, bd := range builtDocs {
		if bd == nil {
			continue
		}
		if roster {
			addFieldRoster(bd.doc)
			roster = false
		}
		if err := b.IndexAdvanced(bd.doc); err != nil {
			return fmt.Errorf("index: add %s: %w", bd.doc.ID(), err)
		}
		if docs[i].Fetched.After(newest) {
			newest = docs[i].Fetched
		}
	}
	// The checkpoint travels in the batch, so it is persisted with it, or lost with it.
	if newest.After(ix.checkpoint) {
		ix.checkpoint = newest
		b.SetInternal(keyCheckpoint, []byte(newest.UTC().Format(time.RFC3339Nano)))
	}
	if err := ix.bi.Batch(b); err != nil {
		return fmt.Errorf("index: write %d documents: %w", len(ids), err)
	}
	ix.statsMu.Lock()
	for _, o := range old {
		ix.stats.remove(o)
	}
	for _, bd := range builtDocs {
		if bd != nil {
			ix.stats.add(bd.docLengths)
		}
	}
	ix.statsMu.Unlock()
	ix.wrote()
	return nil
}

// Delete removes documents; IDs that are not in the index are ignored.
func (ix *Index) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if ix.closed.Load() {
		return errClosed
	}
	if ix.opts.ReadOnly {
		return ErrReadOnly
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	old, err := ix.oldLengths(ids)
	if err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	b := ix.bi.NewBatch()
	for id := range old {
		b.Delete(id)
	}
	if err := ix.bi.Batch(b); err != nil {
		return fmt.Errorf("index: delete %d documents: %w", len(old), err)
	}
	ix.statsMu.Lock()
	for _, o := range old {
		ix.stats.remove(o)
	}
	ix.statsMu.Unlock()
	if ix.ids != nil {
		for id := range old {
			ix.ids.remove(id)
		}
	}
	ix.wrote()
	return nil
}

func (ix *Index) wrote() {
	ix.gen.Add(1)
	ix.written.Store(time.Now().UnixNano())
}

// oldLengths returns the recorded field lengths of those of ids that are in the index.
func (ix *Index) oldLengths(ids []string) (map[string]docLengths, error) {
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	dv, err := r.DocValueReader([]string{fieldLens})
	if err != nil {
		return nil, fmt.Errorf("index: read field lengths: %w", err)
	}
	out := map[string]docLengths{}
	for _, id := range ids {
		iid, err := r.InternalID(id)
		if err != nil {
			return nil, fmt.Errorf("index: look up %s: %w", id, err)
		}
		if iid == nil {
			continue
		}
		var l docLengths
		found := false
		err = dv.VisitDocValues(iid, func(_ string, term []byte) {
			if dl, ok := parseLens(string(term)); ok {
				l, found = dl, true
			}
		})
		if err != nil {
			return nil, fmt.Errorf("index: read field lengths of %s: %w", id, err)
		}
		if found {
			out[id] = l
		}
	}
	return out, nil
}

func (ix *Index) reader() (bindex.IndexReader, error) {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("index: open a reader: %w", err)
	}
	return r, nil
}

// loadStats computes the field statistics from every document's recorded lengths.
func (ix *Index) loadStats() error {
	r, err := ix.reader()
	if err != nil {
		return err
	}
	defer r.Close()
	all, err := r.DocIDReaderAll()
	if err != nil {
		return fmt.Errorf("index: list documents: %w", err)
	}
	defer all.Close()
	dv, err := r.DocValueReader([]string{fieldLens})
	if err != nil {
		return fmt.Errorf("index: read field lengths: %w", err)
	}
	s := newFieldStats()
	for {
		iid, err := all.Next()
		if err != nil {
			return fmt.Errorf("index: list documents: %w", err)
		}
		if iid == nil {
			break
		}
		err = dv.VisitDocValues(iid, func(_ string, term []byte) {
			if dl, ok := parseLens(string(term)); ok {
				s.add(dl)
			}
		})
		if err != nil {
			return fmt.Errorf("index: read field lengths: %w", err)
		}
	}
	ix.statsMu.Lock()
	ix.stats = s
	ix.statsMu.Unlock()
	return nil
}

// Document returns the stored document with id; ok is false when there is none.
func (ix *Index) Document(ctx context.Context, id string) (Doc, bool, error) {
	if err := ctx.Err(); err != nil {
		return Doc{}, false, err
	}
	if ix.closed.Load() {
		return Doc{}, false, errClosed
	}
	doc, err := ix.bi.Document(id)
	if err != nil {
		return Doc{}, false, fmt.Errorf("index: read %s: %w", id, err)
	}
	if doc == nil {
		return Doc{}, false, nil
	}
	d, err := decode(id, doc)
	return d, err == nil, err
}

// documentAt returns the stored document number n of snapshot snap, whose ID is id, as
// Document reads it. A search's result pages read their documents this way: Document
// looks the ID up in the dictionary of every segment of a new snapshot, which cost a
// twentieth of a search on an index of twenty segments, for documents whose numbers the
// search had.
func (ix *Index) documentAt(ctx context.Context, snap *scorch.IndexSnapshot, n uint64, id string) (Doc, bool, error) {
	if err := ctx.Err(); err != nil {
		return Doc{}, false, err
	}
	segs := snap.Segments()
	first := uint64(0)
	for _, s := range segs {
		if count := s.Segment().Count(); n >= first+count { // deleted documents count too
			first += count
			continue
		}
		doc := document.NewDocument(id)
		var err error
		verr := s.VisitDocument(n-first, func(name string, typ byte, val []byte, pos []uint64) bool {
			if name == "_id" {
				return true
			}
			if f := storedField(name, typ, append([]byte(nil), val...), append([]uint64(nil), pos...)); f != nil {
				doc.AddField(f)
			}
			return true
		})
		if verr != nil {
			return Doc{}, false, fmt.Errorf("index: read %s: %w", id, verr)
		}
		d, err := decode(id, doc)
		return d, err == nil, err
	}
	return Doc{}, false, nil
}

// storedField is a stored field as Bleve's snapshot gives it back (IndexSnapshot.Document):
// a field of the type typ says.
func storedField(name string, typ byte, value []byte, pos []uint64) document.Field {
	switch typ {
	case 't':
		return document.NewTextField(name, pos, value)
	case 'n':
		return document.NewNumericFieldFromBytes(name, pos, value)
	case 'i':
		return document.NewIPFieldFromBytes(name, pos, value)
	case 'd':
		return document.NewDateTimeFieldFromBytes(name, pos, value)
	case 'b':
		return document.NewBooleanFieldFromBytes(name, pos, value)
	case 'g':
		return document.NewGeoPointFieldFromBytes(name, pos, value)
	case 's':
		return document.NewGeoShapeFieldFromBytes(name, pos, value)
	}
	return nil
}

// hostDocIDs returns the IDs of the documents of host (Sink.restrip).
func (ix *Index) hostDocIDs(ctx context.Context, host string) ([]string, error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	q := bq.NewTermQuery(host)
	q.SetField(fieldHost)
	bm25Mu.RLock() // Bleve's term scorer reads BM25's parameters
	defer bm25Mu.RUnlock()
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s, err := q.Searcher(ctx, r, ix.bi.Mapping(), search.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0), IndexReader: r}
	var ids []string
	for {
		dm, err := s.Next(sctx)
		if err != nil {
			return nil, err
		}
		if dm == nil {
			return ids, nil
		}
		id, err := r.ExternalID(dm.IndexInternalID)
		if err != nil {
			return nil, fmt.Errorf("index: ID of a document of %s: %w", host, err)
		}
		ids = append(ids, id)
		sctx.DocumentMatchPool.Put(dm)
	}
}

// Stats describes the index.
type Stats struct {
	Documents  int64            `json:"documents"`
	Languages  map[string]int64 `json:"languages"` // documents per analyzer language ("xx": other)
	Generation uint64           `json:"generation"`
	LastWrite  time.Time        `json:"last_write,omitzero"`
	DiskBytes  int64            `json:"disk_bytes"`
	// Unclean reports that the index was not closed cleanly before this Open.
	Unclean bool `json:"unclean,omitempty"`
	// Created reports that this Open created the index: it was missing, or its creation had
	// never finished. Whatever the crawl's records hold must be replayed into it.
	Created bool `json:"created,omitempty"`
	// Ranks is the link graph's last PageRank run (nil without a link graph or before it).
	Ranks *linkgraph.RankSummary `json:"ranks,omitempty"`
}

// Stats returns the index's current figures.
func (ix *Index) Stats() Stats {
	ix.statsMu.RLock()
	s := Stats{Documents: ix.stats.docs, Languages: map[string]int64{}}
	for l, n := range ix.stats.langs {
		if n > 0 {
			s.Languages[l] = n
		}
	}
	ix.statsMu.RUnlock()
	s.Generation = ix.gen.Load()
	if w := ix.written.Load(); w > 0 {
		s.LastWrite = time.Unix(0, w).UTC()
	}
	s.Unclean, s.Created = ix.unclean, ix.created
	_ = filepath.Walk(ix.dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			s.DiskBytes += fi.Size()
		}
		return nil
	})
	if ix.opts.Links != nil {
		s.Ranks = ix.opts.Links.Summary()
	}
	return s
}

// fieldStats are the totals BM25 needs: documents, and per field the documents that have
// it and their total analyzed length.
type fieldStats struct {
	docs   int64
	topic  int64 // documents with a topic relevance
	langs  map[string]int64
	fields map[string]*fieldTotal
}

type fieldTotal struct{ docs, length int64 }

func newFieldStats() fieldStats {
	return fieldStats{langs: map[string]int64{}, fields: map[string]*fieldTotal{}}
}

func (s *fieldStats) fieldNames(lang string) []string {
	names := make([]string, 0, len(textFields)+1)
	for _, f := range textFields {
		names = append(names, langField(f, lang))
	}
	return append(names, fieldURL)
}

func (s *fieldStats) apply(l docLengths, sign int64) {
	if s.fields == nil {
		*s = newFieldStats()
	}
	s.docs += sign
	s.langs[l.lang] += sign
	if l.topic {
		s.topic += sign
	}
	for i, name := range s.fieldNames(l.lang) {
		if l.lens[i] == 0 {
			continue
		}
		t := s.fields[name]
		if t == nil {
			t = &fieldTotal{}
			s.fields[name] = t
		}
		t.docs += sign
		t.length += sign * int64(l.lens[i])
	}
}

func (s *fieldStats) add(l docLengths)    { s.apply(l, 1) }
func (s *fieldStats) remove(l docLengths) { s.apply(l, -1) }

// averageLength is the mean analyzed length of field over the documents that have it.
func (s *fieldStats) averageLength(field string) float64 {
	t := s.fields[field]
	if t == nil || t.docs <= 0 || t.length <= 0 {
		return 1
	}
	return float64(t.length) / float64(t.docs)
}

// bm25f returns a snapshot of the statistics sonda's BM25F scorer needs.
func (s *fieldStats) bm25f() *bm25fStats {
	out := &bm25fStats{docs: float64(max(s.docs, 1)), langs: make(map[string]float64, len(s.langs)), avgLen: make(map[string]float64, len(s.fields))}
	for l, n := range s.langs {
		out.langs[l] = float64(n)
	}
	for name, t := range s.fields {
		if t.docs > 0 {
			out.avgLen[name] = s.averageLength(name)
		}
	}
	return out
}

// bm25Stats are the statistics handed to Bleve's BM25 for a query over fields. Bleve
// computes a field's average length as ceil(FieldCardinality / DocCount); giving it the
// field's true total length over the documents that have it makes that the true mean.
func (s *fieldStats) bm25Stats(fields []string) *search.BM25Stats {
	n := max(s.docs, 1)
	st := &search.BM25Stats{DocCount: float64(n), FieldCardinality: make(map[string]int, len(fields))}
	for _, f := range fields {
		st.FieldCardinality[f] = int(s.averageLength(f) * float64(n))
	}
	return st
}

// BM25's k1 and b are package variables in Bleve, so they are process-wide: the last index
// opened sets them, and searches hold bm25Mu so they never see them change mid-query.
var bm25Mu sync.RWMutex

func setBM25(k1, b float64) {
	bm25Mu.Lock()
	search.BM25_k1, search.BM25_b = k1, b
	bm25Mu.Unlock()
}

// DataDir is where a data directory keeps its search index.
func DataDir(data string) string { return filepath.Join(data, "index") }
