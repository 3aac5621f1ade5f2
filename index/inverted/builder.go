package inverted

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Page is one document's analyzed text, what a segment is built from: its fields.
type Page struct {
	Fields []Field
}

// Field is one analyzed field of a page.
type Field struct {
	Name   string
	Length uint32   // the field's analyzed length (its tokens), the length BM25 normalizes by
	Terms  []string // its distinct terms, in any order
	Freqs  []uint32 // each term's frequency (≥ 1)
	// Positions, when the field keeps them (every page's field of that name must then
	// have them): Freqs[0] ascending positions of Terms[0], then Terms[1]'s, and so on.
	Positions []uint32
}

// Builder builds one segment from pages added in document order: the first page added is
// document 0 of the segment. A Builder is not safe for concurrent use.
type Builder struct {
	fields map[string]*fieldBuild
	docs   uint32
	gen    uint32   // Add's calls, so that a term met twice in one call is seen
	ids    []uint32 // scratch: the IDs of a page's terms, field after field
}

// fieldBuild is what a builder holds of one field: its terms, each once, and its
// postings in the order they were added (so, for each term, in document order).
type fieldBuild struct {
	positions bool
	ids       map[string]uint32 // term -> ID (the order it was first seen)
	terms     []string          // ID -> term
	seen      []uint32          // ID -> the last Add call (Builder.gen) that had it
	// postings, in the order added
	tid    []uint32
	doc    []uint32
	freq   []uint32
	posEnd []uint32 // posting i's positions are pos[posEnd[i-1]:posEnd[i]] (from 0 for the first)
	pos    []byte   // encoded (see the format)
	// lengths
	lengths   []byte // the lengths region
	lastDoc   int64  // the last document that had the field (-1: none)
	withField uint64
	sumLength uint64
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder { return &Builder{fields: map[string]*fieldBuild{}} }

// Docs is the number of pages added.
func (b *Builder) Docs() int { return int(b.docs) }

// Add adds p as the next document. A page whose fields do not add up (a term twice in a
// field, a field twice, frequencies or positions that do not match the terms, positions
// in one page of a field and not in another) is refused and adds nothing.
func (b *Builder) Add(p Page) error {
	if b.docs == math.MaxUint32 {
		return fmt.Errorf("inverted: a segment holds at most %d documents", uint32(math.MaxUint32))
	}
	b.gen++
	b.ids = b.ids[:0]
	for i := range p.Fields {
		if err := b.check(&p.Fields[i], p.Fields[:i]); err != nil {
			return fmt.Errorf("inverted: document %d: %w", b.docs, err)
		}
	}
	for i := range p.Fields {
		if err := b.lookup(&p.Fields[i]); err != nil {
			return fmt.Errorf("inverted: document %d: %w", b.docs, err)
		}
	}
	ids := b.ids
	for i := range p.Fields {
		f := &p.Fields[i]
		b.add(f, ids[:len(f.Terms)])
		ids = ids[len(f.Terms):]
	}
	b.docs++
	return nil
}

// check validates f (after the page's fields before it) against the builder.
func (b *Builder) check(f *Field, before []Field) error {
	if f.Name == "" {
		return fmt.Errorf("a field without a name")
	}
	for _, o := range before {
		if o.Name == f.Name {
			return fmt.Errorf("field %s twice", f.Name)
		}
	}
	if len(f.Freqs) != len(f.Terms) {
		return fmt.Errorf("field %s: %d terms and %d frequencies", f.Name, len(f.Terms), len(f.Freqs))
	}
	if len(f.Terms) > 0 && f.Length == 0 {
		return fmt.Errorf("field %s: terms in a field of length 0", f.Name)
	}
	total := uint64(0)
	for _, fr := range f.Freqs {
		if fr == 0 {
			return fmt.Errorf("field %s: a term of frequency 0", f.Name)
		}
		total += uint64(fr)
	}
	if f.Positions == nil {
		if fb := b.fields[f.Name]; fb != nil && fb.positions && len(f.Terms) > 0 {
			return fmt.Errorf("field %s: positions in some pages and not in others", f.Name)
		}
		return nil
	}
	if uint64(len(f.Positions)) != total {
		return fmt.Errorf("field %s: %d positions for frequencies that add up to %d", f.Name, len(f.Positions), total)
	}
	if fb := b.fields[f.Name]; fb != nil && !fb.positions && len(f.Terms) > 0 {
		return fmt.Errorf("field %s: positions in some pages and not in others", f.Name)
	}
	at := 0
	for _, fr := range f.Freqs {
		ps := f.Positions[at : at+int(fr)]
		for k := 1; k < len(ps); k++ {
			if ps[k] <= ps[k-1] {
				return fmt.Errorf("field %s: positions %d then %d of one term", f.Name, ps[k-1], ps[k])
			}
		}
		at += int(fr)
	}
	return nil
}

// lookup appends the IDs of f's terms to b.ids, giving new terms theirs, and refuses a
// term twice in f. A term new to the builder stays in its field's dictionary even when
// the page is refused: a term without postings is not written.
func (b *Builder) lookup(f *Field) error {
	if len(f.Terms) == 0 {
		return nil
	}
	fb := b.fields[f.Name]
	if fb == nil {
		fb = &fieldBuild{positions: f.Positions != nil, ids: map[string]uint32{}, lastDoc: -1}
		b.fields[f.Name] = fb
	}
	for _, t := range f.Terms {
		id, ok := fb.ids[t]
		if !ok {
			id = uint32(len(fb.terms))
			t = strings.Clone(t) // the page's strings may be a buffer it reuses
			fb.ids[t] = id
			fb.terms = append(fb.terms, t)
			fb.seen = append(fb.seen, 0)
		} else if fb.seen[id] == b.gen {
			return fmt.Errorf("field %s: term %q twice", f.Name, t)
		}
		fb.seen[id] = b.gen
		b.ids = append(b.ids, id)
	}
	return nil
}

// add records f's postings in the next document; ids are its terms' IDs.
func (b *Builder) add(f *Field, ids []uint32) {
	if len(f.Terms) == 0 {
		return
	}
	fb, doc := b.fields[f.Name], b.docs
	at := 0
	for i, id := range ids {
		fr := f.Freqs[i]
		fb.tid = append(fb.tid, id)
		fb.doc = append(fb.doc, doc)
		fb.freq = append(fb.freq, fr)
		if fb.positions {
			fb.pos = appendPositions(fb.pos, f.Positions[at:at+int(fr)])
			at += int(fr)
		}
		fb.posEnd = append(fb.posEnd, uint32(len(fb.pos)))
	}
	fb.lengths = binary.AppendUvarint(fb.lengths, uint64(int64(doc)-fb.lastDoc-1))
	fb.lengths = binary.AppendUvarint(fb.lengths, uint64(f.Length))
	fb.lastDoc = int64(doc)
	fb.withField++
	fb.sumLength += uint64(f.Length)
}

// WriteTo writes the segment to w.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	names := make([]string, 0, len(b.fields))
	for name := range b.fields {
		names = append(names, name)
	}
	slices.Sort(names)
	sw := newWriter(w, uint64(b.docs))
	var e termEncoder
	for _, name := range names {
		b.fields[name].write(sw, name, &e)
	}
	err := sw.close()
	return int64(sw.off), err
}

