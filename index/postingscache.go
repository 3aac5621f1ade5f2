package index

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// This file keeps terms' postings, decoded, in memory: per segment, field and term, the
// documents' numbers, the term's frequency and the field's norm in each, and for title
// and body (the fields proximity reads) its positions.
//
// Why: matching was 62 % of a search's CPU on the 100,000 pages of "Search under load",
// most of it zap decoding the same postings again and again — frequencies and norms as
// varints, and for queries of several words five varints per position — because the
// facets count the exact best 1,000 of a query, so every match is scored (MaxScore does
// not pay at that depth, prune.go), and a word's postings are looked up in the term
// dictionary (an FST) of every segment for every field. A search log repeats its words
// far more than its queries (Zipf's law), and the common words, whose postings are the
// longest, most of all. So a term's postings in a segment are decoded once, on the first
// search that reads them, and kept while the segment is in the index; later searches
// read plain arrays. The postings are those zap gives, in the same order (the cursors
// skip the segment's deleted documents as zap's iterator does), so scores are the same.
//
// The cache is bounded (Options.PostingsCache, 128 MiB by default: DefaultPostingsCache);
// it does not evict: once full, terms not in it are read from zap as before, and segments
// merged away are forgotten when a segment not seen before is searched. A term a segment
// lacks is remembered too (no dictionary lookup next time).

// decodedList is one term's postings in one field of one segment, every document (deleted
// ones too), in document order. Positions are kept only when asked for at decoding.
// Frequencies, lengths and positions are kept in 16 bits: a list with a larger one is
// not kept (uncached), which on web pages (a field of 65,536 words and more) is rare. Its
// arrays hold no pointers, and there are three of them, so that the garbage collector has
// little to visit in a cache of a hundred thousand lists.
type decodedList struct {
	docs  []uint32 // the documents' numbers in the segment
	fn    []uint32 // each posting's frequency << 16 | zap's norm (the field's length)
	posAt []uint32 // posting i's positions are pos[posAt[i]:posAt[i+1]] (nil: none kept)
	pos   []uint16
	dense []uint64 // docs as a bitset, when that is smaller than docs (nil: sparse)
	bytes int64
}

// posting returns posting i's term frequency and norm.
func (d *decodedList) posting(i int) (freq, norm uint64) {
	x := d.fn[i]
	return uint64(x >> 16), uint64(x & 0xffff)
}

// positions returns the positions of posting i (nil: none kept).
func (d *decodedList) positions(i int) []uint16 {
	if d.posAt == nil {
		return nil
	}
	return d.pos[d.posAt[i]:d.posAt[i+1]]
}

// has says whether document doc of the segment has the term.
func (d *decodedList) has(doc uint32) bool {
	if d.dense != nil {
		w := doc / 64
		return w < uint32(len(d.dense)) && d.dense[w]&(1<<(doc%64)) != 0
	}
	i := seekFrom(d.docs, 0, doc)
	return i < len(d.docs) && d.docs[i] == doc
}

// count is how many of the list's documents are not deleted (del: the segment's deleted
// documents, nil: none).
func (d *decodedList) count(del *roaring.Bitmap) uint64 {
	n := uint64(len(d.docs))
	if del == nil || n == 0 {
		return n
	}
	it := del.Iterator()
	for it.HasNext() {
		if d.has(it.Next()) {
			n--
		}
	}
	return n
}

// orInto adds the list's documents (deleted ones too) to docs.
func (d *decodedList) orInto(docs *roaring.Bitmap) {
	if d.dense != nil {
		docs.Or(roaring.FromDense(d.dense, false))
		return
	}
	docs.AddMany(d.docs)
}

// orBits sets the bits of the list's documents (deleted ones too) in bits, a bitset over
// the segment's documents.
func (d *decodedList) orBits(bits []uint64) {
	if d.dense != nil {
		for i, w := range d.dense[:min(len(d.dense), len(bits))] {
			bits[i] |= w
		}
		return
	}
	for _, doc := range d.docs {
		if int(doc/64) < len(bits) {
			bits[doc/64] |= 1 << (doc % 64)
		}
	}
}

// absent stands for a term a segment's field does not have, and uncached for postings
// that are read from zap (they do not fit decodedList, or the cache).
var absent, uncached = &decodedList{}, &decodedList{}

// decodedBytes estimates what the decoded postings of n documents take (without their
// positions).
func decodedBytes(n uint64) int64 { return int64(12*n) + 128 }

