package index

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// This file keeps the forward term lists (forward.go) of each persisted index segment in
// memory, apart from the documents' text.
//
// Why: feedback reads the lists of the best Window (200) matches of every search, and a
// list is stored with its document, whose stored fields zap keeps as one snappy block:
// reaching a 1.6 KB list decompressed the whole 4.3 KB document. On the 100,000 pages of
// "Search under load" that decompression was an eighth of a search's CPU. A segment never
// changes once written, so its lists are copied out once, in the background on the first
// search that reads one of them, and kept while the segment is part of the index; until
// then, and for the segments that do not fit, the lists are read from the stored fields
// as before. The bytes are the stored ones, so the scores are the same.
//
// The cache is bounded (Options.ForwardCache, 256 MiB by default: about 160,000 pages of
// the load test's kind); it does not evict: a segment that does not fit is read from its
// stored fields until merges free room (segments merged away are forgotten when a list is
// next read). Segments still in memory (not yet persisted) are not copied: merges and
// persisting replace them within seconds.

// segmentLists are the forward term lists of one segment's documents, by local document
// number: document d's list is data[at[d]:at[d+1]] (empty: stored without one), and its
// ID ids[idAt[d]:idAt[d+1]].
type segmentLists struct {
	ready atomic.Bool // the slices are filled (set once, after them)
	bytes int64       // counted in forwardCache.bytes (under forwardCache.mu)
	at    []uint32
	data  []byte
	idAt  []uint32
	ids   []byte
}

// list returns the list of local document d (nil: none).
func (sl *segmentLists) list(d uint64) []byte {
	if d+1 >= uint64(len(sl.at)) {
		return nil
	}
	return sl.data[sl.at[d]:sl.at[d+1]]
}

// id returns the ID of local document d (nil: none).
func (sl *segmentLists) id(d uint64) []byte {
	if d+1 >= uint64(len(sl.idAt)) {
		return nil
	}
	return sl.ids[sl.idAt[d]:sl.idAt[d+1]]
}

// forwardCache holds the forward term lists of the segments of the index's current
// snapshots, at most limit bytes of them, copying one segment at a time in the background.
type forwardCache struct {
	mu       sync.Mutex
	segs     map[segment.Segment]*segmentLists
	limit    int64 // negative: no cache
	bytes    int64 // of the segments held, and of the one being copied (its estimate)
	building bool
	closed   bool
	stop     atomic.Bool
	wg       sync.WaitGroup
}

// DefaultForwardCache is the default of Options.ForwardCache.
const DefaultForwardCache = 256 << 20

func newForwardCache(limit int64) *forwardCache {
	return &forwardCache{segs: map[segment.Segment]*segmentLists{}, limit: limit}
}

// forwardBytesPerDoc estimates a segment's lists before they are copied (the load test's
// pages: 1.6 KB), so that a segment that cannot fit is not copied only to be dropped.
const forwardBytesPerDoc = 1600

// persisted is the method of zap's segments kept in a file.
type persisted interface{ Path() string }

// lists returns the lists of segs[i] of snapshot snap when they are in memory (nil
// otherwise: the caller reads the stored fields). The first call for a segment that fits
// starts copying it, unless another segment is being copied.
func (c *forwardCache) lists(snap *scorch.IndexSnapshot, segs []*scorch.SegmentSnapshot, i int) *segmentLists {
	if c == nil || c.limit < 0 {
		return nil
	}
	seg := segs[i].Segment()
	c.mu.Lock()
	defer c.mu.Unlock()
	if sl, ok := c.segs[seg]; ok {
		if sl.ready.Load() {
			return sl
		}
		return nil // being copied, or too big to keep
	}
	if c.building || c.closed {
		return nil
	}
	if _, ok := seg.(persisted); !ok {
		return nil
	}
	// Forget the segments no longer in the index.
	live := make(map[segment.Segment]bool, len(segs))
	for _, s := range segs {
		live[s.Segment()] = true
	}
	for s, sl := range c.segs {
		if !live[s] {
			delete(c.segs, s)
			c.bytes -= sl.bytes
		}
	}
	sl := &segmentLists{}
	c.segs[seg] = sl // asked once: not copied again while it lives, whether it fits or not
	estimate := int64(seg.Count()) * forwardBytesPerDoc
	if c.bytes+estimate > c.limit || seg.Count() >= math.MaxUint32 {
		return nil
	}
	sl.bytes, c.bytes, c.building = estimate, c.bytes+estimate, true
	snap.AddRef() // the segment stays open while it is copied
	c.wg.Add(1)
	go c.copy(snap, seg, sl)
	return nil
}

