package gazetteer

import (
	"bytes"
	"testing"

	"github.com/sonda-search/sonda/geo/geom"
)

func TestDefault(t *testing.T) {
	g := Default()
	if g.Len() < 30000 {
		t.Fatalf("only %d places", g.Len())
	}
	boston := g.Lookup("BOSTON")
	if len(boston) < 2 || boston[0].Country != "US" || boston[0].Region != "Massachusetts" || boston[0].Population < 500000 {
		t.Errorf("Boston: %+v", boston)
	}
	sp := g.Lookup("sao paulo")
	if len(sp) < 2 || sp[0].Kind != Region || sp[1].Kind != City || sp[1].Population < 10_000_000 {
		t.Errorf("São Paulo: %+v", sp)
	}
	for _, name := range []string{"Brasil", "Brazil", "Brésil", "United States", "Estados Unidos", "Massachusetts", "Campinas", "São José dos Campos"} {
		if !g.Contains(name) {
			t.Errorf("%q is not in the gazetteer", name)
		}
	}
	for _, name := range []string{"", "xyzzy", "shape", "12345"} {
		if g.Contains(name) {
			t.Errorf("%q is in the gazetteer", name)
		}
	}
	// A box around Boston covers Boston, not Massachusetts; a box around Brazil covers Brazil
	// and São Paulo state.
	in := g.Within(geom.BBox{MinX: -71.2, MinY: 42.2, MaxX: -70.9, MaxY: 42.5}, 10)
	if len(in) == 0 || in[0].Name != "Boston" {
		t.Errorf("within Boston: %+v", in)
	}
	for _, p := range in {
		if p.Kind != City {
			t.Errorf("a small box covers %s %s", p.Kind, p.Name)
		}
	}
	br := g.Within(geom.BBox{MinX: -74, MinY: -34, MaxX: -34, MaxY: 6}, 50)
	var country, state bool
	for _, p := range br {
		country = country || p.Kind == Country && p.Country == "BR"
		state = state || p.Kind == Region && p.Name == "São Paulo"
	}
	if !country || !state {
		t.Errorf("within Brazil: %+v", br)
	}
}

func TestEncodeDecode(t *testing.T) {
	places := []Place{
		{Name: "Brasil", Kind: Country, Country: "BR", Population: 200, Lon: -50, Lat: -15, MinLon: -74, MinLat: -33.75, MaxLon: -34.8, MaxLat: 5.27},
		{Name: "São Paulo", Kind: City, Country: "BR", Region: "São Paulo", Population: 100, Lon: -46.63611, Lat: -23.5475},
	}
	var b bytes.Buffer
	if err := Encode(&b, places); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != places[0] || got[1] != places[1] {
		t.Errorf("round trip:\n%+v\n%+v", got, places)
	}
	if _, err := Decode(bytes.NewReader(b.Bytes()[:b.Len()/2])); err == nil {
		t.Error("a cut file decoded")
	}
	if err := Encode(&b, []Place{{Name: "x", Country: "BRA"}}); err == nil {
		t.Error("a three-letter country encoded")
	}
}

func TestKey(t *testing.T) {
	for in, want := range map[string]string{"São Paulo": "sao paulo", " SAO-PAULO ": "sao paulo", "Moji das Cruzes": "moji das cruzes"} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkWithin(b *testing.B) {
	g := Default()
	box := geom.BBox{MinX: -71.2, MinY: 42.2, MaxX: -70.9, MaxY: 42.5}
	for b.Loop() {
		g.Within(box, 20)
	}
}
