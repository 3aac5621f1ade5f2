// Package shapefile reads ESRI shapefiles: the .shp geometry file (header, bounding box,
// records), the .dbf attribute table (fields and values, decoded with the code page from
// the .cpg or the language-driver byte) and nothing else: .prj goes to package crs.
//
// It is written here, not imported: the Go module proxy this project uses refuses the
// usual shapefile modules, and sonda needs only a careful reader, not a writer. Every length
// in a file is checked against the bytes that are really there before anything is
// allocated, so a broken or hostile file yields an error that names the record and the
// byte offset, never a panic or a huge allocation.
package shapefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/sonda-search/sonda/geo/geom"
)

// ShapeType is the shapefile's geometry type code.
type ShapeType int32

const (
	Null        ShapeType = 0
	Point       ShapeType = 1
	PolyLine    ShapeType = 3
	Polygon     ShapeType = 5
	MultiPoint  ShapeType = 8
	PointZ      ShapeType = 11
	PolyLineZ   ShapeType = 13
	PolygonZ    ShapeType = 15
	MultiPointZ ShapeType = 18
	PointM      ShapeType = 21
	PolyLineM   ShapeType = 23
	PolygonM    ShapeType = 25
	MultiPointM ShapeType = 28
	MultiPatch  ShapeType = 31
)

func (t ShapeType) String() string {
	switch t {
	case Null:
		return "Null"
	case Point:
		return "Point"
	case PolyLine:
		return "PolyLine"
	case Polygon:
		return "Polygon"
	case MultiPoint:
		return "MultiPoint"
	case PointZ:
		return "PointZ"
	case PolyLineZ:
		return "PolyLineZ"
	case PolygonZ:
		return "PolygonZ"
	case MultiPointZ:
		return "MultiPointZ"
	case PointM:
		return "PointM"
	case PolyLineM:
		return "PolyLineM"
	case PolygonM:
		return "PolygonM"
	case MultiPointM:
		return "MultiPointM"
	case MultiPatch:
		return "MultiPatch"
	}
	return fmt.Sprintf("ShapeType(%d)", int32(t))
}

// base is the 2D type behind Z and M variants.
func (t ShapeType) base() ShapeType {
	switch t {
	case PointZ, PointM:
		return Point
	case PolyLineZ, PolyLineM:
		return PolyLine
	case PolygonZ, PolygonM:
		return Polygon
	case MultiPointZ, MultiPointM:
		return MultiPoint
	}
	return t
}

// GeometryType is the type as GDAL reports it for a layer of this shape type ("Polygon"
// for polygon layers, whose records may hold several outer rings).
func (t ShapeType) GeometryType() string {
	switch t.base() {
	case Point:
		return geom.TypePoint
	case PolyLine:
		return geom.TypeLineString
	case Polygon, MultiPatch:
		return geom.TypePolygon
	case MultiPoint:
		return geom.TypeMultiPoint
	case Null:
		return geom.TypeNone
	}
	return geom.TypeGeometry
}

func (t ShapeType) valid() bool {
	switch t {
	case Null, Point, PolyLine, Polygon, MultiPoint, PointZ, PolyLineZ, PolygonZ, MultiPointZ,
		PointM, PolyLineM, PolygonM, MultiPointM, MultiPatch:
		return true
	}
	return false
}

// Header is the 100-byte header of a .shp (or .shx) file.
type Header struct {
	Type   ShapeType
	BBox   geom.BBox // X and Y bounds as the header states them
	Length int64     // file length in bytes, as the header states it
}

const headerLen = 100

// ErrNotShapefile means the data does not start with a shapefile header.
var ErrNotShapefile = errors.New("shapefile: not a .shp file (no 9994 file code)")

// ReadHeader reads and checks the 100-byte header.
func ReadHeader(r io.Reader) (Header, error) {
	var b [headerLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Header{}, fmt.Errorf("shapefile: header: file is shorter than its 100-byte header")
		}
		return Header{}, fmt.Errorf("shapefile: header: %w", err)
	}
	if binary.BigEndian.Uint32(b[0:]) != 9994 {
		return Header{}, ErrNotShapefile
	}
	h := Header{
		Length: int64(binary.BigEndian.Uint32(b[24:])) * 2,
		Type:   ShapeType(binary.LittleEndian.Uint32(b[32:])),
	}
	if v := binary.LittleEndian.Uint32(b[28:]); v != 1000 {
		return h, fmt.Errorf("shapefile: header: version %d, want 1000", v)
	}
	if !h.Type.valid() {
		return h, fmt.Errorf("shapefile: header: unknown shape type %d", int32(h.Type))
	}
	f := func(off int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[off:])) }
	h.BBox = geom.BBox{MinX: f(36), MinY: f(44), MaxX: f(52), MaxY: f(60)}
	return h, nil
}

// Record is one shape.
type Record struct {
	Number int        // 1-based record number as stored
	Type   ShapeType  // the record's own type (Null for empty records)
	Shape  geom.Shape // X/Y vertices (Z and M are read past)
}

// Reader reads the records of a .shp file in order.
type Reader struct {
	Header Header
	r      *bufio.Reader
	off    int64 // bytes consumed so far
	limit  int64 // 0: until EOF; else the file size, to bound record lengths
	buf    []byte
	n      int
}

