package geo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonda-search/sonda/geo/crs"
	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/geo/geotiff"
	"github.com/sonda-search/sonda/geo/gpkg"
	"github.com/sonda-search/sonda/geo/shapefile"
)

func layerName(name string) string {
	base := filepath.Base(name)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// readPRJ reads the CRS next to a shapefile: nil when there is no .prj, an error when there
// is one that cannot be read.
func readPRJ(shpPath string) (*crs.CRS, error) {
	p := sibling(shpPath, ".prj")
	if p == "" {
		return nil, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	return crs.ParseWKT(string(b))
}

func readCPG(shpPath string) string {
	p := sibling(shpPath, ".cpg")
	if p == "" {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 64 {
		return ""
	}
	return string(b)
}

// readShapefile reads a .shp with its .dbf, .prj and .cpg.
func readShapefile(path, name string) (*Layer, error) {
	l := &Layer{Name: layerName(name), Format: FormatShapefile, BBox: geom.Empty(), BBoxWGS84: geom.Empty()}
	c, err := readPRJ(path)
	if err != nil {
		l.Error = ".prj: " + err.Error()
	}
	l.CRS = c
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := shapefile.NewReader(f, st.Size())
	if err != nil {
		return nil, err
	}
	l.GeometryType = r.Header.Type.GeometryType()
	b := newBoxer(c)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			l.Error = err.Error()
			break
		}
		l.Features++
		b.shape(rec.Shape)
		l.sketch.Add(rec.Shape)
	}
	// The header's box is the layer's extent (GDAL reports it too); the vertices' box
	// stands in when a writer left the header empty.
	l.BBox = r.Header.BBox
	if l.BBox.IsEmpty() || (l.BBox == geom.BBox{}) {
		l.BBox = b.native
	}
	if l.Features == 0 {
		l.BBox = geom.Empty()
	}
	l.BBoxWGS84 = b.wgs84()
	if dbf := sibling(path, ".dbf"); dbf != "" {
		if err := readAttributes(l, dbf, readCPG(path)); err != nil && l.Error == "" {
			l.Error = ".dbf: " + err.Error()
		}
	}
	return l, nil
}

// readAttributes reads a .dbf's fields and its first rows into l.
func readAttributes(l *Layer, path, cpg string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := shapefile.OpenDBF(f, cpg)
	if err != nil {
		return err
	}
	l.Encoding = d.Encoding
	for _, fd := range d.Fields {
		l.Fields = append(l.Fields, Field{Name: fd.Name, Type: dbfType(fd)})
	}
	for len(l.rows) < maxRows {
		row, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		l.rows = append(l.rows, row)
	}
	if l.Format == FormatDBF {
		l.Features = d.Records
	}
	return nil
}

func dbfType(f shapefile.Field) string {
	switch f.Type {
	case "C":
		return "string"
	case "N", "F":
		if f.Decimals == 0 {
			return "integer"
		}
		return "real"
	case "D":
		return "date"
	case "L":
		return "boolean"
	}
	return f.Type
}

// readDBFOnly reads a .dbf without geometry (an attribute table published alone).
func readDBFOnly(path, name string) (*Layer, error) {
	l := &Layer{Name: layerName(name), Format: FormatDBF, GeometryType: geom.TypeNone, BBox: geom.Empty(), BBoxWGS84: geom.Empty()}
	if err := readAttributes(l, path, readCPG(path)); err != nil {
		return nil, err
	}
	return l, nil
}

// readGeoTIFF reads a GeoTIFF's georeferencing and samples its first band.
func readGeoTIFF(path, name string) (*Layer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, _ := f.Stat()
	in, err := geotiff.Read(f, st.Size())
	if err != nil {
		return nil, err
	}
	l := &Layer{Name: layerName(name), Format: FormatGeoTIFF, GeometryType: geom.TypeRaster, Features: 1, BBox: in.BBox,
		Raster: &Raster{Width: in.Width, Height: in.Height, Bands: in.Bands, SampleType: in.SampleType,
			PixelSize: [2]float64{finite(in.PixelSizeX), finite(in.PixelSizeY)}}}
	if in.NoData != nil && !math.IsNaN(*in.NoData) && !math.IsInf(*in.NoData, 0) {
		l.Raster.NoData = in.NoData // a NaN no-data value is what NaN cells mean anyway; JSON cannot carry it
	}
	if in.EPSG != 0 {
		c, err := crs.FromEPSG(in.EPSG)
		if err != nil {
			l.Error = err.Error()
		}
		l.CRS = c
	} else if in.Georeferenced && (in.UserProjected || in.ModelType == 2 && len(in.GeoKeys) > 1) {
		// The keys define the CRS themselves: read its parameters (or say which key stops us).
		l.CRS = crs.FromGeoKeys(in.GeoKeys, in.Citation)
	} else if in.Citation != "" && in.Georeferenced {
		l.CRS = &crs.CRS{Name: in.Citation, Kind: crs.Other, Unsupported: "user-defined GeoTIFF CRS"}
	}
	if !in.Georeferenced {
		l.BBox = geom.Empty()
		l.Error = "no georeferencing (tie point and pixel scale, or a transformation)"
	}
	if in.Georeferenced {
		l.BBoxWGS84 = outlineToWGS84(l.CRS, in.Transform, float64(in.Width), float64(in.Height))
	} else {
		l.BBoxWGS84 = geom.Empty()
	}
	if g, err := in.Sample(256, 256); err == nil {
		l.grid = g
	} else if l.Error == "" {
		l.Error = "thumbnail: " + err.Error()
	}
	return l, nil
}

// finite replaces NaN and infinities (a broken file's numbers) with 0, so records encode.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// readGeoPackage reads every layer of a GeoPackage.
func readGeoPackage(ctx context.Context, path string) ([]*Layer, error) {
	gl, err := gpkg.Read(ctx, path)
	if err != nil && len(gl) == 0 {
		return nil, err
	}
	var out []*Layer
	for _, g := range gl {
		l := &Layer{Name: g.Name, Format: FormatGeoPkg, GeometryType: g.GeometryType, Features: g.Features, BBox: g.BBox, BBoxWGS84: geom.Empty(), rows: g.Rows, sketch: g.Sketch}
		switch g.DataType {
		case "tiles":
			l.GeometryType, l.BBox = geom.TypeRaster, g.ContentsBBox
		case "attributes":
			l.GeometryType = geom.TypeNone
		}
		if l.GeometryType == "" {
			l.GeometryType = geom.TypeGeometry
		}
		for _, f := range g.Fields {
			l.Fields = append(l.Fields, Field{Name: f.Name, Type: strings.ToLower(f.Type)})
		}
		l.CRS = gpkgCRS(g)
		if g.BadGeometries > 0 {
			l.Error = fmt.Sprintf("%d geometries could not be decoded", g.BadGeometries)
		}
		// Every vertex is transformed for the WGS84 box, as for the other vector formats,
		// when the sketch holds them all; a thinned sketch (or none) gives way to the edges.
		if l.CRS.CanTransform() && len(l.sketch.Shapes) > 0 && l.sketch.Vertices() < geom.DefaultSketchVertices {
			b := newBoxer(l.CRS)
			for _, s := range l.sketch.Shapes {
				b.shape(s)
			}
			l.BBoxWGS84 = b.wgs84()
		} else {
			l.BBoxWGS84 = edgesToWGS84(l.CRS, l.BBox)
		}
		out = append(out, l)
	}
	return out, err
}

func gpkgCRS(g gpkg.Layer) *crs.CRS {
	if g.SRSID <= 0 && g.Definition == "" {
		return nil // undefined cartesian/geographic SRS
	}
	if g.Definition != "" && !strings.EqualFold(g.Definition, "undefined") {
		if c, err := crs.ParseWKT(g.Definition); err == nil {
			if c.EPSG == 0 && strings.EqualFold(g.Organization, "EPSG") {
				c.EPSG = g.OrgCode
			}
			return c
		}
	}
	if strings.EqualFold(g.Organization, "EPSG") {
		if c, err := crs.FromEPSG(g.OrgCode); err == nil {
			return c
		}
	}
	return &crs.CRS{Name: g.SRSName, Kind: crs.Other, Unsupported: "unreadable definition"}
}
