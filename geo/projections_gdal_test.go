package geo

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/internal/shareddata"
)

// projectionCases are the projection methods issue 14 §4 names, each with parameters GDAL
// meets in real files and a window of the world where the projection is meant to be used.
// The last cases vary what the keys carry: a linear unit in US feet, a datum given by its
// ellipsoid and TOWGS84 (GeogTOWGS84GeoKey), a user-defined geographic CRS, a sphere by its
// radius (MODIS's sinusoidal grid), and a projection sonda has no formulas for, which
// must be reported as not readable.
var projectionCases = []struct {
	name, proj string
	window     [4]float64 // lon/lat: the countries are clipped to it
	unreadable bool       // sonda must say it cannot read this CRS
	extent     []float64  // the raster's extent in the projection (gdalwarp -te), when set
}{
	{"Transverse Mercator", "+proj=tmerc +lat_0=0 +lon_0=15 +k=0.9996 +x_0=500000 +y_0=0 +datum=WGS84 +units=m", [4]float64{5, 35, 25, 60}, false, nil},
	{"Lambert Conformal Conic 2SP", "+proj=lcc +lat_1=33 +lat_2=45 +lat_0=39 +lon_0=-96 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-125, 25, -65, 50}, false, nil},
	{"Lambert Conformal Conic 1SP", "+proj=lcc +lat_1=46.8 +lat_0=46.8 +lon_0=2.337229 +k_0=0.99987742 +x_0=600000 +y_0=2200000 +datum=WGS84 +units=m", [4]float64{-5, 41, 10, 52}, false, nil},
	{"Albers Equal Area", "+proj=aea +lat_1=29.5 +lat_2=45.5 +lat_0=37.5 +lon_0=-96 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-125, 25, -65, 50}, false, nil},
	{"Lambert Azimuthal Equal Area", "+proj=laea +lat_0=52 +lon_0=10 +x_0=4321000 +y_0=3210000 +datum=WGS84 +units=m", [4]float64{-10, 35, 40, 70}, false, nil},
	{"Mercator 1SP", "+proj=merc +lon_0=0 +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-180, -70, 180, 70}, false, nil},
	{"Mercator 2SP", "+proj=merc +lat_ts=30 +lon_0=0 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-180, -70, 180, 70}, false, nil},
	{"Equirectangular", "+proj=eqc +lat_ts=0 +lat_0=0 +lon_0=0 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-180, -80, 180, 80}, false, nil},
	{"Oblique Stereographic", "+proj=sterea +lat_0=52.15616055555555 +lon_0=5.38763888888889 +k=0.9999079 +x_0=155000 +y_0=463000 +datum=WGS84 +units=m", [4]float64{2, 49, 9, 55}, false, nil},
	{"Polar Stereographic", "+proj=stere +lat_0=90 +lat_ts=70 +lon_0=-45 +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-180, 60, 180, 85}, false, nil},
	{"Sinusoidal", "+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-60, -50, 60, 60}, false, nil},
	{"Equidistant Conic", "+proj=eqdc +lat_0=40 +lon_0=-96 +lat_1=20 +lat_2=60 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-125, 25, -65, 50}, false, nil},
	{"Lambert Conformal Conic 2SP in US feet", "+proj=lcc +lat_1=33 +lat_2=45 +lat_0=39 +lon_0=-96 +x_0=1000000 +y_0=0 +datum=WGS84 +units=us-ft", [4]float64{-125, 25, -65, 50}, false, nil},
	{"Transverse Mercator on Bessel with TOWGS84", "+proj=tmerc +lat_0=0 +lon_0=10.5 +k=1 +x_0=3500000 +y_0=0 +ellps=bessel +towgs84=598.1,73.7,418.2,0.202,0.045,-2.455,6.7 +units=m", [4]float64{5, 46, 16, 56}, false, nil},
	{"Geographic on International 1924 with TOWGS84", "+proj=longlat +ellps=intl +towgs84=-87,-98,-121,0,0,0,0 +no_defs", [4]float64{-10, 35, 30, 60}, false, nil},
	{"Polar Stereographic south, variant A", "+proj=stere +lat_0=-90 +lon_0=0 +k=0.994 +x_0=2000000 +y_0=2000000 +datum=WGS84 +units=m", [4]float64{-90, -89, 90, -60}, false, nil},
	{"Sinusoidal on a sphere (MODIS)", "+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R=6371007.181 +units=m", [4]float64{-60, -50, 60, 60}, false, nil},
	// Antarctica, whose polygon surrounds the pole, and a raster whose extent does.
	{"Polar Stereographic south around the pole", "+proj=stere +lat_0=-90 +lat_ts=-71 +lon_0=0 +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-180, -89, 180, -60}, false,
		[]float64{-3000000, -2500000, 2000000, 3500000}},
	// By code (ProjectedCSTypeGeoKey 3413; an ESRI name in the .prj): NSIDC's sea-ice grid.
	{"EPSG:3413, raster around the pole", "EPSG:3413", [4]float64{-180, 60, 180, 85}, false,
		[]float64{-2500000, -3000000, 2500000, 2000000}},
	// The raster only surrounds the pole here: GDAL's own reprojection of a polygon around
	// it from this projection (it special-cases polar stereographic only) ends at -85.6°,
	// though the polygon has vertices at -89°.
	{"Lambert Azimuthal Equal Area south polar, raster around the pole", "+proj=laea +lat_0=-90 +lon_0=0 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-90, -89, 90, -60}, false,
		[]float64{-3000000, -3000000, 3000000, 3000000}},
	{"Stereographic, oblique", "+proj=stere +lat_0=40 +lon_0=10 +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{0, 30, 20, 50}, false, nil},
	{"Robinson", "+proj=robin +lon_0=0 +x_0=0 +y_0=0 +datum=WGS84 +units=m", [4]float64{-60, -50, 60, 60}, true, nil},
}

// TestProjectionsAgainstGDAL (issue 14 §4): the Natural Earth countries, clipped to each
// projection's region, are written by GDAL (ogr2ogr) as shapefiles whose .prj holds the
// projection as WKT, and the elevation raster of spData is warped by GDAL (gdalwarp) into
// GeoTIFFs whose GeoKeys define the projection themselves (ProjectedCSTypeGeoKey 32767;
// GDAL writes a code where it finds one, as EPSG:32633 for the Transverse Mercator).
// Every file must give the WGS 84 bounding box GDAL gives (within 1e-6 degrees), except
// the cases marked unreadable, which sonda must report as such: a guessed CRS or a wrong box
// fails. The log lists which files sonda reads.
func TestProjectionsAgainstGDAL(t *testing.T) {
	dir := shareddata.Dir(t, "geo")
	requireGDAL(t)
	countries := filepath.Join(dir, "naturalearth", "naturalearth_lowres.shp")
	elev := filepath.Join(dir, "spdata", "elev.tif")
	out := t.TempDir()
	var (
		mu                sync.Mutex
		read, unsupported []string
	)
	check := func(t *testing.T, what, path string, gdal geom.BBox, mustRead bool) {
		mustNotRead := !mustRead
		ds, err := Inspect(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := ds.Layers[0]
		mu.Lock()
		defer mu.Unlock()
		switch {
		case l.CRS != nil && l.CRS.Unsupported != "" && l.BBoxWGS84.IsEmpty():
			unsupported = append(unsupported, what)
			if l.CRS.EPSG == 4326 || l.CRS.Kind == "geographic" {
				t.Errorf("reported unsupported but as geographic %+v", l.CRS)
			}
			if mustRead {
				t.Errorf("%s: reported not readable (%s), GDAL's box is %v", what, l.CRS.Unsupported, gdal.Array())
			}
		case mustNotRead:
			t.Errorf("%s: sonda has no formulas for this CRS, yet gave the box %v (GDAL's %v)", what, l.BBoxWGS84.Array(), gdal.Array())
		case near(l.BBoxWGS84, gdal, 1e-6):
			read = append(read, what)
		default:
			crs := "none"
			if l.CRS != nil {
				crs = fmt.Sprintf("%+v", *l.CRS)
			}
			t.Errorf("WGS 84 bbox %v, GDAL %v (CRS %s): a wrong answer where sonda should say it cannot read the projection", l.BBoxWGS84.Array(), gdal.Array(), crs)
		}
	}
	// The cases run in parallel (GDAL's tools are single-threaded processes); the group
	// returns when all have ended.
	t.Run("cases", func(t *testing.T) {
		for _, c := range projectionCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				base := strings.Map(func(r rune) rune {
					if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
						return r
					}
					return '_'
				}, c.name)
				shp := filepath.Join(out, base+".shp")
				w := c.window
				run(t, "ogr2ogr", "-clipsrc", fmt.Sprint(w[0]), fmt.Sprint(w[1]), fmt.Sprint(w[2]), fmt.Sprint(w[3]), "-t_srs", c.proj, shp, countries)
				check(t, c.name+" (.prj)", shp, ogrBBox(t, shp, "-t_srs", "EPSG:4326"), !c.unreadable)

				tif := filepath.Join(out, base+".tif")
				warp := []string{"-q", "-t_srs", c.proj}
				if e := c.extent; e != nil {
					warp = append(warp, "-te", fmt.Sprint(e[0]), fmt.Sprint(e[1]), fmt.Sprint(e[2]), fmt.Sprint(e[3]), "-ts", "50", "50")
				}
				run(t, "gdalwarp", append(warp, elev, tif)...)
				wgs := gdalEdges(t, tif)
				check(t, c.name+" (GeoKeys)", tif, wgs, !c.unreadable)
			})
		}
	})
	sort.Strings(read)
	sort.Strings(unsupported)
	t.Logf("read as GDAL does (%d): %s", len(read), strings.Join(read, ", "))
	t.Logf("reported as not readable (%d): %s", len(unsupported), strings.Join(unsupported, ", "))
}

// gdalEdges is the WGS 84 box of the raster's outline as GDAL transforms it from the
// file's own CRS and georeferencing (gdaltransform with pixel and line input): 21 points
// along each edge, as sonda takes them, since a projected raster's edges curve in degrees
// and its corners alone (gdalinfo's wgs84Extent) miss the bulge; plus each pole that GDAL
// places inside the raster, which the raster then covers with every longitude.
func gdalEdges(t *testing.T, tif string) geom.BBox {
	var info struct {
		Size []float64 `json:"size"`
	}
	if err := json.Unmarshal(run(t, "gdalinfo", "-json", tif), &info); err != nil || len(info.Size) != 2 {
		t.Fatalf("gdalinfo %s: size %v (%v)", tif, info.Size, err)
	}
	w, h := info.Size[0], info.Size[1]
	var in strings.Builder
	const n = 20
	for i := 0; i <= n; i++ {
		f := float64(i) / n
		fmt.Fprintf(&in, "%.10f 0\n%.10f %.10f\n0 %.10f\n%.10f %.10f\n", f*w, f*w, h, f*h, w, f*h)
	}
	box := geom.Empty()
	for _, line := range strings.Split(strings.TrimSpace(gdaltransform(t, in.String(), "-t_srs", "EPSG:4326", "-output_xy", tif)), "\n") {
		var lon, lat float64
		if _, err := fmt.Sscan(line, &lon, &lat); err != nil {
			t.Fatalf("gdaltransform said %q", line)
		}
		box.Extend(lon, lat)
	}
	for i, line := range strings.Split(strings.TrimSpace(gdaltransform(t, "0 90\n0 -90\n", "-i", "-t_srs", "EPSG:4326", tif)), "\n") {
		var col, row float64
		if _, err := fmt.Sscan(line, &col, &row); err != nil || i > 1 {
			continue // a pole the projection cannot place
		}
		if col >= 0 && col <= w && row >= 0 && row <= h {
			lat := []float64{90, -90}[i]
			box.Extend(-180, lat)
			box.Extend(180, lat)
		}
	}
	return box
}

func gdaltransform(t *testing.T, input string, args ...string) string {
	t.Helper()
	cmd := exec.Command("gdaltransform", args...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdaltransform %v: %v", args, err)
	}
	return string(out)
}
