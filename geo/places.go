package geo

import (
	"path/filepath"
	"strings"

	"github.com/sonda-search/sonda/geo/gazetteer"
	"github.com/sonda-search/sonda/text"
)

// Place is a place name found in a dataset, or a gazetteer place its box covers.
type Place struct {
	Name       string `json:"name"`
	Field      string `json:"field,omitempty"` // the attribute it came from
	Kind       string `json:"kind,omitempty"`  // city, region, country (gazetteer places)
	Country    string `json:"country,omitempty"`
	Region     string `json:"region,omitempty"`
	Population int64  `json:"population,omitempty"`
}

// PlaceDescriptors are the thesis's place-descriptor column names (seed 000 §3.7: column
// names that say their values are places, found in 100 DBF files), extended to Spanish and
// French and to the short forms common in Brazilian and US data. They are matched stemmed
// and folded, anywhere in a column name ("NOME_MUNIC", "CIDADE", "county_nm").
var PlaceDescriptors = []string{
	// pt
	"cidade", "município", "municipio", "munic", "estado", "país", "pais", "localidade", "local", "lugar",
	"bairro", "distrito", "região", "regiao", "nome", "capital", "povoado", "uf", "nm_mun", "nm_uf",
	// en
	"city", "county", "state", "country", "location", "place", "name", "town", "village", "region",
	"province", "district", "borough", "neighborhood", "locality",
	// es
	"ciudad", "provincia", "nombre", "localidad", "comuna", "departamento",
	// fr
	"ville", "commune", "pays", "nom", "département", "lieu",
}

// PlaceFinder extracts place names from datasets: the thesis's method, with the gazetteer
// fallback it found necessary. The zero value is not usable; use NewPlaceFinder.
type PlaceFinder struct {
	Gazetteer *gazetteer.Gazetteer
	// MinGazetteerHits is how many of a column's first 5 non-empty values must be gazetteer
	// names for the column to count as places. The thesis leaves "any or all" open; sonda's
	// default is a majority (3 of 5): "any" lets one coincidence (a person called Paris)
	// turn a column of people into places, "all" lets one typo hide a column of cities.
	MinGazetteerHits int
	// MaxPlaces bounds the names kept per dataset (default 500).
	MaxPlaces int
	// CoverLimit is how many covered gazetteer places a dataset lists (default 20).
	CoverLimit int

	stems []string
}

// NewPlaceFinder returns a finder using g (gazetteer.Default() when nil).
func NewPlaceFinder(g *gazetteer.Gazetteer) *PlaceFinder {
	if g == nil {
		g = gazetteer.Default()
	}
	f := &PlaceFinder{Gazetteer: g, MinGazetteerHits: 3, MaxPlaces: 500, CoverLimit: 20}
	seen := map[string]bool{}
	for _, lang := range []string{"pt", "en", "es", "fr"} {
		a := text.NewAnalyzerOptions(text.Options{Lang: lang, KeepStopWords: true})
		for _, d := range PlaceDescriptors {
			s := text.Fold(d)
			if t, ok := a.Term(d); ok && len(t) >= 3 {
				s = t
			}
			if !seen[s] {
				seen[s] = true
				f.stems = append(f.stems, s)
			}
		}
	}
	return f
}

// descriptor reports whether a column name contains a place-descriptor stem. Short stems
// (uf, nom, pais...) must match a whole token of the name, so "uf" does not fire in "buffer"
// and "nom" does not fire in "economia".
func (f *PlaceFinder) descriptor(column string) bool {
	col := text.Fold(column)
	tokens := strings.FieldsFunc(col, func(r rune) bool { return !(r >= 'a' && r <= 'z') })
	for _, s := range f.stems {
		if len(s) <= 4 {
			for _, t := range tokens {
				if t == s || strings.HasPrefix(t, s) && len(t) <= len(s)+1 {
					return true
				}
			}
			continue
		}
		if strings.Contains(col, s) {
			return true
		}
	}
	return false
}

// Find fills ds.Places from every layer's attributes and ds.Covers from the gazetteer.
func (f *PlaceFinder) Find(ds *Dataset) {
	seen := map[string]bool{}
	for _, l := range ds.Layers {
		l.Places = f.layerPlaces(l)
		for _, p := range l.Places {
			k := gazetteer.Key(p.Name)
			if seen[k] || len(ds.Places) >= f.MaxPlaces {
				continue
			}
			seen[k] = true
			ds.Places = append(ds.Places, p)
		}
	}
	for _, p := range f.Gazetteer.Within(ds.BBox, f.CoverLimit) {
		ds.Covers = append(ds.Covers, Place{Name: p.Name, Kind: p.Kind.String(), Country: p.Country, Region: p.Region, Population: p.Population})
	}
}

