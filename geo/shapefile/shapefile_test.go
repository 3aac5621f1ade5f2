package shapefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/sonda-search/sonda/internal/shareddata"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

// shp builds a .shp in memory: header type t, then the records (each a type and content).
func shp(t ShapeType, bbox geom.BBox, records ...[]byte) []byte {
	var body bytes.Buffer
	for i, r := range records {
		var rh [8]byte
		binary.BigEndian.PutUint32(rh[0:], uint32(i+1))
		binary.BigEndian.PutUint32(rh[4:], uint32(len(r)/2))
		body.Write(rh[:])
		body.Write(r)
	}
	h := make([]byte, headerLen)
	binary.BigEndian.PutUint32(h[0:], 9994)
	binary.BigEndian.PutUint32(h[24:], uint32((headerLen+body.Len())/2))
	binary.LittleEndian.PutUint32(h[28:], 1000)
	binary.LittleEndian.PutUint32(h[32:], uint32(t))
	for i, v := range bbox.Array() {
		binary.LittleEndian.PutUint64(h[36+8*i:], math.Float64bits(v))
	}
	return append(h, body.Bytes()...)
}

func le(vals ...any) []byte {
	var b bytes.Buffer
	for _, v := range vals {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

func pointRec(x, y float64) []byte { return le(int32(Point), x, y) }

func polygonRec(parts ...[]geom.Point) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := le(int32(Polygon), 0.0, 0.0, 0.0, 0.0, int32(len(parts)), int32(n))
	start := 0
	for _, p := range parts {
		b = append(b, le(int32(start))...)
		start += len(p)
	}
	for _, p := range parts {
		for _, pt := range p {
			b = append(b, le(pt.X, pt.Y)...)
		}
	}
	return b
}

func readAll(t *testing.T, data []byte) ([]Record, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

func TestReader(t *testing.T) {
	square := []geom.Point{{X: 0, Y: 0}, {X: 0, Y: 1}, {X: 1, Y: 1}, {X: 1, Y: 0}, {X: 0, Y: 0}}
	hole := []geom.Point{{X: .2, Y: .2}, {X: .8, Y: .2}, {X: .8, Y: .8}, {X: .2, Y: .2}}
	data := shp(Polygon, geom.BBox{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}, polygonRec(square, hole), le(int32(Null)), polygonRec(square))
	recs, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[1].Type != Null || len(recs[0].Shape.Parts) != 2 || len(recs[0].Shape.Parts[1]) != 4 || recs[2].Number != 3 {
		t.Fatalf("records: %+v", recs)
	}
	r, _ := NewReader(bytes.NewReader(data), 0)
	if r.Header.Type != Polygon || r.Header.BBox.MaxX != 1 || r.Header.Length != int64(len(data)) {
		t.Errorf("header %+v", r.Header)
	}
	if Polygon.GeometryType() != geom.TypePolygon || PointZ.GeometryType() != geom.TypePoint || MultiPointM.GeometryType() != geom.TypeMultiPoint {
		t.Error("GeometryType")
	}

	pts, err := readAll(t, shp(Point, geom.BBox{}, pointRec(3, 4), pointRec(5, 6)))
	if err != nil || len(pts) != 2 || pts[1].Shape.Parts[0][0] != (geom.Point{X: 5, Y: 6}) {
		t.Fatalf("points %+v %v", pts, err)
	}
}

func TestReaderErrors(t *testing.T) {
	good := shp(Point, geom.BBox{}, pointRec(1, 2))
	tests := map[string][]byte{
		"short header":    good[:50],
		"wrong code":      append([]byte{0, 0, 0, 1}, good[4:]...),
		"record too long": func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[104:], 1<<30); return b }(),
		"cut record":      good[:len(good)-4],
		"bad type":        shp(Point, geom.BBox{}, le(int32(77), 1.0, 2.0)),
		"too many points": shp(Polygon, geom.BBox{}, le(int32(Polygon), 0.0, 0.0, 0.0, 0.0, int32(1), int32(1000000), int32(0))),
		"bad part index":  shp(Polygon, geom.BBox{}, le(int32(Polygon), 0.0, 0.0, 0.0, 0.0, int32(2), int32(1), int32(0), int32(5), 1.0, 1.0)),
	}
	for name, data := range tests {
		if _, err := readAll(t, data); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "shapefile") {
			t.Errorf("%s: error %q does not name the format", name, err)
		}
	}
	if _, err := readAll(t, append([]byte("<html>"), make([]byte, 200)...)); !errors.Is(err, ErrNotShapefile) {
		t.Errorf("html: %v", err)
	}
}

// dbf builds a .dbf with C fields of the given widths.
func dbf(lang byte, names []string, widths []int, rows ...[]string) []byte {
	recLen := 1
	for _, w := range widths {
		recLen += w
	}
	headerLen := 32 + 32*len(names) + 1
	h := make([]byte, 32)
	h[0], h[1], h[2], h[3] = 3, 124, 5, 17
	binary.LittleEndian.PutUint32(h[4:], uint32(len(rows)))
	binary.LittleEndian.PutUint16(h[8:], uint16(headerLen))
	binary.LittleEndian.PutUint16(h[10:], uint16(recLen))
	h[29] = lang
	var b bytes.Buffer
	b.Write(h)
	for i, n := range names {
		fd := make([]byte, 32)
		copy(fd, n)
		fd[11] = 'C'
		fd[16] = byte(widths[i])
		b.Write(fd)
	}
	b.WriteByte(0x0D)
	for _, row := range rows {
		flag := byte(' ')
		if row[0] == "*deleted*" {
			flag = '*'
		}
		b.WriteByte(flag)
		for i, v := range row {
			cell := make([]byte, widths[i])
			for j := range cell {
				cell[j] = ' '
			}
			copy(cell, v)
			b.Write(cell)
		}
	}
	b.WriteByte(0x1A)
	return b.Bytes()
}

