package discover

import (
	"context"
	"github.com/sonda-search/sonda/internal/shareddata"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geoweb"
	"github.com/sonda-search/sonda/geo/rank"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// TestTable31 checks the thesis's lexicon and its geo-interesting test (§3.2, §3.6): one
// match is enough; matching ignores case and accents; phrases match word by word.
func TestTable31(t *testing.T) {
	lx := NewLexicon(Table31...)
	for _, s := range []string{
		"Mapa da cidade de São José dos Campos na escala 1:20.000", // the thesis's anchor example
		"MUNICÍPIO de Campinas", "projecao conica", "Imagens? no: IMAGEM de satélite", "arquivos shp",
		"aerial photography of the coast", "Landsat scene", "GIS data",
	} {
		if !lx.Has(s) {
			t.Errorf("%q has no Table 3-1 word", s)
		}
	}
	for _, s := range []string{"receitas de bolo", "family recipes for a weekend lunch", "aerial view", "spatial data"} {
		if lx.Has(s) {
			t.Errorf("%q matched Table 3-1: %v", s, lx.Match(s).Terms)
		}
	}
	// "spatial" is missed by Table 3-1 as printed ("spacial") and caught by the corrections.
	if !DefaultLexicon().Has("spatial data") || !DefaultLexicon().Has("mapas de cidades") {
		t.Error("the default lexicon misses the corrected forms")
	}
	// Spanish and French extend it.
	for _, s := range []string{"cartografía de la ciudad", "télédétection et cartographie", "photographie aérienne"} {
		if !DefaultLexicon().Has(s) {
			t.Errorf("%q: no match in the default lexicon", s)
		}
	}
	h := lx.Match("mapa, mapa e Mapa; aerial photography")
	if h.Total != 4 || h.Terms["mapa"] != 3 || h.Terms["aerial photography"] != 1 {
		t.Errorf("counts %+v", h)
	}
}

// TestClassify uses the thesis's URL examples (§3.6 step 4 and §3.4) and the new formats.
func TestClassify(t *testing.T) {
	for u, want := range map[string]Kind{
		"http://www.dpi.inpe.br":                                         Page,
		"http://www.ibge.com.br/imagens/saopaulo.shp":                    Shapefile,
		"http://www.census.gov/geo/img/florida.zip":                      Archive,
		"http://www.census.gov/geo/img/vt02_shp.zip":                     ArchiveShape,
		"http://x.br/PC_FLU_Shape_020106.zip":                            ArchiveShape,
		"http://x.gov/VT01D00SHP.zip":                                    ArchiveShape,
		"http://ross.urs-tally.com/docs/shapefiles/tracklines.zip":       ArchiveShape,
		"http://x.org/a/manual.PDF":                                      Unwanted,
		"http://x.org/style.css?v=3":                                     Unwanted,
		"http://x.org/logo.jpg":                                          Unwanted,
		"http://x.org/notes.txt":                                         Unwanted,
		"http://x.org/data.rar":                                          Unwanted,
		"http://x.org/rios.geojson":                                      GeoJSON,
		"http://x.org/rios.kml":                                          KML,
		"http://x.org/rios.kmz":                                          KMZ,
		"http://x.org/trilha.gpx":                                        GPX,
		"http://x.org/base.gpkg":                                         GeoPackage,
		"http://x.org/srtm_23_17.tif":                                    GeoTIFF,
		"http://x.org/scan.tif":                                          TIFF,
		"http://x.org/rios.gml":                                          GML,
		"http://x.org/estacoes.csv":                                      CSV,
		"http://x.org/geoserver/ows?service=WMS&request=GetCapabilities": Service,
		"http://x.org/wfs?SERVICE=WFS&REQUEST=GetFeature&typeName=a&outputFormat=application/json": GeoJSON,
		"http://x.org/index.php?id=3": Page,
	} {
		if got := Classify(u); got != want {
			t.Errorf("Classify(%q) = %s, want %s", u, got, want)
		}
	}
	if !Archive.NeedsEvidence() || Archive.Dataset() || !ArchiveShape.Dataset() || Page.Fetched() {
		t.Error("kind predicates")
	}
}

// TestAnchorWindow checks the extended anchor text is the 20 words before and after the
// link (§3.8.3), through the parser the crawler uses.
func TestAnchorWindow(t *testing.T) {
	var words []string
	for i := 1; i <= 30; i++ {
		words = append(words, "w"+string(rune('a'+i%26))+strings.Repeat("x", i%3))
	}
	before := strings.Join(words, " ")
	after := strings.Join(words, " ")
	doc := "<html><body><p>" + before + ` <a href="arquivo.zip">mapa da cidade de São José dos Campos na escala 1:20.000</a> ` + after + "</p></body></html>"
	p, err := parse.Parse([]byte(doc), "http://x.br/", parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	win := p.AnchorWindow(0, 20)
	got := strings.Fields(win)
	anchor := strings.Fields("mapa da cidade de São José dos Campos na escala 1:20.000")
	if len(got) != 20+len(anchor)+20 {
		t.Fatalf("window has %d words: %q", len(got), win)
	}
	if !slices.Equal(got[:20], words[10:]) || !slices.Equal(got[20+len(anchor):], words[:20]) {
		t.Errorf("window %q", win)
	}
	if !DefaultLexicon().Has(p.Links[0].Anchor) {
		t.Error("the thesis's anchor example has no lexicon word")
	}
}

// TestCrawlGeoWeb crawls the geo test web with the vertical installed: every dataset is
// found and recorded with its metadata and thumbnail, producers are the sites that publish
// them, archives on pages without geographic evidence and unwanted extensions are never
// requested, and producer scores follow the thesis's rule on the sites' links.
func TestCrawlGeoWeb(t *testing.T) {
	gw, err := geoweb.New(shareddata.Dir(t, "geo"), testweb.Config{Seed: 3, Hosts: 6, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	if err != nil {
		t.Fatal(err)
	}
	web := testweb.New(gw.Config)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Concurrency = 8
	cfg.Politeness.MinDelay = 0
	cfg.Politeness.DelayFactor = 0
	cfg.Log.Level = "warn"
	// No slow pages in the geo web: generous timeouts keep a loaded machine from turning a
	// dataset download into a miss.
	cfg.Fetch.FirstByteTimeout, cfg.Fetch.BodyTimeout = 20*time.Second, 30*time.Second
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat := catalog.New(db)
	v := New(cat, Options{Data: cfg.Data, TempDir: t.TempDir(), Normalizer: urlnorm.New(crawl.NormalizerOptions(cfg))})
	opts := append(v.CrawlOptions(), crawl.WithStore(db))
	if os.Getenv("GEO_DEBUG") != "" {
		opts = append(opts, crawl.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	}
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("GEO_DEBUG") != "" {
		t.Logf("summary %+v", sum)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	found := map[string]*catalog.Dataset{}
	if err := cat.Datasets(func(d *catalog.Dataset) error { found[d.URL] = d; return nil }); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("GEO_DEBUG") != "" {
		for u, d := range found {
			t.Logf("found %s geo=%v err=%s", u, d.Geographic, d.Error)
		}
		for _, r := range web.Requests() {
			t.Logf("request %s%s %d", r.Host, r.Path, r.Status)
		}
		_ = db.Pages(func(p *store.Page) error {
			t.Logf("page %s %d %s %s", p.URL, p.Status, p.ContentType, p.Error)
			return nil
		})
	}
	for _, want := range gw.Datasets {
		d := found[want.URL]
		switch {
		case d == nil:
			t.Errorf("%s (%s) was not found", want.URL, want.Source)
			continue
		case !d.Geographic || d.Metadata == nil:
			t.Errorf("%s: not recorded as geographic: %s", want.URL, d.Error)
			continue
		case d.Metadata.Format != want.Format:
			t.Errorf("%s: format %s, want %s", want.URL, d.Metadata.Format, want.Format)
		case len(d.Links) == 0 || d.Links[0].Anchor == "" || d.Links[0].Window == "":
			t.Errorf("%s: links %+v", want.URL, d.Links)
		case d.Thumbnail == "":
			t.Errorf("%s: no thumbnail", want.URL)
		}
		if d.Thumbnail != "" {
			if _, err := os.Stat(filepath.Join(cfg.Data, d.Thumbnail)); err != nil {
				t.Errorf("%s: thumbnail: %v", want.URL, err)
			}
		}
		if want.Covers != "" {
			covered := false
			for _, p := range d.Metadata.Covers {
				covered = covered || p.Name == want.Covers
			}
			if !covered {
				t.Errorf("%s: covers %v, want %s among them", want.URL, d.Metadata.Covers, want.Covers)
			}
		}
	}
	// Nothing forbidden was requested.
	requested := map[string]bool{}
	for _, r := range web.Requests() {
		requested["http://"+r.Host+r.Path] = true
	}
	for _, u := range gw.Forbidden {
		if requested[u] {
			t.Errorf("%s was requested", u)
		}
	}
	// Producers are exactly the sites that publish datasets.
	var producers []string
	if err := cat.Sites(func(s *catalog.Site) error { producers = append(producers, s.Site); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(producers)
	want := []string{rank.Site(gw.Producers[0]), rank.Site(gw.Producers[1])}
	slices.Sort(want)
	if !slices.Equal(producers, want) {
		t.Errorf("producers %v, want %v", producers, want)
	}
	// The two producers link to each other: each in-link is worth 2.
	var edges []rank.Edge
	if err := cat.Edges(func(from, to string) error { edges = append(edges, rank.Edge{From: from, To: to}); return nil }); err != nil {
		t.Fatal(err)
	}
	isProducer := func(s string) bool { return slices.Contains(producers, s) }
	scores := rank.Scores(edges, isProducer)
	if scores[want[0]] < 2 || scores[want[1]] < 2 {
		t.Errorf("producer scores %v", scores)
	}
	if v.Stats.Rejected.Load() == 0 || v.Stats.ProducerPages.Load() < 2 {
		t.Errorf("stats: rejected %d, producer pages %d", v.Stats.Rejected.Load(), v.Stats.ProducerPages.Load())
	}
}
