package inverted

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Merge writes to w one segment with the documents of segs, in order, but for those in
// deleted (deleted[i] are segs[i]'s document numbers; deleted or one of its entries may
// be nil: none): segs[0]'s documents first, then segs[1]'s, each keeping its order, so
// a document's number in the merged segment is the number of documents kept before it.
// It returns the number of documents written. Each term's postings are decoded and
// encoded again (documents are renumbered, blocks filled anew); positions are copied as
// bytes.
func Merge(w io.Writer, segs []*Segment, deleted []*roaring.Bitmap) (docs int, err error) {
	m := merger{segs: segs, base: make([]uint64, len(segs)), del: make([]*roaring.Bitmap, len(segs))}
	total := uint64(0)
	for i, s := range segs {
		m.base[i] = total
		total += uint64(s.docs)
		if i < len(deleted) && deleted[i] != nil && !deleted[i].IsEmpty() && s.docs > 0 {
			m.del[i] = deleted[i]
			total -= m.del[i].Rank(s.docs - 1) // the deleted documents the segment has
		}
	}
	if total > 1<<32-1 {
		return 0, fmt.Errorf("inverted: a merge of %d documents, more than a segment holds", total)
	}
	var names []string
	for _, s := range segs {
		names = append(names, s.names...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	sw := newWriter(w, total)
	for _, name := range names {
		if err := m.field(sw, name); err != nil {
			return 0, err
		}
	}
	if err := sw.close(); err != nil {
		return 0, fmt.Errorf("inverted: write a merged segment: %w", err)
	}
	return int(total), nil
}

// MergeFile writes the merge of segs (see Merge) to the file path, atomically.
func MergeFile(path string, segs []*Segment, deleted []*roaring.Bitmap) (docs int, err error) {
	err = writeFile(path, func(w io.Writer) error {
		docs, err = Merge(w, segs, deleted)
		return err
	})
	return docs, err
}

type merger struct {
	segs []*Segment
	base []uint64          // each segment's first document's number in the merge
	del  []*roaring.Bitmap // each segment's deleted documents (nil: none)
	enc  termEncoder
	term []byte // the term being merged
	list List   // scratch
}

// field merges one field of the segments.
func (m *merger) field(sw *writer, name string) error {
	positions := false
	var lengths []byte
	withField, sumLength := uint64(0), uint64(0)
	last := int64(-1)
	var its []*TermIterator
	seen := false
	for i, s := range m.segs {
		f := s.fields[name]
		if f == nil {
			continue
		}
		if seen && f.positions != positions {
			return fmt.Errorf("inverted: merge: field %q keeps positions in some segments and not in %s", name, s.name)
		}
		positions, seen = f.positions, true
		docs, ls, err := s.Lengths(name)
		if err != nil {
			return err
		}
		for k, d := range docs {
			n := ls[k]
			if to := m.renumber(i, d); to >= 0 {
				lengths = binary.AppendUvarint(lengths, uint64(to-last-1))
				lengths = binary.AppendUvarint(lengths, uint64(n))
				last = to
				withField++
				sumLength += uint64(n)
			}
		}
		it := s.Terms(name)
		it.seg = i
		if it.Next() {
			its = append(its, it)
		} else if it.err != nil {
			return it.err
		}
	}
	if withField == 0 {
		return nil
	}
	fw := sw.field(name, positions, lengths, withField, sumLength)
	for len(its) > 0 {
		// The least term of the iterators' current ones; then every iterator at it, in
		// segment order, adds its postings.
		least := its[0].term
		for _, it := range its[1:] {
			if bytes.Compare(it.term, least) < 0 {
				least = it.term
			}
		}
		m.term = append(m.term[:0], least...)
		term := m.term
		m.enc.reset()
		kept := its[:0]
		for _, it := range its {
			if bytes.Equal(it.term, term) {
				if err := m.copy(it); err != nil {
					return err
				}
				if !it.Next() {
					if it.err != nil {
						return it.err
					}
					continue
				}
			}
			kept = append(kept, it)
		}
		its = kept
		if m.enc.df > 0 {
			fw.term(term, &m.enc)
		}
	}
	fw.finish()
	return sw.err
}

// renumber is the number in the merge of document doc of segment i (-1: deleted).
func (m *merger) renumber(i int, doc uint32) int64 {
	del := m.del[i]
	if del == nil {
		return int64(m.base[i]) + int64(doc)
	}
	if del.Contains(doc) {
		return -1
	}
	return int64(m.base[i]) + int64(doc) - int64(del.Rank(doc))
}

// copy adds the postings of it's current term, renumbered, to the term being merged.
func (m *merger) copy(it *TermIterator) error {
	s, f, e := it.s, it.f, it.entry
	l := &m.list
	// Documents and frequencies decoded (checked as a search reads them), positions
	// copied: each posting's are freq uvarints.
	if err := s.decode(f, e, false, false, l, it.term); err != nil {
		return err
	}
	pos := f.data[e.dataOff+e.docsLen : e.dataOff+e.docsLen+e.posLen]
	for i, doc := range l.Docs {
		n := 0
		if f.positions {
			for k := uint32(0); k < l.Freqs[i]; k++ {
				_, w := binary.Uvarint(pos[n:])
				if w <= 0 {
					return s.damaged("field %q, term %q: positions", f.name, it.term)
				}
				n += w
			}
		}
		if to := m.renumber(it.seg, doc); to >= 0 {
			m.enc.add(uint32(to), l.Freqs[i], pos[:n])
		}
		pos = pos[n:]
	}
	return nil
}
