package geo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzInspect feeds arbitrary bytes, under every extension the format sniffing looks at, to
// Inspect: broken files must give errors, never panics.
func FuzzInspect(f *testing.F) {
	exts := []string{".shp", ".dbf", ".geojson", ".kml", ".kmz", ".gpx", ".gml", ".csv", ".tif", ".gpkg", ".zip", ".xml"}
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1},"geometry":{"type":"Point","coordinates":[1,2]}}]}`), uint8(2))
	f.Add([]byte(`<kml><Placemark><name>x</name><Point><coordinates>1,2</coordinates></Point></Placemark></kml>`), uint8(3))
	f.Add([]byte(`<gpx><wpt lat="1" lon="2"/><trk><trkseg><trkpt lat="1" lon="2"/></trkseg></trk></gpx>`), uint8(5))
	f.Add([]byte("lat,lon,name\n1,2,a\n3,4,b\n"), uint8(7))
	f.Add([]byte(wmsCapabilities), uint8(11))
	f.Fuzz(func(t *testing.T, data []byte, ext uint8) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f"+exts[int(ext)%len(exts)])
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := Inspect(context.Background(), p, Options{TempDir: dir, MaxBytes: 1 << 20})
		if err == nil {
			_, _ = ds.Thumbnail(32)
		}
	})
}
