package index

import (
	"cmp"
	"context"
	"fmt"
	mathbits "math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
)

// This file runs searches: it drives the Bleve searcher of a query itself rather than
// through Bleve's SearchInContext, so that everything after matching — the best n by
// score, topic relevance, facets — reads the same index snapshot by internal document
// number, from doc values (columns), without looking documents up by ID or loading their
// stored fields. Only the results that are returned get their IDs.

// collected is what a search found.
type collected struct {
	total  uint64
	hits   []scored // best first
	facets map[string][]FacetCount
	// facetOver is how many documents the facets count: every match.
	facetOver int
	rows      []facetRow // instead of facets, with collectOptions.rows: the best facetDepth
	// returned is how many matches the searcher returned: total, unless pruning skipped
	// some (prune.go).
	returned uint64
	// snap is the snapshot the hits were found in, kept open for their pages (with
	// collectOptions.pages): the caller closes it.
	snap *scorch.IndexSnapshot
}

// hitHeap is a min-heap of the best hits so far: the worst on top, ready to be replaced.
type hitHeap []collectedHit

type collectedHit struct {
	doc   uint64 // the document's number in the snapshot (bindex.IndexInternalID's value)
	score float64
}

// The heap holds no pointers: moving its entries needs no GC write barriers, and keeping a
// match allocates nothing.

// iid is the hit's document as Bleve's ID.
func (h collectedHit) iid() bindex.IndexInternalID { return bindex.NewIndexInternalID(nil, h.doc) }

func (h hitHeap) less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].doc > h[j].doc // on a tie the later document is worse
}

// The heap's two moves, written for its type: container/heap's calls through an
// interface were a twentieth of matching (the collector moves entries at every match
// that enters the best 1,000).

