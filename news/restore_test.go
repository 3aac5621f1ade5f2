package news

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// TestRestorerShapesAsTheCrawlDid: replaying a stored article page through the Restorer
// gives the same index document the live crawl's Analyzer gave it; a page without an
// article record, or one that asks not to be indexed, stays as it is.
func TestRestorerShapesAsTheCrawlDid(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	an, _ := NewAnalyzer(db, Options{})
	norm := urlnorm.New(urlnorm.DefaultOptions())
	u, _ := norm.Parse("https://gazeta.example/news/storm.html")
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	page := stories[0].page("gazeta.example", 1)
	live := testDocument(t, u, at, page)
	if err := an.Analyze(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	commit(t, db, live)
	want, _ := index.DocFromCrawl(live)

	r := NewRestorer(db)
	replayed := testDocument(t, u, at, page)
	if err := r.Analyze(context.Background(), replayed); err != nil {
		t.Fatal(err)
	}
	got, action := index.DocFromCrawl(replayed)
	if action != index.Add || got.Kind != index.KindArticle {
		t.Fatalf("replayed article indexed as %q (action %v)", got.Kind, action)
	}
	// The stored record went through JSON: compare the document it shapes field by field.
	if got.Title != want.Title || got.Body != want.Body || got.Lang != want.Lang || !got.Date().Equal(want.Date()) ||
		!reflect.DeepEqual(got.Fields["authors"], want.Fields["authors"]) || got.Fields["site_name"] != want.Fields["site_name"] {
		t.Errorf("replayed document differs from the live one:\n got %+v\nwant %+v", got, want)
	}

	other, _ := norm.Parse("https://gazeta.example/contact.html")
	plain := testDocument(t, other, at, `<html><body><p>Contact us.</p></body></html>`)
	if err := r.Analyze(context.Background(), plain); err != nil || plain.Results != nil {
		t.Errorf("a page without an article record got results %v (%v)", plain.Results, err)
	}
	hidden := testDocument(t, u, at, page)
	hidden.Record.NoIndex = true
	if r.Analyze(context.Background(), hidden); hidden.Results != nil {
		t.Error("a noindex page was given its old article")
	}
}
