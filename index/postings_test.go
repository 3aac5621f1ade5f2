package index

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/internal/synthcorpus"
)

// TestSegmentPostingsMatchBleve: the scorer's cursors read straight from the segments
// (postings.go) give every posting — document number, frequency, norm, positions — that
// Bleve's TermFieldReader gives, in the same order, when walked and when advanced to
// documents in and between segments, on an index of several segments with deleted
// documents; and the same document frequencies, a shard's global ones included.
func TestSegmentPostingsMatchBleve(t *testing.T) {
	ix := openTest(t, Options{CacheEntries: -1})
	c := synthcorpus.New(1)
	var gone []string
	for i := 0; i < 900; i += 300 {
		docs := make([]Doc, 0, 300)
		for j := i; j < i+300; j++ {
			docs = append(docs, synthDoc(c, j))
			if j%23 == 0 {
				gone = append(gone, docs[len(docs)-1].ID)
			}
		}
		if err := ix.Put(ctx, docs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ps := newPostingsSource(r, nil); ps == nil || len(ps.segs) < 2 {
		t.Fatalf("want a snapshot of several segments, have %T", r)
	}
	fields, err := r.Fields()
	if err != nil {
		t.Fatal(err)
	}
	type posting struct {
		Doc, Freq uint64
		Length    float64
		Pos       []uint64
	}
	read := func(f *fieldReader) posting {
		if f.doc == noDoc {
			return posting{Doc: noDoc}
		}
		return posting{f.doc, f.freq, f.length, append([]uint64{}, f.positions()...)}
	}
	// Read from zap, from postings decoded in the cache (filled on the first read of a
	// term, read from it on the second), and from a cache too small for all of them
	// (some segments' lists decoded, the others zap's).
	small := newPostingsCache(40 << 10)
	for _, cache := range []*postingsCache{nil, newPostingsCache(1 << 30), small} {
		ps := newPostingsSource(r, cache)
		rng := rand.New(rand.NewPCG(1, 2))
		docCount := ps.first[len(ps.first)-1]
		pairs, walked, decoded := 0, 0, 0
		for _, field := range fields {
			if !strings.HasPrefix(field, fieldBody) && !strings.HasPrefix(field, fieldTitle) && field != fieldURL {
				continue
			}
			dict, err := r.FieldDict(field)
			if err != nil {
				t.Fatal(err)
			}
			var terms []string
			for i := 0; ; i++ {
				e, err := dict.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				if i%11 == 0 {
					terms = append(terms, e.Term)
				}
			}
			dict.Close()
			for _, term := range terms {
				for _, vectors := range []bool{true, false} {
					open := func(src *postingsSource) *fieldReader {
						f, err := newFieldReader(ctx, r, src, term, field, vectors, true)
						if err != nil {
							t.Fatal(err)
						}
						return f
					}
					direct, bleve := open(ps), open(nil)
					if direct == nil || bleve == nil {
						if direct != bleve {
							t.Fatalf("%s:%q: direct %v, Bleve %v", field, term, direct, bleve)
						}
						continue // every document with it deleted
					}
					if direct.segs == nil || direct.count != bleve.count {
						t.Fatalf("%s:%q: %d documents read directly, %d through Bleve", field, term, direct.count, bleve.count)
					}
					for _, l := range direct.segs.lists {
						if l.dl != nil {
							decoded++
						}
					}
					pairs++
					// both moves both readers alike.
					both := func(move func(f *fieldReader) error) {
						for _, f := range []*fieldReader{direct, bleve} {
							if err := move(f); err != nil {
								t.Fatal(err)
							}
						}
					}
					next := (*fieldReader).next
					// Walk them all.
					for {
						both(next)
						d, b := read(direct), read(bleve)
						if !reflect.DeepEqual(d, b) {
							t.Fatalf("%s:%q, vectors %v: direct %+v, Bleve %+v", field, term, vectors, d, b)
						}
						if d.Doc == noDoc {
							break
						}
						walked++
					}
					// Again, advancing to random documents (deleted ones, documents of other
					// segments, past the end) between steps.
					direct.close()
					bleve.close()
					direct, bleve = open(ps), open(nil)
					for at := uint64(0); ; {
						step := "next"
						if rng.IntN(3) > 0 {
							at += uint64(rng.IntN(int(docCount)/8 + 1))
							step = fmt.Sprintf("advance to %d", at)
							both(func(f *fieldReader) error { return f.advance(at) })
						} else {
							both(next)
						}
						d, b := read(direct), read(bleve)
						if !reflect.DeepEqual(d, b) {
							t.Fatalf("%s:%q, vectors %v, %s: direct %+v, Bleve %+v", field, term, vectors, step, d, b)
						}
						if d.Doc == noDoc {
							break
						}
						at = max(at, d.Doc)
					}
					direct.close()
					bleve.close()
				}
			}
		}
		if pairs < 50 || walked < 1000 {
			t.Fatalf("compared only %d terms, %d postings", pairs, walked)
		}
		if cache != nil && decoded == 0 {
			t.Fatalf("no postings read from the cache")
		}
		if cache == small && (len(small.segs) == 0 || small.bytes > small.limit) {
			t.Fatalf("the small cache holds %d bytes of %d segments, at most %d", small.bytes, len(small.segs), small.limit)
		}
	}

	// A shard's reader gives the collection's document frequencies, and a recording
	// reader records the shard's own, the same either way.
	// (The first body field with a term: every segment lists every language's text
	// fields, fieldRoster, most of them empty here.)
	term, field := "", ""
	for _, f := range fields {
		if !strings.HasPrefix(f, fieldBody) {
			continue
		}
		dict, err := r.FieldDict(f)
		if err != nil {
			t.Fatal(err)
		}
		e, err := dict.Next()
		dict.Close()
		if err != nil {
			t.Fatal(err)
		}
		if e != nil {
			term, field = e.Term, f
			break
		}
	}
	if term == "" {
		t.Fatalf("no term in any body field of %v", fields)
	}
	global := &countsReader{IndexReader: r, counts: &globalCounts{docs: 1e6, terms: map[string]map[string]uint64{field: {term: 12345}}}}
	recording := &countsReader{IndexReader: r, recorded: map[string]map[string]uint64{}}
	for _, cr := range []*countsReader{global, recording} {
		direct, err := newFieldReader(ctx, cr, newPostingsSource(cr, nil), term, field, false, true)
		if err != nil {
			t.Fatal(err)
		}
		bleve, err := newFieldReader(ctx, cr, nil, term, field, false, true)
		if err != nil {
			t.Fatal(err)
		}
		if direct.segs == nil || direct.count != bleve.count {
			t.Fatalf("%s:%q through %+v: %d documents read directly, %d through Bleve", field, term, cr, direct.count, bleve.count)
		}
		direct.close()
		bleve.close()
	}
	if n := recording.recorded[field][term]; n == 0 || n == 12345 {
		t.Fatalf("recorded %d documents for %s:%q", n, field, term)
	}
	if d, _ := newFieldReader(ctx, global, newPostingsSource(global, newPostingsCache(1<<30)), term, field, false, true); d.count != 12345 {
		t.Fatalf("the collection's count of %s:%q is 12345, the direct reader's %d", field, term, d.count)
	}
}

// TestPostingsCacheForgetsSegments: the postings cache counts what it holds, keeps no more
// than its bound, and forgets the lists of segments that are no longer in the index when
// a segment it has not seen is searched.
func TestPostingsCacheForgetsSegments(t *testing.T) {
	c := synthcorpus.New(1)
	segmentsOf := func(n int) ([]*postingsSource, func()) {
		ix := openTest(t, Options{CacheEntries: -1})
		for i := 0; i < n; i++ {
			docs := make([]Doc, 0, 100)
			for j := i * 100; j < i*100+100; j++ {
				docs = append(docs, synthDoc(c, j))
			}
			if err := ix.Put(ctx, docs...); err != nil {
				t.Fatal(err)
			}
		}
		r, err := ix.reader()
		if err != nil {
			t.Fatal(err)
		}
		return []*postingsSource{newPostingsSource(r, nil)}, func() { r.Close() }
	}
	old, done := segmentsOf(3)
	defer done()
	later, done2 := segmentsOf(1)
	defer done2()
	cache := newPostingsCache(1 << 30)
	// sum is what the cache holds, counted again.
	sum := func() (n int64) {
		for key, tl := range cache.terms {
			n += int64(64 + len(key.field) + len(key.term))
			for _, d := range tl.lists {
				n += d.size()
			}
		}
		return n
	}
	fill := func(ps *postingsSource) {
		ps.cache = cache
		for _, term := range []string{c.Word(), c.Word(), c.Word(), "zzzz-absent"} {
			for _, lang := range []string{"en", "xx"} {
				if _, _, err := ps.open(term, langField(fieldBody, lang), true, true); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	fill(old[0])
	if len(cache.segs) != len(old[0].segs) || cache.bytes != sum() || cache.bytes == 0 {
		t.Fatalf("after the first index: %d segments (want %d), %d bytes counted, %d held", len(cache.segs), len(old[0].segs), cache.bytes, sum())
	}
	fill(later[0])
	if len(cache.segs) != len(later[0].segs) || cache.bytes != sum() {
		t.Fatalf("after the second index: %d segments (want %d), %d bytes counted, %d held", len(cache.segs), len(later[0].segs), cache.bytes, sum())
	}
	for _, tl := range cache.terms {
		for _, s := range tl.segs {
			if !cache.segs[s] {
				t.Fatalf("a list of a forgotten segment is kept")
			}
		}
	}
	// A bound it reaches: it stops taking lists there.
	cache = newPostingsCache(sum() / 3)
	fill(old[0])
	if cache.bytes > cache.limit || cache.bytes != sum() || len(cache.terms) == 0 {
		t.Fatalf("bounded at %d: %d bytes counted, %d held, %d terms", cache.limit, cache.bytes, sum(), len(cache.terms))
	}
}
