package geo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sonda-search/sonda/geo/crs"
	"github.com/sonda-search/sonda/geo/geom"
)

// maxXMLDepth bounds element nesting in the XML formats.
const maxXMLDepth = 256

// xmlWalker streams an XML document, calling start for every element (with its path of
// local names) and end with the element's direct character data.
type xmlWalker struct {
	start func(path []string, attrs []xml.Attr)
	end   func(path []string, text string)
}

func (w xmlWalker) walk(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		return charsetReader(label, input)
	}
	var path []string
	var texts []*strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(path) >= maxXMLDepth {
				return errors.New("XML nested too deeply")
			}
			path = append(path, t.Name.Local)
			texts = append(texts, &strings.Builder{})
			if w.start != nil {
				w.start(path, t.Attr)
			}
		case xml.CharData:
			if len(texts) > 0 && texts[len(texts)-1].Len() < 64<<20 {
				texts[len(texts)-1].Write(t)
			}
		case xml.EndElement:
			if len(path) == 0 {
				continue
			}
			if w.end != nil {
				w.end(path, texts[len(texts)-1].String())
			}
			path = path[:len(path)-1]
			texts = texts[:len(texts)-1]
		}
	}
}

func attr(attrs []xml.Attr, name string) string {
	for _, a := range attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// parseTuples reads "x,y[,z] x,y[,z] ..." (KML, GML 2 coordinates).
func parseTuples(s string) ([]geom.Point, error) {
	var out []geom.Point
	for _, tuple := range strings.Fields(s) {
		parts := strings.Split(tuple, ",")
		if len(parts) < 2 {
			return nil, fmt.Errorf("coordinate %q has no comma", tuple)
		}
		x, err1 := strconv.ParseFloat(parts[0], 64)
		y, err2 := strconv.ParseFloat(parts[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("coordinate %q is not numeric", tuple)
		}
		out = append(out, geom.Point{X: x, Y: y})
	}
	return out, nil
}

// parseList reads "x y x y ..." with dim numbers per point (GML pos and posList).
func parseList(s string, dim int) ([]geom.Point, error) {
	f := strings.Fields(s)
	if dim < 2 {
		dim = 2
	}
	if len(f)%dim != 0 {
		return nil, fmt.Errorf("%d numbers do not make points of %d", len(f), dim)
	}
	out := make([]geom.Point, 0, len(f)/dim)
	for i := 0; i+dim <= len(f); i += dim {
		x, err1 := strconv.ParseFloat(f[i], 64)
		y, err2 := strconv.ParseFloat(f[i+1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("coordinate %q %q is not numeric", f[i], f[i+1])
		}
		out = append(out, geom.Point{X: x, Y: y})
	}
	return out, nil
}

// kmlGeometryTypes names a placemark's geometry type by its first geometry element.
var kmlGeometryTypes = map[string]string{"Point": geom.TypePoint, "LineString": geom.TypeLineString, "Polygon": geom.TypePolygon,
	"MultiGeometry": geom.TypeGeometryCollection, "Track": geom.TypeLineString, "MultiTrack": geom.TypeMultiLineString}

// readKML reads the placemarks of a KML document as one layer (KML is WGS 84 by definition).
func readKML(data []byte, name, format string) ([]*Layer, error) {
	l := &Layer{Name: layerName(name), Format: format, CRS: crs.WGS84(), BBox: geom.Empty(), BBoxWGS84: geom.Empty()}
	b := newBoxer(l.CRS)
	var types geom.TypeSet
	var fields []string
	fieldIndex := map[string]int{}
	var row map[string]string
	var placemarkType string
	var bad int
	var docName string
	w := xmlWalker{
		start: func(path []string, attrs []xml.Attr) {
			switch path[len(path)-1] {
			case "Placemark":
				l.Features++
				row, placemarkType = map[string]string{}, ""
			case "Point", "LineString", "Polygon", "MultiGeometry", "Track", "MultiTrack":
				if row != nil && placemarkType == "" {
					placemarkType = kmlGeometryTypes[path[len(path)-1]]
				}
			case "Data", "SimpleData":
				if row != nil {
					row["\x00field"] = attr(attrs, "name")
				}
			}
		},
		end: func(path []string, text string) {
			el := path[len(path)-1]
			switch {
			case el == "name" && len(path) >= 2 && path[len(path)-2] == "Document" && docName == "":
				docName = strings.TrimSpace(text)
			case el == "coordinates" || el == "coord":
				var pts []geom.Point
				var err error
				if el == "coord" { // gx:coord "lon lat alt"
					pts, err = parseList(text, len(strings.Fields(text)))
				} else {
					pts, err = parseTuples(text)
				}
				if err != nil {
					bad++
					return
				}
				kind := geom.KindLine
				switch {
				case slices.Contains(path, "Point"):
					kind = geom.KindPoint
				case slices.Contains(path, "Polygon"):
					kind = geom.KindPolygon
				}
				s := geom.Shape{Kind: kind, Parts: [][]geom.Point{pts}}
				b.shape(s)
				l.sketch.Add(s)
			case row != nil && (el == "name" || el == "description") && path[len(path)-2] == "Placemark":
				row[el] = strings.TrimSpace(text)
			case row != nil && (el == "value" || el == "SimpleData"):
				if f := row["\x00field"]; f != "" {
					row[f] = strings.TrimSpace(text)
				}
			case el == "Placemark" && row != nil:
				delete(row, "\x00field")
				types.Add(placemarkType)
				for k := range row {
					if _, ok := fieldIndex[k]; !ok {
						fieldIndex[k] = len(fields)
						fields = append(fields, k)
					}
				}
				if len(l.rows) < maxRows {
					r := make([]string, len(fields))
					for k, v := range row {
						r[fieldIndex[k]] = v
					}
					l.rows = append(l.rows, r)
				}
				row = nil
			}
		},
	}
	if err := w.walk(data); err != nil {
		return nil, fmt.Errorf("KML: %w", err)
	}
	if docName != "" {
		l.Name = docName
	}
	for _, f := range fields {
		l.Fields = append(l.Fields, Field{Name: f, Type: "string"})
	}
	for i := range l.rows { // rows made before later fields appeared are shorter
		for len(l.rows[i]) < len(fields) {
			l.rows[i] = append(l.rows[i], "")
		}
	}
	l.GeometryType = types.Name()
	l.BBox, l.BBoxWGS84 = b.native, b.wgs84()
	if bad > 0 {
		l.Error = fmt.Sprintf("%d coordinate lists could not be read", bad)
	}
	return []*Layer{l}, nil
}

// readGPX reads waypoints, routes and tracks as three layers (those that are present).
func readGPX(data []byte, name string) ([]*Layer, error) {
	type acc struct {
		l     *Layer
		b     *boxer
		part  []geom.Point
		shape geom.Shape
	}
	mk := func(suffix, typ string) *acc {
		l := &Layer{Name: layerName(name) + suffix, Format: FormatGPX, GeometryType: typ, CRS: crs.WGS84(), BBox: geom.Empty(), BBoxWGS84: geom.Empty(),
			Fields: []Field{{Name: "name", Type: "string"}}}
		return &acc{l: l, b: newBoxer(l.CRS)}
	}
	wpt, rte, trk := mk(" waypoints", geom.TypePoint), mk(" routes", geom.TypeLineString), mk(" tracks", geom.TypeMultiLineString)
	point := func(attrs []xml.Attr) (geom.Point, bool) {
		lat, err1 := strconv.ParseFloat(attr(attrs, "lat"), 64)
		lon, err2 := strconv.ParseFloat(attr(attrs, "lon"), 64)
		return geom.Point{X: lon, Y: lat}, err1 == nil && err2 == nil
	}
	var bad int
	w := xmlWalker{
		start: func(path []string, attrs []xml.Attr) {
			switch path[len(path)-1] {
			case "wpt":
				if p, ok := point(attrs); ok {
					s := geom.Shape{Kind: geom.KindPoint, Parts: [][]geom.Point{{p}}}
					wpt.b.shape(s)
					wpt.l.sketch.Add(s)
				} else {
					bad++
				}
				wpt.l.Features++
			case "rtept":
				if p, ok := point(attrs); ok {
					rte.part = append(rte.part, p)
				}
			case "trkpt":
				if p, ok := point(attrs); ok {
					trk.part = append(trk.part, p)
				}
			case "rte":
				rte.l.Features++
				rte.part = nil
			case "trk":
				trk.l.Features++
				trk.shape = geom.Shape{Kind: geom.KindLine}
			case "trkseg":
				trk.part = nil
			}
		},
		end: func(path []string, text string) {
			el := path[len(path)-1]
			switch {
			case el == "name" && len(path) >= 2:
				var a *acc
				switch path[len(path)-2] {
				case "wpt":
					a = wpt
				case "rte":
					a = rte
				case "trk":
					a = trk
				}
				if a != nil && len(a.l.rows) < maxRows {
					a.l.rows = append(a.l.rows, []string{strings.TrimSpace(text)})
				}
			case el == "rte":
				s := geom.Shape{Kind: geom.KindLine, Parts: [][]geom.Point{rte.part}}
				rte.b.shape(s)
				rte.l.sketch.Add(s)
			case el == "trkseg":
				trk.shape.Parts = append(trk.shape.Parts, trk.part)
			case el == "trk":
				trk.b.shape(trk.shape)
				trk.l.sketch.Add(trk.shape)
			}
		},
	}
	if err := w.walk(data); err != nil {
		return nil, fmt.Errorf("GPX: %w", err)
	}
	var out []*Layer
	for _, a := range []*acc{wpt, rte, trk} {
		if a.l.Features == 0 {
			continue
		}
		a.l.BBox, a.l.BBoxWGS84 = a.b.native, a.b.wgs84()
		out = append(out, a.l)
	}
	if len(out) == 0 {
		return nil, errors.New("GPX: no waypoints, routes or tracks")
	}
	if bad > 0 {
		out[0].Error = fmt.Sprintf("%d points without a valid lat/lon", bad)
	}
	return out, nil
}

var gmlTypes = map[string]string{
	"Point": geom.TypePoint, "LineString": geom.TypeLineString, "Curve": geom.TypeLineString, "Polygon": geom.TypePolygon,
	"Surface": geom.TypePolygon, "MultiPoint": geom.TypeMultiPoint, "MultiLineString": geom.TypeMultiLineString,
	"MultiCurve": geom.TypeMultiLineString, "MultiPolygon": geom.TypeMultiPolygon, "MultiSurface": geom.TypeMultiPolygon,
}

// readGML reads a GML feature collection (GML 2 or 3, WFS responses included).
func readGML(data []byte, name string) (*Layer, error) {
	l := &Layer{Name: layerName(name), Format: FormatGML, BBox: geom.Empty(), BBoxWGS84: geom.Empty()}
	var srsName string
	var dims = 2
	var shapes []geom.Shape
	var types geom.TypeSet
	var featureDepth = -1 // depth of the current feature element
	var featureType string
	fieldIndex := map[string]int{}
	var row []string
	var bad int
	w := xmlWalker{
		start: func(path []string, attrs []xml.Attr) {
			el := path[len(path)-1]
			if s := attr(attrs, "srsName"); s != "" && srsName == "" {
				srsName = s
			}
			if d := attr(attrs, "srsDimension"); d != "" {
				if n, err := strconv.Atoi(d); err == nil && n >= 2 && n <= 4 {
					dims = n
				}
			}
			if len(path) >= 2 {
				parent := path[len(path)-2]
				if parent == "featureMember" || parent == "member" || parent == "featureMembers" {
					l.Features++
					featureDepth, featureType = len(path), ""
					row = nil
				}
			}
			if featureDepth > 0 && featureType == "" {
				if t, ok := gmlTypes[el]; ok {
					featureType = t
				}
			}
		},
		end: func(path []string, text string) {
			el := path[len(path)-1]
			switch el {
			case "pos", "posList", "coordinates":
				if featureDepth < 0 { // an envelope of the collection, not a feature
					return
				}
				var pts []geom.Point
				var err error
				if el == "coordinates" {
					pts, err = parseTuples(text)
				} else {
					pts, err = parseList(text, dims)
				}
				if err != nil {
					bad++
					return
				}
				kind := geom.KindOf(featureType)
				if kind == 0 {
					kind = geom.KindLine
				}
				shapes = append(shapes, geom.Shape{Kind: kind, Parts: [][]geom.Point{pts}})
				return
			}
			if featureDepth > 0 && len(path) == featureDepth+1 && !slices.Contains(path[featureDepth:], "boundedBy") {
				if _, isGeom := gmlTypes[el]; !isGeom && strings.TrimSpace(text) != "" {
					i, ok := fieldIndex[el]
					if !ok {
						i = len(l.Fields)
						fieldIndex[el] = i
						l.Fields = append(l.Fields, Field{Name: el, Type: "string"})
					}
					for len(row) <= i {
						row = append(row, "")
					}
					row[i] = strings.TrimSpace(text)
				}
			}
			if len(path) == featureDepth {
				types.Add(featureType)
				if len(l.rows) < maxRows {
					l.rows = append(l.rows, row)
				}
				featureDepth = -1
			}
		},
	}
	if err := w.walk(data); err != nil {
		return nil, fmt.Errorf("GML: %w", err)
	}
	for i := range l.rows {
		for len(l.rows[i]) < len(l.Fields) {
			l.rows[i] = append(l.rows[i], "")
		}
	}
	swap := false
	if srsName != "" {
		if code, ok := crs.ParseCode(srsName); ok {
			if c, err := crs.FromEPSG(code); err == nil {
				l.CRS = c
				// URN and http URIs use the EPSG axis order: latitude first for geographic CRSs.
				lower := strings.ToLower(srsName)
				swap = c.Kind == crs.Geographic && !strings.HasSuffix(lower, "crs84") &&
					(strings.HasPrefix(lower, "urn:") || strings.HasPrefix(lower, "http://www.opengis.net/def/"))
			}
		}
	}
	b := newBoxer(l.CRS)
	for _, s := range shapes {
		if swap {
			for _, part := range s.Parts {
				for i := range part {
					part[i].X, part[i].Y = part[i].Y, part[i].X
				}
			}
		}
		b.shape(s)
		l.sketch.Add(s)
	}
	l.GeometryType = types.Name()
	l.BBox, l.BBoxWGS84 = b.native, b.wgs84()
	if bad > 0 {
		l.Error = fmt.Sprintf("%d coordinate lists could not be read", bad)
	}
	if l.Features == 0 {
		return nil, errors.New("GML: no feature members")
	}
	return l, nil
}
