// Package discover finds geographic data while crawling: it scores pages, anchors and
// extended anchors with the GeoDiscover lexicon, classifies links (page, shapefile, archive,
// archive named like a shapefile, and today's formats and OGC services), keeps unwanted
// and unsupported links out of the frontier, downloads archives only on geographic evidence,
// marks producer pages, and turns fetched datasets into catalog records with thumbnails.
//
// It plugs into package crawl through its hooks (Analyzer, LinkFilter, LinkScorer,
// RequestPolicy, Sink); see Vertical.
package discover

import (
	"strings"

	"github.com/sonda-search/sonda/text"
)

// Lexicon is a set of geographic words and phrases matched on folded text (lowercase, no
// accents): one word, or several in sequence.
type Lexicon struct {
	single map[string]string   // folded word → term as listed
	multi  map[string][]string // first folded word → folded phrases starting with it
	terms  map[string]string   // folded phrase → term as listed
}

// Table31 is the thesis's geo lexicon (seed 000 Table 3-1), Portuguese and English pairs and
// the "other terms" group, as printed — "spacial" included.
var Table31 = []string{
	"aerofoto", "aerial photography", "mapa", "map", "limite", "boundary", "mapeamento", "mapping",
	"shape", "shapefile", "mosaico", "mosaic", "cartografia", "cartography", "projeção", "projection",
	"cartográfico", "cartographic", "espacial", "spacial", "censo", "census", "espectral", "spectral",
	"cidade", "city", "temporal", "município", "county", "satélite", "satellite", "estado", "state",
	"temático", "thematic", "país", "country", "temperatura", "temperature", "clima", "climate",
	"tempo", "weather", "coordenada", "coordinate", "sensoriamento", "sensing", "desmatamento", "deforestation",
	"remoto", "remote", "escala", "scale", "topográfico", "topographic", "geografia", "geography",
	"vegetação", "vegetation", "geográfico", "geographic", "imagem", "image", "geoprocessamento", "geoprocessing",
	"sig", "gis",
	// Outros termos
	"shp", "arcview", "latitude", "longitude", "landsat", "ikonos", "quickbird", "spot", "lat", "long", "queimada", "geo",
}

// Corrections are sonda's fixes to Table 3-1: "spatial" (the thesis prints "spacial",
// which would never match), the plural and feminine forms Portuguese text actually uses,
// which the thesis's hash equality missed.
var Corrections = []string{
	"spatial", "mapas", "maps", "cidades", "cities", "municípios", "estados", "states", "países", "countries",
	"coordenadas", "coordinates", "geográfica", "geográficos", "geográficas", "cartográfica", "cartográficos",
	"topográfica", "topográficos", "temática", "temáticos", "imagens", "images", "limites", "boundaries",
}

// Spanish and French extend the lexicon as the thesis's future work asks (ch. 5).
var Spanish = []string{
	"mapa", "mapas", "cartografía", "cartográfico", "cartográfica", "censo", "ciudad", "ciudades", "municipio",
	"estado", "país", "clima", "coordenada", "coordenadas", "deforestación", "escala", "geografía", "geográfico",
	"geográfica", "geoprocesamiento", "límite", "límites", "mosaico", "proyección", "espacial", "espectral",
	"satélite", "temático", "temperatura", "tiempo", "teledetección", "topográfico", "vegetación", "imagen",
	"fotografía aérea", "ortofoto", "sig",
}

var French = []string{
	"carte", "cartes", "cartographie", "cartographique", "recensement", "ville", "villes", "commune", "communes",
	"pays", "climat", "coordonnée", "coordonnées", "déforestation", "échelle", "géographie", "géographique",
	"géomatique", "limite", "limites", "mosaïque", "projection", "spatial", "spectral", "satellite", "thématique",
	"température", "télédétection", "topographique", "végétation", "photographie aérienne", "orthophoto", "sig",
}

// Formats names today's geographic file formats and services: words a producer page uses
// where a 2006 page said "shape".
var Formats = []string{
	"geojson", "kml", "kmz", "gpx", "geopackage", "gpkg", "geotiff", "gml", "wms", "wfs", "wcs", "ogc",
	"geoserver", "mapserver", "arcgis", "qgis", "srtm", "dem", "raster", "vetorial", "vector", "datum",
	"sirgas", "wgs84", "utm", "epsg", "metadados", "metadata",
}

// DefaultLexicon is Table 3-1 with sonda's corrections, Spanish, French and format names.
func DefaultLexicon() *Lexicon {
	var all []string
	for _, l := range [][]string{Table31, Corrections, Spanish, French, Formats} {
		all = append(all, l...)
	}
	return NewLexicon(all...)
}

// NewLexicon builds a lexicon of terms (matched folded; phrases word by word).
func NewLexicon(terms ...string) *Lexicon {
	lx := &Lexicon{single: map[string]string{}, multi: map[string][]string{}, terms: map[string]string{}}
	for _, t := range terms {
		words := foldedWords(t)
		switch len(words) {
		case 0:
		case 1:
			lx.single[words[0]] = t
		default:
			phrase := strings.Join(words, " ")
			if _, dup := lx.terms[phrase]; !dup {
				lx.multi[words[0]] = append(lx.multi[words[0]], phrase)
				lx.terms[phrase] = t
			}
		}
	}
	return lx
}

func foldedWords(s string) []string {
	toks := text.Words(s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = text.Fold(t.Term)
	}
	return out
}

// Hits counts lexicon matches in a text.
type Hits struct {
	Total int
	Terms map[string]int // term as listed → occurrences
}

// Match finds the lexicon's words and phrases in s.
func (lx *Lexicon) Match(s string) Hits {
	h := Hits{Terms: map[string]int{}}
	words := foldedWords(s)
	for i, w := range words {
		if t, ok := lx.single[w]; ok {
			h.Total++
			h.Terms[t]++
		}
		for _, phrase := range lx.multi[w] {
			n := strings.Count(phrase, " ") + 1
			if i+n <= len(words) && strings.Join(words[i:i+n], " ") == phrase {
				h.Total++
				h.Terms[lx.terms[phrase]]++
			}
		}
	}
	return h
}

// Has reports whether s contains at least one lexicon term: the thesis's test for a
// geo-interesting page (§3.6: one match is enough).
func (lx *Lexicon) Has(s string) bool { return lx.Match(s).Total > 0 }
