package inverted

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

const (
	magic      = "sondaseg"
	endMagic   = "sgnd"
	version    = 1
	headerSize = len(magic) + 1
	// trailer: the table's offset (8), the CRC-32C (4), endMagic (4)
	trailerSize = 16
	blockSize   = 128 // postings per block of documents and frequencies
	dictBlock   = 32  // terms per dictionary block
	indexEntry  = 12  // bytes per block index entry
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrDamaged is the error (under errors.Is) of a segment whose bytes are not a segment
// this package wrote: damaged, cut short, or not a segment at all.
var ErrDamaged = errors.New("damaged segment")

// fieldMeta is a field's entry in the table.
type fieldMeta struct {
	name      string
	positions bool
	terms     uint64 // distinct terms
	docs      uint64 // documents that have the field
	sumLength uint64 // the sum of its lengths in them
	// regions: offset and size in the file
	lengthsOff, lengthsLen uint64
	dataOff, dataLen       uint64
	dictOff, dictLen       uint64
	indexOff, indexLen     uint64
}

// termEncoder encodes one term's postings: the documents and frequencies in blocks,
// then the positions.
type termEncoder struct {
	docs    []byte // the finished blocks
	pos     []byte // the positions of every posting added
	block   []byte // the block being filled
	inBlock int    // postings in it
	df      int    // postings of the term
	prev    int64  // the last document added (-1: none)
	prevEnd int64  // the last document of the previous block (-1: none)
	blockAt int    // len(pos) when the block began
}

func (e *termEncoder) reset() {
	e.docs, e.pos, e.block = e.docs[:0], e.pos[:0], e.block[:0]
	e.inBlock, e.df, e.prev, e.prevEnd, e.blockAt = 0, 0, -1, -1, 0
}

// add appends a posting: doc (after the previous one), its frequency (≥ 1) and its
// positions, encoded (see the format).
func (e *termEncoder) add(doc, freq uint32, pos []byte) {
	gap := uint64(int64(doc)-e.prev-1) << 1
	if freq == 1 {
		e.block = binary.AppendUvarint(e.block, gap|1)
	} else {
		e.block = binary.AppendUvarint(e.block, gap)
		e.block = binary.AppendUvarint(e.block, uint64(freq-2))
	}
	e.pos = append(e.pos, pos...)
	e.prev = int64(doc)
	e.df++
	if e.inBlock++; e.inBlock == blockSize {
		e.flush()
	}
}

// flush ends the block being filled.
func (e *termEncoder) flush() {
	if e.inBlock == 0 {
		return
	}
	e.docs = binary.AppendUvarint(e.docs, uint64(e.prev-e.prevEnd-1))
	e.docs = binary.AppendUvarint(e.docs, uint64(len(e.block)))
	e.docs = binary.AppendUvarint(e.docs, uint64(len(e.pos)-e.blockAt))
	e.docs = append(e.docs, e.block...)
	e.block = e.block[:0]
	e.inBlock, e.prevEnd, e.blockAt = 0, e.prev, len(e.pos)
}

// appendPositions appends positions (ascending) as a posting's positions are encoded.
func appendPositions(b []byte, positions []uint32) []byte {
	prev := uint32(0)
	for _, p := range positions {
		b = binary.AppendUvarint(b, uint64(p-prev))
		prev = p
	}
	return b
}

// writer writes a segment to w, counting its bytes and checksumming them.
type writer struct {
	w      *bufio.Writer
	crc    hash.Hash32
	off    uint64
	err    error
	docs   uint64
	fields []fieldMeta
}

func newWriter(w io.Writer, docs uint64) *writer {
	sw := &writer{w: bufio.NewWriterSize(w, 256<<10), crc: crc32.New(castagnoli), docs: docs}
	sw.write([]byte(magic))
	sw.write([]byte{version})
	return sw
}

func (sw *writer) write(p []byte) {
	if sw.err != nil {
		return
	}
	_, sw.err = sw.w.Write(p)
	sw.crc.Write(p)
	sw.off += uint64(len(p))
}

// fieldWriter writes one field's regions: lengths first, then its terms in order.
type fieldWriter struct {
	sw      *writer
	meta    fieldMeta
	dict    []byte
	index   []byte
	prev    []byte // the previous term
	dataEnd uint64
	num     []byte // scratch
}

// field starts a field whose lengths region is lengths.
func (sw *writer) field(name string, positions bool, lengths []byte, docs, sumLength uint64) *fieldWriter {
	fw := &fieldWriter{sw: sw, meta: fieldMeta{name: name, positions: positions, docs: docs, sumLength: sumLength}}
	fw.meta.lengthsOff, fw.meta.lengthsLen = sw.off, uint64(len(lengths))
	sw.write(lengths)
	fw.meta.dataOff = sw.off
	return fw
}

// term writes a term (after the previous one in byte order) with its encoded postings.
func (fw *fieldWriter) term(term []byte, e *termEncoder) {
	e.flush()
	m := &fw.meta
	shared := 0
	if m.terms%dictBlock == 0 {
		fw.index = binary.LittleEndian.AppendUint32(fw.index, uint32(len(fw.dict)))
		fw.index = binary.LittleEndian.AppendUint64(fw.index, fw.sw.off)
	} else {
		for shared < len(fw.prev) && shared < len(term) && fw.prev[shared] == term[shared] {
			shared++
		}
	}
	fw.dict = binary.AppendUvarint(fw.dict, uint64(shared))
	fw.dict = binary.AppendUvarint(fw.dict, uint64(len(term)-shared))
	fw.dict = append(fw.dict, term[shared:]...)
	fw.dict = binary.AppendUvarint(fw.dict, uint64(e.df))
	fw.dict = binary.AppendUvarint(fw.dict, uint64(len(e.docs)))
	fw.dict = binary.AppendUvarint(fw.dict, uint64(len(e.pos)))
	fw.sw.write(e.docs)
	fw.sw.write(e.pos)
	fw.prev = append(fw.prev[:0], term...)
	m.terms++
}

// finish writes the field's dictionary and block index.
func (fw *fieldWriter) finish() {
	sw, m := fw.sw, &fw.meta
	m.dataLen = sw.off - m.dataOff
	m.dictOff, m.dictLen = sw.off, uint64(len(fw.dict))
	sw.write(fw.dict)
	m.indexOff, m.indexLen = sw.off, uint64(len(fw.index))
	sw.write(fw.index)
	if m.terms > 0 {
		sw.fields = append(sw.fields, *m)
	}
}

// close writes the table and the trailer and flushes.
func (sw *writer) close() error {
	tableOff := sw.off
	var t []byte
	t = binary.AppendUvarint(t, sw.docs)
	t = binary.AppendUvarint(t, uint64(len(sw.fields)))
	for _, m := range sw.fields {
		t = binary.AppendUvarint(t, uint64(len(m.name)))
		t = append(t, m.name...)
		flags := uint64(0)
		if m.positions {
			flags = 1
		}
		for _, x := range []uint64{flags, m.terms, m.docs, m.sumLength,
			m.lengthsOff, m.lengthsLen, m.dataOff, m.dataLen, m.dictOff, m.dictLen, m.indexOff, m.indexLen} {
			t = binary.AppendUvarint(t, x)
		}
	}
	sw.write(t)
	sw.write(binary.LittleEndian.AppendUint64(nil, tableOff))
	sum := sw.crc.Sum32()
	sw.write(binary.LittleEndian.AppendUint32(nil, sum))
	sw.write([]byte(endMagic))
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	return sw.err
}

// writeFile writes a segment to path through write, atomically: into a temporary file
// beside it, synced, then renamed into place.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("inverted: create segment %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("inverted: write segment %s: %w", path, err)
	}
	return nil
}

// decoder reads uvarints from b, remembering the first failure.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return x
}

// bytes takes the next n bytes.
func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		d.b = nil
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

var errShort = errors.New("a number or a run of bytes runs past its region")
