package geo

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

// packagedGeodata are the folders where Debian's R packages sf, stars and terra (installed
// by .ci/run) keep the example files they ship: real files written by other software than
// GDAL's command-line tools, in NAD27, SIRGAS 2000 / UTM 25S, RD New, WGS 84 and
// user-defined CRSs.
var packagedGeodata = []string{
	"/usr/lib/R/site-library/sf/shape", "/usr/lib/R/site-library/sf/gpkg", "/usr/lib/R/site-library/sf/tif",
	"/usr/lib/R/site-library/sf/gml", "/usr/lib/R/site-library/stars/tif", "/usr/lib/R/site-library/stars/gpkg",
	"/usr/lib/R/site-library/terra/ex",
}

// packagedGaps are the packaged files sonda does not read as GDAL does for reasons other
// than their CRS, with the reason.
var packagedGaps = map[string]string{
	"sf/gml/fmi_test.gml": "an O&M WFS response (PointTimeSeriesObservation): sonda's GML reader finds no geometry, GDAL 22 points",
}

// TestPackagedGeodataAgainstGDAL (issue 14 §4): every geodata file these packages ship gets
// the WGS 84 box GDAL gives (ogr2ogr's reprojection for vectors; gdaltransform of the
// outline, and the poles, for rasters), within 1e-6°, or none where GDAL finds no CRS
// either. A wrong box fails, and so does a CRS reported as not readable.
func TestPackagedGeodataAgainstGDAL(t *testing.T) {
	requireGDAL(t)
	var files []string
	for _, dir := range packagedGeodata {
		for _, ext := range []string{"*.shp", "*.gpkg", "*.tif", "*.gml"} {
			m, _ := filepath.Glob(filepath.Join(dir, ext))
			files = append(files, m...)
		}
	}
	if len(files) < 15 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%d packaged geodata files: .ci/run must install r-cran-sf, r-cran-stars and r-cran-terra", len(files))
		}
		t.Skipf("%d packaged geodata files (apt-get install --no-install-recommends r-cran-sf r-cran-stars r-cran-terra): skipped", len(files))
	}
	var read, unreadable, noCRS, gaps []string
	for _, path := range files {
		name := filepath.Base(filepath.Dir(filepath.Dir(path))) + "/" + filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			ds, err := Inspect(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ds.Layers {
				var gdal geom.BBox
				if strings.HasSuffix(path, ".tif") {
					gdalCRS := strings.TrimSpace(string(run(t, "gdalsrsinfo", "-o", "wkt1", path)))
					if gdalCRS == "" || strings.HasPrefix(gdalCRS, "LOCAL_CS") {
						if !l.BBoxWGS84.IsEmpty() {
							t.Errorf("WGS 84 box %v for a raster GDAL finds no CRS in", l.BBoxWGS84.Array())
						}
						noCRS = append(noCRS, name)
						continue
					}
					gdal = gdalEdges(t, path)
				} else {
					if l.GeometryType == geom.TypeNone {
						// A table without geometries, unless GDAL finds some in the file.
						if why, ok := packagedGaps[name]; ok {
							gaps = append(gaps, name+": "+why)
						} else if g := reGeometry.FindAllStringSubmatch(string(run(t, "ogrinfo", "-so", "-al", path)), -1); len(g) > 0 && g[0][1] != "None" {
							t.Errorf("%s: sonda finds no geometry in layer %s, GDAL finds %s", name, l.Name, g[0][1])
						}
						continue
					}
					var err error
					if gdal, err = tryOgrLayerBBox(path, l.Name, "-t_srs", "EPSG:4326"); err != nil {
						// GDAL cannot place the layer in WGS 84 (no CRS): neither may sonda.
						if !l.BBoxWGS84.IsEmpty() {
							t.Errorf("WGS 84 box %v for a layer GDAL cannot reproject: %v", l.BBoxWGS84.Array(), err)
						}
						noCRS = append(noCRS, name+" "+l.Name)
						continue
					}
				}
				what := name + " " + l.Name
				switch {
				case l.CRS != nil && l.CRS.Unsupported != "" && l.BBoxWGS84.IsEmpty():
					// Not a wrong answer, but every CRS these files use is read now (meuse.tif's
					// oblique stereographic and lc.tif's Albers are user-defined GeoKeys).
					unreadable = append(unreadable, what+" ("+l.CRS.Name+": "+l.CRS.Unsupported+")")
					t.Errorf("%s: reported not readable (%s), GDAL's box is %v", what, l.CRS.Unsupported, gdal.Array())
				case near(l.BBoxWGS84, gdal, 1e-6):
					read = append(read, what)
				default:
					t.Errorf("%s: WGS 84 box %v, GDAL's %v (CRS %+v)", what, l.BBoxWGS84.Array(), gdal.Array(), l.CRS)
				}
			}
		})
	}
	sort.Strings(read)
	t.Logf("read as GDAL does (%d): %s", len(read), strings.Join(read, ", "))
	t.Logf("reported as not readable (%d): %s", len(unreadable), strings.Join(unreadable, "; "))
	t.Logf("without a CRS, for GDAL too (%d): %s", len(noCRS), strings.Join(noCRS, ", "))
	t.Logf("known gaps, not compared (%d): %s", len(gaps), strings.Join(gaps, "; "))
}
