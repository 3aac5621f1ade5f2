package gpkg

import (
	"context"
	"github.com/sonda-search/sonda/internal/shareddata"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

func TestRead(t *testing.T) {
	layers, err := Read(context.Background(), filepath.Join(shareddata.Dir(t, "geo"), "spdata", "world.gpkg"))
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers", len(layers))
	}
	l := layers[0]
	if l.Name != "world" || l.GeometryType != geom.TypeMultiPolygon || l.OrgCode != 4326 || l.Features != 177 || l.BadGeometries != 0 {
		t.Errorf("%+v", l)
	}
	// The geometries' extent agrees with the one gpkg_contents states.
	a, b := l.BBox.Array(), l.ContentsBBox.Array()
	if l.BBox.IsEmpty() || math.Abs(a[0]-b[0])+math.Abs(a[1]-b[1])+math.Abs(a[2]-b[2])+math.Abs(a[3]-b[3]) > 1e-9 {
		t.Errorf("bbox %v, contents say %v", l.BBox, l.ContentsBBox)
	}
	if len(l.Fields) == 0 || len(l.Rows) != 177 || l.Sketch.Vertices() == 0 {
		t.Errorf("fields %v, %d rows, %d vertices", l.Fields, len(l.Rows), l.Sketch.Vertices())
	}
}

func TestReadNotGeoPackage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.gpkg")
	if err := os.WriteFile(path, []byte("this is not sqlite"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(context.Background(), path); err == nil {
		t.Error("no error for a text file")
	}
}
