package geo

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"github.com/sonda-search/sonda/internal/shareddata"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func inspect(t *testing.T, path string, opts Options) *Dataset {
	t.Helper()
	ds, err := Inspect(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", filepath.Base(path), err)
	}
	return ds
}

func TestTextFormats(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		format, typ   string
		features      int
		bbox          geom.BBox
		epsg          int
	}{
		{"pts.geojson", `{"type":"FeatureCollection","features":[
			{"type":"Feature","properties":{"nome":"Campinas","pop":1},"geometry":{"type":"Point","coordinates":[-47.06,-22.9]}},
			{"type":"Feature","properties":{"nome":"Santos"},"geometry":{"type":"MultiPoint","coordinates":[[-46.33,-23.96],[-46.3,-23.9]]}}]}`,
			FormatGeoJSON, geom.TypeMultiPoint, 2, geom.BBox{MinX: -47.06, MinY: -23.96, MaxX: -46.3, MaxY: -22.9}, 4326},
		{"utm.json", `{"type":"Feature","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::31983"}},"properties":{},
			"geometry":{"type":"Polygon","coordinates":[[[333000,7394000],[334000,7394000],[334000,7395000],[333000,7394000]]]}}`,
			FormatGeoJSON, geom.TypePolygon, 1, geom.BBox{MinX: 333000, MinY: 7394000, MaxX: 334000, MaxY: 7395000}, 31983},
		{"doc.kml", `<?xml version="1.0" encoding="ISO-8859-1"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>Cidades</name>
			<Placemark><name>S` + "\xe3" + `o Paulo</name><Point><coordinates>-46.63,-23.55,0</coordinates></Point></Placemark>
			<Placemark><name>Rio</name><ExtendedData><Data name="uf"><value>RJ</value></Data></ExtendedData><Point><coordinates>-43.2,-22.9</coordinates></Point></Placemark>
			</Document></kml>`, FormatKML, geom.TypePoint, 2, geom.BBox{MinX: -46.63, MinY: -23.55, MaxX: -43.2, MaxY: -22.9}, 4326},
		{"trip.gpx", `<gpx version="1.1" creator="t"><wpt lat="-23.5" lon="-46.6"><name>casa</name></wpt><wpt lat="-23.4" lon="-46.5"/></gpx>`,
			FormatGPX, geom.TypePoint, 2, geom.BBox{MinX: -46.6, MinY: -23.5, MaxX: -46.5, MaxY: -23.4}, 4326},
		{"wfs.gml", `<wfs:FeatureCollection xmlns:wfs="http://www.opengis.net/wfs" xmlns:gml="http://www.opengis.net/gml" xmlns:x="urn:x">
			<gml:featureMember><x:rio><x:nome>Tietê</x:nome><x:geom><gml:LineString srsName="urn:ogc:def:crs:EPSG::4326"><gml:posList>-23.5 -46.6 -23.4 -46.9</gml:posList></gml:LineString></x:geom></x:rio></gml:featureMember>
			<gml:featureMember><x:rio><x:nome>Pinheiros</x:nome><x:geom><gml:LineString srsName="urn:ogc:def:crs:EPSG::4326"><gml:posList>-23.6 -46.7 -23.5 -46.7</gml:posList></gml:LineString></x:geom></x:rio></gml:featureMember>
			</wfs:FeatureCollection>`, FormatGML, geom.TypeLineString, 2, geom.BBox{MinX: -46.9, MinY: -23.6, MaxX: -46.6, MaxY: -23.4}, 4326},
		{"stations.csv", "id;nome;latitude;longitude\n1;Sé;-23,55;-46,63\n2;Luz;-23.53;-46.63\nbad;row;x;y\n",
			FormatCSV, geom.TypePoint, 2, geom.BBox{MinX: -46.63, MinY: -23.55, MaxX: -46.63, MaxY: -23.53}, 4326},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := inspect(t, write(t, dir, tt.name, []byte(tt.content)), Options{})
			l := ds.Layers[0]
			if ds.Format != tt.format || l.GeometryType != tt.typ || l.Features != tt.features {
				t.Errorf("format %s type %s features %d; want %s %s %d", ds.Format, l.GeometryType, l.Features, tt.format, tt.typ, tt.features)
			}
			if !near(l.BBox, tt.bbox, 1e-9) {
				t.Errorf("bbox %v, want %v", l.BBox.Array(), tt.bbox.Array())
			}
			if l.CRS == nil || l.CRS.EPSG != tt.epsg || ds.BBox.IsEmpty() {
				t.Errorf("crs %+v, wgs84 box %v", l.CRS, ds.BBox)
			}
		})
	}
	// KML in ISO-8859-1 is decoded; its placemark names are fields.
	ds := inspect(t, filepath.Join(dir, "doc.kml"), Options{Places: NewPlaceFinder(nil)})
	if ds.Layers[0].Name != "Cidades" || len(ds.Places) == 0 || ds.Places[0].Name != "São Paulo" {
		t.Errorf("KML: layer %q places %+v", ds.Layers[0].Name, ds.Places)
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"page.html":   "<html><body>not data</body></html>",
		"notes.txt":   "hello",
		"bad.geojson": `{"type":"FeatureCollection","features":[`,
		"empty.gpx":   `<gpx></gpx>`,
		"bad.shp":     "\x00\x00\x27\x0a short",
		"plain.csv":   "a,b\n1,2\n",
	} {
		_, err := Inspect(context.Background(), write(t, dir, name, []byte(content)), Options{})
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
	if _, err := Inspect(context.Background(), write(t, dir, "x.bin", []byte("junk")), Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown format: %v", err)
	}
}

