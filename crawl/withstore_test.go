package crawl

import (
	"context"
	"testing"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
)

// openState opens the crawl state of cfg's data directory for crawls given WithStore; it
// is closed when the test ends.
func openState(t *testing.T, cfg config.Config) *store.DB {
	t.Helper()
	db, err := store.Open(StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestWithStoreKeepsDatabaseOpen: crawls given an open database use it, leave it open when
// they close, and a second crawl on the same handle resumes from the first one's state.
func TestWithStoreKeepsDatabaseOpen(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 3, Hosts: 3, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	cfg := testConfig(t, web)
	cfg.Politeness.MinDelay = 0
	db := openState(t, cfg)
	c, err := New(cfg, WithStore(db))
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := c.Gatherer().Gather()
	found := false
	for _, mf := range mfs {
		found = found || mf.GetName() == "sonda_pages_fetched_total"
	}
	if err != nil || !found {
		t.Errorf("Gatherer: %v, sonda_pages_fetched_total missing from %d families", err, len(mfs))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	records := 0
	if err := db.Pages(func(*store.Page) error { records++; return nil }); err != nil {
		t.Fatalf("database closed by the crawler that borrowed it: %v", err)
	}
	if first.Pages == 0 || records == 0 {
		t.Fatalf("first crawl fetched %d pages, %d records", first.Pages, records)
	}

	seeds, err := StoredSeeds(db)
	if err != nil || len(seeds) != len(cfg.Crawl.Seeds) {
		t.Errorf("StoredSeeds = %v, %v; want the %d seeds crawled", seeds, err, len(cfg.Crawl.Seeds))
	}

	c2, err := New(cfg, WithStore(db))
	if err != nil {
		t.Fatalf("second crawler on the same open database: %v", err)
	}
	defer c2.Close()
	second, err := c2.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Pages != 0 {
		t.Errorf("second crawl refetched %d pages; the frontier was drained", second.Pages)
	}
}
