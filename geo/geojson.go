package geo

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sonda-search/sonda/geo/crs"
	"github.com/sonda-search/sonda/geo/geom"
)

type geojsonObject struct {
	Type        string          `json:"type"`
	Features    []geojsonObject `json:"features"`
	Geometry    *geojsonObject  `json:"geometry"`
	Geometries  []geojsonObject `json:"geometries"`
	Coordinates json.RawMessage `json:"coordinates"`
	Properties  map[string]any  `json:"properties"`
	CRS         *struct {
		Properties struct {
			Name string `json:"name"`
		} `json:"properties"`
	} `json:"crs"`
}

// readGeoJSON reads a GeoJSON FeatureCollection, Feature or bare geometry. RFC 7946 data is
// WGS 84; the obsolete "crs" member (2008 spec) is honoured when it names an EPSG code.
func readGeoJSON(data []byte, name string) (*Layer, error) {
	var root geojsonObject
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("GeoJSON: %w", err)
	}
	l := &Layer{Name: layerName(name), Format: FormatGeoJSON, BBox: geom.Empty(), BBoxWGS84: geom.Empty()}
	c := crs.WGS84()
	if root.CRS != nil && root.CRS.Properties.Name != "" {
		if code, ok := crs.ParseCode(root.CRS.Properties.Name); ok {
			if cc, err := crs.FromEPSG(code); err == nil {
				c = cc
			}
		}
	}
	l.CRS = c
	var features []geojsonObject
	switch root.Type {
	case "FeatureCollection":
		features = root.Features
	case "Feature":
		features = []geojsonObject{root}
	case "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection":
		features = []geojsonObject{{Type: "Feature", Geometry: &root}}
	default:
		return nil, fmt.Errorf("GeoJSON: type %q is not a feature collection, feature or geometry", root.Type)
	}
	b := newBoxer(c)
	var types geom.TypeSet
	fieldTypes := map[string]string{}
	var fieldOrder []string
	var bad int
	for _, f := range features {
		l.Features++
		if f.Geometry != nil {
			shape, typ, err := geojsonGeometry(f.Geometry, 0)
			if err != nil {
				bad++
			} else {
				types.Add(typ)
				b.shape(shape)
				l.sketch.Add(shape)
			}
		}
		var row []string
		for _, k := range slices.Sorted(maps.Keys(f.Properties)) { // JSON objects are unordered: keep output stable
			if _, seen := fieldTypes[k]; !seen {
				fieldTypes[k] = jsonType(f.Properties[k])
				fieldOrder = append(fieldOrder, k)
			}
		}
		if len(l.rows) < maxRows {
			row = make([]string, len(fieldOrder))
			for i, k := range fieldOrder {
				row[i] = scalarText(f.Properties[k])
			}
			l.rows = append(l.rows, row)
		}
	}
	for _, k := range fieldOrder {
		l.Fields = append(l.Fields, Field{Name: k, Type: fieldTypes[k]})
	}
	l.GeometryType = types.Name()
	l.BBox, l.BBoxWGS84 = b.native, b.wgs84()
	if bad > 0 {
		l.Error = fmt.Sprintf("%d geometries could not be read", bad)
	}
	return l, nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "real"
	case bool:
		return "boolean"
	case string:
		return "string"
	case nil:
		return "null"
	}
	return "json"
}

func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64, bool:
		return fmt.Sprint(x)
	}
	return ""
}

var errCoordinates = errors.New("malformed coordinates")

func geojsonGeometry(g *geojsonObject, depth int) (geom.Shape, string, error) {
	if depth > 8 {
		return geom.Shape{}, "", errors.New("geometry collections nested too deeply")
	}
	kind := geom.KindOf(g.Type)
	switch g.Type {
	case "Point":
		var p []float64
		if err := json.Unmarshal(g.Coordinates, &p); err != nil || len(p) < 2 {
			return geom.Shape{}, "", errCoordinates
		}
		return geom.Shape{Kind: kind, Parts: [][]geom.Point{{{X: p[0], Y: p[1]}}}}, g.Type, nil
	case "MultiPoint", "LineString":
		var ps [][]float64
		if err := json.Unmarshal(g.Coordinates, &ps); err != nil {
			return geom.Shape{}, "", errCoordinates
		}
		part, err := points(ps)
		return geom.Shape{Kind: kind, Parts: [][]geom.Point{part}}, g.Type, err
	case "MultiLineString", "Polygon":
		var rings [][][]float64
		if err := json.Unmarshal(g.Coordinates, &rings); err != nil {
			return geom.Shape{}, "", errCoordinates
		}
		s := geom.Shape{Kind: kind}
		for _, r := range rings {
			part, err := points(r)
			if err != nil {
				return s, "", err
			}
			s.Parts = append(s.Parts, part)
		}
		return s, g.Type, nil
	case "MultiPolygon":
		var polys [][][][]float64
		if err := json.Unmarshal(g.Coordinates, &polys); err != nil {
			return geom.Shape{}, "", errCoordinates
		}
		s := geom.Shape{Kind: kind}
		for _, poly := range polys {
			for _, r := range poly {
				part, err := points(r)
				if err != nil {
					return s, "", err
				}
				s.Parts = append(s.Parts, part)
			}
		}
		return s, g.Type, nil
	case "GeometryCollection":
		s := geom.Shape{}
		for i := range g.Geometries {
			sub, _, err := geojsonGeometry(&g.Geometries[i], depth+1)
			if err != nil {
				return s, "", err
			}
			if s.Kind == 0 {
				s.Kind = sub.Kind
			}
			s.Parts = append(s.Parts, sub.Parts...)
		}
		return s, g.Type, nil
	}
	return geom.Shape{}, "", fmt.Errorf("unknown geometry type %q", g.Type)
}

func points(ps [][]float64) ([]geom.Point, error) {
	out := make([]geom.Point, 0, len(ps))
	for _, p := range ps {
		if len(p) < 2 {
			return nil, errCoordinates
		}
		out = append(out, geom.Point{X: p[0], Y: p[1]})
	}
	return out, nil
}