// shapefileZip packs a shapefile of the shared test data into a zip, under folder, with
// the member names given by rename (nil keeps them).
func shapefileZip(t *testing.T, base, folder string, rename func(string) string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	matches, _ := filepath.Glob(base + ".*")
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(m)
		if rename != nil {
			name = rename(name)
		}
		w, _ := zw.Create(folder + name)
		w.Write(data)
	}
	zw.Close()
	return b.Bytes()
}

func TestZips(t *testing.T) {
	td := shareddata.Dir(t, "geo")
	dir := t.TempDir()
	cities := filepath.Join(td, "naturalearth", "naturalearth_cities")
	// Sub-folders, upper-case extensions, a nested archive and a stray file.
	var outer bytes.Buffer
	zw := zip.NewWriter(&outer)
	w, _ := zw.Create("dados/2024/inner.zip")
	w.Write(shapefileZip(t, cities, "camadas/", strings.ToUpper))
	w, _ = zw.Create("LEIAME.doc")
	w.Write([]byte("x"))
	zw.Close()
	ds := inspect(t, write(t, dir, "pacote.zip", outer.Bytes()), Options{Places: NewPlaceFinder(nil)})
	if ds.Container != FormatZip || ds.Format != FormatShapefile || len(ds.Layers) != 1 {
		t.Fatalf("%+v", ds)
	}
	l := ds.Layers[0]
	if l.Features != 243 || l.CRS == nil || l.CRS.EPSG != 4326 || l.Encoding != "ISO-8859-1" || !strings.Contains(l.Member, "inner.zip!/camadas/") {
		t.Errorf("layer: %d features, crs %+v, encoding %q, member %q", l.Features, l.CRS, l.Encoding, l.Member)
	}
	if len(ds.Places) < 100 || len(ds.Covers) == 0 {
		t.Errorf("%d places, %d covers", len(ds.Places), len(ds.Covers))
	}
	if len(ds.Skipped) != 1 || !strings.Contains(ds.Skipped[0], "LEIAME.doc") {
		t.Errorf("skipped %q", ds.Skipped)
	}
	// Temporary files are gone.
	tmp := t.TempDir()
	inspect(t, filepath.Join(dir, "pacote.zip"), Options{TempDir: tmp})
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
	// A zip bomb is refused, and leaves nothing behind either.
	var bomb bytes.Buffer
	zw = zip.NewWriter(&bomb)
	w, _ = zw.Create("zeros.shp")
	w.Write(make([]byte, 4<<20))
	zw.Close()
	if _, err := Inspect(context.Background(), write(t, dir, "bomb.zip", bomb.Bytes()), Options{TempDir: tmp}); err == nil || !strings.Contains(err.Error(), "bomb") {
		t.Errorf("bomb: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temporary files left after a bomb: %v", entries)
	}
}

