package inverted

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"sync"
)

// Segment is a segment read into memory. It is safe for concurrent use.
type Segment struct {
	name   string
	data   []byte
	docs   uint32
	fields map[string]*field
	names  []string // sorted
}

// field is a field of a segment, its table entry checked against the file.
type field struct {
	fieldMeta
	data, dict, index []byte
	blocks            int

	once    sync.Once
	lenDocs []uint32 // the documents that have the field, decoded on first use,
	lenVals []uint32 // and its length in each
	err     error
}

// Open reads the segment in the file path and checks it (its checksum and its table).
func Open(path string) (*Segment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("inverted: open segment: %w", err)
	}
	return Read(path, b)
}

// Read checks data, a segment's bytes, and returns the segment; name is what errors call
// it (its file's path).
func Read(name string, data []byte) (*Segment, error) {
	s := &Segment{name: name, data: data, fields: map[string]*field{}}
	if err := s.parse(); err != nil {
		return nil, s.damaged("%v", err)
	}
	return s, nil
}

// damaged is the error of a read of s that found its bytes wrong.
func (s *Segment) damaged(format string, args ...any) error {
	return fmt.Errorf("inverted: segment %s: %w: %s", s.name, ErrDamaged, fmt.Sprintf(format, args...))
}

func (s *Segment) parse() error {
	b := s.data
	if len(b) < headerSize+trailerSize || string(b[:len(magic)]) != magic || string(b[len(b)-4:]) != endMagic {
		return fmt.Errorf("not a segment (%d bytes, no header or trailer)", len(b))
	}
	if b[len(magic)] != version {
		return fmt.Errorf("format version %d, this sonda reads %d", b[len(magic)], version)
	}
	sumAt := len(b) - 8
	if want, got := binary.LittleEndian.Uint32(b[sumAt:]), crc32.Checksum(b[:sumAt], castagnoli); want != got {
		return fmt.Errorf("checksum %08x, the bytes give %08x", want, got)
	}
	tableOff := binary.LittleEndian.Uint64(b[len(b)-trailerSize:])
	body := uint64(len(b) - trailerSize)
	if tableOff < uint64(headerSize) || tableOff > body {
		return fmt.Errorf("table at %d, outside the file", tableOff)
	}
	d := decoder{b: b[tableOff:body]}
	docs := d.uvarint()
	n := d.uvarint()
	if d.err == nil && (docs > 1<<32-1 || n > uint64(len(d.b))) {
		return fmt.Errorf("a table of %d documents and %d fields", docs, n)
	}
	s.docs = uint32(docs)
	for i := uint64(0); i < n && d.err == nil; i++ {
		f := &field{}
		f.name = string(d.bytes(d.uvarint()))
		flags := d.uvarint()
		f.positions = flags&1 != 0
		for _, p := range []*uint64{&f.terms, &f.docs, &f.sumLength,
			&f.lengthsOff, &f.lengthsLen, &f.dataOff, &f.dataLen, &f.dictOff, &f.dictLen, &f.indexOff, &f.indexLen} {
			*p = d.uvarint()
		}
		if d.err != nil {
			break
		}
		region := func(off, size uint64) ([]byte, bool) {
			if off < uint64(headerSize) || off > tableOff || size > tableOff-off {
				return nil, false
			}
			return b[off : off+size], true
		}
		var ok [4]bool
		_, ok[0] = region(f.lengthsOff, f.lengthsLen)
		f.data, ok[1] = region(f.dataOff, f.dataLen)
		f.dict, ok[2] = region(f.dictOff, f.dictLen)
		f.index, ok[3] = region(f.indexOff, f.indexLen)
		f.blocks = int(f.indexLen / indexEntry)
		switch {
		case ok != [4]bool{true, true, true, true}:
			return fmt.Errorf("field %q: a region outside the file", f.name)
		case flags > 1 || f.docs > docs || f.docs > f.lengthsLen/2 || f.terms == 0 || f.indexLen%indexEntry != 0 ||
			uint64(f.blocks) != (f.terms+dictBlock-1)/dictBlock:
			return fmt.Errorf("field %q: %d terms in %d bytes of block index, %d of %d documents, flags %d",
				f.name, f.terms, f.indexLen, f.docs, docs, flags)
		case len(s.names) > 0 && f.name <= s.names[len(s.names)-1]:
			return fmt.Errorf("field %q after %q", f.name, s.names[len(s.names)-1])
		}
		s.fields[f.name] = f
		s.names = append(s.names, f.name)
	}
	if d.err != nil {
		return fmt.Errorf("the table: %v", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%d bytes after the table", len(d.b))
	}
	return nil
}

// Name is the segment's file (as given to Open or Read).
func (s *Segment) Name() string { return s.name }

// Docs is the number of documents in the segment.
func (s *Segment) Docs() int { return int(s.docs) }

// Fields are the names of the segment's fields, in byte order.
func (s *Segment) Fields() []string { return slices.Clone(s.names) }

// FieldStats are a field's statistics in a segment.
type FieldStats struct {
	Terms     int    // distinct terms
	Docs      int    // documents that have the field
	SumLength uint64 // the sum of its lengths in them
}

// FieldStats returns field's statistics (zero: the segment lacks the field).
func (s *Segment) FieldStats(field string) FieldStats {
	f := s.fields[field]
	if f == nil {
		return FieldStats{}
	}
	return FieldStats{Terms: int(f.terms), Docs: int(f.docs), SumLength: f.sumLength}
}

// Lengths returns the documents that have field, in order, and the field's length in
// each (none: the segment lacks the field). The slices are the segment's: do not change
// them. They are as long as the documents that have the field, not as the segment: what
// a segment's reader holds is bounded by its file's size, whatever its table says.
func (s *Segment) Lengths(field string) (docs, lengths []uint32, err error) {
	f := s.fields[field]
	if f == nil {
		return nil, nil, nil
	}
	f.once.Do(func() { f.lenDocs, f.lenVals, f.err = s.decodeLengths(f) })
	return f.lenDocs, f.lenVals, f.err
}

func (s *Segment) decodeLengths(f *field) (docs, lengths []uint32, err error) {
	docs, lengths = make([]uint32, f.docs), make([]uint32, f.docs) // f.docs ≤ the region's bytes / 2
	d := decoder{b: s.data[f.lengthsOff : f.lengthsOff+f.lengthsLen]}
	doc := int64(-1)
	for i := range docs {
		gap, n := d.uvarint(), d.uvarint()
		if d.err != nil {
			return nil, nil, s.damaged("field %q: lengths: %v", f.name, d.err)
		}
		if gap >= uint64(s.docs) || doc+1+int64(gap) >= int64(s.docs) || n == 0 || n > 1<<32-1 {
			return nil, nil, s.damaged("field %q: a length of %d of document %d of %d", f.name, n, doc+1+int64(gap), s.docs)
		}
		doc += 1 + int64(gap)
		docs[i], lengths[i] = uint32(doc), uint32(n)
	}
	if len(d.b) != 0 {
		return nil, nil, s.damaged("field %q: %d bytes after the lengths", f.name, len(d.b))
	}
	return docs, lengths, nil
}

// List is a term's postings in one field of a segment, as flat arrays: the documents in
// ascending order, with the term's frequency and the field's length in each, and, when
// asked for, the term's positions in each: posting i's are Pos[PosAt[i]:PosAt[i+1]].
type List struct {
	Docs    []uint32
	Freqs   []uint32
	Lengths []uint32
	PosAt   []uint32 // nil when positions were not read
	Pos     []uint32
}

func (l *List) reset() {
	l.Docs, l.Freqs, l.Lengths, l.Pos = l.Docs[:0], l.Freqs[:0], l.Lengths[:0], l.Pos[:0]
	l.PosAt = nil
}

// termEntry is a term's dictionary entry.
type termEntry struct {
	df              uint64
	dataOff         uint64 // in the field's data region
	docsLen, posLen uint64
}

// Postings reads term's postings in field into l (its arrays are reused), with their
// positions when positions is set and the field keeps them; false when the segment's
// field does not have the term.
func (s *Segment) Postings(field string, term []byte, positions bool, l *List) (bool, error) {
	f := s.fields[field]
	if f == nil {
		l.reset()
		return false, nil
	}
	e, ok, err := s.find(f, term)
	if err != nil || !ok {
		l.reset()
		return false, err
	}
	return true, s.decode(f, e, true, positions && f.positions, l, term)
}

// find looks term up in f's dictionary.
func (s *Segment) find(f *field, term []byte) (termEntry, bool, error) {
	// The last block whose first term is ≤ term.
	lo, hi := 0, f.blocks
	var ferr error
	for lo < hi && ferr == nil {
		m := int(uint(lo+hi) >> 1)
		first, err := s.blockFirst(f, m)
		if err != nil {
			ferr = err
		} else if bytes.Compare(first, term) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if ferr != nil || lo == 0 {
		return termEntry{}, false, ferr
	}
	it := s.blockIter(f, lo-1)
	for it.next() {
		switch c := bytes.Compare(it.term, term); {
		case c == 0:
			return it.entry, true, nil
		case c > 0:
			return termEntry{}, false, nil
		}
	}
	return termEntry{}, false, it.err
}

// blockFirst is the first term of dictionary block i.
func (s *Segment) blockFirst(f *field, i int) ([]byte, error) {
	off := uint64(binary.LittleEndian.Uint32(f.index[i*indexEntry:]))
	if off >= uint64(len(f.dict)) {
		return nil, s.damaged("field %q: dictionary block %d at %d of %d bytes", f.name, i, off, len(f.dict))
	}
	d := decoder{b: f.dict[off:]}
	shared := d.uvarint()
	t := d.bytes(d.uvarint())
	if d.err != nil || shared != 0 {
		return nil, s.damaged("field %q: dictionary block %d's first term", f.name, i)
	}
	return t, nil
}

// Terms iterates over field's terms in byte order (none when the segment lacks it).
func (s *Segment) Terms(field string) *TermIterator {
	f := s.fields[field]
	if f == nil {
		return &TermIterator{s: s}
	}
	return s.blockIter(f, 0).all()
}

// blockIter returns an iterator over f's terms from dictionary block i on.
func (s *Segment) blockIter(f *field, i int) *TermIterator {
	it := &TermIterator{s: s, f: f, block: i, n: uint64(i) * dictBlock}
	it.start()
	return it
}

// TermIterator reads a field's dictionary in order.
type TermIterator struct {
	s       *Segment
	f       *field
	d       decoder
	block   int    // the block being read
	inBlock int    // terms read of it
	n       uint64 // terms read of the field
	whole   bool   // go on past the block
	term    []byte
	prev    []byte // the term before (Next checks the order)
	seg     int    // the segment's place in a merge
	entry   termEntry
	err     error
}

func (it *TermIterator) all() *TermIterator { it.whole = true; return it }

// start begins block it.block.
func (it *TermIterator) start() {
	f := it.f
	at := it.block * indexEntry
	off := uint64(binary.LittleEndian.Uint32(f.index[at:]))
	dataOff := binary.LittleEndian.Uint64(f.index[at+4:])
	if off > uint64(len(f.dict)) || dataOff < f.dataOff || dataOff > f.dataOff+f.dataLen {
		it.err = it.s.damaged("field %q: dictionary block %d at %d, its postings at %d", f.name, it.block, off, dataOff)
		return
	}
	it.d = decoder{b: f.dict[off:]}
	it.entry.dataOff = dataOff - f.dataOff
	it.entry.docsLen, it.entry.posLen = 0, 0
	it.inBlock = 0
}

// next moves to the next term (false: none left, or an error: Err).
func (it *TermIterator) next() bool {
	if it.err != nil || it.f == nil || it.n == it.f.terms {
		return false
	}
	if it.inBlock == dictBlock {
		if !it.whole {
			return false
		}
		end := it.entry.dataOff + it.entry.docsLen + it.entry.posLen
		it.block++
		it.start()
		if it.err == nil && it.entry.dataOff != end {
			it.err = it.s.damaged("field %q: dictionary block %d's postings at %d, the block before ends at %d", it.f.name, it.block, it.entry.dataOff, end)
		}
		if it.err != nil {
			return false
		}
	}
	f, d := it.f, &it.d
	shared := d.uvarint()
	suffix := d.bytes(d.uvarint())
	e := termEntry{df: d.uvarint(), dataOff: it.entry.dataOff + it.entry.docsLen + it.entry.posLen}
	e.docsLen, e.posLen = d.uvarint(), d.uvarint()
	switch {
	case d.err != nil:
		it.err = it.s.damaged("field %q: dictionary entry %d: %v", f.name, it.n, d.err)
	case shared > uint64(len(it.term)) || (it.inBlock == 0 && shared != 0):
		it.err = it.s.damaged("field %q: dictionary entry %d shares %d bytes of a %d-byte term", f.name, it.n, shared, len(it.term))
	case e.df == 0 || e.df > uint64(it.s.docs) || e.df > e.docsLen || e.dataOff > f.dataLen ||
		e.docsLen > f.dataLen-e.dataOff || e.posLen > f.dataLen-e.dataOff-e.docsLen:
		it.err = it.s.damaged("field %q: dictionary entry %d: %d documents in %d+%d bytes at %d of %d", f.name, it.n, e.df, e.docsLen, e.posLen, e.dataOff, f.dataLen)
	}
	if it.err != nil {
		return false
	}
	it.term = append(it.term[:shared], suffix...)
	it.entry = e
	it.inBlock++
	it.n++
	return true
}

// Next moves to the next term; false when there is none left or on an error (Err).
func (it *TermIterator) Next() bool {
	it.prev = append(it.prev[:0], it.term...)
	if !it.next() {
		return false
	}
	if it.n > 1 && bytes.Compare(it.prev, it.term) >= 0 {
		it.err = it.s.damaged("field %q: term %q after %q", it.f.name, it.term, it.prev)
		return false
	}
	return true
}

// Term is the current term (valid until Next).
func (it *TermIterator) Term() []byte { return it.term }

// DocFreq is the number of documents that have the current term.
func (it *TermIterator) DocFreq() int { return int(it.entry.df) }

// Err is the error that stopped the iteration (nil: it ended).
func (it *TermIterator) Err() error { return it.err }

// Postings reads the current term's postings into l (as Segment.Postings).
func (it *TermIterator) Postings(positions bool, l *List) error {
	return it.s.decode(it.f, it.entry, true, positions && it.f.positions, l, it.term)
}

// decode reads the postings of entry e of f into l, with the field's lengths when
// withLengths is set.
func (s *Segment) decode(f *field, e termEntry, withLengths, positions bool, l *List, term []byte) error {
	bad := func(format string, args ...any) error {
		return s.damaged("field %q, term %q: %s", f.name, term, fmt.Sprintf(format, args...))
	}
	var lenDocs, lenVals []uint32
	if withLengths {
		var err error
		if lenDocs, lenVals, err = s.Lengths(f.name); err != nil {
			return err
		}
	}
	at := 0 // the first of lenDocs that may be the next posting's document
	l.reset()
	d := decoder{b: f.data[e.dataOff : e.dataOff+e.docsLen]}
	l.Docs, l.Freqs, l.Lengths = slices.Grow(l.Docs, int(e.df)), slices.Grow(l.Freqs, int(e.df)), slices.Grow(l.Lengths, int(e.df))
	prev := int64(-1)
	total := uint64(0)    // positions
	posBytes := uint64(0) // their bytes, as the blocks' headers say
	for left := e.df; left > 0; {
		n := min(left, blockSize)
		last, blockLen, posLen := d.uvarint(), d.uvarint(), d.uvarint()
		block := d.bytes(blockLen)
		if d.err != nil {
			return bad("a block header: %v", d.err)
		}
		end := prev + 1 + int64(last)
		bd := decoder{b: block}
		for range n {
			x := bd.uvarint()
			freq := uint64(1)
			if x&1 == 0 {
				freq = bd.uvarint() + 2
			}
			doc := prev + 1 + int64(x>>1)
			if bd.err != nil || x>>1 >= uint64(s.docs) || doc >= int64(s.docs) || freq > 1<<32-1 {
				return bad("posting %d: document %d of %d, frequency %d (%v)", len(l.Docs), doc, s.docs, freq, bd.err)
			}
			l.Docs = append(l.Docs, uint32(doc))
			l.Freqs = append(l.Freqs, uint32(freq))
			if withLengths {
				// The postings' documents are among those that have the field, in order.
				for at < len(lenDocs) && int64(lenDocs[at]) < doc {
					at++
				}
				if at == len(lenDocs) || int64(lenDocs[at]) != doc {
					return bad("a posting in document %d, which has no length", doc)
				}
				l.Lengths = append(l.Lengths, lenVals[at])
			}
			total += freq
			prev = doc
		}
		if len(bd.b) != 0 || prev != end {
			return bad("a block ends at document %d, its header says %d (%d bytes left)", prev, end, len(bd.b))
		}
		posBytes += posLen
		left -= n
	}
	if len(d.b) != 0 || posBytes != e.posLen || (!f.positions && e.posLen != 0) {
		return bad("%d bytes after the postings, positions in %d bytes by the blocks and %d by the dictionary", len(d.b), posBytes, e.posLen)
	}
	if !positions {
		return nil
	}
	if total > e.posLen {
		return bad("%d positions in %d bytes", total, e.posLen)
	}
	pd := decoder{b: f.data[e.dataOff+e.docsLen : e.dataOff+e.docsLen+e.posLen]}
	l.PosAt = slices.Grow(l.PosAt[:0], len(l.Docs)+1)
	l.PosAt = append(l.PosAt, 0)
	l.Pos = slices.Grow(l.Pos, int(total))
	for _, freq := range l.Freqs {
		p := uint64(0)
		for k := range freq {
			delta := pd.uvarint()
			if k > 0 && delta == 0 {
				return bad("a position twice")
			}
			if p += delta; p > 1<<32-1 || pd.err != nil {
				return bad("positions: %v", pd.err)
			}
			l.Pos = append(l.Pos, uint32(p))
		}
		l.PosAt = append(l.PosAt, uint32(len(l.Pos)))
	}
	if len(pd.b) != 0 {
		return bad("%d bytes after the positions", len(pd.b))
	}
	return nil
}
