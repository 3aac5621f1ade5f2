package index

import (
	"fmt"
	"math"
	"slices"

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
	counts *countsReader  // the reader's document frequencies, when it replaces them
	cache  *postingsCache // decoded postings kept between searches (nil: none)
	live   []segment.Segment
	lists  []*decodedList // scratch: a term's lists in the cache
	term   []byte         // scratch
}

// newPostingsSource returns a source for the segments of r, or nil when r is not a
// snapshot of segments (Bleve's TermFieldReader then reads the postings); cache, when
// set, keeps the postings it decodes.
func newPostingsSource(r bindex.IndexReader, cache *postingsCache) *postingsSource {
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
	if cache != nil && cache.limit >= 0 {
		ps.cache = cache
	}
	return ps
}

// dictionary returns segment i's dictionary of field.
func (ps *postingsSource) dictionary(field string, i int) (segment.TermDictionary, error) {
	d, ok := ps.dicts[field]
	if !ok {
		d = make([]segment.TermDictionary, len(ps.segs))
		if ps.dicts == nil {
			ps.dicts = map[string][]segment.TermDictionary{}
		}
		ps.dicts[field] = d
	}
	if d[i] == nil {
		var err error
		if d[i], err = ps.segs[i].Segment().Dictionary(field); err != nil {
			return nil, fmt.Errorf("index: open the dictionary of %s: %w", field, err)
		}
	}
	return d[i], nil
}

// segments are the segments of the snapshot (what the cache keeps).
func (ps *postingsSource) segments() []segment.Segment {
	if ps.live == nil {
		ps.live = make([]segment.Segment, len(ps.segs))
		for i, s := range ps.segs {
			ps.live[i] = s.Segment()
		}
	}
	return ps.live
}

