package index

import (
	"context"
	"fmt"
	"math"
	mathbits "math/bits"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// This file prunes the matching of OR queries (MaxScore: Turtle and Flood, "Query
// evaluation: strategies and optimizations", 1995; as Lucene's MaxScoreBulkScorer).
//
// Why: a search keeps its best MaxResults (1,000) matches, for the facets and the pages,
// but an OR query of common words matches most of the index, and scoring every match was
// most of a search's CPU (docs/benchmarks.md, "Search under load"). Once the collector
// holds 1,000 matches, a document must score above the worst of them to matter. A word's
// BM25F score is below weight × IDF × (k1 + 1) whatever its frequencies (saturation), plus,
// for the proximity score, prox × IDF × (k1 + 1) for the pair it ends. Sorting the words
// by that bound, the cheapest words whose bounds together do not exceed the floor cannot
// make a document worth having on their own: documents are looked for only among the
// postings of the other (essential) words, and the cheap words' postings are advanced to
// those documents, or not read at all when the bounds show the document cannot reach the
// floor. The documents returned are scored exactly as without pruning (the same sums in
// the same order), so the best 1,000 are the same documents with the same scores; only
// documents that could not have entered them are skipped.
//
// The total number of matches is then counted from the words' postings bitmaps (zap keeps
// each postings list as a roaring bitmap): their union per segment, without its deleted
// documents. That is cheap next to scoring, so totals stay exact.

// maxScore is the pruning state of an OR searcher.
type maxScore struct {
	floor  float64   // a document must score above this to be wanted (0: every match is)
	bound  []float64 // per word of the searcher: the most it can add to a score
	pair   []float64 // the part of bound that is the word's proximity pair's
	order  []int     // the words by bound, lowest first
	below  []float64 // below[i]: the sum of the bounds of order[:i]
	cheap  int       // order[:cheap] are the non-essential words
	scores []float64 // scratch: each word's score in the current document
	pruned bool      // some matches were not returned (the collector counts them)
}

// pruneSlack keeps rounding from pruning a document whose exact score reaches the floor:
// bounds are compared as if this much larger (relative).
const pruneSlack = 1e-9

// When pruning pays (TestPruneOnIndex on the load test's 100,000 pages, CPU of collecting
// the best K of 600 searches of its log asked with OR, pruned against exhaustive): for the
// best 10, 35 % less for short queries and questions; for the best 200 (what feedback
// rescores), 10-15 % less; for the best 1,000 (what facets count), nothing: the floor,
// the thousandth best score, is below most words' bounds, and skipping within dense
// postings costs nearly what reading them does. With 30 words and more, the per-document
// bookkeeping costs more than it saves, whatever the K. So pruning is used up to pruneKeep
// results and pruneWords words (variables for TestPruneOnIndex, which lifts them).
var (
	pruneKeep  = 256
	pruneWords = 16
)

// enablePruning prepares s to skip the documents that cannot score above a floor the
// collector raises (raiseFloor) once it holds keep matches, with the words' bounds from
// tfs. It reports false when s is not an OR of several words, or when pruning would not
// pay (pruneKeep, pruneWords).
func (s *bm25fSearcher) enablePruning(ctx context.Context, r bindex.IndexReader, tfs *tfBoundCache, keep int) (bool, error) {
	if s.all || s.empty || len(s.words) < 2 || len(s.words) > pruneWords || keep > pruneKeep {
		return false, nil
	}
	k1, b := s.q.r.K1, s.q.r.B
	n := len(s.words)
	m := &maxScore{bound: make([]float64, n), pair: make([]float64, n), scores: make([]float64, n)}
	maxIDF := make([]float64, n)
	adjacent := make([]float64, n) // the most a word can count in its proximity pair
	for i, w := range s.words {
		idf := w.urlIDF
		for _, v := range w.idf {
			idf = max(idf, v)
		}
		maxIDF[i] = idf
		// The word's weighted, normalized frequency summed over its fields is at most the
		// sum of each field's largest; the score grows with it.
		tf := 0.0
		for _, f := range w.readers {
			tb, err := tfs.bound(ctx, r, f, b)
			if err != nil {
				return false, err
			}
			tf += f.weight * tb.tf
			if f.field == fieldTitle || f.field == fieldBody {
				adjacent[i] += s.q.r.fieldWeight(f.field) * tb.freq
			}
		}
		m.bound[i] = saturate(w.weight, idf, tf, k1)
	}
	if s.q.prox > 0 {
		// A pair's proximity score goes to the bound of its second word (a word ends at
		// most one pair: the one with the word before it in the query). The pair occurs
		// at most as often as the second word does in title and body.
		for i, b := range s.words {
			for j, a := range s.words {
				if a.index+1 == b.index {
					c := adjacent[i]
					m.pair[i] = s.q.prox * min(maxIDF[i], maxIDF[j]) * c * (k1 + 1) / (c + k1)
					m.bound[i] += m.pair[i]
				}
			}
		}
	}
	m.order = make([]int, n)
	for i := range m.order {
		m.order[i] = i
	}
	sort.SliceStable(m.order, func(i, j int) bool { return m.bound[m.order[i]] < m.bound[m.order[j]] })
	m.below = make([]float64, n+1)
	for i, wi := range m.order {
		m.below[i+1] = m.below[i] + m.bound[wi]
	}
	s.prune = m
	return true, nil
}

// tfBoundCache keeps, for the snapshot the index was last searched through, each
// (term, field)'s largest normalized frequency (fieldTF with weight 1) and largest raw
// frequency in any document: the words' score bounds. A bound that only uses saturation
// (IDF × (k1 + 1)) is two to three times what a word actually scores, and pruned almost
// nothing; finding a word's largest frequencies walks its postings once (without
// positions), and Zipf's law brings the common words, whose postings are long, back query
// after query.
type tfBoundCache struct {
	memo snapshotMemo[tfBoundKey, tfBound]
}

type tfBoundKey struct {
	field, term string
	b, avg      float64
}

type tfBound struct{ tf, freq float64 }

func (c *tfBoundCache) bound(ctx context.Context, r bindex.IndexReader, f *fieldReader, b float64) (tfBound, error) {
	return c.memo.get(r, tfBoundKey{f.name, f.term, b, f.avgLen}, func() (tfBound, error) {
		if v, ok := f.decodedBound(b); ok {
			return v, nil
		}
		tfr, err := r.TermFieldReader(ctx, []byte(f.term), f.name, true, true, false)
		if err != nil {
			return tfBound{}, err
		}
		defer tfr.Close()
		var v tfBound
		var d bindex.TermFieldDoc
		for {
			p, err := tfr.Next(d.Reset())
			if err != nil || p == nil {
				return v, err
			}
			v.tf = max(v.tf, f.tf(p.Freq, normLength(p.Norm), 1, b))
			v.freq = max(v.freq, float64(p.Freq))
		}
	})
}

// decodedBound is tfBoundCache's bound read from f's postings kept decoded (the postings
// cache), when every segment's are (ok false: some are read from zap): plain arrays, where
// walking zap's postings to find a new word's bounds was 6 % of a loaded server's CPU. The
// frequencies and lengths are those the word is scored with (deleted documents' too, which
// can only raise the bound).
func (f *fieldReader) decodedBound(b float64) (v tfBound, ok bool) {
	if f.segs == nil {
		return v, false
	}
	for _, l := range f.segs.lists {
		if l.dl == nil {
			return v, false
		}
	}
	for _, l := range f.segs.lists {
		for i := range l.dl.docs {
			freq, norm := l.dl.posting(i)
			v.tf = max(v.tf, f.tf(freq, lengthOfNorm(norm), 1, b))
			v.freq = max(v.freq, float64(freq))
		}
	}
	return v, true
}

// raiseFloor tells s that only documents scoring above floor are wanted from now on.
func (s *bm25fSearcher) raiseFloor(floor float64) {
	m := s.prune
	if m == nil || floor <= m.floor {
		return
	}
	m.floor = floor
	for m.cheap < len(m.order) && m.below[m.cheap+1]*(1+pruneSlack) <= floor {
		m.cheap++
	}
	if m.cheap > 0 {
		m.pruned = true
	}
}

// active reports whether some words are no longer essential.
func (m *maxScore) active() bool { return m.cheap > 0 }

// nextPruned returns the next document, among the essential words' postings, that may
// score above the floor, scored exactly as nextDoc scores it (ok false: none left).
func (s *bm25fSearcher) nextPruned() (doc uint64, score float64, ok bool, err error) {
	m := s.prune
	k1, b := s.q.r.K1, s.q.r.B
	essential := m.order[m.cheap:]
	for {
		doc = noDoc
		for _, wi := range essential {
			doc = min(doc, s.words[wi].cur)
		}
		if doc == noDoc {
			s.empty = true // the cheap words alone cannot reach the floor
			return 0, 0, false, nil
		}
		// What the document scores at most: the exact scores of the words found, plus the
		// bounds of their proximity pairs, plus the bounds of the words not yet looked at.
		sum, pending := 0.0, 0.0
		for _, wi := range essential {
			w := s.words[wi]
			m.scores[wi] = -1
			if w.cur == doc {
				m.scores[wi] = w.score(k1, b)
				sum += m.scores[wi]
				pending += m.pair[wi]
			}
		}
		wanted := true
		for i := m.cheap - 1; i >= 0; i-- {
			if (sum+pending+m.below[i+1])*(1+pruneSlack) <= m.floor {
				wanted = false
				break
			}
			wi := m.order[i]
			w := s.words[wi]
			m.scores[wi] = -1
			if err := w.advance(doc); err != nil {
				return 0, 0, false, err
			}
			if w.cur == doc {
				m.scores[wi] = w.score(k1, b)
				sum += m.scores[wi]
				pending += m.pair[wi]
			}
		}
		if wanted {
			// The exact score: the words' scores summed in query order, as nextDoc does.
			score = 0.0
			at := s.at[:0]
			for wi, w := range s.words {
				if m.scores[wi] >= 0 {
					score += m.scores[wi]
					at = append(at, w)
				}
			}
			s.at = at
			if s.q.prox > 0 && len(at) > 1 {
				score += s.proximity(at, k1)
			}
		}
		for _, w := range s.words {
			if w.cur == doc {
				if err := w.step(); err != nil {
					return 0, 0, false, err
				}
			}
		}
		if wanted {
			return doc, score, true, nil
		}
	}
}

// matchBits returns, for each segment of snapshot snap, the documents that match s (have
// every word of an AND, some word of an OR) as a bitset over their numbers in the segment
// (document d is bit d%64 of word d/64), without deleted documents: the documents the
// searcher returns when nothing is pruned, found from the words' postings without scoring.
// An OR's postings are added word by word into the bitset (a decoded dense list word by
// word); an AND's documents are its candidates (findCandidates), or the intersection of the
// words' bitmaps.
func (s *bm25fSearcher) matchBits(snap *scorch.IndexSnapshot) ([][]uint64, error) {
	segs := snap.Segments()
	words := 0
	for _, ss := range segs {
		words += int(ss.Segment().Count()+63) / 64
	}
	out := make([][]uint64, len(segs))
	free := make([]uint64, words) // every segment's bitset, in one allocation
	var first uint64
	dicts := map[string]segment.TermDictionary{}
	var scratch *roaring.Bitmap
	var word []uint64 // segmentDocs' scratch
	for i, ss := range segs {
		n := int(ss.Segment().Count()+63) / 64
		bits := free[:n:n]
		free = free[n:]
		out[i] = bits
		switch {
		case s.none:
		case s.all:
			if s.cands != nil && len(s.cands.segs) == len(segs) {
				copy(bits, s.cands.segs[i])
			} else {
				var err error
				if word, scratch, err = s.segmentDocs(ss, first, dicts, bits, word, scratch); err != nil {
					return nil, err
				}
			}
		default:
			clear(dicts)
			for _, w := range s.words {
				var err error
				if scratch, err = w.orBits(ss, first, dicts, bits, scratch); err != nil {
					return nil, err
				}
			}
			clearDeleted(ss, bits)
		}
		first += ss.Segment().Count()
	}
	return out, nil
}

// setBits sets the bits of docs' documents in bits.
func setBits(bits []uint64, docs *roaring.Bitmap) {
	for it := docs.Iterator(); it.HasNext(); {
		if d := it.Next(); int(d/64) < len(bits) {
			bits[d/64] |= 1 << (d % 64)
		}
	}
}

// countBits is how many documents bitsets hold.
func countBits(sets [][]uint64) uint64 {
	var n int
	for _, bits := range sets {
		for _, w := range bits {
			n += mathbits.OnesCount64(w)
		}
	}
	return uint64(n)
}

// postingsIn returns f's postings in segment ss, whose first document in the snapshot is
// first: decoded (the postings cache's), or else zap's (both nil: the segment lacks the
// term). dicts is scratch: the segment's dictionaries by field.
func (f *fieldReader) postingsIn(ss *scorch.SegmentSnapshot, first uint64, dicts map[string]segment.TermDictionary) (*decodedList, segment.PostingsList, error) {
	if f.segs != nil {
		for _, l := range f.segs.lists {
			if l.first == first {
				return l.dl, l.pl, nil
			}
		}
		return nil, nil, nil
	}
	d, ok := dicts[f.name]
	if !ok {
		var err error
		if d, err = ss.Segment().Dictionary(f.name); err != nil {
			return nil, nil, fmt.Errorf("index: match in %s: %w", f.name, err)
		}
		dicts[f.name] = d
	}
	if d == nil {
		return nil, nil, nil
	}
	pl, err := d.PostingsList([]byte(f.term), nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("index: match %q in %s: %w", f.term, f.name, err)
	}
	return nil, pl, nil
}

// segmentDocs sets in bits (a bitset over the segment's documents, all clear) the
// documents of one segment that have every word of s, an AND, from the words' postings,
// without the deleted documents; first is the segment's first document number in the
// snapshot. dicts, word and scratch are scratch (word and scratch returned for reuse).
//
// Each word's documents are its fields' lists OR-ed into a bitset (a decoded list's
// documents set bit by bit, a dense one word by word), then AND-ed into bits: roaring
// bitmaps built from the lists and intersected (AddMany, FromDense, And) were 3 % of the
// load test's CPU and a sixth of the bytes it allocated.
func (s *bm25fSearcher) segmentDocs(ss *scorch.SegmentSnapshot, first uint64, dicts map[string]segment.TermDictionary, bits, word []uint64, scratch *roaring.Bitmap) ([]uint64, *roaring.Bitmap, error) {
	clear(dicts)
	if cap(word) < len(bits) {
		word = make([]uint64, len(bits))
	}
	word = word[:len(bits)]
	for wi, w := range s.words {
		wb := word
		if wi == 0 {
			wb = bits // the first word's documents go straight into bits
		} else {
			clear(wb)
		}
		var err error
		if scratch, err = w.orBits(ss, first, dicts, wb, scratch); err != nil {
			return word, scratch, err
		}
		if wi > 0 {
			for i, x := range wb {
				bits[i] &= x
			}
		}
		if !anyBit(bits) {
			return word, scratch, nil
		}
	}
	clearDeleted(ss, bits)
	return word, scratch, nil
}

// orBits sets in bits (a bitset over segment ss's documents, whose first document number
// in the snapshot is first) the documents of w's fields in the segment, deleted ones too;
// dicts and scratch are scratch (scratch returned for reuse).
func (w *wordCursor) orBits(ss *scorch.SegmentSnapshot, first uint64, dicts map[string]segment.TermDictionary, bits []uint64, scratch *roaring.Bitmap) (*roaring.Bitmap, error) {
	for _, f := range w.readers {
		dl, pl, err := f.postingsIn(ss, first, dicts)
		if err != nil {
			return scratch, err
		}
		if dl != nil {
			dl.orBits(bits)
			continue
		}
		if pl == nil {
			continue
		}
		if scratch == nil {
			scratch = roaring.New()
		}
		scratch.Clear()
		if err := orPostings(pl, scratch); err != nil {
			return scratch, err
		}
		setBits(bits, scratch)
	}
	return scratch, nil
}

// clearDeleted clears the bits of segment ss's deleted documents in bits.
func clearDeleted(ss *scorch.SegmentSnapshot, bits []uint64) {
	if del := ss.Deleted(); del != nil {
		for it := del.Iterator(); it.HasNext(); {
			if d := it.Next(); int(d/64) < len(bits) {
				bits[d/64] &^= 1 << (d % 64)
			}
		}
	}
}

// candidates are the documents of a snapshot that have every word of an AND searcher,
// found from the postings bitmaps before any posting is decoded: most conjunctions of a
// search log match a handful of documents, and finding them by leapfrogging the words'
// postings (every field of every word advanced in turn) decoded long lists to reach them.
// The searcher then moves its cursors to each of them only.
type candidates struct {
	segs    [][]uint64 // each segment's, a bitset over its documents (segmentDocs)
	offsets []uint64   // each segment's first document number in the snapshot
	seg     int
	at      int    // the word of segs[seg] being read
	w       uint64 // its bits not yet returned
}

// findCandidates makes s, an AND of words, visit only the documents of snap that have them
// all.
func (s *bm25fSearcher) findCandidates(snap *scorch.IndexSnapshot) error {
	if !s.all || s.empty || len(s.words) < 2 {
		return nil // one word: its postings are its matches
	}
	segs := snap.Segments()
	words := 0
	for _, ss := range segs {
		words += int(ss.Segment().Count()+63) / 64
	}
	free := make([]uint64, words) // every segment's bitset, in one allocation
	c := &candidates{segs: make([][]uint64, len(segs)), offsets: make([]uint64, len(segs)), at: -1}
	dicts := map[string]segment.TermDictionary{}
	var word []uint64
	var scratch *roaring.Bitmap
	var at uint64
	for i, ss := range segs {
		n := int(ss.Segment().Count()+63) / 64
		bits := free[:n:n]
		free = free[n:]
		var err error
		if word, scratch, err = s.segmentDocs(ss, at, dicts, bits, word, scratch); err != nil {
			return err
		}
		c.segs[i], c.offsets[i] = bits, at
		at += ss.Segment().Count()
	}
	s.cands = c
	return nil
}

// next returns the next candidate (ok false: none left).
func (c *candidates) next() (uint64, bool) {
	for c.seg < len(c.segs) {
		if c.w != 0 {
			d := 64*c.at + mathbits.TrailingZeros64(c.w)
			c.w &= c.w - 1
			return c.offsets[c.seg] + uint64(d), true
		}
		if c.at++; c.at < len(c.segs[c.seg]) {
			c.w = c.segs[c.seg][c.at]
			continue
		}
		c.seg, c.at = c.seg+1, -1
	}
	return 0, false
}

// orPostings adds the documents of postings list pl to docs.
func orPostings(pl segment.PostingsList, docs *roaring.Bitmap) error {
	if pl == nil {
		return nil
	}
	if o, ok := pl.(interface{ OrInto(*roaring.Bitmap) }); ok {
		o.OrInto(docs)
		return nil
	}
	// A segment format without bitmaps: walk the list.
	it := pl.Iterator(false, false, false, nil)
	for {
		p, err := it.Next()
		if err != nil {
			return fmt.Errorf("index: count matches: %w", err)
		}
		if p == nil {
			return nil
		}
		if p.Number() > math.MaxUint32 {
			return fmt.Errorf("index: count matches: document number %d out of range", p.Number())
		}
		docs.Add(uint32(p.Number()))
	}
}
