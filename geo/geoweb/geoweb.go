// Package geoweb is the test web's geo mode: it adds, to a synthetic test web (package
// testweb), producer sites that publish the real datasets of ../shared/testdata/geo — raw,
// zipped, zipped without "shp" in the name, in nested folders and archives inside archives —
// and sites that publish archives of other things on pages without a geographic word. Its
// ground truth says which dataset URLs a geo crawl must find and which it must not download.
//
// The data files are read from the shared test data when the web is built; nothing is
// copied into the repository.
package geoweb

import (
	"archive/zip"
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sonda-search/sonda/testweb"
)

// Dataset is a dataset URL the web serves and a crawl must find.
type Dataset struct {
	URL    string
	Source string // the test-data file (or set) it was made from
	Format string // the data's format as `sonda geo inspect` names it
	// Covers is a place the dataset's box covers, for place-name search checks ("" when
	// the dataset has no CRS to place it by).
	Covers string
}

// Web is a geo-mode test web configuration with its ground truth.
type Web struct {
	Config testweb.Config
	// Datasets are the dataset URLs a crawl must find (one per dataset: a raw shapefile is
	// recorded under its .shp URL).
	Datasets []Dataset
	// Forbidden are URLs a geo crawl must not fetch: archives of other things on pages
	// without geographic evidence, and unwanted extensions.
	Forbidden []string
	// Producers are the hosts whose pages link to datasets.
	Producers []string
	// NonGeo are the hosts that publish only non-geographic archives.
	NonGeo []string
}

// Host roles, by the test web's host names (www.site00.test, www.site01.test, ...).
const (
	producerPT = "www.site00.test"
	producerEN = "www.site01.test"
	nonGeoA    = "www.site02.test"
	nonGeoB    = "www.site03.test"
)

type file struct {
	path, title, ctype string
	body               []byte
}

