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
	ps := newPostingsSource(r)
	if ps == nil || len(ps.segs) < 2 {
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
	rng := rand.New(rand.NewPCG(1, 2))
	docCount := ps.first[len(ps.first)-1]
	pairs, walked := 0, 0
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
					f, err := newFieldReader(ctx, r, src, term, field, vectors)
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
		direct, err := newFieldReader(ctx, cr, newPostingsSource(cr), term, field, false)
		if err != nil {
			t.Fatal(err)
		}
		bleve, err := newFieldReader(ctx, cr, nil, term, field, false)
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
	if d, _ := newFieldReader(ctx, global, newPostingsSource(global), term, field, false); d.count != 12345 {
		t.Fatalf("the collection's count of %s:%q is 12345, the direct reader's %d", field, term, d.count)
	}
}
