package local

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
	"github.com/sonda-search/sonda/geo/geoweb"
	"github.com/sonda-search/sonda/internal/shareddata"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/web"
)

// TestServeRechecksDatasets: while the server runs with geo.recheck-every set, a dataset
// whose link starts answering 404 after the crawl is found by the scheduled check and
// leaves the dataset search; the others stay.
func TestServeRechecksDatasets(t *testing.T) {
	gw, err := geoweb.New(shareddata.Dir(t, "geo"), testweb.Config{Seed: 3, Hosts: 6, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	if err != nil {
		t.Fatal(err)
	}
	w := testweb.New(gw.Config)
	var broken string // a dataset with a box, chosen after the crawl (set before gone)
	var gone atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if gone.Load() && "http://"+r.Host+r.URL.RequestURI() == broken {
			http.NotFound(rw, r)
			return
		}
		w.ServeHTTP(rw, r)
	}))
	defer srv.Close()
	cfg := crawlConfig(t, w, 0)
	cfg.Fetch.Resolve = []string{"*.test=" + strings.TrimPrefix(srv.URL, "http://")}
	cfg.Geo.Enabled = true
	cfg.Fetch.FirstByteTimeout, cfg.Fetch.BodyTimeout = 20*time.Second, 30*time.Second // no slow pages; a loaded CI machine
	cfg.Geo.RecheckEvery = 2 * time.Second
	cfg.Politeness.DelayFactor = 0
	d, _ := serve(t, cfg)
	if err := d.Runner.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	wait(t, d.Runner)
	ds := GeoBackend(d.Index, catalog.New(d.DB), cfg.Data)
	found := func() (all, brokenFound bool) {
		res, err := ds.SearchDatasets(context.Background(), web.DatasetRequest{Query: "bbox:-180,-90,180,90", PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			brokenFound = brokenFound || h.URL == broken
		}
		return res.Total > 1, brokenFound
	}
	res, err := ds.SearchDatasets(context.Background(), web.DatasetRequest{Query: "bbox:-180,-90,180,90", PerPage: 100})
	if err != nil || len(res.Hits) < 2 {
		t.Fatalf("datasets after the crawl: %v %v", res, err)
	}
	broken = res.Hits[0].URL
	gone.Store(true)
	// The check runs every 2 s; the deadlines only bound a broken one, loosely enough for
	// a loaded machine under -race.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rec, _, _ := catalog.New(d.DB).Dataset(geosearch.KeyOf(broken))
		if rec != nil && rec.Gone == "http-404" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduled check did not mark %s gone: %+v", broken, rec)
		}
		time.Sleep(200 * time.Millisecond)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		others, stillFound := found()
		if !stillFound && others {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the check: broken dataset found %v, others found %v", stillFound, others)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