// decodePostings reads every posting of pl (a postings list without deleted documents
// taken out), with the positions when positions is set; uncached when they do not fit.
func decodePostings(pl segment.PostingsList, positions bool) (*decodedList, error) {
	n := pl.Count()
	if n == 0 {
		return absent, nil
	}
	if n >= math.MaxUint32/4 {
		return uncached, nil
	}
	size := 2 * n
	if positions {
		size += n + 1
	}
	a := make([]uint32, 0, size)
	d := &decodedList{}
	var fn, posAt []uint32
	if positions {
		posAt = make([]uint32, 1, n+1)
	}
	it := pl.Iterator(true, true, positions, nil)
	for {
		p, err := it.Next()
		if err != nil {
			return nil, err
		}
		if p == nil {
			break
		}
		doc, freq, norm, ok := rawPosting(p)
		if !ok || doc > math.MaxUint32 || freq > math.MaxUint16 || norm > math.MaxUint16 || uint64(len(a)) >= n {
			return uncached, nil // not zap's, or out of range: read from the segment
		}
		a = append(a, uint32(doc))
		fn = append(fn, uint32(freq)<<16|uint32(norm))
		if positions {
			for _, l := range p.Locations() {
				if l.Pos() > math.MaxUint16 {
					return uncached, nil
				}
				d.pos = append(d.pos, uint16(l.Pos()))
			}
			if uint64(len(d.pos)) > math.MaxUint32 {
				return uncached, nil
			}
			posAt = append(posAt, uint32(len(d.pos)))
		}
	}
	if len(a) == 0 {
		return absent, nil
	}
	k := len(a)
	a = append(a, fn...)
	a = append(a, posAt...)
	d.docs, d.fn = a[:k:k], a[k:2*k:2*k]
	if positions {
		d.posAt = a[2*k:]
		if cap(d.pos) > len(d.pos)+len(d.pos)/8 {
			d.pos = append([]uint16(nil), d.pos...)
		}
	}
	if words := int(a[k-1])/64 + 1; 8*words <= 2*k {
		d.dense = make([]uint64, words)
		for _, doc := range d.docs {
			d.dense[doc/64] |= 1 << (doc % 64)
		}
	}
	d.bytes = int64(4*cap(a)+2*cap(d.pos)+8*len(d.dense)) + 128
	return d, nil
}

// postingsCache holds decoded postings of the segments of the index's current
// snapshots, at most limit bytes of them.
type postingsCache struct {
	mu    sync.RWMutex
	terms map[fieldTerm]*termLists
	segs  map[segment.Segment]bool // the segments some list is kept for
	limit int64                    // negative: no cache
	bytes int64
}

// termLists are a term's decoded postings in one field, per segment (absent: the segment
// does not have it; uncached: read from zap).
type termLists struct {
	segs  []segment.Segment
	lists []*decodedList
}

// DefaultPostingsCache is the default of Options.PostingsCache.
//
// 128 MiB: on the 100,000 pages of "Search under load" (docs/benchmarks.md) it cut a full
// search's CPU by a quarter in sonda serve (9.96 -> 7.60 ms per answer), for about 320 MiB
// more RSS; 64 MiB saved 3 %, 192 MiB about the same as 128 for 180 MiB more. The cache is
// Go heap: sonda serve and sonda node raise their memory limit by its bound (memory-limit
// plus the search caches' bounds, config.Config.SearchMemoryLimit); inside a limit that
// does not count it the collector runs all the time instead (18 ms per search, not 7).
const DefaultPostingsCache = 128 << 20

func newPostingsCache(limit int64) *postingsCache {
	return &postingsCache{terms: map[fieldTerm]*termLists{}, segs: map[segment.Segment]bool{}, limit: limit}
}

// absentBytes is what remembering that a segment lacks a term costs.
const absentBytes = 16

// get sets lists[i] to the decoded postings of key in segs[i] that the cache has (nil:
// not in the cache).
func (c *postingsCache) get(key fieldTerm, segs []segment.Segment, lists []*decodedList) {
	clear(lists)
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.terms[key]
	if t == nil {
		return
	}
	for i, s := range segs {
		for j, ts := range t.segs {
			if ts == s {
				lists[i] = t.lists[j]
				break
			}
		}
	}
}

// fits reports whether the cache may take postings of n documents.
func (c *postingsCache) fits(n uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes+decodedBytes(n) <= c.limit
}

// put keeps d as the postings of key in seg, one of the segments of live (the snapshot
// searched), unless it does not fit.
func (c *postingsCache) put(seg segment.Segment, key fieldTerm, d *decodedList, live []segment.Segment) {
	size := d.size()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.segs[seg] {
		// A segment not seen before: forget those no longer in the index.
		c.forget(live)
		c.segs[seg] = true
	}
	if c.bytes+size > c.limit {
		return
	}
	t := c.terms[key]
	if t == nil {
		t = &termLists{}
		c.terms[key] = t
		c.bytes += int64(64 + len(key.field) + len(key.term))
	}
	for _, s := range t.segs {
		if s == seg {
			return
		}
	}
	t.segs, t.lists = append(t.segs, seg), append(t.lists, d)
	c.bytes += size
}

// forget drops the lists of the segments not in live.
func (c *postingsCache) forget(live []segment.Segment) {
	gone := false
	for s := range c.segs {
		if !slices.Contains(live, s) {
			delete(c.segs, s)
			gone = true
		}
	}
	if !gone {
		return
	}
	for key, t := range c.terms {
		j := 0
		for i, s := range t.segs {
			if c.segs[s] {
				t.segs[j], t.lists[j] = s, t.lists[i]
				j++
			} else {
				c.bytes -= t.lists[i].size()
			}
		}
		clear(t.segs[j:])
		clear(t.lists[j:])
		t.segs, t.lists = t.segs[:j], t.lists[:j]
		if j == 0 {
			delete(c.terms, key)
			c.bytes -= int64(64 + len(key.field) + len(key.term))
		}
	}
}

// size is what d counts in the cache's bytes.
func (d *decodedList) size() int64 {
	if d == absent || d == uncached {
		return absentBytes
	}
	return d.bytes
}

type postingsCacheKey struct{}

// withPostingsCache returns ctx carrying c, for the BM25F cursors of the searches run
// with it.
func withPostingsCache(ctx context.Context, c *postingsCache) context.Context {
	if c == nil || c.limit < 0 {
		return ctx
	}
	return context.WithValue(ctx, postingsCacheKey{}, c)
}

func postingsCacheOf(ctx context.Context) *postingsCache {
	c, _ := ctx.Value(postingsCacheKey{}).(*postingsCache)
	return c
}