func TestDBF(t *testing.T) {
	latin1 := "S\xe3o Paulo" // "São Paulo" in ISO-8859-1 / windows-1252
	cp850 := "S\xc6o Paulo"  // in IBM850
	tests := []struct {
		name     string
		lang     byte
		cpg      string
		value    string
		wantEnc  string
		wantText string
	}{
		{"cpg utf-8", 0, "UTF-8", "São Paulo", "UTF-8", "São Paulo"},
		{"cpg 1252", 0, "1252\r\n", latin1, "windows-1252", "São Paulo"},
		{"cpg 88591", 0, "88591", latin1, "ISO-8859-1", "São Paulo"},
		{"ldid 0x57", 0x57, "", latin1, "ISO-8859-1", "São Paulo"},
		{"ldid 0x02 cp850", 0x02, "", cp850, "IBM850", "São Paulo"},
		{"no hint, utf-8 bytes", 0, "", "São Paulo", "", "São Paulo"},
		{"no hint, latin-1 bytes", 0, "", latin1, "", "São Paulo"},
		{"unknown cpg falls back", 0, "martian", latin1, "", "São Paulo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := dbf(tt.lang, []string{"NOME", "UF"}, []int{20, 2}, []string{tt.value, "SP"}, []string{"*deleted*", "XX"}, []string{"Campinas", "SP"})
			d, err := OpenDBF(bytes.NewReader(data), tt.cpg)
			if err != nil {
				t.Fatal(err)
			}
			if d.Encoding != tt.wantEnc || d.Records != 3 || len(d.Fields) != 2 || d.Fields[0].Name != "NOME" || d.Updated.Year() != 2024 {
				t.Errorf("header: enc %q records %d fields %+v updated %v", d.Encoding, d.Records, d.Fields, d.Updated)
			}
			row, err := d.Next()
			if err != nil || row[0] != tt.wantText || row[1] != "SP" {
				t.Fatalf("row 1 = %q, %v", row, err)
			}
			row, err = d.Next() // the deleted row is skipped
			if err != nil || row[0] != "Campinas" {
				t.Fatalf("row 2 = %q, %v", row, err)
			}
			if _, err := d.Next(); err != io.EOF {
				t.Errorf("after the last row: %v", err)
			}
		})
	}
}

func TestDBFErrors(t *testing.T) {
	good := dbf(0, []string{"A"}, []int{5}, []string{"x"})
	for name, data := range map[string][]byte{
		"short":           good[:10],
		"header too long": func() []byte { b := bytes.Clone(good); binary.LittleEndian.PutUint16(b[8:], 60000); return b }(),
		"fields overflow": func() []byte { b := bytes.Clone(good); binary.LittleEndian.PutUint16(b[10:], 2); return b }(),
	} {
		if _, err := OpenDBF(bytes.NewReader(data), ""); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	cut := good[:len(good)-4]
	d, err := OpenDBF(bytes.NewReader(cut), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Next(); err == nil || err == io.EOF {
		t.Errorf("cut record: %v", err)
	}
}

func TestRealFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shareddata.Dir(t, "geo"), "*", "*.shp"))
	if len(files) == 0 {
		t.Fatal("no .shp files in the shared test data")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := readAll(t, data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		f, err := os.Open(strings.TrimSuffix(path, ".shp") + ".dbf")
		if err != nil {
			t.Fatal(err)
		}
		d, err := OpenDBF(f, "")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows := 0
		for {
			if _, err := d.Next(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			rows++
		}
		f.Close()
		if rows != len(recs) || rows != d.Records {
			t.Errorf("%s: %d shapes, %d rows, header says %d", filepath.Base(path), len(recs), rows, d.Records)
		}
	}
}

func FuzzReader(f *testing.F) {
	square := []geom.Point{{X: 0, Y: 0}, {X: 0, Y: 1}, {X: 1, Y: 1}, {X: 0, Y: 0}}
	f.Add(shp(Polygon, geom.BBox{}, polygonRec(square), le(int32(Null))))
	f.Add(shp(Point, geom.BBox{}, pointRec(1, 2)))
	f.Add(shp(MultiPoint, geom.BBox{}, le(int32(MultiPoint), 0.0, 0.0, 0.0, 0.0, int32(1), 5.0, 6.0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for i := 0; i < 10000; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

func FuzzDBF(f *testing.F) {
	f.Add(dbf(0x57, []string{"NOME", "UF"}, []int{20, 2}, []string{"S\xe3o Paulo", "SP"}), "")
	f.Add(dbf(0, []string{"A"}, []int{5}, []string{"x"}), "UTF-8")
	f.Fuzz(func(t *testing.T, data []byte, cpg string) {
		d, err := OpenDBF(bytes.NewReader(data), cpg)
		if err != nil {
			return
		}
		for i := 0; i < 10000; i++ {
			if _, err := d.Next(); err != nil {
				return
			}
		}
	})
}

func BenchmarkReader(b *testing.B) {
	path := filepath.Join(shareddata.Dir(b, "geo"), "spdata", "world.shp")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, _ := NewReader(bytes.NewReader(data), int64(len(data)))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
