package feeds

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// newsSite is a small news site added to the first host of a test web: a section page
// that names its RSS feed in <link rel=alternate>, the feed (whose items grow when
// Publish is called), articles reachable only through the feed, a gzipped news sitemap,
// a sitemap index naming one sitemap, and a malformed sitemap, the last three reachable
// only as seeds.
type newsSite struct {
	host      string
	published atomic.Int32 // articles in the feed
	once      sync.Once
}

func (n *newsSite) extra(host string, _ *rand.Rand) []testweb.Page {
	first := false
	n.once.Do(func() { n.host, first = host, true })
	if !first {
		return nil
	}
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	pages := []testweb.Page{
		{Path: "/news/", Title: "News", Handler: html(`<html><head><title>News</title>
			<link rel="alternate" type="application/rss+xml" title="News feed" href="/news/feed.xml">
			<link rel="alternate" type="application/rss+xml" title="Comments feed" href="/news/comments/feed.xml">
			</head><body><h1>News</h1><p>Latest stories are in our feed.</p></body></html>`)},
		{Path: "/news/feed.xml", Unlinked: true, Handler: http.HandlerFunc(n.feed)},
		{Path: "/news/sitemap-news.xml.gz", Unlinked: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/x-gzip")
			w.Write(gz(nil, `<urlset><url><loc>http://`+n.host+`/news/from-sitemap.html</loc></url></urlset>`))
		})},
		{Path: "/news/sitemap-index.xml", Unlinked: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://`+n.host+`/news/sitemap-2024.xml</loc></sitemap></sitemapindex>`)
		})},
		{Path: "/news/sitemap-2024.xml", Unlinked: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/xml")
			fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://`+n.host+`/news/from-index.html</loc></url></urlset>`)
		})},
		{Path: "/news/bad-sitemap.xml", Unlinked: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<urlset><url><loc>http://`+n.host+`/news/before-error.html</loc></url><url><loc>oops</urlset>`)
		})},
	}
	for _, p := range []string{"/news/a1.html", "/news/a2.html", "/news/a3.html", "/news/a4.html", "/news/from-sitemap.html", "/news/from-index.html", "/news/before-error.html"} {
		pages = append(pages, testweb.Page{Path: p, Unlinked: true, Handler: html(`<html><head><title>Story</title></head><body><article><p>A story.</p></article></body></html>`)})
	}
	return pages
}

func (n *newsSite) feed(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/rss+xml")
	fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>`)
	for i := 1; i <= int(n.published.Load()); i++ {
		fmt.Fprintf(w, `<item><title>Story %d</title><link>http://%s/news/a%d.html</link></item>`, i, n.host, i)
	}
	fmt.Fprint(w, `</channel></rss>`)
}

func fetchResult(status int) *fetch.Result { return &fetch.Result{Status: status} }

