// Package linkgraph owns the link graph of a crawl: who links to whom and with which
// anchor text, the in-link count of every URL, and its PageRank. It keeps all of it on disk
// in the crawl's Pebble database (package store) under the key prefix 'l', so the graph is
// as durable as the page records and costs memory only while PageRank is computed.
//
// Seed 002 ranked pages by their in-link count (countLinks) and showed, for every result,
// the pages linking to it and the pages it links to (its "relations"). Both are here:
// InLinks and Relations. sonda adds PageRank (Brin & Page 1998) by power iteration, the
// anchor text of in-links (which package index adds to the target's document) and a
// background loop that recomputes PageRank when the graph has changed.
//
// # What counts as a link
//
// A fetched page's out-links are replaced as a whole each time it is fetched (SetLinks), so
// the graph follows re-crawls: links that disappeared from a page stop counting. Several
// links from one page to the same target are one edge (the first non-empty anchor is kept);
// links to the page itself are dropped; links marked rel=nofollow, sponsored or ugc and
// every link of a page whose robots directives say nofollow are not endorsements and are
// left out. A page that is gone (404, 410, robots-disallowed) keeps no out-links; a redirect
// is an edge to its target, so rank flows to where the content moved.
//
// # Key space (prefix 'l')
//
//	l o <src key> <dst key>  out-edge: uvarint len, target URL, anchor
//	l i <dst key> <src key>  in-edge: uvarint len, source URL, anchor
//	l c <dst key>            in-link count: uvarint
//	l r <key>                PageRank of a URL: float64 bits (ranks sum to 1)
//	l m                      PageRank run summary: JSON
//	l e                      number of edges: uvarint
//
// Keys are urlnorm keys (16 bytes of SHA-256 of the canonical URL), so every URL costs the
// same whatever its length, and the graph can be joined with the page records (prefix 'p').
//
// # Durability and concurrency
//
// Each SetLinks commits one Pebble batch (edges, counts and the edge total together) without
// an fsync; the store's background sync bounds what a power failure loses, as for page
// records. Updates are serialized by a mutex (each is a read-modify-write of the counts);
// reads (Relations, InLinks, Signals) do not take it and see a consistent snapshot of each
// key. PageRank runs without blocking updates: it reads a Pebble snapshot.
package linkgraph

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

const (
	prefix     = 'l'
	subOut     = 'o'
	subIn      = 'i'
	subCount   = 'c'
	subRank    = 'r'
	subMeta    = 'm'
	subEdges   = 'e'
	keyLen     = 16
	maxAnchor  = 200 // bytes of anchor text kept per edge
	maxURLSize = 16 << 10
)

// Key is the identity of a URL in the graph: urlnorm's key of its canonical form.
type Key = urlnorm.Key

// KeyOf returns the key of a canonical URL string: the same as urlnorm.URL.Key for the
// URL that string is the canonical form of (the first 16 bytes of its SHA-256).
func KeyOf(canonicalURL string) Key { return urlnorm.KeyOf(canonicalURL) }

// Options tune a Graph. The zero value is usable.
type Options struct {
	// Damping is PageRank's damping factor, the probability that the random surfer follows
	// a link rather than jumping to a random page (default 0.85, Brin & Page's value).
	Damping float64
	// Tolerance ends the power iteration when the L1 change of the rank vector falls below
	// it (default 1e-6).
	Tolerance float64
	// MaxIterations bounds the power iteration (default 100; at damping 0.85 the error
	// shrinks by at least 0.85 per iteration, so 100 iterations reach 1e-7).
	MaxIterations int
	// MemoryBudget is how many bytes PageRank may use for the edge arrays it keeps in memory
	// (4 bytes per edge). Larger graphs are iterated straight from disk instead, one scan
	// of the out-edges per iteration, which needs memory only per node (about 40 bytes).
	// Default 256 MiB, about 64 million edges.
	MemoryBudget int64
	// Logger receives progress of background PageRank runs (nil: discarded).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Damping <= 0 || o.Damping >= 1 {
		o.Damping = 0.85
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 1e-6
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = 100
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = 256 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Graph is the link graph of one crawl database. It is safe for concurrent use.
type Graph struct {
	db   *pebble.DB
	opts Options

	mu      sync.Mutex   // serializes SetLinks/Remove
	changes atomic.Int64 // edge changes since the last PageRank run started
	rankMu  sync.Mutex   // one PageRank run at a time
	summary atomic.Pointer[RankSummary]

	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
}

// Open returns the graph kept in db (the crawl's database; see package store).
func Open(db *store.DB, opts Options) (*Graph, error) { return OpenPebble(db.Pebble(), opts) }

// OpenPebble is Open for a bare Pebble database (tests, tools).
func OpenPebble(db *pebble.DB, opts Options) (*Graph, error) {
	g := &Graph{db: db, opts: opts.withDefaults(), stop: make(chan struct{})}
	v, closer, err := db.Get([]byte{prefix, subMeta})
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("linkgraph: read PageRank summary: %w", err)
	default:
		var s RankSummary
		jerr := json.Unmarshal(v, &s)
		closer.Close()
		if jerr != nil {
			return nil, fmt.Errorf("linkgraph: PageRank summary is corrupt (%v); delete it by rebuilding the graph (sonda index rebuild)", jerr)
		}
		g.summary.Store(&s)
	}
	return g, nil
}

