// Package wkb decodes Well-Known Binary geometries (OGC simple features, with the ISO
// and EWKB Z/M conventions) and the GeoPackage binary header around them. It keeps X and
// Y: what bounding boxes and thumbnails need.
package wkb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sonda-search/sonda/geo/geom"
)

const maxDepth = 16 // nesting of collections; real data uses 2

// Geometry is a decoded geometry: its type name and its parts, drawn as Kind.
type Geometry struct {
	Type  string
	Shape geom.Shape
}

// Decode parses one WKB geometry and returns it with the bytes it used.
func Decode(b []byte) (Geometry, int, error) {
	var g Geometry
	n, err := decode(b, &g, 0)
	if err != nil {
		return Geometry{}, 0, fmt.Errorf("wkb: %w", err)
	}
	return g, n, nil
}

var typeNames = map[uint32]string{1: geom.TypePoint, 2: geom.TypeLineString, 3: geom.TypePolygon, 4: geom.TypeMultiPoint,
	5: geom.TypeMultiLineString, 6: geom.TypeMultiPolygon, 7: geom.TypeGeometryCollection}

func decode(b []byte, g *Geometry, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("geometry collections nested too deeply")
	}
	if len(b) < 5 {
		return 0, errors.New("truncated geometry header")
	}
	var o binary.ByteOrder = binary.BigEndian
	switch b[0] {
	case 0:
	case 1:
		o = binary.LittleEndian
	default:
		return 0, fmt.Errorf("byte order flag %d", b[0])
	}
	raw := o.Uint32(b[1:])
	dims := 2
	if raw&0x80000000 != 0 { // EWKB Z
		dims++
	}
	if raw&0x40000000 != 0 { // EWKB M
		dims++
	}
	at := 5
	if raw&0x20000000 != 0 { // EWKB SRID
		at += 4
	}
	t := raw & 0x0FFFFFFF
	switch t / 1000 { // ISO: 1000 Z, 2000 M, 3000 ZM
	case 1, 2:
		dims = 3
	case 3:
		dims = 4
	}
	t %= 1000
	name, ok := typeNames[t]
	if !ok {
		return 0, fmt.Errorf("geometry type %d not supported", raw)
	}
	if g.Type == "" {
		g.Type = name
	}
	count := func() (int, error) {
		if at+4 > len(b) {
			return 0, errors.New("truncated count")
		}
		n := int(o.Uint32(b[at:]))
		at += 4
		if n < 0 || n > (len(b)-at) {
			return 0, fmt.Errorf("count %d exceeds the %d bytes left", n, len(b)-at)
		}
		return n, nil
	}
	points := func(n int) ([]geom.Point, error) {
		if n*dims*8 > len(b)-at {
			return nil, fmt.Errorf("%d points do not fit in %d bytes", n, len(b)-at)
		}
		pts := make([]geom.Point, n)
		for i := range pts {
			pts[i] = geom.Point{X: math.Float64frombits(o.Uint64(b[at:])), Y: math.Float64frombits(o.Uint64(b[at+8:]))}
			at += dims * 8
		}
		return pts, nil
	}
	// sequence reads a counted run of points: a line string or a polygon ring.
	sequence := func() ([]geom.Point, error) {
		n, err := count()
		if err != nil {
			return nil, err
		}
		return points(n)
	}
	switch t {
	case 1:
		pts, err := points(1)
		if err != nil {
			return 0, err
		}
		if !math.IsNaN(pts[0].X) { // POINT EMPTY is NaN, NaN
			g.add(geom.KindPoint, pts)
		}
	case 2:
		pts, err := sequence()
		if err != nil {
			return 0, err
		}
		g.add(geom.KindLine, pts)
	case 3:
		rings, err := count()
		if err != nil {
			return 0, err
		}
		for i := 0; i < rings; i++ {
			pts, err := sequence()
			if err != nil {
				return 0, err
			}
			g.add(geom.KindPolygon, pts)
		}
	default:
		n, err := count()
		if err != nil {
			return 0, err
		}
		for i := 0; i < n; i++ {
			used, err := decode(b[at:], g, depth+1)
			if err != nil {
				return 0, err
			}
			at += used
		}
	}
	return at, nil
}

// add appends a part; a geometry mixing kinds (a collection) is drawn by its first kind.
func (g *Geometry) add(k geom.Kind, pts []geom.Point) {
	if len(pts) == 0 {
		return
	}
	if g.Shape.Kind == 0 {
		g.Shape.Kind = k
	}
	g.Shape.Parts = append(g.Shape.Parts, pts)
}

// GeoPackage is a geometry stored in a GeoPackage: the header's SRS id and envelope, and
// the geometry itself.
type GeoPackage struct {
	SRSID    int32
	Envelope geom.BBox // empty when the header has none
	Empty    bool
	Geometry Geometry
}

// DecodeGeoPackage parses a GeoPackage binary geometry ("GP" header + WKB).
func DecodeGeoPackage(b []byte) (GeoPackage, error) {
	var gp GeoPackage
	if len(b) < 8 || b[0] != 'G' || b[1] != 'P' {
		return gp, errors.New("wkb: not a GeoPackage geometry (no GP magic)")
	}
	flags := b[3]
	var o binary.ByteOrder = binary.BigEndian
	if flags&1 != 0 {
		o = binary.LittleEndian
	}
	gp.SRSID = int32(o.Uint32(b[4:]))
	gp.Empty = flags&0x10 != 0
	envType := (flags >> 1) & 7
	if envType > 4 {
		return gp, fmt.Errorf("wkb: GeoPackage envelope type %d", envType)
	}
	envDoubles := [...]int{0, 4, 6, 6, 8}[envType] // none, XY, XYZ, XYM, XYZM
	at := 8 + 8*envDoubles
	if len(b) < at {
		return gp, errors.New("wkb: GeoPackage header longer than the blob")
	}
	gp.Envelope = geom.Empty()
	if envDoubles >= 4 {
		f := func(i int) float64 { return math.Float64frombits(o.Uint64(b[8+8*i:])) }
		gp.Envelope.Extend(f(0), f(2)) // minx, maxx, miny, maxy order
		gp.Envelope.Extend(f(1), f(3))
	}
	if gp.Empty || at == len(b) {
		return gp, nil
	}
	g, _, err := Decode(b[at:])
	if err != nil {
		return gp, err
	}
	gp.Geometry = g
	return gp, nil
}
