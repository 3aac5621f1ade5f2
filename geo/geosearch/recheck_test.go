package geosearch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/store"
)

// TestRecheck: after a crawl of the geo test web, the broken-link check finds the links
// that now answer 404 or 410, takes them out of search and keeps their records; a 500
// gives no verdict; a host whose robots.txt now forbids the files is left alone; the
// files themselves are not downloaded; links that answer again come back; and a recent
// check is not repeated.
func TestRecheck(t *testing.T) {
	g := crawlGeoWeb(t)
	ctx := context.Background()
	ds := g.gw.Datasets
	if len(ds) < 5 {
		t.Fatalf("only %d datasets in the geo test web", len(ds))
	}
	host := func(u string) string { p, _ := url.Parse(u); return p.Host }
	answer := map[string]int{ds[0].URL: 404, ds[1].URL: 410, ds[2].URL: 500}
	forbidden := ""
	for _, d := range ds[3:] { // a host holding none of the three above
		h := host(d.URL)
		if h != host(ds[0].URL) && h != host(ds[1].URL) && h != host(ds[2].URL) {
			forbidden = h
			break
		}
	}
	var broken atomic.Bool
	broken.Store(true)
	var bodyBytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if r.Host == forbidden {
				w.Write([]byte("User-agent: *\nDisallow: /\n"))
				return
			}
			http.NotFound(w, r)
			return
		}
		u := "http://" + r.Host + r.URL.RequestURI()
		if code, ok := answer[u]; ok && broken.Load() {
			http.Error(w, http.StatusText(code), code)
			return
		}
		w.Header().Set("Content-Type", "application/zip")
		chunk := make([]byte, 64<<10)
		for range 256 { // 16 MiB the check must not read
			n, err := w.Write(chunk)
			bodyBytes.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	cfg := g.cfg
	cfg.Fetch.Resolve = []string{"*.test=" + strings.TrimPrefix(srv.URL, "http://")}
	f, err := NewRecheckFetcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	searchable := func(u string) bool {
		t.Helper()
		if err := g.xr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		_, ok, err := g.ix.Document(ctx, DocID(u))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	var progress int
	st, err := Recheck(ctx, g.cat, f, RecheckOptions{Agent: "sonda", Progress: func(RecheckStats) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first check: %+v", st)
	if st.Gone != 2 || st.Failed != 1 || st.Robots == 0 || st.Restored != 0 || progress != st.Checked+st.Robots {
		t.Errorf("first check: %+v (progress calls %d)", st, progress)
	}
	if got := bodyBytes.Load(); got > int64(st.OK)*(8<<20) {
		t.Errorf("%d body bytes sent for %d good links: the check downloads the files", got, st.OK)
	}
	for _, d := range ds {
		rec, ok, _ := g.cat.Dataset(KeyOf(d.URL))
		if !ok {
			t.Fatalf("%s: record lost", d.URL)
		}
		wantGone := answer[d.URL] == 404 || answer[d.URL] == 410
		if (rec.Gone != "") != wantGone || searchable(d.URL) == wantGone {
			t.Errorf("%s: gone %q, searchable %v; want gone %v", d.URL, rec.Gone, searchable(d.URL), wantGone)
		}
		if host(d.URL) == forbidden && !rec.CheckedAt.IsZero() {
			t.Errorf("%s was checked against robots.txt", d.URL)
		}
	}
	if rec, _, _ := g.cat.Dataset(KeyOf(ds[0].URL)); rec.Gone != "http-404" {
		t.Errorf("gone reason %q", rec.Gone)
	}

	// The producers fixed their links: the next check restores them.
	broken.Store(false)
	st, err = Recheck(ctx, g.cat, f, RecheckOptions{Agent: "sonda"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Restored != 2 || st.Gone != 0 || st.Failed != 0 {
		t.Errorf("second check: %+v", st)
	}
	for _, d := range ds[:3] {
		if !searchable(d.URL) {
			t.Errorf("%s not back in search", d.URL)
		}
	}
	// Everything was just checked (the forbidden host's files were fetched at crawl time).
	st, err = Recheck(ctx, g.cat, f, RecheckOptions{Agent: "sonda", OlderThan: time.Hour})
	if err != nil || st.Checked != 0 || st.Recent == 0 {
		t.Errorf("check of recently checked links: %+v %v", st, err)
	}
}

// TestRecheckHonoursCrawlDelay: the check rests between requests to a host as a crawl
// does, so a robots.txt Crawl-delay is kept even when the configured delays are zero.
func TestRecheckHonoursCrawlDelay(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nCrawl-delay: 1\n"))
			return
		}
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/zip")
		w.Write([]byte("PK"))
	}))
	defer srv.Close()
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat := catalog.New(db)
	for _, name := range []string{"rivers.zip", "roads.zip"} {
		u := "http://data.test/" + name
		if err := cat.PutDataset(KeyOf(u), &catalog.Dataset{URL: u, Name: name, Geographic: true, Metadata: &geo.Dataset{File: u}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.Resolve = []string{"*.test=" + strings.TrimPrefix(srv.URL, "http://")}
	f, err := NewRecheckFetcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := RecheckOptionsFrom(cfg, 0, nil)
	o.Politeness.MinDelay, o.Politeness.DelayFactor = 0, 0
	st, err := Recheck(context.Background(), cat, f, o)
	if err != nil {
		t.Fatal(err)
	}
	if st.OK != 2 || len(times) != 2 {
		t.Fatalf("stats %+v, %d dataset requests; want both checked", st, len(times))
	}
	if gap := times[1].Sub(times[0]); gap < time.Second {
		t.Errorf("%v between two requests to a host whose robots.txt asks for a 1s Crawl-delay", gap)
	}
}
