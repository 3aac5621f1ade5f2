package catalog

import (
	"crypto/sha256"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/store"
)

func urlKey(u string) store.URLKey {
	sum := sha256.Sum256([]byte(u))
	var k store.URLKey
	copy(k[:], sum[:16])
	return k
}

// TestRecordsAndListeners: dataset records, links, sites and edges round-trip through a
// real Pebble database; downloads and link checks update a record in place; every change
// is heard by the listeners of any Catalog of the database, until they unregister; a
// dataset is searchable only when geographic, read and not gone.
func TestRecordsAndListeners(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b := New(db), New(db) // two views of one database, as the crawl and the server hold
	var heard atomic.Int64
	cancel := a.OnChange(func(store.URLKey) { heard.Add(1) })

	u := "http://data.example/rios.zip"
	k := urlKey(u)
	d := &Dataset{URL: u, Name: "rios.zip", Geographic: true, Metadata: &geo.Dataset{File: u, Format: "shapefile"}}
	if err := b.PutDataset(k, d); err != nil {
		t.Fatal(err)
	}
	if err := b.PutLink(k, urlKey("http://data.example/"), Link{Page: "http://data.example/", Site: "data.example", Anchor: "rios"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.AddDownload(k); !ok || err != nil {
		t.Fatal(ok, err)
	}
	got, ok, err := a.Dataset(k)
	if err != nil || !ok || got.Downloads != 1 || len(got.Links) != 1 || got.Links[0].Anchor != "rios" || !got.Searchable() {
		t.Fatalf("dataset %+v ok %v err %v", got, ok, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, _, err := b.MarkGone(k, "http-404", now); err != nil {
		t.Fatal(err)
	}
	got, _, _ = a.Dataset(k)
	if got.Gone != "http-404" || !got.CheckedAt.Equal(now) || got.Searchable() || got.Downloads != 1 {
		t.Errorf("after the check: %+v", got)
	}
	if _, _, err := b.MarkGone(k, "", now); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = a.Dataset(k); !got.Searchable() {
		t.Errorf("an answering link is not searchable again: %+v", got)
	}
	if n := heard.Load(); n != 5 { // put, link, download, two checks
		t.Errorf("listener heard %d changes, want 5", n)
	}
	// Unknown datasets: no record, no change, no error.
	if _, ok, err := b.MarkGone(urlKey("http://nowhere.example/x.zip"), "http-404", now); ok || err != nil {
		t.Errorf("MarkGone of an unknown dataset: ok %v err %v", ok, err)
	}
	cancel()
	if err := b.PutDataset(k, d); err != nil {
		t.Fatal(err)
	}
	if n := heard.Load(); n != 5 {
		t.Errorf("a cancelled listener heard a change (%d)", n)
	}

	if err := a.UpdateSite("data.example", func(s *Site) { s.Title = "Data" }); err != nil {
		t.Fatal(err)
	}
	var sites []string
	_ = b.Sites(func(s *Site) error { sites = append(sites, s.Site+"="+s.Title); return nil })
	if !slices.Equal(sites, []string{"data.example=Data"}) {
		t.Errorf("sites %v", sites)
	}
	_ = a.PutEdge("portal.example", "data.example", urlKey("http://portal.example/"))
	var edges []string
	_ = b.Edges(func(from, to string) error { edges = append(edges, from+">"+to); return nil })
	if !slices.Equal(edges, []string{"portal.example>data.example"}) {
		t.Errorf("edges %v", edges)
	}
	for _, tc := range []struct {
		d    Dataset
		want bool
	}{
		{Dataset{Geographic: true, Metadata: &geo.Dataset{}}, true},
		{Dataset{Geographic: false, Metadata: &geo.Dataset{}}, false},
		{Dataset{Geographic: true}, false},
		{Dataset{Geographic: true, Metadata: &geo.Dataset{}, Gone: "http-410"}, false},
	} {
		if got := tc.d.Searchable(); got != tc.want {
			t.Errorf("%+v: searchable %v", tc.d, got)
		}
	}
}