// copy reads the lists of every document of seg into sl, and keeps them if they fit.
func (c *forwardCache) copy(snap *scorch.IndexSnapshot, seg segment.Segment, sl *segmentLists) {
	defer c.wg.Done()
	defer snap.DecRef()
	n := seg.Count()
	at, idAt := make([]uint32, n+1), make([]uint32, n+1)
	data := make([]byte, 0, n*forwardBytesPerDoc)
	var ids []byte
	ok := true
	for d := range n {
		if c.stop.Load() || uint64(len(data)) > math.MaxUint32 || uint64(len(ids)) > math.MaxUint32 {
			ok = false
			break
		}
		at[d], idAt[d] = uint32(len(data)), uint32(len(ids))
		err := seg.VisitStoredFields(d, func(field string, _ byte, value []byte, _ []uint64) bool {
			switch field {
			case fieldTerms:
				data = append(data, value...)
				return false
			case "_id":
				ids = append(ids, value...)
			}
			return true
		})
		if err != nil {
			ok = false // read from the stored fields, which will say what is wrong
			break
		}
	}
	ok = ok && uint64(len(data)) <= math.MaxUint32 && uint64(len(ids)) <= math.MaxUint32
	if ok {
		at[n], idAt[n] = uint32(len(data)), uint32(len(ids))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.building = false
	size := int64(4*len(at) + len(data) + 4*len(idAt) + len(ids))
	if c.segs[seg] != sl {
		return // merged away meanwhile: forgotten, and its estimate with it
	}
	c.bytes -= sl.bytes
	sl.bytes = 0
	if !ok || c.bytes+size > c.limit {
		return // kept as asked, so not copied again
	}
	if cap(data) > len(data)+len(data)/8 {
		data = append([]byte(nil), data...) // the estimate was high: keep only what is used
	}
	if cap(ids) > len(ids)+len(ids)/8 {
		ids = append([]byte(nil), ids...)
	}
	sl.at, sl.data, sl.idAt, sl.ids, sl.bytes = at, data, idAt, ids, size
	c.bytes += size
	sl.ready.Store(true)
}

// held returns the lists of segment seg when they are in memory, without starting a copy
// (nil otherwise).
func (c *forwardCache) held(seg segment.Segment) *segmentLists {
	if c == nil || c.limit < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sl, ok := c.segs[seg]; ok && sl.ready.Load() {
		return sl
	}
	return nil
}

// externalIDs calls fn with the ID of each of docs in snapshot r: read from the segments'
// copies where the cache holds them (it starts no copy), from r otherwise.
func (c *forwardCache) externalIDs(r bindex.IndexReader, docs []collectedHit, fn func(i int, id string)) error {
	snap, _ := r.(*scorch.IndexSnapshot)
	var segs []*scorch.SegmentSnapshot
	var offsets []uint64
	var held []*segmentLists
	var asked []bool
	if snap != nil && c != nil && c.limit >= 0 {
		segs = snap.Segments()
		offsets = make([]uint64, len(segs)+1)
		for i, s := range segs {
			offsets[i+1] = offsets[i] + s.Segment().Count()
		}
		held, asked = make([]*segmentLists, len(segs)), make([]bool, len(segs))
	}
	for i, d := range docs {
		if segs != nil {
			si, _ := slices.BinarySearch(offsets, d.doc+1)
			if si--; si >= 0 && si < len(segs) {
				if !asked[si] {
					held[si], asked[si] = c.held(segs[si].Segment()), true
				}
				if sl := held[si]; sl != nil {
					if id := sl.id(d.doc - offsets[si]); id != nil {
						fn(i, string(id))
						continue
					}
				}
			}
		}
		id, err := r.ExternalID(d.iid())
		if err != nil {
			return err
		}
		fn(i, id)
	}
	return nil
}

// close stops copying and waits for the copy under way (the index is closing).
func (c *forwardCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop.Store(true)
	c.wg.Wait()
}

// wait waits for the copy under way, if any (tests).
func (c *forwardCache) wait() { c.wg.Wait() }