func requested(web *testweb.Web) map[string]int {
	got := map[string]int{}
	for _, r := range web.Requests() {
		got[r.URL]++
	}
	return got
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCrawlFollowsSitemapsAndFeeds(t *testing.T) {
	site := &newsSite{}
	site.published.Store(3)
	web := testweb.New(testweb.Config{Seed: 11, Hosts: 4, PagesPerHost: 6, Disable: testweb.AllFeatures &^ testweb.Robots, Extra: site.extra})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if len(web.SitemapOnly()) == 0 {
		t.Fatal("the test web has no sitemap-only pages to find")
	}

	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Concurrency = 8
	cfg.Politeness.MinDelay, cfg.Politeness.DelayFactor = 0, 0
	news := "http://" + site.host + "/news/"
	cfg.Crawl.Seeds = append(cfg.Crawl.Seeds, news+"sitemap-news.xml.gz", news+"sitemap-index.xml", news+"bad-sitemap.xml")

	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	norm := urlnorm.New(crawl.NormalizerOptions(cfg))
	v, err := New(db, Options{Interval: 200 * time.Millisecond, MaxInterval: time.Second, Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	c, err := crawl.New(cfg, append(v.CrawlOptions(), crawl.WithStore(db))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, nil, nil)
		done <- err
	}()

	// Pages only sitemaps and feeds list are found: the test web's sitemap-only pages, the
	// feed's articles, the gzipped sitemap's page, the page of the sitemap the index names
	// and what preceded the malformed XML.
	want := append(web.SitemapOnly(), web.Sitemaps()...)
	for _, p := range []string{"a1.html", "a2.html", "a3.html", "from-sitemap.html", "from-index.html", "before-error.html", "feed.xml"} {
		want = append(want, news+p)
	}
	waitFor(t, "the pages listed in sitemaps and feeds", 30*time.Second, func() bool {
		got := requested(web)
		for _, u := range want {
			if got[u] == 0 {
				return false
			}
		}
		return true
	})
	// A new article appears in the feed: the feed's next read picks it up.
	site.published.Store(4)
	waitFor(t, "the article published after the first read", 15*time.Second, func() bool { return requested(web)[news+"a4.html"] > 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	got := requested(web)
	if got[news+"comments/feed.xml"] != 0 {
		t.Error("a comments feed was followed")
	}
	for _, u := range []string{news + "a1.html", news + "from-sitemap.html"} {
		if got[u] != 1 {
			t.Errorf("%s requested %d times: pages listed again in a feed must not be refetched", u, got[u])
		}
	}
	if got[news+"feed.xml"] < 2 {
		t.Errorf("the feed was read %d times, want revisits", got[news+"feed.xml"])
	}

	// The registry knows where each came from; the malformed sitemap's error is recorded.
	reg, err := OpenRegistry(db)
	if err != nil {
		t.Fatal(err)
	}
	via, kind := map[string]string{}, map[string]Kind{}
	for _, s := range reg.Sources() {
		via[s.URL], kind[s.URL] = s.Via, s.Kind
	}
	if kind[news+"sitemap-index.xml"] != KindSitemapIndex || kind[news+"sitemap-2024.xml"] != KindSitemap {
		t.Errorf("registry kinds: index %q, its sitemap %q", kind[news+"sitemap-index.xml"], kind[news+"sitemap-2024.xml"])
	}
	for u, w := range map[string]string{news + "feed.xml": "link", news + "sitemap-news.xml.gz": "content", news + "sitemap-index.xml": "content", news + "sitemap-2024.xml": "index", web.Sitemaps()[0]: "robots"} {
		if via[u] != w {
			t.Errorf("registry: %s via %q, want %q (registry: %v)", u, via[u], w, via)
		}
	}
	bad, _ := norm.Parse(news + "bad-sitemap.xml")
	rec, ok, err := db.Page(bad.Key())
	if err != nil || !ok || rec.Error != "bad-sitemap" || !strings.Contains(rec.ErrorDetail, "malformed sitemap XML") {
		t.Errorf("malformed sitemap record: %v %v %+v", err, ok, rec)
	}
	src, _ := reg.Get(bad.Key())
	if src.Error == "" || src.Entries != 1 {
		t.Errorf("malformed sitemap registry entry: %+v", src)
	}
	if v.Stats.FeedsRead.Load() < 2 || v.Stats.SitemapsRead.Load() < 2 || v.Stats.Errors.Load() < 1 {
		t.Errorf("stats: feeds %d, sitemaps %d, errors %d", v.Stats.FeedsRead.Load(), v.Stats.SitemapsRead.Load(), v.Stats.Errors.Load())
	}
}

func TestRevisitBacksOff(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := New(db, Options{Interval: time.Minute, MaxInterval: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	norm := urlnorm.New(urlnorm.DefaultOptions())
	u, _ := norm.Parse("https://ex.example/feed.xml")
	other, _ := norm.Parse("https://ex.example/page.html")
	v.register(u, KindFeed, "link", 0)
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	doc := func(target urlnorm.URL, status int, changed bool) *crawl.Document {
		if v.reg.Known(target.Key()) { // as the analyzer leaves it after a read
			v.reg.update(target.Key(), target.String(), func(s *Source) { s.Changed = changed })
		}
		return &crawl.Document{URL: target, Fetch: fetchResult(status), Record: &store.Page{}}
	}
	var waits []time.Duration
	for _, step := range []struct {
		status  int
		changed bool
	}{{200, true}, {200, false}, {304, false}, {200, false}, {200, false}, {200, true}} {
		next, ok := v.Revisit(doc(u, step.status, step.changed), now)
		if !ok {
			t.Fatal("a registered feed must be claimed")
		}
		waits = append(waits, next.Sub(now))
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute, time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Errorf("waits %v, want %v", waits, want)
			break
		}
	}
	if next, ok := v.Revisit(doc(u, 410, false), now); !ok || !next.IsZero() {
		t.Errorf("a gone feed must not be revisited: %v %v", next, ok)
	}
	if _, ok := v.Revisit(doc(other, 200, true), now); ok {
		t.Error("an ordinary page must be left to the crawl's revisit policy")
	}
}

func TestRegistryPersists(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	norm := urlnorm.New(urlnorm.DefaultOptions())
	v, _ := New(db, Options{})
	for i := 0; i < 5; i++ {
		u, _ := norm.Parse(fmt.Sprintf("https://many.example/f%d.xml", i))
		v.register(u, KindFeed, "link", 3)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg, err := OpenRegistry(db)
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Sources(); len(got) != 3 || got[0].URL != "https://many.example/f0.xml" || got[0].Via != "link" {
		t.Errorf("after reopening: %+v (max-per-host 3)", got)
	}
}
