package wkb

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

func w(order binary.ByteOrder, vals ...any) []byte {
	var b bytes.Buffer
	if order == binary.LittleEndian {
		b.WriteByte(1)
	} else {
		b.WriteByte(0)
	}
	for _, v := range vals {
		_ = binary.Write(&b, order, v)
	}
	return b.Bytes()
}

func TestDecode(t *testing.T) {
	le := binary.LittleEndian
	square := []any{uint32(5), 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0}
	poly := w(le, append([]any{uint32(3), uint32(1)}, square...)...)
	multi := append(w(le, uint32(6), uint32(2)), append(poly, poly...)...)
	tests := []struct {
		name      string
		data      []byte
		wantType  string
		wantKind  geom.Kind
		wantParts int
	}{
		{"point", w(le, uint32(1), 1.0, 2.0), geom.TypePoint, geom.KindPoint, 1},
		{"point big-endian", w(binary.BigEndian, uint32(1), 1.0, 2.0), geom.TypePoint, geom.KindPoint, 1},
		{"point Z iso", w(le, uint32(1001), 1.0, 2.0, 3.0), geom.TypePoint, geom.KindPoint, 1},
		{"point ewkb Z+srid", w(le, uint32(0xA0000001), uint32(4326), 1.0, 2.0, 3.0), geom.TypePoint, geom.KindPoint, 1},
		{"empty point", w(le, uint32(1), math.NaN(), math.NaN()), geom.TypePoint, 0, 0},
		{"line", w(le, uint32(2), uint32(2), 0.0, 0.0, 1.0, 1.0), geom.TypeLineString, geom.KindLine, 1},
		{"polygon", poly, geom.TypePolygon, geom.KindPolygon, 1},
		{"multipolygon", multi, geom.TypeMultiPolygon, geom.KindPolygon, 2},
	}
	for _, tt := range tests {
		g, n, err := Decode(tt.data)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if g.Type != tt.wantType || g.Shape.Kind != tt.wantKind || len(g.Shape.Parts) != tt.wantParts || n != len(tt.data) {
			t.Errorf("%s: %+v used %d of %d", tt.name, g, n, len(tt.data))
		}
	}
	for name, bad := range map[string][]byte{
		"empty": {}, "bad order": {7, 1, 0, 0, 0}, "bad type": w(le, uint32(99)),
		"huge count": w(le, uint32(2), uint32(1<<30)), "cut point": w(le, uint32(1), 1.0),
	} {
		if _, _, err := Decode(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Nesting is bounded.
	deep := w(le, uint32(1), 1.0, 2.0)
	for i := 0; i < 40; i++ {
		deep = append(w(le, uint32(7), uint32(1)), deep...)
	}
	if _, _, err := Decode(deep); err == nil {
		t.Error("40 nested collections decoded")
	}
}

func TestDecodeGeoPackage(t *testing.T) {
	le := binary.LittleEndian
	var b bytes.Buffer
	b.WriteString("GP")
	b.WriteByte(0)
	b.WriteByte(1 | 1<<1) // little-endian header, xy envelope
	_ = binary.Write(&b, le, int32(4326))
	_ = binary.Write(&b, le, []float64{-10, 10, -5, 5})
	b.Write(w(le, uint32(1), 1.0, 2.0))
	gp, err := DecodeGeoPackage(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if gp.SRSID != 4326 || gp.Envelope != (geom.BBox{MinX: -10, MinY: -5, MaxX: 10, MaxY: 5}) || gp.Geometry.Type != geom.TypePoint {
		t.Errorf("%+v", gp)
	}
	if _, err := DecodeGeoPackage([]byte("XX")); err == nil {
		t.Error("no error without magic")
	}
}

func FuzzDecode(f *testing.F) {
	le := binary.LittleEndian
	f.Add(w(le, uint32(3), uint32(1), uint32(4), 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0))
	f.Add(w(le, uint32(7), uint32(1), byte(1), uint32(1), 1.0, 2.0))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = Decode(data)
		_, _ = DecodeGeoPackage(data)
	})
}
