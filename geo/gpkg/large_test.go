package gpkg

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// gpPoint is a GeoPackage binary point: the "GP" header (version 0, little-endian, no
// envelope) and a little-endian WKB point.
func gpPoint(srs int32, x, y float64) []byte {
	b := []byte{'G', 'P', 0, 0x01}
	b = binary.LittleEndian.AppendUint32(b, uint32(srs))
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

// writeGeoPackage writes a one-layer GeoPackage of n points with a few text attributes;
// point i is at (i/1000, i/2000), so the last rows widen the box.
func writeGeoPackage(tb testing.TB, path string, n int) {
	tb.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT, srs_id INTEGER PRIMARY KEY, organization TEXT, organization_coordsys_id INTEGER, definition TEXT, description TEXT)`,
		`INSERT INTO gpkg_spatial_ref_sys VALUES ('WGS 84', 4326, 'EPSG', 4326, 'GEOGCS["WGS 84"]', '')`,
		`CREATE TABLE gpkg_contents (table_name TEXT PRIMARY KEY, data_type TEXT, identifier TEXT, description TEXT, last_change TEXT, min_x REAL, min_y REAL, max_x REAL, max_y REAL, srs_id INTEGER)`,
		`INSERT INTO gpkg_contents VALUES ('stations', 'features', 'stations', '', '', NULL, NULL, NULL, NULL, 4326)`,
		`CREATE TABLE gpkg_geometry_columns (table_name TEXT, column_name TEXT, geometry_type_name TEXT, srs_id INTEGER, z INTEGER, m INTEGER)`,
		`INSERT INTO gpkg_geometry_columns VALUES ('stations', 'geom', 'POINT', 4326, 0, 0)`,
		`CREATE TABLE stations (fid INTEGER PRIMARY KEY, geom BLOB, name TEXT, city TEXT, operator TEXT, notes TEXT)`,
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO stations (geom, name, city, operator, notes) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		if _, err := ins.Exec(gpPoint(4326, float64(i)/1000, float64(i)/2000), fmt.Sprintf("station %d", i), "Boston",
			"Transit authority", "Opened in the spring; renovated twice since, most recently after the flood."); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// TestReadLargeLayer: a layer larger than MaxRows keeps the first MaxRows attribute rows,
// while its count, box and sketch cover every feature.
func TestReadLargeLayer(t *testing.T) {
	const n = MaxRows + 1500
	path := filepath.Join(t.TempDir(), "stations.gpkg")
	writeGeoPackage(t, path, n)
	layers, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers", len(layers))
	}
	l := layers[0]
	if l.Features != n || len(l.Rows) != MaxRows || len(l.Fields) != 4 || l.BadGeometries != 0 {
		t.Fatalf("%d features, %d rows, fields %v, %d bad geometries; want %d, %d, 4, 0", l.Features, len(l.Rows), l.Fields, l.BadGeometries, n, MaxRows)
	}
	if l.Rows[0][0] != "station 0" || l.Rows[MaxRows-1][0] != fmt.Sprintf("station %d", MaxRows-1) || l.Rows[0][1] != "Boston" {
		t.Errorf("rows start %v, end %v", l.Rows[0], l.Rows[MaxRows-1])
	}
	last := float64(n - 1)
	if l.BBox.MinX != 0 || l.BBox.MinY != 0 || l.BBox.MaxX != last/1000 || l.BBox.MaxY != last/2000 {
		t.Errorf("box %+v, want (0,0)-(%v,%v) from every feature", l.BBox, last/1000, last/2000)
	}
	if l.Sketch.Vertices() == 0 {
		t.Error("empty sketch")
	}
}

// BenchmarkReadLargeLayer: describing a 50,000-feature layer with four text attributes.
func BenchmarkReadLargeLayer(b *testing.B) {
	path := filepath.Join(b.TempDir(), "stations.gpkg")
	writeGeoPackage(b, path, 50000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Read(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}