// NewReader reads the header from r. size is the file's size in bytes when known (0 when
// not): it bounds every record length, so a corrupt length is an error, not an allocation.
func NewReader(r io.Reader, size int64) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	h, err := ReadHeader(br)
	if err != nil {
		return nil, err
	}
	return &Reader{Header: h, r: br, off: headerLen, limit: size}, nil
}

// maxRecordBytes bounds one record when the file size is unknown: 256 MiB of coordinates is
// far beyond any real feature.
const maxRecordBytes = 256 << 20

// Next returns the next record, or io.EOF after the last one.
func (rd *Reader) Next() (Record, error) {
	var rh [8]byte
	n, err := io.ReadFull(rd.r, rh[:])
	if err == io.EOF || (err == io.ErrUnexpectedEOF && allZero(rh[:n])) {
		return Record{}, io.EOF // some writers pad the end with zeros
	}
	if err != nil {
		return Record{}, fmt.Errorf("shapefile: record header at byte %d: file ends early", rd.off)
	}
	num := int(int32(binary.BigEndian.Uint32(rh[0:])))
	words := int64(int32(binary.BigEndian.Uint32(rh[4:])))
	if num == 0 && words == 0 && allZero(rh[:]) {
		return Record{}, io.EOF
	}
	at := rd.off
	rd.off += 8
	length := words * 2
	max := int64(maxRecordBytes)
	if rd.limit > 0 {
		max = rd.limit - rd.off
	}
	if length < 4 || length > max {
		return Record{}, fmt.Errorf("shapefile: record %d at byte %d: content length %d bytes does not fit the file", num, at, length)
	}
	if int64(cap(rd.buf)) < length {
		rd.buf = make([]byte, length)
	}
	b := rd.buf[:length]
	if _, err := io.ReadFull(rd.r, b); err != nil {
		return Record{}, fmt.Errorf("shapefile: record %d at byte %d: file ends inside the record", num, at)
	}
	rd.off += length
	rd.n++
	rec := Record{Number: num}
	if err := decode(b, &rec); err != nil {
		return rec, fmt.Errorf("shapefile: record %d at byte %d: %w", num, at, err)
	}
	return rec, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func decode(b []byte, rec *Record) error {
	t := ShapeType(binary.LittleEndian.Uint32(b))
	if !t.valid() {
		return fmt.Errorf("unknown shape type %d", int32(t))
	}
	rec.Type = t
	b = b[4:]
	le := binary.LittleEndian
	f := func(off int) float64 { return math.Float64frombits(le.Uint64(b[off:])) }
	switch t.base() {
	case Null:
		return nil
	case Point:
		if len(b) < 16 {
			return errors.New("point record shorter than 16 bytes")
		}
		rec.Shape = geom.Shape{Kind: geom.KindPoint, Parts: [][]geom.Point{{{X: f(0), Y: f(8)}}}}
		return nil
	case MultiPoint:
		if len(b) < 36 {
			return errors.New("multipoint record shorter than its 36-byte header")
		}
		n := int64(le.Uint32(b[32:]))
		if n*16 > int64(len(b)-36) {
			return fmt.Errorf("%d points do not fit in %d bytes", n, len(b)-36)
		}
		pts := make([]geom.Point, n)
		for i := range pts {
			pts[i] = geom.Point{X: f(36 + 16*i), Y: f(44 + 16*i)}
		}
		rec.Shape = geom.Shape{Kind: geom.KindPoint, Parts: [][]geom.Point{pts}}
		return nil
	case PolyLine, Polygon, MultiPatch:
		if len(b) < 40 {
			return errors.New("record shorter than its 40-byte header")
		}
		nParts, nPoints := int64(le.Uint32(b[32:])), int64(le.Uint32(b[36:]))
		partsAt := int64(40)
		pointsAt := partsAt + 4*nParts
		if t == MultiPatch {
			pointsAt += 4 * nParts // part types
		}
		if nParts > int64(len(b)) || nPoints > int64(len(b)) || pointsAt+16*nPoints > int64(len(b)) {
			return fmt.Errorf("%d parts and %d points do not fit in %d bytes", nParts, nPoints, len(b))
		}
		kind := geom.KindPolygon
		if t.base() == PolyLine {
			kind = geom.KindLine
		}
		pts := make([]geom.Point, nPoints)
		for i := range pts {
			pts[i] = geom.Point{X: f(int(pointsAt) + 16*i), Y: f(int(pointsAt) + 16*i + 8)}
		}
		parts := make([][]geom.Point, 0, nParts)
		for i := int64(0); i < nParts; i++ {
			start := int64(int32(le.Uint32(b[partsAt+4*i:])))
			end := nPoints
			if i+1 < nParts {
				end = int64(int32(le.Uint32(b[partsAt+4*i+4:])))
			}
			if start < 0 || end < start || end > nPoints {
				return fmt.Errorf("part %d spans points %d to %d of %d", i, start, end, nPoints)
			}
			parts = append(parts, pts[start:end:end])
		}
		rec.Shape = geom.Shape{Kind: kind, Parts: parts}
		return nil
	}
	return fmt.Errorf("shape type %s not handled", t)
}
