package index

import (
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// This file keeps the facet columns of each index segment decoded in memory.
//
// Why: facets count the best MaxResults (1,000) results of every search. Those are spread
// over the whole index, and Bleve stores doc values in snappy-compressed chunks of about a
// thousand documents per field, so reading 1,000 results' site, kind, language and date
// decompressed nearly every chunk of four columns: on 100,000 pages that was 44 % of the
// CPU of serving searches (docs/benchmarks.md, "Search under load"). A segment never
// changes once written, so its columns are decoded once, on the first search that needs
// them, and kept while the segment is part of the index: a few bytes per document (each
// document's value numbers and date) plus each segment's distinct values.

//
// The cache is bounded (Options.FacetCache, 128 MiB by default: about five million
// documents): when the segments it holds exceed the bound, those unused for longest are
// dropped and decoded again when a search needs them. A segment too big for the bound on
// its own is never kept: its results' values are read through Bleve's doc value reader,
// as they were before the cache.

// segmentColumns are the facet values and dates of one segment's documents, by local
// document number.
type segmentColumns struct {
	once  sync.Once
	err   error
	used  uint64 // the cache's clock when a search last asked for it (under columnCache.mu)
	bytes int64  // its size once decoded and counted in columnCache.bytes (0: not yet)
	// Document d's values are values[ids[at[d]:at[d+1]]].
	at     []uint32
	ids    []uint32
	values []facetValue
	global []uint32 // each value's number in columnCache.names
	dates  []int64  // math.MinInt64: no date
	// Over every document of the segment (deleted ones too): how many have each value,
	// and the dates there are, sorted. A search that matches most of the segment counts
	// the documents it does not match and takes them from these (countSets).
	totals []int32
	sorted []int64
}

// columnCache holds the columns of the segments of the index's current snapshots, at
// most limit bytes of them.
type columnCache struct {
	mu    sync.Mutex
	segs  map[segment.Segment]*segmentColumns
	limit int64 // negative: no cache
	bytes int64 // of the decoded segments held
	clock uint64
	// names are every value decoded so far, by their numbers in numbers (see number).
	names   []facetValue
	numbers map[facetValue]uint32
}

// DefaultFacetCache is the default of Options.FacetCache.
const DefaultFacetCache = 128 << 20

func newColumnCache(limit int64) *columnCache {
	return &columnCache{segs: map[segment.Segment]*segmentColumns{}, limit: limit}
}

// columnBytesPerDoc estimates a segment's decoded columns before decoding them: a
// document's offset, date (twice: by document and sorted) and about three value numbers
// (its site, type and language).
const columnBytesPerDoc = 4 + 2*8 + 3*4

// noDate marks a document without a date in segmentColumns.dates.
const noDate = math.MinInt64

// walk calls fn with the decoded columns of each of docs (sorted by document number) in
// snapshot r's segments, and the document's number in its segment, decoding the columns of
// segments it has not seen; uncached are the indexes in docs of the documents of segments
// too big to keep. ok is false when r is not a snapshot of segments whose doc values can
// be visited, or when there is no cache (the caller then reads them through Bleve's doc
// value reader).
func (c *columnCache) walk(r bindex.IndexReader, docs []collectedHit, fn func(i int, sc *segmentColumns, local uint64)) (uncached []int, ok bool, err error) {
	snap, isSnap := r.(*scorch.IndexSnapshot)
	if !isSnap {
		return nil, false, nil
	}
	segs := snap.Segments()
	// A document's global number is its segment's offset, the document counts of the
	// segments before it (as scorch numbers them), plus its number in the segment.
	offsets := make([]uint64, len(segs)+1)
	for i, s := range segs {
		if _, ok := s.Segment().(segment.DocValueVisitable); !ok {
			return nil, false, nil
		}
		offsets[i+1] = offsets[i] + s.Segment().Count()
	}
	if c.limit < 0 {
		return nil, false, nil
	}
	cols := make([]*segmentColumns, len(segs))
	kept := make([]bool, len(segs)) // cols[si] was asked for (nil: too big to keep)
	si := 0
	for i, d := range docs {
		n := d.doc
		for si < len(segs) && n >= offsets[si+1] {
			si++
		}
		if si == len(segs) {
			return nil, true, fmt.Errorf("index: read facets: document number %d is beyond the index's %d", n, offsets[si])
		}
		if !kept[si] {
			if cols[si], err = c.segment(segs, si); err != nil {
				return nil, true, err
			}
			kept[si] = true
		}
		if cols[si] == nil {
			uncached = append(uncached, i)
			continue
		}
		sc, local := cols[si], n-offsets[si]
		if int(local) >= len(sc.dates) {
			return nil, true, fmt.Errorf("index: read facets: document %d of a segment of %d", local, len(sc.dates))
		}
		fn(i, sc, local)
	}
	return uncached, true, nil
}

// rows returns the facet rows of docs (sorted by document number) from snapshot r's
// segments (see walk; ok false: the caller reads them through Bleve's doc value reader).
func (c *columnCache) rows(r bindex.IndexReader, docs []collectedHit) (rows []facetRow, ok bool, err error) {
	rows = make([]facetRow, len(docs))
	// The rows' values share one array: one allocation per search, not one per result.
	values := make([]facetValue, 0, 4*len(docs))
	uncached, ok, err := c.walk(r, docs, func(i int, sc *segmentColumns, local uint64) {
		row := &rows[i]
		if ids := sc.ids[sc.at[local]:sc.at[local+1]]; len(ids) > 0 {
			from := len(values)
			for _, id := range ids {
				values = append(values, sc.values[id])
			}
			row.values = values[from:len(values):len(values)]
		}
		if t := sc.dates[local]; t != noDate {
			row.date, row.dated = t, true
		}
	})
	if !ok || err != nil {
		return nil, ok, err
	}
	if len(uncached) > 0 {
		some := make([]collectedHit, len(uncached))
		for j, i := range uncached {
			some[j] = docs[i]
		}
		read, err := facetRowsOf(r, some)
		if err != nil {
			return nil, true, err
		}
		for j, i := range uncached {
			rows[i] = read[j]
		}
	}
	return rows, true, nil
}

// countSets counts the facets of every document in sets (per segment of snap, a bitset over
// the segment's documents, as matchBits gives them) as countFacets counts their rows (fc): each
// segment's values are counted by their numbers in the segment, then added up by their
// numbers in the cache. Where a set holds more than half of its segment, the documents not
// in it are counted and taken from the segment's totals: a common word's search counts at
// most half of the index. ok is false when some segment's columns cannot be kept (too big
// for the cache, no cache, no doc values): the caller then reads the documents' rows
// through Bleve.
func (c *columnCache) countSets(snap *scorch.IndexSnapshot, sets [][]uint64, fc facetCounting) (facets map[string][]FacetCount, ok bool, err error) {
	segs := snap.Segments()
	if c.limit < 0 || len(sets) != len(segs) {
		return nil, false, nil
	}
	cols := make([]*segmentColumns, len(segs))
	for i, s := range segs {
		if !anyBit(sets[i]) {
			continue
		}
		if _, ok := s.Segment().(segment.DocValueVisitable); !ok {
			return nil, false, nil
		}
		sc, err := c.segment(segs, i)
		if err != nil {
			return nil, true, err
		}
		if sc == nil {
			return nil, false, nil
		}
		if len(sets[i]) != (len(sc.dates)+63)/64 {
			return nil, true, fmt.Errorf("index: read facets: %d words of matches for a segment of %d documents", len(sets[i]), len(sc.dates))
		}
		cols[i] = sc
	}
	c.mu.Lock()
	names := c.names // every segment above is numbered: their values are all in names
	c.mu.Unlock()
	counts := make([]int32, len(names))
	t := newFacetTally(fc)
	var local []int32
	for i, sc := range cols {
		if sc == nil {
			continue
		}
		bits, n := sets[i], len(sc.dates)
		local = append(local[:0], make([]int32, len(sc.values))...)
		inverse := 2*countBits(sets[i:i+1]) > uint64(n)
		tally := t
		if inverse {
			tally = newFacetTally(fc) // the dates of the documents not in the set
		}
		for wi, w := range bits {
			if inverse {
				w = ^w
				if rest := n - 64*wi; rest < 64 {
					w &= 1<<rest - 1
				}
			}
			for ; w != 0; w &= w - 1 {
				d := 64*wi + mathbits.TrailingZeros64(w)
				for _, id := range sc.ids[sc.at[d]:sc.at[d+1]] {
					local[id]++
				}
				if x := sc.dates[d]; x != noDate {
					tally.date(x)
				}
			}
		}
		if inverse {
			for id, k := range local {
				local[id] = sc.totals[id] - k
			}
			all := t.countSorted(sc.sorted)
			for b := range t.dates {
				t.dates[b] += all[b] - tally.dates[b]
			}
		}
		for id, k := range local {
			if k > 0 {
				counts[sc.global[id]] += k
			}
		}
	}
	for g, k := range counts {
		if k > 0 {
			t.value(names[g], int(k))
		}
	}
	return t.result(), true, nil
}

// anyBit says whether bits has a bit set.
func anyBit(bits []uint64) bool {
	for _, w := range bits {
		if w != 0 {
			return true
		}
	}
	return false
}

// number gives each value of sc its number among every value the cache has seen
// (sc.global), so that one search's counts of the values of several segments add up by
// number. The table only grows (a value seen once keeps its number): it holds each
// distinct site, type, language and dataset facet value of the index's history once.
func (c *columnCache) number(sc *segmentColumns) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.numbers == nil {
		c.numbers = map[facetValue]uint32{}
	}
	sc.global = make([]uint32, len(sc.values))
	for i, v := range sc.values {
		g, ok := c.numbers[v]
		if !ok {
			g = uint32(len(c.names))
			c.numbers[v] = g
			c.names = append(c.names, v)
		}
		sc.global[i] = g
	}
}