// WriteFile writes the segment to the file path (atomically: a crash leaves the file
// whole or absent).
func (b *Builder) WriteFile(path string) error {
	return writeFile(path, func(w io.Writer) error {
		_, err := b.WriteTo(w)
		return err
	})
}

// write writes the field's regions: the terms sorted once, and the postings by a
// counting sort on their term's rank, which keeps each term's in document order.
func (fb *fieldBuild) write(sw *writer, name string, e *termEncoder) {
	if fb.withField == 0 {
		return
	}
	order := make([]uint32, len(fb.terms)) // rank -> ID
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(fb.terms[a], fb.terms[b]) })
	rank := make([]uint32, len(fb.terms)) // ID -> rank
	for r, id := range order {
		rank[id] = uint32(r)
	}
	start := make([]uint32, len(fb.terms)+1) // rank -> its first posting in sorted
	for _, id := range fb.tid {
		start[rank[id]+1]++
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	sorted := make([]uint32, len(fb.tid)) // postings (their index in the order added), by rank then document
	next := slices.Clone(start[:len(fb.terms)])
	for i, id := range fb.tid {
		r := rank[id]
		sorted[next[r]] = uint32(i)
		next[r]++
	}
	fw := sw.field(name, fb.positions, fb.lengths, fb.withField, fb.sumLength)
	for r, id := range order {
		ps := sorted[start[r]:start[r+1]]
		if len(ps) == 0 {
			continue // the term of a refused page only
		}
		e.reset()
		for _, p := range ps {
			from := uint32(0)
			if p > 0 {
				from = fb.posEnd[p-1]
			}
			e.add(fb.doc[p], fb.freq[p], fb.pos[from:fb.posEnd[p]])
		}
		fw.term([]byte(fb.terms[id]), e)
	}
	fw.finish()
}
