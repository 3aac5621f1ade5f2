package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDatasets is an in-memory Datasets with two datasets.
type fakeDatasets struct {
	mu        sync.Mutex
	downloads map[string]int
	last      DatasetRequest
}

func newFakeDatasets() *fakeDatasets { return &fakeDatasets{downloads: map[string]int{}} }

var fakeHits = []DatasetHit{
	{ID: "dataset:http://www.site00.test/dados/boston_shp.zip", URL: "http://www.site00.test/dados/boston_shp.zip", Name: "boston_shp.zip",
		Format: "shapefile", Container: "zip", CRS: "epsg:4269", Features: 506, Size: 605000, Fetched: time.Date(2026, 5, 6, 0, 0, 0, 0, time.UTC),
		BBox: &[4]float64{-71.52, 42.0, -70.64, 42.67}, Thumbnail: true, Covers: "Boston", Fit: 0.42, Places: []string{"Boston", "Cambridge"},
		Producer: DatasetProducer{Site: "site00.test", Title: "Dados <geográficos>", URL: "http://www.site00.test/geodados.html", Files: 6, Score: 2}},
	{ID: "dataset:http://www.site01.test/world.gpkg", URL: "http://www.site01.test/world.gpkg", Name: "world.gpkg", Format: "geopackage",
		Size: 2_500_000, BBox: &[4]float64{-180, -90, 180, 83.6}, Producer: DatasetProducer{Site: "site01.test", Files: 1}},
}

func (f *fakeDatasets) SearchDatasets(_ context.Context, req DatasetRequest) (*DatasetResult, error) {
	f.mu.Lock()
	f.last = req
	f.mu.Unlock()
	if strings.Contains(req.Query, "((") {
		return nil, &QueryError{Pos: 1, Msg: "this \"(\" is never closed"}
	}
	res := &DatasetResult{Total: 2, Query: req.Query, Mode: req.Mode, Order: req.Order, Page: 1, Pages: 1, Hits: fakeHits,
		Places: []DatasetPlace{{Words: "boston", Name: "Boston", Kind: "city", Country: "US", Lon: -71.06, Lat: 42.36}},
		Facets: map[string][]FacetCount{"format": {{Value: "shapefile", Count: 1, Filter: "format:shapefile"}}}}
	if res.Mode == "" {
		res.Mode = "direct"
	}
	return res, nil
}

func (f *fakeDatasets) Download(_ context.Context, id string) (string, bool, error) {
	for _, h := range fakeHits {
		if h.ID == id {
			f.mu.Lock()
			f.downloads[id]++
			f.mu.Unlock()
			return h.URL, true, nil
		}
	}
	return "", false, nil
}

func (f *fakeDatasets) Thumbnail(_ context.Context, id string) ([]byte, bool, error) {
	if id == fakeHits[0].ID {
		return []byte("\x89PNG\r\n\x1a\nfake"), true, nil
	}
	return nil, false, nil
}