// New builds the geo web from the test data in dir (../shared/testdata/geo). base is the
// test web configuration to extend (hosts beyond the four with roles stay ordinary); it
// needs at least 5 hosts.
func New(dir string, base testweb.Config) (*Web, error) {
	if base.Hosts != 0 && base.Hosts < 5 {
		return nil, fmt.Errorf("geoweb: %d hosts; the geo roles need at least 5", base.Hosts)
	}
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, rel)) }
	w := &Web{Producers: []string{producerPT, producerEN}, NonGeo: []string{nonGeoA, nonGeoB}}
	pages := map[string][]testweb.Page{}
	var err error
	add := func(host string, f file, ds *Dataset) {
		if err != nil {
			return
		}
		pages[host] = append(pages[host], testweb.Page{Path: f.path, Title: f.title, Body: f.body, ContentType: f.ctype, Unlinked: true})
		if ds != nil {
			ds.URL = "http://" + host + f.path
			w.Datasets = append(w.Datasets, *ds)
		}
	}
	must := func(b []byte, e error) []byte {
		if e != nil && err == nil {
			err = fmt.Errorf("geoweb: %w (is ../shared/testdata/geo there?)", e)
		}
		return b
	}
	shapefile := func(sub, name string) map[string][]byte {
		out := map[string][]byte{}
		matches, e := filepath.Glob(filepath.Join(dir, sub, name+".*"))
		if e != nil || len(matches) == 0 {
			must(nil, fmt.Errorf("no files for %s/%s", sub, name))
		}
		for _, m := range matches {
			out[filepath.Base(m)] = must(os.ReadFile(m))
		}
		return out
	}

	// Producer 1, in Portuguese: a zip with "shp" in its name, a zip without it holding a
	// shapefile in nested folders, a raw shapefile (.shp .dbf .shx), a GeoJSON, a GeoTIFF
	// and a GeoPackage; plus a PDF and a JPEG that must never be fetched.
	boston := zipOf(shapefile("spdata", "boston_tracts"), "")
	add(producerPT, file{"/dados/shp/boston_tracts_shp.zip", "setores censitários de Boston (shapefile)", "application/zip", boston},
		&Dataset{Source: "spdata/boston_tracts", Format: "shapefile", Covers: "Boston"})
	columbus := zipOf(shapefile("spdata", "columbus"), "dados/camadas/2010/")
	add(producerPT, file{"/downloads/censo2010.zip", "mapa do censo 2010", "application/zip", columbus},
		&Dataset{Source: "spdata/columbus", Format: "shapefile"})
	for _, ext := range []string{".shp", ".dbf", ".shx"} {
		name := "baltim" + ext
		var ds *Dataset
		if ext == ".shp" {
			ds = &Dataset{Source: "spdata/baltim", Format: "shapefile"}
		}
		add(producerPT, file{"/bruto/" + name, "arquivo " + name, "application/octet-stream", must(read("spdata/" + name))}, ds)
	}
	add(producerPT, file{"/vetor/cycle_hire.geojson", "estações de bicicleta de Londres", "application/geo+json", must(read("spdata/cycle_hire.geojson"))},
		&Dataset{Source: "spdata/cycle_hire.geojson", Format: "geojson", Covers: "London"})
	add(producerPT, file{"/raster/elev.tif", "modelo de elevação", "image/tiff", must(read("spdata/elev.tif"))},
		&Dataset{Source: "spdata/elev.tif", Format: "geotiff"})
	add(producerPT, file{"/gpkg/world.gpkg", "países do mundo", "application/geopackage+sqlite3", must(read("spdata/world.gpkg"))},
		&Dataset{Source: "spdata/world.gpkg", Format: "geopackage", Covers: "Brazil"})
	add(producerPT, file{"/docs/manual.pdf", "manual", "application/pdf", []byte("%PDF-1.4 not really")}, nil)
	add(producerPT, file{"/img/logo.jpg", "logo", "image/jpeg", []byte("\xff\xd8\xff not really")}, nil)
	w.Forbidden = append(w.Forbidden, "http://"+producerPT+"/docs/manual.pdf", "http://"+producerPT+"/img/logo.jpg")

	// Producer 2, in English: the New York boroughs zip as published (no "shp" in its
	// name), world countries as a zip inside a zip, the cities shapefile raw with its .prj
	// and .cpg, a TIFF without a telling name, and a zip of two shapefiles in sub-folders.
	add(producerEN, file{"/data/nybb_16a.zip", "New York City borough boundaries", "application/zip", must(read("naturalearth/nybb_16a.zip"))},
		&Dataset{Source: "naturalearth/nybb_16a.zip", Format: "shapefile", Covers: "Brooklyn"})
	inner := zipOf(shapefile("naturalearth", "naturalearth_lowres"), "")
	add(producerEN, file{"/data/bundle.zip", "country boundaries bundle", "application/zip", zipOf(map[string][]byte{"lowres/countries.zip": inner}, "")},
		&Dataset{Source: "naturalearth/naturalearth_lowres", Format: "shapefile", Covers: "Brazil"})
	for _, ext := range []string{".shp", ".dbf", ".shx", ".prj", ".cpg"} {
		name := "naturalearth_cities" + ext
		var ds *Dataset
		if ext == ".shp" {
			ds = &Dataset{Source: "naturalearth/naturalearth_cities", Format: "shapefile", Covers: "Brazil"}
		}
		add(producerEN, file{"/raw/" + name, "cities layer " + ext, "application/octet-stream", must(read("naturalearth/" + name))}, ds)
	}
	add(producerEN, file{"/rasters/g.tif", "grain size raster", "image/tiff", must(read("spdata/grain.tif"))},
		&Dataset{Source: "spdata/grain.tif", Format: "geotiff"})
	two := map[string][]byte{}
	for n, b := range shapefile("spdata", "auckland") {
		two["north/"+n] = b
	}
	for n, b := range shapefile("spdata", "eire") {
		two["south/"+n] = b
	}
	add(producerEN, file{"/data/regions.zip", "regional layers", "application/zip", zipOf(two, "")},
		&Dataset{Source: "spdata/auckland+eire", Format: "shapefile"})
	add(producerEN, file{"/ows?service=WMS&request=GetCapabilities", "web map service", "text/xml", []byte(capabilities)},
		&Dataset{Source: "(synthetic WMS capabilities)", Format: "ogc-capabilities", Covers: "Boston"})

	// Non-geographic sites: archives of recipes and of sales figures, on pages with no word
	// of the lexicon.
	recipes := zipOf(map[string][]byte{"cake.txt": []byte("flour, sugar, eggs"), "bread.txt": []byte("flour, water, salt")}, "recipes/")
	add(nonGeoA, file{"/files/recipes.zip", "recipes", "application/zip", recipes}, nil)
	sales := zipOf(map[string][]byte{"sales.csv": []byte("month,total\njan,10\nfeb,12\n")}, "")
	add(nonGeoB, file{"/files/sales_2019.zip", "sales figures", "application/zip", sales}, nil)
	w.Forbidden = append(w.Forbidden, "http://"+nonGeoA+"/files/recipes.zip", "http://"+nonGeoB+"/files/sales_2019.zip")
	if err != nil {
		return nil, err
	}

	// The pages that link to the files.
	page := func(host, path, lang, title string, paras []string, links [][2]string) {
		var b strings.Builder
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=%q><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n<h1>%s</h1>\n",
			lang, html.EscapeString(title), html.EscapeString(title))
		for i, p := range paras {
			b.WriteString("<p>" + html.EscapeString(p))
			if i < len(links) {
				fmt.Fprintf(&b, ` <a href="%s">%s</a>.`, html.EscapeString(links[i][0]), html.EscapeString(links[i][1]))
			}
			b.WriteString("</p>\n")
		}
		for _, l := range links[min(len(links), len(paras)):] {
			fmt.Fprintf(&b, "<p><a href=\"%s\">%s</a></p>\n", html.EscapeString(l[0]), html.EscapeString(l[1]))
		}
		b.WriteString("</body></html>\n")
		var hrefs []string
		for _, l := range links {
			hrefs = append(hrefs, l[0])
		}
		pages[host] = append(pages[host], testweb.Page{Path: path, Title: title, Body: []byte(b.String()), ContentType: "text/html; charset=utf-8", Links: hrefs})
	}
	page(producerPT, "/geodados.html", "pt", "Dados geográficos para download", []string{
		"Esta página reúne a base cartográfica do estado e dos municípios, em escala 1:250.000, para uso em sistemas de informação geográfica.",
		"Os arquivos seguem o sistema de coordenadas indicado em cada pacote. Baixe o pacote do censo:",
		"Também publicamos a camada bruta de pontos, com seus três arquivos:",
		"", "", "Dados vetoriais em GeoJSON:", "Imagem de satélite e modelo de elevação:", "Limites dos países em GeoPackage:",
		"Documentação:", "Logotipo:",
	}, [][2]string{
		{"/dados/shp/boston_tracts_shp.zip", "setores censitários de Boston (shapefile)"},
		{"/downloads/censo2010.zip", "mapa do censo 2010"},
		{"/bruto/baltim.shp", "baltim.shp"}, {"/bruto/baltim.dbf", "baltim.dbf"}, {"/bruto/baltim.shx", "baltim.shx"},
		{"/vetor/cycle_hire.geojson", "estações de bicicleta de Londres"},
		{"/raster/elev.tif", "modelo de elevação"},
		{"/gpkg/world.gpkg", "países do mundo"},
		{"/docs/manual.pdf", "manual"}, {"/img/logo.jpg", "logo"},
		{"http://" + producerEN + "/maps.html", "New York maps"},
	})
	page(producerEN, "/maps.html", "en", "Maps and boundary files", []string{
		"Download the boundary files of New York City and the world's countries for your GIS. All layers carry their coordinate system.",
		"A bundle of country boundaries:", "The populated places layer, raw:", "", "", "", "",
		"A raster of grain sizes:", "Regional layers:", "The same layers as a web map service:",
	}, [][2]string{
		{"/data/nybb_16a.zip", "New York City borough boundaries"},
		{"/data/bundle.zip", "country boundaries bundle"},
		{"/raw/naturalearth_cities.shp", "naturalearth_cities.shp"}, {"/raw/naturalearth_cities.dbf", "naturalearth_cities.dbf"},
		{"/raw/naturalearth_cities.shx", "naturalearth_cities.shx"}, {"/raw/naturalearth_cities.prj", "naturalearth_cities.prj"},
		{"/raw/naturalearth_cities.cpg", "naturalearth_cities.cpg"},
		{"/rasters/g.tif", "grain size raster"},
		{"/data/regions.zip", "regional layers"},
		{"/ows?service=WMS&request=GetCapabilities", "web map service (WMS)"},
		{"http://" + producerPT + "/geodados.html", "Dados geográficos (IBGE-like)"},
	})
	// These pages avoid every word of the lexicon (no "map", "city", "state", "image"...).
	page(nonGeoA, "/kitchen.html", "en", "Family recipes", []string{
		"Our grandmother wrote these recipes by hand. They are simple and good for a weekend lunch with friends.",
	}, [][2]string{{"/files/recipes.zip", "all recipes"}, {"http://" + producerPT + "/geodados.html", "a site we like"}})
	page(nonGeoB, "/reports.html", "en", "Shop reports", []string{
		"Monthly totals of the shop, as a spreadsheet inside an archive, for the accountant.",
	}, [][2]string{{"/files/sales_2019.zip", "sales figures"}})
	w.Config = base
	prev := base.Extra
	w.Config.Extra = func(host string, rng *rand.Rand) []testweb.Page {
		var out []testweb.Page
		if prev != nil {
			out = prev(host, rng)
		}
		return append(out, pages[host]...)
	}
	sort.Slice(w.Datasets, func(i, j int) bool { return w.Datasets[i].URL < w.Datasets[j].URL })
	return w, nil
}

// zipOf packs files (name → bytes) under folder.
func zipOf(files map[string][]byte, folder string) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, _ := zw.Create(folder + n)
		w.Write(files[n])
	}
	zw.Close()
	return b.Bytes()
}

// capabilities is a WMS 1.3 GetCapabilities answer offering one layer around Boston.
const capabilities = `<?xml version="1.0" encoding="UTF-8"?>
<WMS_Capabilities version="1.3.0" xmlns="http://www.opengis.net/wms">
<Service><Name>WMS</Name><Title>Boston census tracts</Title></Service>
<Capability><Layer><Title>Layers</Title>
<Layer queryable="1"><Name>census:boston_tracts</Name><Title>Boston census tracts</Title>
<EX_GeographicBoundingBox><westBoundLongitude>-71.52</westBoundLongitude><eastBoundLongitude>-70.64</eastBoundLongitude>
<southBoundLatitude>42.0</southBoundLatitude><northBoundLatitude>42.67</northBoundLatitude></EX_GeographicBoundingBox>
</Layer></Layer></Capability></WMS_Capabilities>
`
