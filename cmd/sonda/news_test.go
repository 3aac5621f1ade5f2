package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
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

// TestCrawlNewsProfile runs `sonda crawl` with the news profile's settings: sitemap-only
// pages are fetched and article pages leave article records.
func TestCrawlNewsProfile(t *testing.T) {
	article := `<html lang="en"><head><title>Storm floods the coast | Gazette</title>
<meta property="og:title" content="Storm floods the coast"><meta property="og:type" content="article">
<meta property="article:published_time" content="2024-03-01T08:30:00-03:00"><meta name="author" content="Ana Souza">
</head><body><article>` + strings.Repeat("<p>Rain fell all night on the coastal towns, and rivers rose above their banks before dawn, residents said.</p>", 10) +
		`</article></body></html>`
	extra := func(host string, _ *rand.Rand) []testweb.Page {
		return []testweb.Page{{Path: "/news/storm.html", Title: "Storm", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, article)
		})}}
	}
	web, addr := serveWeb(t, testweb.Config{Seed: 4, Hosts: 3, PagesPerHost: 5, Disable: testweb.AllFeatures &^ testweb.Robots, Extra: extra})
	dir, data := t.TempDir(), t.TempDir()
	if _, stderr, code := run(t, nil, "init", "--profile", "news", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	env := append([]string{"SONDA_FEEDS_INTERVAL=-1s"}, quickEnv...) // read feeds once, so the crawl ends
	args := append([]string{"-c", filepath.Join(dir, "sonda.yaml")}, crawlArgs(web, addr, data)...)
	if _, stderr, code := run(t, env, args...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	fetched := map[string]bool{}
	for _, r := range web.Requests() {
		fetched[r.URL] = true
	}
	for _, u := range web.SitemapOnly() {
		if !fetched[u] {
			t.Errorf("sitemap-only page %s was not fetched", u)
		}
	}
	out, stderr, code := run(t, nil, "export", "--data", data, "--what", "articles")
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var a map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if strings.HasSuffix(a["url"].(string), "/news/storm.html") {
			n++
			if a["title"] != "Storm floods the coast" || a["published"] != "2024-03-01T08:30:00-03:00" {
				t.Errorf("article record %v", a)
			}
		}
	}
	if n != len(web.Hosts()) {
		t.Errorf("%d article records for the storm pages, want one per host (%d)", n, len(web.Hosts()))
	}
}
