package index

import (
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zapx "github.com/blevesearch/zapx/v17"
)

// This file reads a term's postings straight from the segments of an index snapshot, for
// the BM25F scorer's cursors (bm25f.go).
//
// Why not Bleve's TermFieldReader: it copies every posting into a TermFieldDoc — the
// document's number encoded as an 8-byte ID, and each position into a TermFieldVector of
// five fields — for a scorer that reads a number, a frequency, a norm and, for proximity,
// the positions of a few; and it looks each term up in every segment's dictionary again
// for the bitmaps that find an AND's documents (prune.go). On the 100,000 pages of "Search
// under load" the copies were a twentieth of a search's CPU. The postings read are the
// same, in the same order, so scores are too.
//
// Positions are decoded with every posting when they are wanted. Reading them only for
// the documents that ask for them (proximity: two adjacent query words in the same field),
// with a second iterator skipping to those documents, cost twice what it saved: zap's
// iterator reads its way through the postings it skips within a chunk.

// postingsSource opens terms' postings in the segments of one snapshot, for one query.
type postingsSource struct {
	segs   []*scorch.SegmentSnapshot
	first  []uint64 // each segment's first document number in the snapshot, and the end
	dicts  map[string][]segment.TermDictionary
	counts *countsReader // the reader's document frequencies, when it replaces them
	term   []byte        // scratch
}

// newPostingsSource returns a source for the segments of r, or nil when r is not a
// snapshot of segments (Bleve's TermFieldReader then reads the postings).
func newPostingsSource(r bindex.IndexReader) *postingsSource {
	ps := &postingsSource{}
	if cr, ok := r.(*countsReader); ok {
		ps.counts, r = cr, cr.IndexReader
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil
	}
	ps.segs = snap.Segments()
	ps.first = make([]uint64, len(ps.segs)+1)
	for i, s := range ps.segs {
		ps.first[i+1] = ps.first[i] + s.Segment().Count()
	}
	return ps
}

// dictionaries returns each segment's dictionary of field.
func (ps *postingsSource) dictionaries(field string) ([]segment.TermDictionary, error) {
	if d, ok := ps.dicts[field]; ok {
		return d, nil
	}
	d := make([]segment.TermDictionary, len(ps.segs))
	for i, s := range ps.segs {
		var err error
		if d[i], err = s.Segment().Dictionary(field); err != nil {
			return nil, fmt.Errorf("index: open the dictionary of %s: %w", field, err)
		}
	}
	if ps.dicts == nil {
		ps.dicts = map[string][]segment.TermDictionary{}
	}
	ps.dicts[field] = d
	return d, nil
}

// open returns the postings of term in field, without the deleted documents, and how
// many documents they have (nil, 0: none); vectors reads their positions too.
func (ps *postingsSource) open(term, field string, vectors bool) (*segmentPostings, uint64, error) {
	dicts, err := ps.dictionaries(field)
	if err != nil {
		return nil, 0, err
	}
	ps.term = append(ps.term[:0], term...)
	var sp *segmentPostings
	var n uint64
	for i, d := range dicts {
		if d == nil {
			continue
		}
		pl, err := d.PostingsList(ps.term, ps.segs[i].Deleted(), nil)
		if err != nil {
			return nil, 0, fmt.Errorf("index: read the postings of %q in %s: %w", term, field, err)
		}
		c := pl.Count()
		if c == 0 {
			continue
		}
		n += c
		if sp == nil {
			sp = &segmentPostings{vectors: vectors}
		}
		sp.lists = append(sp.lists, segmentList{pl: pl, first: ps.first[i], end: ps.first[i+1]})
	}
	return sp, n, nil
}

// count is the document frequency a query scores term in field with, the snapshot having
// local: the collection's when the reader gives a whole collection's counts (a shard's).
func (ps *postingsSource) count(term, field string, local uint64) uint64 {
	if ps.counts == nil {
		return local
	}
	return ps.counts.termCount(term, field, local)
}

// segmentPostings is a term's postings in one field of a snapshot, segment after segment.
type segmentPostings struct {
	lists   []segmentList // the segments that have the term, in order
	at      int           // the list being read
	it      segment.PostingsIterator
	spare   segment.PostingsIterator // a finished iterator, reused for the next list
	cur     segment.Posting          // the current posting (nil: none yet, or none left)
	vectors bool                     // positions are read
}

type segmentList struct {
	pl         segment.PostingsList
	first, end uint64 // the segment's document numbers in the snapshot: [first, end)
}

// offset is the snapshot number of the first document of the list being read.
func (s *segmentPostings) offset() uint64 { return s.lists[s.at].first }

// next moves to the next posting (nil: none left).
func (s *segmentPostings) next() (segment.Posting, error) {
	for s.at < len(s.lists) {
		if s.it == nil {
			s.it = s.lists[s.at].pl.Iterator(true, true, s.vectors, s.spare)
		}
		p, err := s.it.Next()
		if err != nil || p != nil {
			s.cur = p
			return p, err
		}
		s.finish()
	}
	s.cur = nil
	return nil, nil
}

// finish moves on to the next list.
func (s *segmentPostings) finish() {
	if s.it != nil {
		s.spare, s.it = s.it, nil
	}
	s.at++
}

// advance moves to the first posting at or after document doc of the snapshot (nil: none
// left); doc is past the current posting.
func (s *segmentPostings) advance(doc uint64) (segment.Posting, error) {
	for s.at < len(s.lists) && s.lists[s.at].end <= doc {
		s.finish()
	}
	if s.at == len(s.lists) {
		s.cur = nil
		return nil, nil
	}
	l := s.lists[s.at]
	if doc <= l.first {
		return s.next()
	}
	if s.it == nil {
		s.it = l.pl.Iterator(true, true, s.vectors, s.spare)
	}
	p, err := s.it.Advance(doc - l.first)
	if err != nil || p != nil {
		s.cur = p
		return p, err
	}
	s.finish()
	return s.next()
}

// posting reads posting p: its document's number in its segment, the term's frequency,
// and the field's length (the number of its tokens, as zap's norm keeps it).
func posting(p segment.Posting) (doc, freq uint64, length float64) {
	if zp, ok := p.(*zapx.Posting); ok {
		// zap's own posting, called directly: its norm is the field's length, as a
		// float32's bits.
		return zp.Number(), zp.Frequency(), lengthOfNorm(zp.NormUint64())
	}
	return p.Number(), p.Frequency(), normLength(p.Norm())
}

// lengths are fieldLength of the lengths fields most often have; a norm of 0 (none
// stored) reads back as Bleve reads it: 1/√0 is infinite, and its length 0.
var lengths = func() (t [1 << 12]float64) {
	for n := 1; n < len(t); n++ {
		t[n] = fieldLength(n)
	}
	return t
}()

// lengthOfNorm is the length BM25F normalizes by for a field of n tokens: fieldLength,
// which rounds as zap's float32 norm does.
func lengthOfNorm(n uint64) float64 {
	if n < uint64(len(lengths)) {
		return lengths[n]
	}
	return fieldLength(int(min(n, math.MaxInt32)))
}

// normLength is the length a norm (1/√length) stands for (1 when there is none).
func normLength(norm float64) float64 {
	if norm > 0 {
		return 1 / (norm * norm)
	}
	return 1
}

// orInto adds to docs the term's documents in the segment whose first document is first,
// as numbers in that segment (deleted ones too).
func (s *segmentPostings) orInto(first uint64, docs *roaring.Bitmap) error {
	for _, l := range s.lists {
		if l.first == first {
			return orPostings(l.pl, docs)
		}
	}
	return nil
}