// Close stops the background PageRank loop, if any. The database stays open: it belongs
// to the caller.
func (g *Graph) Close() error {
	g.once.Do(func() { close(g.stop) })
	g.done.Wait()
	return nil
}

// Link is an out-link of a page.
type Link struct {
	URL    string // canonical (normalized) URL
	Anchor string
}

// Edge is one end of a link seen from a URL: in Relations' in-links, URL is the page that
// links to it; in its out-links, the page it links to.
type Edge struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor"`
}

func edgeKey(sub byte, a, b Key) []byte {
	k := make([]byte, 2+2*keyLen)
	k[0], k[1] = prefix, sub
	copy(k[2:], a[:])
	copy(k[2+keyLen:], b[:])
	return k
}

func nodeKey(sub byte, a Key) []byte {
	k := make([]byte, 2+keyLen)
	k[0], k[1] = prefix, sub
	copy(k[2:], a[:])
	return k
}

func encodeEdge(url, anchor string) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2+len(url)+len(anchor)), uint64(len(url)))
	b = append(b, url...)
	return append(b, anchor...)
}

func decodeEdge(v []byte) (Edge, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || uint64(len(v)-w) < n {
		return Edge{}, errors.New("linkgraph: corrupt edge record")
	}
	return Edge{URL: string(v[w : w+int(n)]), Anchor: string(v[w+int(n):])}, nil
}

