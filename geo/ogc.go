package geo

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sonda-search/sonda/geo/crs"
	"github.com/sonda-search/sonda/geo/geom"
)

// FormatOGC is an OGC service's capabilities document (WMS, WFS): each offered layer or
// feature type is a layer with its name, title and WGS84 box.
const FormatOGC = "ogc-capabilities"

// readCapabilities reads WMS 1.1/1.3 and WFS 1.x/2.0 GetCapabilities documents.
func readCapabilities(data []byte, name string) ([]*Layer, error) {
	type pending struct {
		l     *Layer
		title string
		depth int
		geo   [4]float64 // west, east, south, north (WMS 1.3 EX_GeographicBoundingBox)
		seen  int        // bit set of the four
	}
	var stack []*pending // open Layer/FeatureType elements
	var out []*Layer
	var corner [2][]float64
	w := xmlWalker{
		start: func(path []string, attrs []xml.Attr) {
			el := path[len(path)-1]
			switch el {
			case "Layer", "FeatureType":
				stack = append(stack, &pending{l: &Layer{Format: FormatOGC, GeometryType: geom.TypeGeometry, BBox: geom.Empty(), BBoxWGS84: geom.Empty(), CRS: crs.WGS84()}, depth: len(path)})
			case "LatLonBoundingBox": // WMS 1.1
				if len(stack) > 0 {
					b := &stack[len(stack)-1].l.BBox
					x0, e1 := strconv.ParseFloat(attr(attrs, "minx"), 64)
					y0, e2 := strconv.ParseFloat(attr(attrs, "miny"), 64)
					x1, e3 := strconv.ParseFloat(attr(attrs, "maxx"), 64)
					y1, e4 := strconv.ParseFloat(attr(attrs, "maxy"), 64)
					if errors.Join(e1, e2, e3, e4) == nil {
						b.Extend(x0, y0)
						b.Extend(x1, y1)
					}
				}
			}
		},
		end: func(path []string, text string) {
			if len(stack) == 0 {
				return
			}
			top := stack[len(stack)-1]
			el := path[len(path)-1]
			direct := len(path) == top.depth+1
			t := strings.TrimSpace(text)
			switch {
			case el == "Name" && direct:
				top.l.Name = t
			case el == "Title" && direct:
				top.title = t
			case el == "westBoundLongitude" || el == "eastBoundLongitude" || el == "southBoundLatitude" || el == "northBoundLatitude":
				if v, err := strconv.ParseFloat(t, 64); err == nil {
					i := map[string]int{"westBoundLongitude": 0, "eastBoundLongitude": 1, "southBoundLatitude": 2, "northBoundLatitude": 3}[el]
					top.geo[i], top.seen = v, top.seen|1<<i
				}
			case el == "LowerCorner" || el == "UpperCorner": // WFS ows:WGS84BoundingBox: lon lat
				f := strings.Fields(t)
				if len(f) == 2 {
					x, e1 := strconv.ParseFloat(f[0], 64)
					y, e2 := strconv.ParseFloat(f[1], 64)
					if e1 == nil && e2 == nil {
						i := 0
						if el == "UpperCorner" {
							i = 1
						}
						corner[i] = []float64{x, y}
						if corner[0] != nil && corner[1] != nil {
							top.l.BBox.Extend(corner[0][0], corner[0][1])
							top.l.BBox.Extend(corner[1][0], corner[1][1])
							corner = [2][]float64{}
						}
					}
				}
			case (el == "Layer" || el == "FeatureType") && len(path) == top.depth:
				stack = stack[:len(stack)-1]
				if top.l.Name == "" { // a WMS group layer without a name is not requestable
					return
				}
				if top.seen == 15 {
					top.l.BBox.Extend(top.geo[0], top.geo[2])
					top.l.BBox.Extend(top.geo[1], top.geo[3])
				}
				if top.title != "" {
					top.l.Fields = []Field{{Name: "title", Type: "string"}}
					top.l.rows = [][]string{{top.title}}
				}
				if b := top.l.BBox; !b.IsEmpty() {
					top.l.BBoxWGS84 = b
					// The thumbnail of a service shows where its layers are.
					top.l.sketch.Add(geom.Shape{Kind: geom.KindPolygon, Parts: [][]geom.Point{{
						{X: b.MinX, Y: b.MinY}, {X: b.MaxX, Y: b.MinY}, {X: b.MaxX, Y: b.MaxY}, {X: b.MinX, Y: b.MaxY}}}})
				}
				out = append(out, top.l)
			}
		},
	}
	if err := w.walk(data); err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("capabilities: no named layers or feature types")
	}
	return out, nil
}