// layerPlaces applies the thesis's per-column procedure (seed 000 Fig. 3-16): a column
// whose name is a place descriptor contributes all its values; any other text column is
// tested by its first 5 values against the gazetteer and contributes all its values when
// enough of them are place names.
func (f *PlaceFinder) layerPlaces(l *Layer) []Place {
	var out []Place
	for i, fd := range l.Fields {
		if fd.Type != "string" && fd.Type != "text" && !strings.HasPrefix(fd.Type, "varchar") && fd.Type != "" {
			continue // numbers, dates and booleans are not names
		}
		values := column(l.rows, i)
		if len(values) == 0 {
			continue
		}
		if !f.descriptor(fd.Name) && !f.gazetteerColumn(values) {
			continue
		}
		for _, v := range values {
			out = append(out, Place{Name: v, Field: fd.Name})
			if len(out) >= f.MaxPlaces {
				return out
			}
		}
	}
	return out
}

func (f *PlaceFinder) gazetteerColumn(values []string) bool {
	hits, tested := 0, 0
	for _, v := range values {
		if tested == 5 {
			break
		}
		tested++
		if f.Gazetteer.Contains(v) {
			hits++
		}
	}
	need := min(f.MinGazetteerHits, tested)
	return need > 0 && hits >= need
}

// column returns the distinct non-empty, non-numeric values of column i, in order.
func column(rows [][]string, i int) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if i >= len(r) {
			continue
		}
		v := strings.TrimSpace(r[i])
		if v == "" || seen[v] || isNumber(v) || len(v) > 200 {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

func isNumber(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+' || r == ',' || r == 'e' || r == 'E') {
			return false
		}
	}
	return true
}

// classes maps folded stems of what file names say (pt, en, es, fr) to a class in English:
// the thesis's "file name as class" (rios.shp → rivers, cidades.shp → cities).
var classes = []struct{ stem, class string }{
	{"hidrograf", "rivers"}, {"rio", "rivers"}, {"river", "rivers"}, {"drenag", "rivers"}, {"stream", "rivers"}, {"riviere", "rivers"}, {"fleuve", "rivers"},
	{"cidade", "cities"}, {"city", "cities"}, {"cities", "cities"}, {"ciudad", "cities"}, {"ville", "cities"}, {"sede", "cities"},
	{"municip", "municipalities"}, {"county", "counties"}, {"counties", "counties"}, {"commune", "municipalities"},
	{"estado", "states"}, {"state", "states"}, {"uf", "states"}, {"provinc", "provinces"},
	{"pais", "countries"}, {"countr", "countries"}, {"world", "countries"}, {"mundo", "countries"},
	{"estrad", "roads"}, {"rodov", "roads"}, {"road", "roads"}, {"street", "roads"}, {"carretera", "roads"}, {"route", "roads"}, {"rua", "roads"},
	{"ferrov", "railways"}, {"rail", "railways"}, {"ferrocarril", "railways"},
	{"limite", "boundaries"}, {"boundar", "boundaries"}, {"divisa", "boundaries"}, {"border", "boundaries"},
	{"lago", "lakes"}, {"lake", "lakes"}, {"represa", "lakes"}, {"lac", "lakes"},
	{"solo", "soils"}, {"soil", "soils"}, {"suelo", "soils"},
	{"vegeta", "vegetation"}, {"floresta", "vegetation"}, {"forest", "vegetation"}, {"bosque", "vegetation"},
	{"geolog", "geology"}, {"relevo", "elevation"}, {"elev", "elevation"}, {"altimetr", "elevation"}, {"dem", "elevation"},
	{"srtm", "elevation"}, {"topo", "elevation"}, {"curvas", "elevation"}, {"contour", "elevation"},
	{"uso", "land use"}, {"landuse", "land use"}, {"landcover", "land cover"}, {"cobertura", "land cover"},
	{"setor", "census tracts"}, {"tract", "census tracts"}, {"censo", "census"}, {"census", "census"},
	{"bairro", "neighbourhoods"}, {"neighbo", "neighbourhoods"}, {"barrio", "neighbourhoods"}, {"quartier", "neighbourhoods"},
	{"distrit", "districts"}, {"district", "districts"}, {"borough", "boroughs"}, {"nybb", "boroughs"},
	{"escola", "schools"}, {"school", "schools"}, {"hospit", "hospitals"}, {"saude", "health"},
	{"clima", "climate"}, {"climat", "climate"}, {"chuva", "rainfall"}, {"rain", "rainfall"}, {"precip", "rainfall"},
	{"temperat", "temperature"}, {"desmat", "deforestation"}, {"deforest", "deforestation"}, {"queimad", "fires"}, {"fire", "fires"},
	{"costa", "coastline"}, {"coast", "coastline"}, {"litoral", "coastline"},
	{"bike", "bicycle"}, {"cycle", "bicycle"}, {"bicicl", "bicycle"},
	{"track", "tracks"}, {"trilha", "tracks"}, {"ponto", "points"}, {"point", "points"}, {"grain", "grain size"},
}

// ClassOf is the class a file name suggests ("rios.shp" → "rivers", "vt02_d00_shp.zip" →
// ""), from the name's words and their prefixes.
func ClassOf(name string) string {
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	words := strings.FieldsFunc(text.Fold(base), func(r rune) bool { return !(r >= 'a' && r <= 'z') })
	for _, w := range words {
		if len(w) < 2 {
			continue
		}
		for _, c := range classes {
			if w == c.stem || len(c.stem) >= 3 && strings.HasPrefix(w, c.stem) && len(w) <= len(c.stem)+6 {
				return c.class
			}
		}
	}
	return ""
}