// dbf writes a dBASE table of text columns (the thesis's descriptor and gazetteer cases).
func dbf(names []string, rows ...[]string) []byte {
	width := 30
	var b bytes.Buffer
	h := make([]byte, 32)
	h[0], h[1], h[2], h[3] = 3, 124, 1, 1
	binary.LittleEndian.PutUint32(h[4:], uint32(len(rows)))
	binary.LittleEndian.PutUint16(h[8:], uint16(32+32*len(names)+1))
	binary.LittleEndian.PutUint16(h[10:], uint16(1+width*len(names)))
	b.Write(h)
	for _, n := range names {
		fd := make([]byte, 32)
		copy(fd, n)
		fd[11], fd[16] = 'C', byte(width)
		b.Write(fd)
	}
	b.WriteByte(0x0D)
	for _, r := range rows {
		b.WriteByte(' ')
		for _, v := range r {
			cell := bytes.Repeat([]byte(" "), width)
			copy(cell, v)
			b.Write(cell)
		}
	}
	b.WriteByte(0x1A)
	return b.Bytes()
}

// TestPlaceNames follows the thesis's procedure (seed 000 §3.7): a descriptive column name
// ("Cidade") makes its values places; cryptic names ("nm01" holding cities, "cty1996"
// holding countries) are caught by the gazetteer test on their first 5 values; a column of
// other words is not.
func TestPlaceNames(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "rios.dbf", dbf([]string{"CIDADE", "nm01", "cty1996", "obs"},
		[]string{"Vila Inexistente", "Campinas", "Brasil", "asfalto"},
		[]string{"Outra Vila", "Santos", "Argentina", "terra"},
		[]string{"", "Sorocaba", "Chile", "cascalho"},
		[]string{"", "Xyzzy", "Peru", "asfalto"},
		[]string{"", "Jundiaí", "Uruguay", "terra"},
	))
	ds := inspect(t, path, Options{Places: NewPlaceFinder(nil)})
	got := map[string]string{}
	for _, p := range ds.Places {
		got[p.Name] = p.Field
	}
	for name, field := range map[string]string{"Vila Inexistente": "CIDADE", "Campinas": "nm01", "Xyzzy": "nm01", "Brasil": "cty1996", "Uruguay": "cty1996"} {
		if got[name] != field {
			t.Errorf("%q: field %q, want %q (all: %v)", name, got[name], field, got)
		}
	}
	if _, ok := got["asfalto"]; ok {
		t.Errorf("the obs column counted as places: %v", got)
	}
	if ds.Class != "rivers" || ds.Format != FormatDBF || ds.Layers[0].Features != 5 {
		t.Errorf("class %q format %q features %d", ds.Class, ds.Format, ds.Layers[0].Features)
	}
	// "Any of 5" would take a column where one value is a coincidence; the majority rule does not.
	f := NewPlaceFinder(nil)
	if f.gazetteerColumn([]string{"Paris", "John", "Mary", "Ann", "Bob"}) {
		t.Error("one place-like value made a column of people a place column")
	}
	f.MinGazetteerHits = 1
	if !f.gazetteerColumn([]string{"Paris", "John", "Mary", "Ann", "Bob"}) {
		t.Error("MinGazetteerHits 1 (the thesis's 'any') did not accept the column")
	}
}

