// Package geom owns the small geometry vocabulary the geo readers share: points, bounding
// boxes, geometry type names and Sketch, a vertex-bounded copy of a dataset's shapes that
// thumbnails are drawn from. It has no dependencies so every reader can use it.
package geom

import (
	"encoding/json"
	"math"
)

// Point is a coordinate pair in a dataset's own CRS (X east or longitude, Y north or latitude).
type Point struct{ X, Y float64 }

// BBox is an axis-aligned bounding box. The zero value is the box [0,0]-[0,0]; start an
// accumulation with Empty.
type BBox struct {
	MinX, MinY, MaxX, MaxY float64
}

// Empty returns a box that contains nothing; Extend grows it.
func Empty() BBox {
	return BBox{MinX: math.Inf(1), MinY: math.Inf(1), MaxX: math.Inf(-1), MaxY: math.Inf(-1)}
}

// IsEmpty reports whether the box contains no point (nothing was added, or NaN bounds).
func (b BBox) IsEmpty() bool { return !(b.MinX <= b.MaxX && b.MinY <= b.MaxY) }

// Extend grows b to contain (x, y). Non-finite coordinates are ignored: a NaN or an infinity
// in a broken file must not poison the box.
func (b *BBox) Extend(x, y float64) {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return
	}
	b.MinX, b.MaxX = math.Min(b.MinX, x), math.Max(b.MaxX, x)
	b.MinY, b.MaxY = math.Min(b.MinY, y), math.Max(b.MaxY, y)
}

// Union returns the smallest box containing b and o.
func (b BBox) Union(o BBox) BBox {
	if o.IsEmpty() {
		return b
	}
	if b.IsEmpty() {
		return o
	}
	return BBox{math.Min(b.MinX, o.MinX), math.Min(b.MinY, o.MinY), math.Max(b.MaxX, o.MaxX), math.Max(b.MaxY, o.MaxY)}
}

// Intersects reports whether the boxes share at least one point (touching counts).
func (b BBox) Intersects(o BBox) bool {
	return !b.IsEmpty() && !o.IsEmpty() && b.MinX <= o.MaxX && o.MinX <= b.MaxX && b.MinY <= o.MaxY && o.MinY <= b.MaxY
}

// Contains reports whether (x, y) lies in b (edges included).
func (b BBox) Contains(x, y float64) bool {
	return b.MinX <= x && x <= b.MaxX && b.MinY <= y && y <= b.MaxY
}

// Width and Height are the box's extents (0 for an empty box).
func (b BBox) Width() float64 {
	if b.IsEmpty() {
		return 0
	}
	return b.MaxX - b.MinX
}

func (b BBox) Height() float64 {
	if b.IsEmpty() {
		return 0
	}
	return b.MaxY - b.MinY
}

// Array is the box as [minx, miny, maxx, maxy], the GeoJSON bbox order.
func (b BBox) Array() [4]float64 { return [4]float64{b.MinX, b.MinY, b.MaxX, b.MaxY} }

// MarshalJSON writes [minx, miny, maxx, maxy], or null for an empty box.
func (b BBox) MarshalJSON() ([]byte, error) {
	if b.IsEmpty() {
		return []byte("null"), nil
	}
	return json.Marshal(b.Array())
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *BBox) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = Empty()
		return nil
	}
	var a [4]float64
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	*b = BBox{a[0], a[1], a[2], a[3]}
	return nil
}

// Kind is how a shape is drawn.
type Kind uint8

const (
	KindPoint   Kind = iota + 1 // each vertex is a point
	KindLine                    // each part is a polyline
	KindPolygon                 // each part is a ring; holes are rings too (even-odd fill)
)

// Shape is one feature's geometry: parts of vertices drawn according to Kind.
type Shape struct {
	Kind  Kind
	Parts [][]Point
}

// Geometry type names, as GeoJSON, WKB and GDAL spell them, shared by every reader so that
// `sonda geo inspect` reports one vocabulary.
const (
	TypePoint              = "Point"
	TypeMultiPoint         = "MultiPoint"
	TypeLineString         = "LineString"
	TypeMultiLineString    = "MultiLineString"
	TypePolygon            = "Polygon"
	TypeMultiPolygon       = "MultiPolygon"
	TypeGeometryCollection = "GeometryCollection"
	TypeGeometry           = "Geometry" // mixed or unknown
	TypeNone               = "None"     // a table without geometries
	TypeRaster             = "Raster"
)

// KindOf is the drawing kind of a geometry type name.
func KindOf(typ string) Kind {
	switch typ {
	case TypePoint, TypeMultiPoint:
		return KindPoint
	case TypeLineString, TypeMultiLineString:
		return KindLine
	case TypePolygon, TypeMultiPolygon:
		return KindPolygon
	}
	return 0
}

// TypeSet accumulates the geometry types seen in a layer and names the layer's type: the
// single type when all agree, the Multi type when a type and its Multi form mix (as in
// shapefiles, where GDAL reports Polygon), "Geometry" otherwise.
type TypeSet struct{ seen map[string]bool }

// Add notes one feature's type ("" is ignored).
func (s *TypeSet) Add(typ string) {
	if typ == "" {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[typ] = true
}

// Name is the layer's type, TypeNone when nothing was added.
func (s *TypeSet) Name() string {
	switch len(s.seen) {
	case 0:
		return TypeNone
	case 1:
		for t := range s.seen {
			return t
		}
	case 2:
		for _, pair := range [][2]string{{TypePoint, TypeMultiPoint}, {TypeLineString, TypeMultiLineString}, {TypePolygon, TypeMultiPolygon}} {
			if s.seen[pair[0]] && s.seen[pair[1]] {
				return pair[1]
			}
		}
	}
	return TypeGeometry
}

// DefaultSketchVertices is the vertex budget of a sketch: enough for a sharp 256-pixel
// thumbnail of any dataset, small enough to keep in memory while a large file is read.
const DefaultSketchVertices = 200_000

// Sketch keeps the shapes of a dataset for drawing, within a vertex budget: once the budget
// is reached, later parts are thinned by keeping every n-th vertex, so a huge file still
// yields a recognizable picture in bounded memory.
type Sketch struct {
	Max    int // vertex budget; 0 means DefaultSketchVertices
	Shapes []Shape
	BBox   BBox // of every vertex added, thinned or not
	n      int
	init   bool
}

// Add copies shape into the sketch (thinned when over budget).
func (s *Sketch) Add(shape Shape) {
	if !s.init {
		s.BBox, s.init = Empty(), true
	}
	max := s.Max
	if max <= 0 {
		max = DefaultSketchVertices
	}
	out := Shape{Kind: shape.Kind}
	for _, part := range shape.Parts {
		for _, p := range part {
			s.BBox.Extend(p.X, p.Y)
		}
		step := 1
		if s.n >= max {
			step = 16 // keep the outline of what comes late, sparsely
			if s.n >= 4*max {
				return
			}
		}
		minKeep := 1
		if shape.Kind == KindPolygon {
			minKeep = 3
		}
		kept := make([]Point, 0, len(part)/step+1)
		for i := 0; i < len(part); i += step {
			kept = append(kept, part[i])
		}
		if len(kept) < minKeep && len(part) >= minKeep {
			kept = append(kept[:0], part...)
		}
		s.n += len(kept)
		out.Parts = append(out.Parts, kept)
	}
	if len(out.Parts) > 0 {
		s.Shapes = append(s.Shapes, out)
	}
}

// Vertices is how many vertices the sketch holds.
func (s *Sketch) Vertices() int { return s.n }
