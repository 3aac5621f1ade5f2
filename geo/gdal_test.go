package geo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/sonda-search/sonda/internal/shareddata"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

// requireGDAL skips without GDAL, except under CI, where its absence is a failure (.ci/run
// installs gdal-bin).
func requireGDAL(t *testing.T) {
	for _, tool := range []string{"ogrinfo", "ogr2ogr", "gdalinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found: CI must install gdal-bin for the independent reader cross-check", tool)
			}
			t.Skipf("%s not found (apt-get install gdal-bin): the cross-check against GDAL is skipped", tool)
		}
	}
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// gdalLayer is what GDAL says about a vector layer.
type gdalLayer struct {
	driver, geometry string
	features         int
	epsg             int
	bbox, wgs84      geom.BBox
}

var (
	reDriver   = regexp.MustCompile(`using driver .(.+). successful`)
	reGeometry = regexp.MustCompile(`(?m)^Geometry: (.+)$`)
	reCount    = regexp.MustCompile(`(?m)^Feature Count: (\d+)$`)
	reTopID    = regexp.MustCompile(`(?m)^    ID\["EPSG",(\d+)\]\]$`)
)

// gdalVector asks ogrinfo and ogr2ogr about the one layer of src.
func gdalVector(t *testing.T, src string) gdalLayer {
	info := string(run(t, "ogrinfo", "-ro", "-so", "-al", src))
	var g gdalLayer
	if m := reDriver.FindStringSubmatch(info); m != nil {
		g.driver = m[1]
	}
	if m := reGeometry.FindStringSubmatch(info); m != nil {
		g.geometry = strings.ReplaceAll(m[1], " ", "") // "Multi Polygon" → "MultiPolygon"
	}
	if m := reCount.FindStringSubmatch(info); m != nil {
		g.features, _ = strconv.Atoi(m[1])
	}
	if m := reTopID.FindStringSubmatch(info); m != nil {
		g.epsg, _ = strconv.Atoi(m[1])
	}
	// Full-precision boxes: GeoJSON output with WRITE_BBOX, natively and reprojected.
	g.bbox = ogrBBox(t, src)
	if strings.Contains(info, "Layer SRS WKT:\n(unknown)") || !strings.Contains(info, "Layer SRS WKT") {
		g.wgs84 = geom.Empty()
	} else {
		g.wgs84 = ogrBBox(t, src, "-t_srs", "EPSG:4326")
	}
	return g
}

func ogrBBox(t *testing.T, src string, extra ...string) geom.BBox {
	return ogrLayerBBox(t, src, "", extra...)
}

