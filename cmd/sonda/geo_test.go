package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geoweb"
	"github.com/sonda-search/sonda/internal/shareddata"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

func TestGeoInspect(t *testing.T) {
	dir := shareddata.Dir(t, "geo")
	// One file: one indented object.
	out, stderr, code := run(t, nil, "geo", "inspect", filepath.Join(dir, "spdata", "boston_tracts.shp"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ds struct {
		Format string     `json:"format"`
		BBox   [4]float64 `json:"bbox_wgs84"`
		Layers []struct {
			Features int `json:"feature_count"`
			CRS      struct {
				EPSG int `json:"epsg"`
			} `json:"crs"`
		} `json:"layers"`
		Covers []struct{ Name string } `json:"covers"`
	}
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if ds.Format != "shapefile" || len(ds.Layers) != 1 || ds.Layers[0].Features != 506 || ds.Layers[0].CRS.EPSG != 4267 || len(ds.Covers) == 0 || ds.Covers[0].Name != "Boston" {
		t.Errorf("%s", out)
	}
	// Several files: one line each; a bad file says why and makes the exit status 1.
	bad := filepath.Join(t.TempDir(), "notes.html")
	os.WriteFile(bad, []byte("<html></html>"), 0o644)
	out, _, code = run(t, nil, "geo", "inspect", "--no-places", filepath.Join(dir, "spdata", "elev.tif"), bad)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 2 || !strings.Contains(lines[0], `"geotiff"`) || !strings.Contains(lines[1], `"error"`) {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestExportDatasets(t *testing.T) {
	data := t.TempDir()
	db, err := store.Open(crawl.StateDir(data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := urlnorm.New(urlnorm.Options{}).Parse("http://www.site00.test/dados/rios_shp.zip")
	cat := catalog.New(db)
	if err := cat.PutDataset(store.URLKey(u.Key()), &catalog.Dataset{URL: u.String(), Name: "rios_shp.zip", Geographic: true}); err != nil {
		t.Fatal(err)
	}
	page, _ := urlnorm.New(urlnorm.Options{}).Parse("http://www.site00.test/")
	if err := cat.PutLink(store.URLKey(u.Key()), store.URLKey(page.Key()), catalog.Link{Page: page.String(), Anchor: "rios do estado"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, stderr, code := run(t, nil, "export", "--data", data, "--what", "datasets")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var d catalog.Dataset
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.URL != u.String() || len(d.Links) != 1 || d.Links[0].Anchor != "rios do estado" {
			t.Errorf("%+v", d)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d records:\n%s", n, out)
	}
}

// TestCrawlGeoProfile runs `sonda crawl` with the file `sonda init --profile geo` writes
// (geo.enabled, the geo topic, the geo media types) on the geo test web and exports what
// it found: every dataset of the web's ground truth, none of the forbidden archives.
func TestCrawlGeoProfile(t *testing.T) {
	gw, err := geoweb.New(shareddata.Dir(t, "geo"), testweb.Config{Seed: 5, Hosts: 6, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	if err != nil {
		t.Fatal(err)
	}
	web, addr := serveWeb(t, gw.Config)
	dir := t.TempDir()
	if _, stderr, code := run(t, nil, "init", "--profile", "geo", dir); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	data := filepath.Join(dir, "data")
	out, stderr, code := run(t, quickEnv, append(crawlArgs(web, addr, data), "-c", filepath.Join(dir, "sonda.yaml"))...)
	if code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "harvest") && !strings.Contains(stderr, "harvest") {
		t.Errorf("a crawl with the geo profile's topic reports no harvest rate:\n%s\n%s", out, stderr)
	}
	out, stderr, code = run(t, nil, "export", "--data", data, "--what", "datasets")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var d catalog.Dataset
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got[d.URL] = d.Geographic
	}
	for _, d := range gw.Datasets {
		if !got[d.URL] {
			t.Errorf("%s missing from the export", d.URL)
		}
	}
	for _, u := range gw.Forbidden {
		if _, ok := got[u]; ok {
			t.Errorf("%s was downloaded", u)
		}
	}
}

// TestGeoRecheck: `sonda geo recheck` after a geo crawl, with one producer's file now
// answering 404: that dataset leaves `sonda search` and is exported as gone; the others
// stay; a second run with --older-than skips what was just checked.
func TestGeoRecheck(t *testing.T) {
	gw, err := geoweb.New(shareddata.Dir(t, "geo"), testweb.Config{Seed: 5, Hosts: 6, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	if err != nil {
		t.Fatal(err)
	}
	web, addr := serveWeb(t, gw.Config)
	data := t.TempDir()
	env := append([]string{"SONDA_GEO_ENABLED=true"}, quickEnv...)
	if _, stderr, code := run(t, env, crawlArgs(web, addr, data)...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	brokenURL := gw.Datasets[0].URL
	name := path.Base(brokenURL)
	searchFor := func() string {
		out, stderr, code := run(t, nil, "search", "--data", data, "--kind", "dataset", "--json", strings.TrimSuffix(name, path.Ext(name)))
		if code != 0 {
			t.Fatalf("search: exit %d: %s", code, stderr)
		}
		return out
	}
	if !strings.Contains(searchFor(), brokenURL) {
		t.Fatalf("%s not found by its name before the check", brokenURL)
	}
	// The producers' sites now answer from a server where that one file is gone.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if "http://"+r.Host+r.URL.RequestURI() == brokenURL {
			http.NotFound(w, r)
			return
		}
		web.ServeHTTP(w, r)
	}))
	defer srv.Close()
	args := []string{"geo", "recheck", "--data", data, "--allow-private", "--resolve", "*.test=" + strings.TrimPrefix(srv.URL, "http://")}
	out, stderr, code := run(t, nil, args...)
	if code != 0 || !strings.Contains(out, "1 newly gone") {
		t.Fatalf("recheck: exit %d:\n%s\n%s", code, out, stderr)
	}
	if got := searchFor(); strings.Contains(got, brokenURL) {
		t.Errorf("%s still found after the check:\n%s", brokenURL, got)
	}
	exp, _, _ := run(t, nil, "export", "--data", data, "--what", "datasets")
	gone := 0
	for _, line := range strings.Split(strings.TrimSpace(exp), "\n") {
		var d catalog.Dataset
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if d.Gone != "" {
			gone++
			if d.URL != brokenURL || d.Gone != "http-404" {
				t.Errorf("gone: %s (%s)", d.URL, d.Gone)
			}
		}
	}
	if gone != 1 {
		t.Errorf("%d datasets exported as gone, want 1", gone)
	}
	out, _, code = run(t, nil, append(args, "--older-than", "1h")...)
	if code != 0 || !strings.Contains(out, "checked 0 dataset links") {
		t.Errorf("recheck --older-than 1h: exit %d: %s", code, out)
	}
}