// open returns the postings of term in field, without the deleted documents, and how
// many documents they have (nil, 0: none); vectors reads their positions too, and
// positional (title and body) says the cache keeps their positions.
func (ps *postingsSource) open(term, field string, vectors, positional bool) (*segmentPostings, uint64, error) {
	ps.term = append(ps.term[:0], term...)
	key := fieldTerm{field, term}
	if ps.cache != nil {
		ps.lists = slices.Grow(ps.lists[:0], len(ps.segs))[:len(ps.segs)]
		ps.cache.get(key, ps.segments(), ps.lists)
	}
	var sp *segmentPostings
	var n uint64
	for i, ss := range ps.segs {
		l := segmentList{first: ps.first[i], end: ps.first[i+1]}
		var d *decodedList
		if ps.cache != nil {
			d = ps.lists[i]
		}
		if d == nil && ps.cache != nil {
			dict, err := ps.dictionary(field, i)
			if err != nil {
				return nil, 0, err
			}
			if dict == nil {
				continue
			}
			pl, err := dict.PostingsList(ps.term, nil, nil)
			if err != nil {
				return nil, 0, fmt.Errorf("index: read the postings of %q in %s: %w", term, field, err)
			}
			if ps.cache.fits(pl.Count()) {
				if d, err = decodePostings(pl, positional); err != nil {
					return nil, 0, fmt.Errorf("index: read the postings of %q in %s: %w", term, field, err)
				}
				ps.cache.put(ss.Segment(), key, d, ps.segments())
			} else if ss.Deleted() == nil {
				l.pl = pl // the cache is full: zap's postings, the same without deletions
			}
		}
		if d == absent {
			continue
		}
		var c uint64
		if d != nil && d != uncached && (!vectors || d.posAt != nil) {
			l.dl = d
			if del := ss.Deleted(); del != nil && !del.IsEmpty() {
				l.del = del
			}
			c = d.count(l.del)
		} else {
			if l.pl == nil {
				dict, err := ps.dictionary(field, i)
				if err != nil {
					return nil, 0, err
				}
				if dict == nil {
					continue
				}
				if l.pl, err = dict.PostingsList(ps.term, ss.Deleted(), nil); err != nil {
					return nil, 0, fmt.Errorf("index: read the postings of %q in %s: %w", term, field, err)
				}
			}
			c = l.pl.Count()
		}
		if c == 0 {
			continue
		}
		n += c
		if sp == nil {
			sp = &segmentPostings{vectors: vectors, i: -1}
		}
		sp.lists = append(sp.lists, l)
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

// segmentPostings is a term's postings in one field of a snapshot, segment after segment:
// from the cache's decoded lists, or from zap's.
type segmentPostings struct {
	lists   []segmentList // the segments that have the term, in order
	at      int           // the list being read
	it      segment.PostingsIterator
	spare   segment.PostingsIterator // a finished iterator, reused for the next list
	cur     segment.Posting          // zap's current posting (nil: none, or a decoded list's)
	i       int                      // a decoded list's current posting (-1: none yet)
	doc     uint64                   // the current posting's document in its segment,
	freq    uint64                   // the term's frequency in it,
	length  float64                  // and the field's length (lengthOfNorm)
	vectors bool                     // positions are read
}

type segmentList struct {
	pl         segment.PostingsList // zap's postings, without the deleted documents
	dl         *decodedList         // or the decoded ones (then pl is nil)
	del        *roaring.Bitmap      // with dl: the segment's deleted documents (nil: none)
	first, end uint64               // the segment's document numbers in the snapshot: [first, end)
}

// offset is the snapshot number of the first document of the list being read.
func (s *segmentPostings) offset() uint64 { return s.lists[s.at].first }

// next moves to the next posting (false: none left).
func (s *segmentPostings) next() (bool, error) {
	for s.at < len(s.lists) {
		l := &s.lists[s.at]
		if l.dl != nil {
			if s.decoded(l, s.i+1) {
				return true, nil
			}
		} else {
			if s.it == nil {
				s.it = l.pl.Iterator(true, true, s.vectors, s.spare)
			}
			p, err := s.it.Next()
			if err != nil {
				return false, err
			}
			if p != nil {
				s.zap(p)
				return true, nil
			}
		}
		s.finish()
	}
	s.cur = nil
	return false, nil
}

// decoded moves to the first posting of decoded list l from its i-th that is not deleted
// (false: none left).
func (s *segmentPostings) decoded(l *segmentList, i int) bool {
	d := l.dl
	for ; i < len(d.docs); i++ {
		if l.del != nil && l.del.Contains(d.docs[i]) {
			continue
		}
		freq, norm := d.posting(i)
		s.i, s.cur = i, nil
		s.doc, s.freq, s.length = uint64(d.docs[i]), freq, lengthOfNorm(norm)
		return true
	}
	s.i = len(d.docs)
	return false
}

// zap makes p, read from zap, the current posting.
func (s *segmentPostings) zap(p segment.Posting) {
	s.cur = p
	if doc, freq, norm, ok := rawPosting(p); ok {
		s.doc, s.freq, s.length = doc, freq, lengthOfNorm(norm)
		return
	}
	s.doc, s.freq, s.length = p.Number(), p.Frequency(), normLength(p.Norm())
}

// finish moves on to the next list.
func (s *segmentPostings) finish() {
	if s.it != nil {
		s.spare, s.it = s.it, nil
	}
	s.at++
	s.i, s.cur = -1, nil
}

// advance moves to the first posting at or after document doc of the snapshot (false:
// none left); doc is past the current posting.
func (s *segmentPostings) advance(doc uint64) (bool, error) {
	for s.at < len(s.lists) && s.lists[s.at].end <= doc {
		s.finish()
	}
	if s.at == len(s.lists) {
		s.cur = nil
		return false, nil
	}
	l := &s.lists[s.at]
	if doc <= l.first {
		return s.next()
	}
	target := doc - l.first
	if l.dl != nil {
		if s.decoded(l, seekFrom(l.dl.docs, s.i+1, uint32(target))) {
			return true, nil
		}
		s.finish()
		return s.next()
	}
	if s.it == nil {
		s.it = l.pl.Iterator(true, true, s.vectors, s.spare)
	}
	p, err := s.it.Advance(target)
	if err != nil {
		return false, err
	}
	if p != nil {
		s.zap(p)
		return true, nil
	}
	s.finish()
	return s.next()
}

// seekFrom returns the index of the first of docs[from:] (sorted) at or after target
// (len(docs): none): galloping, then a binary search, as cursors mostly move a little.
func seekFrom(docs []uint32, from int, target uint32) int {
	lo, hi, step := from, from, 1
	for hi < len(docs) && docs[hi] < target {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(docs))
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if docs[m] < target {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// positions appends the term's positions in the current posting to pos (none unless
// vectors).
func (s *segmentPostings) positions(pos []uint64) []uint64 {
	if s.cur != nil {
		for _, l := range s.cur.Locations() {
			pos = append(pos, l.Pos())
		}
		return pos
	}
	if !s.vectors || s.at >= len(s.lists) || s.i < 0 {
		return pos
	}
	if d := s.lists[s.at].dl; d != nil && s.i < len(d.docs) {
		for _, p := range d.positions(s.i) {
			pos = append(pos, uint64(p))
		}
	}
	return pos
}

// rawPosting reads zap's posting p directly: its document's number in its segment, the
// term's frequency and its norm (the field's length, as a float32's bits); ok is false
// for another format's posting.
func rawPosting(p segment.Posting) (doc, freq, norm uint64, ok bool) {
	if zp, ok := p.(*zapx.Posting); ok {
		return zp.Number(), zp.Frequency(), zp.NormUint64(), true
	}
	return 0, 0, 0, false
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
