package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

func TestExportArticles(t *testing.T) {
	data := t.TempDir()
	db, err := store.Open(crawl.StateDir(data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := urlnorm.New(urlnorm.DefaultOptions()).Parse("https://gazeta.example/news/storm.html")
	at := time.Date(2024, 3, 1, 8, 30, 0, 0, time.FixedZone("", -3*3600))
	a := &news.Article{Article: extract.Article{URL: u.String(), Title: "Storm floods the coast", Authors: []string{"Ana Souza"},
		Published: at, IsArticle: true, Kind: extract.KindArticle, Body: []extract.Block{{Kind: "p", Text: "Rain fell all night."}}}, FetchedAt: at}
	b := db.Pebble().NewBatch()
	if err := news.Put(b, u.Key(), a); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, nil, "export", "--data", data, "--what", "articles")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
		t.Fatalf("not one JSON line: %v\n%s", err, out)
	}
	if got["url"] != u.String() || got["title"] != "Storm floods the coast" || got["published"] != "2024-03-01T08:30:00-03:00" {
		t.Errorf("exported %v", got)
	}
	if _, _, code := run(t, nil, "export", "--data", data, "--what", "nonsense"); code != 2 {
		t.Errorf("--what nonsense: exit %d, want 2", code)
	}
}