func TestClassOf(t *testing.T) {
	for name, want := range map[string]string{
		"rios.shp": "rivers", "cidades.shp": "cities", "RODOVIAS_SP.zip": "roads", "limite_municipal.shp": "boundaries",
		"vt02_d00_shp.zip": "", "PC_FLU_Shape_020106.zip": "", "hidrografia.kml": "rivers", "uso_do_solo.gpkg": "land use",
		"srtm_elev.tif": "elevation", "world.shp": "countries", "tracklines.zip": "tracks",
	} {
		if got := ClassOf(name); got != want {
			t.Errorf("ClassOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestThumbnail(t *testing.T) {
	td := shareddata.Dir(t, "geo")
	for _, f := range []string{"spdata/boston_tracts.shp", "spdata/elev.tif", "spdata/cycle_hire.geojson", "spdata/world.gpkg"} {
		ds := inspect(t, filepath.Join(td, f), Options{})
		b, err := ds.Thumbnail(ThumbnailSize)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Something was drawn: not every pixel is the background.
		bg := img.At(0, 0)
		drawn := 0
		for y := 0; y < ThumbnailSize; y += 4 {
			for x := 0; x < ThumbnailSize; x += 4 {
				if img.At(x, y) != bg {
					drawn++
				}
			}
		}
		if img.Bounds().Dx() != ThumbnailSize || drawn < 20 {
			t.Errorf("%s: %v, %d drawn samples", f, img.Bounds(), drawn)
		}
	}
	empty := &Dataset{Layers: []*Layer{{BBox: geom.Empty()}}}
	if _, err := empty.Thumbnail(64); !errors.Is(err, ErrNothingToDraw) {
		t.Errorf("empty: %v", err)
	}
}

func BenchmarkInspectShapefile(b *testing.B) {
	path := filepath.Join(shareddata.Dir(b, "geo"), "spdata", "boston_tracts.shp")
	finder := NewPlaceFinder(nil)
	for b.Loop() {
		if _, err := Inspect(context.Background(), path, Options{Places: finder}); err != nil {
			b.Fatal(err)
		}
	}
}

const wmsCapabilities = `<?xml version="1.0"?>
<WMS_Capabilities version="1.3.0" xmlns="http://www.opengis.net/wms"><Service><Name>WMS</Name><Title>Mapas</Title></Service>
<Capability><Layer><Title>Todas</Title>
 <Layer queryable="1"><Name>ibge:municipios</Name><Title>Municípios de São Paulo</Title>
  <EX_GeographicBoundingBox><westBoundLongitude>-53.1</westBoundLongitude><eastBoundLongitude>-44.2</eastBoundLongitude>
  <southBoundLatitude>-25.3</southBoundLatitude><northBoundLatitude>-19.8</northBoundLatitude></EX_GeographicBoundingBox></Layer>
 <Layer><Name>ibge:rios</Name><Title>Rios</Title></Layer>
</Layer></Capability></WMS_Capabilities>`

const wfsCapabilities = `<wfs:WFS_Capabilities version="2.0.0" xmlns:wfs="http://www.opengis.net/wfs/2.0" xmlns:ows="http://www.opengis.net/ows/1.1">
<wfs:FeatureTypeList><wfs:FeatureType><wfs:Name>x:bairros</wfs:Name><wfs:Title>Bairros</wfs:Title>
<ows:WGS84BoundingBox><ows:LowerCorner>-46.8 -23.7</ows:LowerCorner><ows:UpperCorner>-46.4 -23.4</ows:UpperCorner></ows:WGS84BoundingBox>
</wfs:FeatureType></wfs:FeatureTypeList></wfs:WFS_Capabilities>`

func TestCapabilities(t *testing.T) {
	dir := t.TempDir()
	ds := inspect(t, write(t, dir, "ows", []byte(wmsCapabilities)), Options{})
	if ds.Format != FormatOGC || len(ds.Layers) != 2 || ds.Layers[0].Name != "ibge:municipios" || ds.Layers[1].Name != "ibge:rios" {
		t.Fatalf("WMS: %+v", ds.Layers)
	}
	if b := ds.Layers[0].BBoxWGS84; b.MinX != -53.1 || b.MaxY != -19.8 || !ds.Layers[1].BBoxWGS84.IsEmpty() {
		t.Errorf("WMS boxes %v %v", b, ds.Layers[1].BBoxWGS84)
	}
	ds = inspect(t, write(t, dir, "wfs.xml", []byte(wfsCapabilities)), Options{})
	if len(ds.Layers) != 1 || ds.Layers[0].Name != "x:bairros" || ds.BBox != (geom.BBox{MinX: -46.8, MinY: -23.7, MaxX: -46.4, MaxY: -23.4}) {
		t.Errorf("WFS: %+v %v", ds.Layers, ds.BBox)
	}
}

// TestInRings: the even-odd rule the pole cover uses, with a point on an edge not inside.
func TestInRings(t *testing.T) {
	square := func(r float64) []geom.Point {
		return []geom.Point{{X: -r, Y: -r}, {X: r, Y: -r}, {X: r, Y: r}, {X: -r, Y: r}, {X: -r, Y: -r}}
	}
	for _, tt := range []struct {
		name  string
		parts [][]geom.Point
		x, y  float64
		want  bool
	}{
		{"inside", [][]geom.Point{square(10)}, 0, 0, true},
		{"outside", [][]geom.Point{square(10)}, 20, 0, false},
		{"in a hole", [][]geom.Point{square(10), square(5)}, 0, 0, false},
		{"between a hole and the shell", [][]geom.Point{square(10), square(5)}, 7, 0, true},
		{"on an edge", [][]geom.Point{square(10)}, 10, 3, false},
		{"on a chord through it", [][]geom.Point{{{X: -10, Y: 0}, {X: 10, Y: 0}, {X: 0, Y: 10}, {X: -10, Y: 0}}}, 0, 1e-9, false},
	} {
		if got := inRings(tt.parts, tt.x, tt.y); got != tt.want {
			t.Errorf("%s: inRings = %v, want %v", tt.name, got, tt.want)
		}
	}
}