// ogrLayerBBox is ogrBBox of one layer ("": the only one).
func ogrLayerBBox(t *testing.T, src, layer string, extra ...string) geom.BBox {
	box, err := tryOgrLayerBBox(src, layer, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// tryOgrLayerBBox is ogrLayerBBox that returns ogr2ogr's failure (a layer without a CRS
// cannot be reprojected) as an error.
func tryOgrLayerBBox(src, layer string, extra ...string) (geom.BBox, error) {
	args := append([]string{"-f", "GeoJSON", "-lco", "WRITE_BBOX=YES", "-lco", "COORDINATE_PRECISION=15", "-lco", "RFC7946=NO"}, extra...)
	args = append(args, "/vsistdout/", src)
	if layer != "" {
		args = append(args, layer)
	}
	var fc struct {
		BBox []float64 `json:"bbox"`
	}
	var stderr bytes.Buffer
	cmd := exec.Command("ogr2ogr", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return geom.Empty(), fmt.Errorf("ogr2ogr %v: %v: %s", args, err, stderr.String())
	}
	if err := json.Unmarshal(out, &fc); err != nil || len(fc.BBox) < 4 {
		return geom.Empty(), fmt.Errorf("ogr2ogr %v: no bbox (%v)", args, err)
	}
	return geom.BBox{MinX: fc.BBox[0], MinY: fc.BBox[1], MaxX: fc.BBox[2], MaxY: fc.BBox[3]}, nil
}

func near(a, b geom.BBox, tol float64) bool {
	if a.IsEmpty() || b.IsEmpty() {
		return a.IsEmpty() == b.IsEmpty()
	}
	x, y := a.Array(), b.Array()
	for i := range x {
		if math.Abs(x[i]-y[i]) > tol {
			return false
		}
	}
	return true
}

var gdalDrivers = map[string]string{"ESRI Shapefile": FormatShapefile, "GPKG": FormatGeoPkg, "GeoJSON": FormatGeoJSON, "GTiff": FormatGeoTIFF}

// TestAgainstGDAL is issue 7's first acceptance point: on every file of the shared geo test
// data, `sonda geo inspect` reports the format, feature count, geometry type, CRS and
// bounding boxes (native, and WGS84 after reprojection) that GDAL does, within 1e-6 degrees.
func TestAgainstGDAL(t *testing.T) {
	dir := shareddata.Dir(t, "geo")
	requireGDAL(t)
	var files []string
	for _, pattern := range []string{"*/*.shp", "*/*.gpkg", "*/*.geojson", "*/*.tif", "*/*.zip"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d files in %s", len(files), dir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ds, err := Inspect(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ds.Layers) != 1 {
				t.Fatalf("%d layers", len(ds.Layers))
			}
			l := ds.Layers[0]
			if strings.HasSuffix(path, ".tif") {
				compareRaster(t, path, l)
				return
			}
			src := path
			if strings.HasSuffix(path, ".zip") {
				src = "/vsizip/" + path
			}
			g := gdalVector(t, src)
			if want := gdalDrivers[g.driver]; ds.Format != want {
				t.Errorf("format %q, GDAL's driver is %q", ds.Format, g.driver)
			}
			if l.Features != g.features {
				t.Errorf("%d features, GDAL counts %d", l.Features, g.features)
			}
			if l.GeometryType != g.geometry {
				t.Errorf("geometry type %q, GDAL says %q", l.GeometryType, g.geometry)
			}
			epsg := 0
			if l.CRS != nil {
				epsg = l.CRS.EPSG
			}
			if epsg != g.epsg {
				t.Errorf("EPSG:%d, GDAL says EPSG:%d", epsg, g.epsg)
			}
			if !near(l.BBox, g.bbox, 1e-6) {
				t.Errorf("native bbox %v, GDAL %v", l.BBox.Array(), g.bbox.Array())
			}
			if !near(l.BBoxWGS84, g.wgs84, 1e-6) {
				t.Errorf("WGS84 bbox %v, GDAL %v", l.BBoxWGS84.Array(), g.wgs84.Array())
			}
		})
	}
}

func compareRaster(t *testing.T, path string, l *Layer) {
	var info struct {
		DriverShortName  string `json:"driverShortName"`
		Size             []int  `json:"size"`
		CoordinateSystem struct {
			WKT string `json:"wkt"`
		} `json:"coordinateSystem"`
		CornerCoordinates struct {
			UpperLeft  []float64 `json:"upperLeft"`
			LowerRight []float64 `json:"lowerRight"`
		} `json:"cornerCoordinates"`
		WGS84Extent struct {
			Coordinates [][][]float64 `json:"coordinates"`
		} `json:"wgs84Extent"`
	}
	if err := json.Unmarshal(run(t, "gdalinfo", "-json", path), &info); err != nil {
		t.Fatal(err)
	}
	if gdalDrivers[info.DriverShortName] != l.Format || l.Raster == nil || l.Raster.Width != info.Size[0] || l.Raster.Height != info.Size[1] {
		t.Errorf("format %s size %+v; GDAL: %s %v", l.Format, l.Raster, info.DriverShortName, info.Size)
	}
	if m := reTopID.FindStringSubmatch(info.CoordinateSystem.WKT); m != nil {
		want, _ := strconv.Atoi(m[1])
		if l.CRS == nil || l.CRS.EPSG != want {
			t.Errorf("CRS %+v, GDAL says EPSG:%d", l.CRS, want)
		}
	}
	ul, lr := info.CornerCoordinates.UpperLeft, info.CornerCoordinates.LowerRight
	native := geom.BBox{MinX: ul[0], MinY: lr[1], MaxX: lr[0], MaxY: ul[1]}
	if !near(l.BBox, native, 1e-6) {
		t.Errorf("bbox %v, GDAL %v", l.BBox.Array(), native.Array())
	}
	wgs := geom.Empty()
	for _, ring := range info.WGS84Extent.Coordinates {
		for _, p := range ring {
			wgs.Extend(p[0], p[1])
		}
	}
	if !near(l.BBoxWGS84, wgs, 1e-6) {
		t.Errorf("WGS84 bbox %v, GDAL %v", l.BBoxWGS84.Array(), wgs.Array())
	}
}