// segment returns the columns of segs[i], decoded on first use, or nil when the segment
// is too big for the cache on its own. Decoding a new segment also forgets the segments no
// longer in the index (merged away, or replaced by their persisted copies), so the cache
// holds the current segments only, and then those unused for longest while it holds more
// than its limit.
func (c *columnCache) segment(segs []*scorch.SegmentSnapshot, i int) (*segmentColumns, error) {
	seg := segs[i].Segment()
	c.mu.Lock()
	sc, ok := c.segs[seg]
	if !ok {
		if int64(seg.Count())*columnBytesPerDoc > c.limit {
			c.mu.Unlock()
			return nil, nil
		}
		sc = &segmentColumns{}
		c.segs[seg] = sc
		live := make(map[segment.Segment]bool, len(segs))
		for _, s := range segs {
			live[s.Segment()] = true
		}
		for s, old := range c.segs {
			if !live[s] {
				c.drop(s, old)
			}
		}
	}
	c.clock++
	sc.used = c.clock
	c.mu.Unlock()
	sc.once.Do(func() {
		if sc.err = sc.decode(seg); sc.err == nil {
			c.number(sc)
		}
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc.err != nil {
		if c.segs[seg] == sc {
			delete(c.segs, seg) // a later search tries again
		}
		return nil, sc.err
	}
	if sc.bytes == 0 && c.segs[seg] == sc {
		sc.bytes = sc.size()
		c.bytes += sc.bytes
		c.evict()
	}
	return sc, nil
}

// drop forgets a segment's columns (c.mu held).
func (c *columnCache) drop(s segment.Segment, sc *segmentColumns) {
	delete(c.segs, s)
	c.bytes -= sc.bytes
	sc.bytes = 0
}

// evict drops the decoded segments unused for longest while the cache holds more than its
// limit (c.mu held). A search still using a dropped segment's columns keeps them until it
// is done.
func (c *columnCache) evict() {
	for c.bytes > c.limit {
		var oldest segment.Segment
		var osc *segmentColumns
		for s, sc := range c.segs {
			if sc.bytes > 0 && (osc == nil || sc.used < osc.used) {
				oldest, osc = s, sc
			}
		}
		if osc == nil {
			return
		}
		c.drop(oldest, osc)
	}
}

// size is the memory the decoded columns take, about.
func (sc *segmentColumns) size() int64 {
	n := int64(4*len(sc.at) + 4*len(sc.ids) + 8*len(sc.dates) + 4*len(sc.global) + 4*len(sc.totals) + 8*len(sc.sorted))
	for _, v := range sc.values {
		n += int64(len(v.facet) + len(v.value) + 32)
	}
	return max(n, 1)
}

// decode reads the facet columns of every document of seg.
func (sc *segmentColumns) decode(seg segment.Segment) error {
	dv := seg.(segment.DocValueVisitable)
	n := seg.Count()
	if n >= math.MaxUint32 {
		return fmt.Errorf("index: read facets: a segment of %d documents", n)
	}
	fields := []string{fieldDate}
	for field := range facetColumns {
		fields = append(fields, field)
	}
	sc.at = make([]uint32, n+1)
	sc.dates = make([]int64, n)
	sc.ids = make([]uint32, 0, n*3)
	number := map[string]map[string]uint32{} // facet → value → its number in sc.values
	for _, name := range facetColumns {
		number[name] = map[string]uint32{}
	}
	var state segment.DocVisitState
	var err error
	for d := range n {
		sc.at[d] = uint32(len(sc.ids))
		sc.dates[d] = noDate
		state, err = dv.VisitDocValues(d, fields, func(field string, term []byte) {
			if name, ok := facetColumns[field]; ok {
				id, ok := number[name][string(term)]
				if !ok {
					id = uint32(len(sc.values))
					v := facetValue{name, string(term)}
					number[name][v.value] = id
					sc.values = append(sc.values, v)
				}
				sc.ids = append(sc.ids, id)
			} else if field == fieldDate {
				if nanos, ok := decodeInt(term); ok {
					sc.dates[d] = nanos
				}
			}
		}, state)
		if err != nil {
			return fmt.Errorf("index: read facets: %w", err)
		}
	}
	sc.at[n] = uint32(len(sc.ids))
	sc.totals = make([]int32, len(sc.values))
	for _, id := range sc.ids {
		sc.totals[id]++
	}
	for _, d := range sc.dates {
		if d != noDate {
			sc.sorted = append(sc.sorted, d)
		}
	}
	slices.Sort(sc.sorted)
	return nil
}