// cleanAnchor collapses white space and cuts the anchor to maxAnchor bytes (on a rune
// boundary).
func cleanAnchor(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxAnchor {
		return s
	}
	cut := maxAnchor
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// SetLinks replaces the out-links of the page at src (a canonical URL) and returns the
// targets whose in-links changed (added, removed, or with a new anchor), so that a search
// index can refresh the anchor text and in-link counts of those documents.
func (g *Graph) SetLinks(src string, links []Link) (changed []string, err error) {
	return g.SetLinksWhere(src, links, nil)
}

// SetLinksWhere is SetLinks for the part of src's out-links whose target within accepts
// (nil: all): links to other targets are ignored, and src's links to them are kept. A
// cluster node records so the links that pages crawled on other nodes have to the hosts
// it owns, one share of hosts at a time.
func (g *Graph) SetLinksWhere(src string, links []Link, within func(dst string) bool) (changed []string, err error) {
	if len(src) > maxURLSize {
		return nil, fmt.Errorf("linkgraph: source URL of %d bytes is longer than %d", len(src), maxURLSize)
	}
	srcKey := KeyOf(src)
	want := make(map[Key]Link, len(links))
	for _, l := range links {
		if l.URL == "" || l.URL == src || len(l.URL) > maxURLSize || within != nil && !within(l.URL) {
			continue
		}
		k := KeyOf(l.URL)
		l.Anchor = cleanAnchor(l.Anchor)
		if old, dup := want[k]; dup {
			if old.Anchor == "" && l.Anchor != "" {
				want[k] = l
			}
			continue
		}
		want[k] = l
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	have, err := g.outEdges(srcKey)
	if err != nil {
		return nil, err
	}
	b := g.db.NewBatch()
	defer b.Close()
	var added, removed int64
	for k, e := range have {
		if within != nil && !within(e.URL) {
			continue
		}
		l, keep := want[k]
		switch {
		case !keep:
			if err := g.dropEdge(b, srcKey, k); err != nil {
				return nil, err
			}
			removed++
			changed = append(changed, e.URL)
		case l.Anchor != e.Anchor:
			if err := g.putEdge(b, src, srcKey, k, l); err != nil {
				return nil, err
			}
			changed = append(changed, l.URL)
		}
	}
	for k, l := range want {
		if _, ok := have[k]; ok {
			continue
		}
		if err := g.putEdge(b, src, srcKey, k, l); err != nil {
			return nil, err
		}
		if err := g.addCount(b, k, 1); err != nil {
			return nil, err
		}
		added++
		changed = append(changed, l.URL)
	}
	if added == 0 && removed == 0 && len(changed) == 0 {
		return nil, nil
	}
	if err := g.addEdgeTotal(b, added-removed); err != nil {
		return nil, err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return nil, fmt.Errorf("linkgraph: commit links of %s: %w", src, err)
	}
	g.changes.Add(added + removed)
	sort.Strings(changed)
	return changed, nil
}

// Remove drops the out-links of src (the page is gone). Links to src from other pages stay:
// they still exist on those pages. It returns the targets whose in-links changed.
func (g *Graph) Remove(src string) ([]string, error) { return g.SetLinks(src, nil) }

func (g *Graph) outEdges(src Key) (map[Key]Edge, error) {
	lo := nodeKey(subOut, src)
	it, err := g.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("linkgraph: read out-links: %w", err)
	}
	defer it.Close()
	have := map[Key]Edge{}
	for it.First(); it.Valid(); it.Next() {
		var dst Key
		copy(dst[:], it.Key()[2+keyLen:])
		e, err := decodeEdge(it.Value())
		if err != nil {
			return nil, err
		}
		have[dst] = e
	}
	return have, it.Error()
}

func (g *Graph) putEdge(b *pebble.Batch, src string, srcKey, dst Key, l Link) error {
	if err := b.Set(edgeKey(subOut, srcKey, dst), encodeEdge(l.URL, l.Anchor), nil); err != nil {
		return err
	}
	return b.Set(edgeKey(subIn, dst, srcKey), encodeEdge(src, l.Anchor), nil)
}

func (g *Graph) dropEdge(b *pebble.Batch, srcKey, dst Key) error {
	if err := b.Delete(edgeKey(subOut, srcKey, dst), nil); err != nil {
		return err
	}
	if err := b.Delete(edgeKey(subIn, dst, srcKey), nil); err != nil {
		return err
	}
	return g.addCount(b, dst, -1)
}

// addCount adjusts the in-link count of dst. The batch is not indexed, so counts are read
// from the database: callers hold g.mu and touch each target once per batch.
func (g *Graph) addCount(b *pebble.Batch, dst Key, delta int64) error {
	k := nodeKey(subCount, dst)
	n, err := g.readUvarint(k)
	if err != nil {
		return err
	}
	v := int64(n) + delta
	if v <= 0 {
		return b.Delete(k, nil)
	}
	return b.Set(k, binary.AppendUvarint(nil, uint64(v)), nil)
}

func (g *Graph) addEdgeTotal(b *pebble.Batch, delta int64) error {
	k := []byte{prefix, subEdges}
	n, err := g.readUvarint(k)
	if err != nil {
		return err
	}
	return b.Set(k, binary.AppendUvarint(nil, uint64(max(0, int64(n)+delta))), nil)
}

func (g *Graph) readUvarint(k []byte) (uint64, error) {
	v, closer, err := g.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("linkgraph: read %q: %w", k[:2], err)
	}
	defer closer.Close()
	n, w := binary.Uvarint(v)
	if w <= 0 {
		return 0, fmt.Errorf("linkgraph: corrupt counter %q", k[:2])
	}
	return n, nil
}

// InLinks returns the number of distinct pages linking to url (seed 002's countLinks).
func (g *Graph) InLinks(url string) (int, error) {
	n, err := g.readUvarint(nodeKey(subCount, KeyOf(url)))
	return int(n), err
}

// Edges returns the number of edges in the graph.
func (g *Graph) Edges() (int64, error) {
	n, err := g.readUvarint([]byte{prefix, subEdges})
	return int64(n), err
}

// Relations returns up to limit in-links and up to limit out-links of url (seed 002's
// connectivity page), each sorted by URL. limit <= 0 means no limit.
func (g *Graph) Relations(ctx context.Context, url string, limit int) (in, out []Edge, err error) {
	k := KeyOf(url)
	if in, err = g.edges(ctx, nodeKey(subIn, k), limit); err != nil {
		return nil, nil, err
	}
	if out, err = g.edges(ctx, nodeKey(subOut, k), limit); err != nil {
		return nil, nil, err
	}
	return in, out, nil
}