func TestDatasetsAPI(t *testing.T) {
	f := newFixture(t)
	ds := f.srv.o.Datasets.(*fakeDatasets)
	res, body := f.do(t, "GET", "/api/datasets?q=Boston&mode=expanded&order=producer&bbox=-72,41,-70,43&per_page=5", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	var out struct {
		Total  int                   `json:"total"`
		Mode   string                `json:"mode"`
		Hits   []DatasetHit          `json:"hits"`
		Facets map[string][]apiFacet `json:"facets"`
		Places []DatasetPlace        `json:"places"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Total != 2 || out.Mode != "expanded" || len(out.Hits) != 2 || out.Facets["format"][0].Filter != "format:shapefile" || out.Places[0].Name != "Boston" {
		t.Errorf("answer %s", body)
	}
	if ds.last.BBox == nil || *ds.last.BBox != [4]float64{-72, 41, -70, 43} || ds.last.Order != "producer" || ds.last.PerPage != 5 {
		t.Errorf("request %+v", ds.last)
	}
	for _, bad := range []string{"/api/datasets", "/api/datasets?q=x&mode=fuzzy", "/api/datasets?q=x&order=random",
		"/api/datasets?bbox=1,2,3", "/api/datasets?bbox=0,10,1,5", "/api/datasets?bbox=-200,0,0,1", "/api/datasets?q=x&per_page=500"} {
		if res, body := f.do(t, "GET", bad, "", ""); res.StatusCode != 400 || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", bad, res.StatusCode, body)
		}
	}
	if res, body := f.do(t, "GET", "/api/datasets?q=((", "", ""); res.StatusCode != 400 || !strings.Contains(body, `"position":1`) {
		t.Errorf("query error: %d %s", res.StatusCode, body)
	}
}

func TestDownloadRedirectCounts(t *testing.T) {
	f := newFixture(t)
	ds := f.srv.o.Datasets.(*fakeDatasets)
	id := fakeHits[0].ID
	res, _ := f.do(t, "GET", "/download?id="+id, "", "")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != fakeHits[0].URL {
		t.Errorf("download: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if ds.downloads[id] != 1 {
		t.Errorf("downloads %d", ds.downloads[id])
	}
	// Only datasets: no open redirect.
	if res, _ := f.do(t, "GET", "/download?id=http://evil.test/", "", ""); res.StatusCode != 404 || res.Header.Get("Location") != "" {
		t.Errorf("unknown id: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	res, body := f.do(t, "GET", "/thumb?id="+id, "", "")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(body, "\x89PNG") {
		t.Errorf("thumbnail: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res, _ := f.do(t, "GET", "/thumb?id=nothing", "", ""); res.StatusCode != 404 {
		t.Errorf("missing thumbnail: %d", res.StatusCode)
	}
}

func TestDatasetsPage(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/datasets", "", "")
	if res.StatusCode != 200 || !strings.Contains(body, `id="map-frame"`) || !strings.Contains(body, "/static/basemap.svg?v=") || !strings.Contains(body, "/static/map.js?v=") {
		t.Fatalf("empty page: %d", res.StatusCode)
	}
	res, body = f.do(t, "GET", "/datasets?q=Boston&bbox=-72,41,-70,43", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	for _, want := range []string{
		`href="/download?id=dataset%3Ahttp%3A%2F%2Fwww.site00.test%2Fdados%2Fboston_shp.zip"`, // the counting redirect
		`src="/thumb?id=dataset%3Ahttp%3A%2F%2Fwww.site00.test%2Fdados%2Fboston_shp.zip"`,
		`data-bbox="-71.52,42,-70.64,42.67"`, "605 kB", "2.5 MB", "shapefile in zip", "epsg:4269", "2026-05-06",
		"Dados &lt;geográficos&gt;", `href="http://www.site00.test/geodados.html"`, "Boston</strong> (US)",
		`href="/datasets?bbox=-72%2C41%2C-70%2C43&amp;q=Boston&#43;format%3Ashapefile"`, // a facet keeps the box
		`value="-72,41,-70,43"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, "<geográficos>") {
		t.Error("producer title not escaped")
	}
	res, body = f.do(t, "GET", "/datasets?q=x&bbox=nonsense", "", "")
	if res.StatusCode != 400 || !strings.Contains(body, `id="dataset-error"`) {
		t.Errorf("bad box: %d", res.StatusCode)
	}
	// Without a backend, a clear 503.
	srv, err := New(Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	g := &fixture{srv: srv}
	if res, _ := g.do(t, "GET", "/datasets?q=x", "", ""); res.StatusCode != 503 {
		t.Errorf("no backend: %d", res.StatusCode)
	}
	if res, _ := g.do(t, "GET", "/api/datasets?q=x", "", ""); res.StatusCode != 503 {
		t.Errorf("no backend (API): %d", res.StatusCode)
	}
}