// up moves entry j towards the top until its parent is worse.
func (h hitHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// down moves entry i away from the top until its children are better.
func (h hitHeap) down(i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// bestFirst returns the heap's entries best first (it reorders h).
func (h hitHeap) bestFirst() []collectedHit {
	out := []collectedHit(h)
	slices.SortFunc(out, func(a, b collectedHit) int {
		switch {
		case a.score != b.score:
			return cmp.Compare(b.score, a.score)
		default:
			return cmp.Compare(a.doc, b.doc)
		}
	})
	return out
}

// collectOptions say what a search needs beyond the best n hits.
type collectOptions struct {
	n         int  // best hits wanted (their IDs are read)
	relevance int  // how many of the best get their topic relevance (0: none)
	facets    bool // count the facets of every match
	// counting says how: relative to when, and every value or the ten most common.
	counting facetCounting
	// counts replaces the index's document and term counts with a whole collection's
	// (nil: the index's own), for a shard of it.
	counts *globalCounts
	// rescore, when set, may change the scores and order of the best hits (feedback.go)
	// before anything else reads them, on the same index snapshot.
	rescore func(r bindex.IndexReader, best []collectedHit, total uint64) error
	// exhaustive scores every match, without pruning (prune.go); tests compare both.
	exhaustive bool
	// pages keeps the snapshot open for the result pages, which read the hits' stored
	// documents in it by number (collected.snap).
	pages bool
}

// collect runs q and returns its best hits.
func (ix *Index) collect(ctx context.Context, q bq.Query, o collectOptions) (res *collected, err error) {
	defer func() {
		if p := recover(); p != nil {
			// A panic inside Bleve (it has had some on error paths) is a failed search,
			// not a crashed process.
			res, err = nil, fmt.Errorf("index: search failed inside Bleve: %v", p)
		}
	}()
	// Bleve's own term and phrase scorers read BM25's k1 and b from package variables.
	bm25Mu.RLock()
	defer bm25Mu.RUnlock()
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer func() {
		// With o.pages and a snapshot of segments, the result keeps the snapshot for its
		// pages (collected.snap); the caller releases it.
		if res == nil || res.snap == nil {
			r.Close()
		}
	}()
	var sr bindex.IndexReader = r
	if o.counts != nil {
		sr = &countsReader{IndexReader: r, counts: o.counts}
	}
	s, err := q.Searcher(withPostingsCache(ctx, ix.postings), sr, ix.bi.Mapping(), search.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	keep := o.n
	pool := search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0)
	sctx := &search.SearchContext{DocumentMatchPool: pool, IndexReader: r}
	best := make(hitHeap, 0, min(keep, 1024))
	res = &collected{}
	b, _ := ctx.Value(budgetKey{}).(*budget)
	// An OR of words skips the documents that cannot enter the best keep once there are
	// keep of them (prune.go); it needs the segments' postings to count the matches then.
	snap, _ := r.(*scorch.IndexSnapshot)
	bs, _ := s.(*bm25fSearcher) // one BM25F clause: its matches are read without DocumentMatch
	pr := bs
	if o.exhaustive || snap == nil || keep <= 0 || pr == nil {
		pr = nil
	} else if ok, err := pr.enablePruning(ctx, r, &ix.tfBounds, keep); err != nil {
		return nil, err
	} else if !ok {
		pr = nil
	}
	if bs != nil && !o.exhaustive && snap != nil {
		if err := bs.findCandidates(snap); err != nil {
			return nil, err
		}
	}
	// Facets count every match, scored or not (countAll): a BM25F clause's matches are read
	// from its words' postings bitmaps once the search is done (matchSets), any other
	// searcher's are noted as they come (it returns them all: only BM25F clauses prune).
	countAll := o.facets
	noteMatches := countAll && (bs == nil || snap == nil)
	var matched []uint64
	next := func() (uint64, float64, bool, error) {
		if bs != nil {
			return bs.nextDoc()
		}
		dm, err := s.Next(sctx)
		if dm == nil || err != nil {
			return 0, 0, false, err
		}
		defer pool.Put(dm)
		return dm.IndexInternalID.Value(), dm.Score, true, nil
	}
	for {
		if res.total&255 == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if res.total > 0 && b.over() {
				break // the best found so far; Search marks the result partial
			}
		}
		doc, score, ok, err := next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		res.total++
		if noteMatches {
			matched = append(matched, doc)
		}
		switch {
		case keep <= 0:
		case len(best) < keep:
			best = append(best, collectedHit{doc, score})
			best.up(len(best) - 1)
			if pr != nil && len(best) == keep {
				pr.raiseFloor(best[0].score)
			}
		case score > best[0].score:
			best[0] = collectedHit{doc, score}
			best.down(0)
			if pr != nil {
				pr.raiseFloor(best[0].score)
			}
		}
	}
	res.returned = res.total
	pruned := pr != nil && pr.prune.pruned
	var sets [][]uint64 // the matches, per segment (matchBits)
	if bs != nil && snap != nil && (countAll || pruned) {
		if sets, err = bs.matchBits(snap); err != nil {
			return nil, err
		}
	}
	if pruned {
		res.total = countBits(sets) // not every match was returned: count them from the postings
	}
	ordered := best.bestFirst()
	if o.rescore != nil && len(ordered) > 0 {
		if err := o.rescore(sr, ordered, res.total); err != nil {
			return nil, err
		}
	}
	if countAll {
		fc := o.counting
		if fc.now.IsZero() {
			fc.now = time.Now()
		}
		if res.facets, res.facetOver, err = ix.matchFacets(r, snap, sets, matched, fc); err != nil {
			return nil, err
		}
	}
	ordered = ordered[:min(len(ordered), o.n)]

	res.hits = make([]scored, len(ordered))
	err = ix.forward.externalIDs(r, ordered, func(i int, id string) {
		h := ordered[i]
		res.hits[i] = scored{id: id, text: h.score, score: h.score, relevance: -1}
		if o.pages && snap != nil {
			res.hits[i].doc, res.hits[i].snap = h.doc, snap
		}
	})
	if err != nil {
		return nil, fmt.Errorf("index: ID of a result: %w", err)
	}
	if o.relevance > 0 {
		if err := readRelevance(r, ordered[:min(len(ordered), o.relevance)], res.hits); err != nil {
			return nil, err
		}
	}
	if o.pages && snap != nil && len(ordered) > 0 {
		res.snap = snap // last: from here on the caller closes it
	}
	return res, nil
}

// matchFacets counts the facets of every match of a search: sets, the matches per segment
// of snap (matchBits), or else matched, their numbers in r (snap nil: r is not a snapshot
// of segments), as fc says. over is how many documents they count.
func (ix *Index) matchFacets(r bindex.IndexReader, snap *scorch.IndexSnapshot, sets [][]uint64, matched []uint64, fc facetCounting) (facets map[string][]FacetCount, over int, err error) {
	var segs []*scorch.SegmentSnapshot
	if snap != nil {
		segs = snap.Segments()
		if sets == nil {
			sets = bySegment(segs, matched)
		}
		facets, ok, err := ix.columns.countSets(snap, sets, fc)
		if ok || err != nil {
			return facets, int(countBits(sets)), err
		}
	}
	// Some segment's columns are not kept: read every match's values (columns where kept,
	// Bleve's doc values elsewhere) and count them.
	var docs []collectedHit
	if snap == nil {
		docs = make([]collectedHit, len(matched))
		for i, d := range matched {
			docs[i].doc = d
		}
		slices.SortFunc(docs, func(a, b collectedHit) int { return cmp.Compare(a.doc, b.doc) })
	} else {
		var first uint64
		for i, ss := range segs {
			eachBit(sets[i], func(d uint64) { docs = append(docs, collectedHit{doc: first + d}) })
			first += ss.Segment().Count()
		}
	}
	rows, err := ix.facetRows(r, docs)
	if err != nil {
		return nil, 0, err
	}
	return countFacets(rows, fc), len(docs), nil
}

// bySegment turns documents (numbers in a snapshot of segments segs) into one bitset per
// segment of their numbers in it, as matchBits gives them.
func bySegment(segs []*scorch.SegmentSnapshot, docs []uint64) [][]uint64 {
	sets := make([][]uint64, len(segs))
	ends := make([]uint64, len(segs)) // each segment's end: its first document number + count
	var first uint64
	for i, ss := range segs {
		sets[i] = make([]uint64, (ss.Segment().Count()+63)/64)
		first += ss.Segment().Count()
		ends[i] = first
	}
	for _, d := range docs {
		i := sort.Search(len(ends), func(i int) bool { return d < ends[i] })
		if i < len(segs) {
			local := d - (ends[i] - segs[i].Segment().Count())
			sets[i][local/64] |= 1 << (local % 64)
		}
	}
	return sets
}

// eachBit calls fn with each document of bits, in order.
func eachBit(bits []uint64, fn func(d uint64)) {
	for i, w := range bits {
		for w != 0 {
			fn(uint64(i*64 + mathbits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
}

// byDocNumber returns hits sorted by internal document number: doc values are stored in
// compressed chunks of consecutive documents, so reading them in document order
// decompresses each chunk once, where score order would decompress one per document.
func byDocNumber(hits []collectedHit) []collectedHit {
	out := append([]collectedHit(nil), hits...)
	sort.Slice(out, func(i, j int) bool { return out[i].doc < out[j].doc })
	return out
}

// readRelevance sets the topic relevance of hits (in the order of ordered) from the
// relevance column.
func readRelevance(r bindex.IndexReader, ordered []collectedHit, hits []scored) error {
	dv, err := r.DocValueReader([]string{fieldRelevance})
	if err != nil {
		return fmt.Errorf("index: read relevance: %w", err)
	}
	at := make(map[uint64]int, len(ordered))
	for i, h := range ordered {
		at[h.doc] = i
	}
	for _, h := range byDocNumber(ordered) {
		i := at[h.doc]
		err := dv.VisitDocValues(h.iid(), func(_ string, term []byte) {
			if x, ok := decodeNumber(term); ok {
				hits[i].relevance = x
			}
		})
		if err != nil {
			return fmt.Errorf("index: read relevance: %w", err)
		}
	}
	return nil
}

// facetRow is the facet values of one result: its keyword facets' values and its date.
type facetRow struct {
	values []facetValue
	date   int64 // unix nanoseconds
	dated  bool
}

// facetValue is one value of a facet.
type facetValue struct{ facet, value string }

// facetRows reads the site, kind, language, dataset facets and date of docs (sorted by
// document number) from the index's decoded columns (columns.go), or from Bleve's doc
// values when the reader is not a snapshot of segments.
func (ix *Index) facetRows(r bindex.IndexReader, docs []collectedHit) ([]facetRow, error) {
	rows, ok, err := ix.columns.rows(r, docs)
	if ok || err != nil {
		return rows, err
	}
	return facetRowsOf(r, docs)
}

// facetRowsOf reads the site, kind, language, dataset facets and date of the given
// documents from their doc values.
func facetRowsOf(r bindex.IndexReader, docs []collectedHit) ([]facetRow, error) {
	columns := []string{fieldDate}
	for field := range facetColumns {
		columns = append(columns, field)
	}
	dv, err := r.DocValueReader(columns)
	if err != nil {
		return nil, fmt.Errorf("index: read facets: %w", err)
	}
	// Values repeat from one document to the next: one string each.
	intern := map[string]string{}
	rows := make([]facetRow, len(docs))
	for i, d := range docs {
		row := &rows[i]
		err := dv.VisitDocValues(d.iid(), func(field string, term []byte) {
			if name, ok := facetColumns[field]; ok {
				v, ok := intern[string(term)]
				if !ok {
					v = string(term)
					intern[v] = v
				}
				row.values = append(row.values, facetValue{name, v})
			} else if field == fieldDate {
				if nanos, ok := decodeInt(term); ok {
					row.date, row.dated = nanos, true
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("index: read facets: %w", err)
		}
	}
	return rows, nil
}

// facetColumns maps the keyword column of each facet to the facet's name.
var facetColumns = func() map[string]string {
	m := map[string]string{fieldHost: FacetSite, fieldKind: FacetType, fieldLang: FacetLang}
	for _, name := range datasetFacets {
		m[typedPrefix+name] = name
	}
	return m
}()

// facetCounting says how a search counts its facets.
type facetCounting struct {
	now time.Time // the date buckets end here (zero: when the search starts)
	// every keeps every value of each keyword facet, without filters, instead of the ten
	// most common: a shard's counts, which Gather adds up over a collection's shards.
	every bool
}

// countFacets counts the facet values of rows as fc says: the ten most common values of
// each keyword facet (or every value), and the date buckets relative to fc.now.
func countFacets(rows []facetRow, fc facetCounting) map[string][]FacetCount {
	t := newFacetTally(fc)
	counted := map[facetValue]int{}
	for _, row := range rows {
		for _, v := range row.values {
			counted[v]++
		}
		if row.dated {
			t.date(row.date)
		}
	}
	for v, n := range counted {
		t.value(v, n)
	}
	return t.result()
}

// facetTally counts results' dates into the date facet's buckets, keeps the ten most
// common values of each keyword facet from their counts, and makes the facets.
type facetTally struct {
	now   time.Time
	every bool    // keep every value (facetCounting.every)
	since []int64 // each bucket's start but the last's, in unix nanoseconds
	dates []int
	top   map[string][]FacetCount // each facet's best values so far, best first
}

func newFacetTally(fc facetCounting) *facetTally {
	last := len(dateBuckets) - 1 // "older": the documents no other bucket has
	t := &facetTally{now: fc.now, every: fc.every, since: make([]int64, last), dates: make([]int, len(dateBuckets)), top: map[string][]FacetCount{}}
	for i, b := range dateBuckets[:last] {
		t.since[i] = fc.now.Add(-b.age).UnixNano()
	}
	return t
}

// date counts a result dated nanos (unix nanoseconds).
func (t *facetTally) date(nanos int64) {
	for i, s := range t.since {
		if nanos > s {
			t.dates[i]++
		}
	}
	if last := len(t.since); nanos <= t.since[last-1] {
		t.dates[last]++
	}
}

// countSorted is how many of dates (unix nanoseconds, sorted) each bucket has, as date
// counts them.
func (t *facetTally) countSorted(dates []int64) []int {
	out := make([]int, len(t.dates))
	newer := func(s int64) int { // how many dates are after s
		i, _ := slices.BinarySearch(dates, s+1)
		return len(dates) - i
	}
	for i, s := range t.since {
		out[i] = newer(s)
	}
	last := len(t.since)
	out[last] = len(dates) - newer(t.since[last-1])
	return out
}

// value tells t that n results have value v, each value once: t keeps the ten most common
// of each facet (ties by value), in order as they come, where sorting every value of a
// common word's results (hundreds of sites) cost more than the counting.
func (t *facetTally) value(v facetValue, n int) {
	fc := t.top[v.facet]
	c := FacetCount{Value: v.value, Count: n}
	if t.every {
		t.top[v.facet] = append(fc, c)
		return
	}
	if len(fc) == 10 && !betterFacet(c, fc[9]) {
		return
	}
	if len(fc) < 10 {
		fc = append(fc, c)
	} else {
		fc[9] = c
	}
	for i := len(fc) - 1; i > 0 && betterFacet(fc[i], fc[i-1]); i-- {
		fc[i], fc[i-1] = fc[i-1], fc[i]
	}
	t.top[v.facet] = fc
}

// betterFacet says whether facet value a comes before b: more results, or as many and
// first by value.
func betterFacet(a, b FacetCount) bool {
	return a.Count > b.Count || a.Count == b.Count && a.Value < b.Value
}

// result is the facets counted: the ten most common values of each keyword facet some
// result has (no dataset facets for pages), with their filters, and the date buckets.
// With every, it is every value, best first, and no filters: a shard's counts.
func (t *facetTally) result() map[string][]FacetCount {
	out := t.top
	for name, fc := range out {
		if t.every {
			slices.SortFunc(fc, func(a, b FacetCount) int {
				return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
			})
			continue
		}
		for i := range fc {
			fc[i].Filter = name + ":" + quoteValue(fc[i].Value) // for the ten shown only
		}
	}
	var dc []FacetCount
	for i, b := range dateBuckets {
		if t.dates[i] == 0 {
			continue
		}
		f := FacetCount{Value: b.label, Count: t.dates[i]}
		switch {
		case t.every: // a shard's count: the gatherer makes the filters
		case b.age > 0:
			f.Filter = "after:" + t.now.Add(-b.age).UTC().Format("2006-01-02")
		default:
			f.Filter = "before:" + t.now.Add(-dateBuckets[len(dateBuckets)-2].age).UTC().Format("2006-01-02")
		}
		dc = append(dc, f)
	}
	out[FacetDate] = dc
	return out
}