func (g *Graph) edges(ctx context.Context, lo []byte, limit int) ([]Edge, error) {
	it, err := g.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("linkgraph: read relations: %w", err)
	}
	defer it.Close()
	var out []Edge
	for it.First(); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
		if len(out)%1024 == 1023 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e, err := decodeEdge(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out, nil
}

// Anchors returns the distinct anchor texts of links to url (case-insensitively distinct,
// at most limit of them, and at most maxBytes bytes together; limit or maxBytes <= 0: no
// bound).
func (g *Graph) Anchors(url string, limit, maxBytes int) ([]string, error) {
	lo := nodeKey(subIn, KeyOf(url))
	it, err := g.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("linkgraph: read anchors: %w", err)
	}
	defer it.Close()
	seen := map[string]bool{}
	var out []string
	size := 0
	for it.First(); it.Valid(); it.Next() {
		e, err := decodeEdge(it.Value())
		if err != nil {
			return nil, err
		}
		lower := strings.ToLower(e.Anchor)
		if e.Anchor == "" || seen[lower] {
			continue
		}
		if maxBytes > 0 && size+len(e.Anchor) > maxBytes {
			break
		}
		seen[lower] = true
		out = append(out, e.Anchor)
		size += len(e.Anchor)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, it.Error()
}

// Signal is what the link graph says about one URL at query time.
type Signal struct {
	InLinks int     // distinct pages linking to it
	Rank    float64 // PageRank (ranks of all URLs sum to 1); 0 before the first run
	// Prior is PageRank relative to the uniform rank 1/N, squashed into [0, 1) by
	// x/(x+1): 0.5 for an average page, 0.91 for one ten times the average. It is the
	// query-independent evidence the ranking blends in (the saturating transform of
	// Craswell et al., "Relevance weighting for query independent evidence", SIGIR 2005).
	Prior float64
	// InLinkPrior is the same transform of the in-link count relative to the mean in-degree
	// of the last PageRank run (1 before any): seed 002's in-link ranking.
	InLinkPrior float64
}

// Signals returns the link signals of urls, in order.
func (g *Graph) Signals(urls []string) ([]Signal, error) {
	out := make([]Signal, len(urls))
	s := g.summary.Load()
	for i, u := range urls {
		k := KeyOf(u)
		n, err := g.readUvarint(nodeKey(subCount, k))
		if err != nil {
			return nil, err
		}
		out[i].InLinks = int(n)
		mean := 1.0 // before the first PageRank run: the transform is still monotone
		if s != nil && s.MeanInDegree > 0 {
			mean = s.MeanInDegree
		}
		x := float64(n) / mean
		out[i].InLinkPrior = x / (x + 1)
		if s == nil || s.Nodes == 0 {
			continue
		}
		r, err := g.rank(k)
		if err != nil {
			return nil, err
		}
		if r == 0 {
			// Not in the graph when PageRank last ran: the rank of a page nobody links to.
			r = (1 - s.Damping) / float64(s.Nodes)
		}
		out[i].Rank = r
		rel := r * float64(s.Nodes)
		out[i].Prior = rel / (rel + 1)
	}
	return out, nil
}

func (g *Graph) rank(k Key) (float64, error) {
	v, closer, err := g.db.Get(nodeKey(subRank, k))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("linkgraph: read rank: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, errors.New("linkgraph: corrupt rank record")
	}
	return math.Float64frombits(binary.BigEndian.Uint64(v)), nil
}

// Summary returns the last PageRank run's summary (nil before the first run).
func (g *Graph) Summary() *RankSummary { return g.summary.Load() }

// Changes is the number of edges added or removed since the last PageRank run started.
func (g *Graph) Changes() int64 { return g.changes.Load() }

// StartRanking recomputes PageRank in the background every interval, when edges changed
// since the last run, until Close. A run's failure is logged and retried next time.
func (g *Graph) StartRanking(interval time.Duration) {
	if interval <= 0 {
		return
	}
	g.done.Add(1)
	go func() {
		defer g.done.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-g.stop:
				return
			case <-t.C:
			}
			if g.changes.Load() == 0 {
				continue
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-g.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			s, err := g.ComputePageRank(ctx)
			cancel()
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					g.opts.Logger.Warn("PageRank run failed; retrying at the next interval", "error", err)
				}
				continue
			}
			g.opts.Logger.Info("PageRank recomputed", "nodes", s.Nodes, "edges", s.Edges, "iterations", s.Iterations, "took", s.Took)
		}
	}()
}
