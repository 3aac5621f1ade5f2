package news

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
	"github.com/sonda-search/sonda/feeds"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// story is one article of the test news site.
type story struct {
	slug, title, author, section string
	published                    time.Time
}

var stories = []story{
	{"storm", "Storm floods the coastal towns", "Ana Souza", "Weather", time.Date(2024, 3, 1, 8, 30, 0, 0, time.FixedZone("", -3*3600))},
	{"budget", "Council approves the new budget", "João Lima", "Politics", time.Date(2024, 3, 2, 14, 0, 0, 0, time.FixedZone("", -3*3600))},
	{"derby", "Local derby ends in a draw", "Maria Reis", "Sports", time.Date(2024, 3, 3, 21, 15, 0, 0, time.FixedZone("", -3*3600))},
	{"bridge", "New bridge opens to traffic", "Pedro Alves", "City", time.Date(2024, 3, 4, 9, 0, 0, 0, time.FixedZone("", -3*3600))},
}

func (s story) page(host string, edition int) string {
	var body strings.Builder
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&body, "<p>Paragraph %d of the %s story (edition %d): reporters spoke with residents, officials and experts about what happened and what comes next for the region.</p>\n", i, s.slug, edition)
	}
	return fmt.Sprintf(`<!DOCTYPE html><html lang="pt-BR"><head><title>%s | Gazeta</title>
<meta property="og:title" content="%s"><meta property="og:site_name" content="Gazeta">
<meta property="og:type" content="article"><meta property="article:section" content="%s">
<meta property="article:published_time" content="%s">
<link rel="canonical" href="http://%s/news/%s.html">
<link rel="alternate" type="application/rss+xml" href="/news/feed.xml">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":%q,
"author":{"@type":"Person","name":%q},"datePublished":%q}</script></head>
<body><header><a href="/">Gazeta</a></header><article><h1>%s</h1>%s</article>
<footer>© Gazeta</footer></body></html>`,
		s.title, s.title, s.section, s.published.Format(time.RFC3339), host, s.slug, s.title, s.author,
		s.published.Format(time.RFC3339), s.title, body.String())
}

// gazeta is a news site on the first host of a test web: a front page listing the
// stories, the stories (reachable only through the feed after the first), an RSS feed that
// grows when more are published, and a short contact page.
type gazeta struct {
	host      string
	published atomic.Int32
	edition   atomic.Int32
	once      sync.Once
}

func (g *gazeta) extra(host string, _ *rand.Rand) []testweb.Page {
	first := false
	g.once.Do(func() { g.host, first = host, true })
	if !first {
		return nil
	}
	html := func(f func() string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, f())
		}
	}
	pages := []testweb.Page{
		{Path: "/news/", Title: "Gazeta news", Handler: html(g.front)},
		{Path: "/news/feed.xml", Unlinked: true, Handler: http.HandlerFunc(g.feed)},
		{Path: "/news/contact.html", Title: "Contact", Handler: html(func() string {
			return `<html><head><title>Contact</title></head><body><p>Write to us at the address below.</p></body></html>`
		})},
	}
	for _, s := range stories {
		pages = append(pages, testweb.Page{Path: "/news/" + s.slug + ".html", Unlinked: true,
			Handler: html(func() string { return s.page(g.host, int(g.edition.Load())) })})
	}
	return pages
}

func (g *gazeta) front() string {
	var b strings.Builder
	b.WriteString(`<html><head><title>Gazeta</title><link rel="alternate" type="application/rss+xml" href="/news/feed.xml"></head><body>`)
	for _, s := range stories[:1] {
		fmt.Fprintf(&b, `<article><h2><a href="/news/%s.html">%s</a></h2><p>Teaser.</p></article>`, s.slug, s.title)
	}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, `<article><h2><a href="/news/old-%d.html">Older story %d</a></h2></article>`, i, i)
	}
	b.WriteString(`</body></html>`)
	return b.String()
}

func (g *gazeta) feed(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/rss+xml")
	fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>Gazeta</title>`)
	for _, s := range stories[:g.published.Load()] {
		fmt.Fprintf(w, `<item><title>%s</title><link>http://%s/news/%s.html</link></item>`, s.title, g.host, s.slug)
	}
	fmt.Fprint(w, `</channel></rss>`)
}

// gazetaCrawl starts a test web with g on its first host and opens a crawl database for
// it: the crawl configuration (no politeness delays), the database and the crawl's URL
// normalizer. Everything is closed when the test ends.
func gazetaCrawl(t *testing.T, g *gazeta, seed int64, hosts, pages int) (*testweb.Web, config.Config, *store.DB, *urlnorm.Normalizer) {
	t.Helper()
	web := testweb.New(testweb.Config{Seed: seed, Hosts: hosts, PagesPerHost: pages, Disable: testweb.AllFeatures &^ testweb.Robots, Extra: g.extra})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Politeness.MinDelay, cfg.Politeness.DelayFactor = 0, 0
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return web, cfg, db, urlnorm.New(crawl.NormalizerOptions(cfg))
}

// startCrawl runs a crawl with opts in the background; stop ends it and reports its
// errors (it also runs when the test ends, before the database closes).
func startCrawl(t *testing.T, cfg config.Config, opts ...crawl.Option) (stop func()) {
	t.Helper()
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	done := make(chan error, 1)
	go func() { _, err := c.Run(ctx, nil, nil); done <- err }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestCrawlStoresArticles(t *testing.T) {
	g := &gazeta{}
	g.published.Store(3)
	g.edition.Store(1)
	_, cfg, db, norm := gazetaCrawl(t, g, 5, 3, 4)
	cfg.Crawl.Concurrency = 4
	fv, err := feeds.New(db, feeds.Options{Interval: 200 * time.Millisecond, MaxInterval: time.Second, Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	an, err := NewAnalyzer(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := startCrawl(t, cfg, append(append(fv.CrawlOptions(), an.CrawlOptions()...), crawl.WithStore(db))...)

	key := func(slug string) store.URLKey {
		u, err := norm.Parse("http://" + g.host + "/news/" + slug + ".html")
		if err != nil {
			t.Fatal(err)
		}
		return u.Key()
	}
	has := func(slug string) bool {
		_, ok, _ := Get(db, key(slug))
		return ok
	}
	wait := func(what string, cond func() bool) {
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("the first three articles", func() bool { return has("storm") && has("budget") && has("derby") })
	g.published.Store(4) // a new story appears in the feed
	wait("the article published later", func() bool { return has("bridge") })
	stop()

	got := map[string]*Article{}
	if err := Each(db, func(a *Article) error { got[a.URL] = a; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, s := range stories {
		u := "http://" + g.host + "/news/" + s.slug + ".html"
		a := got[u]
		if a == nil {
			t.Errorf("no record for %s", u)
			continue
		}
		if a.Title != s.title || len(a.Authors) != 1 || a.Authors[0] != s.author || a.Section != s.section ||
			!a.Published.Equal(s.published) || a.Published.Format(time.RFC3339) != s.published.Format(time.RFC3339) ||
			a.SiteName != "Gazeta" || a.Language != "pt-BR" || a.CanonicalURL != u || !a.IsArticle || a.WordCount < 150 ||
			len(a.Paragraphs()) != 8 || a.FetchedAt.IsZero() || a.FirstSeen.IsZero() || len(a.SimHash) != 16 {
			t.Errorf("record for %s:\n%+v", s.slug, a)
		}
	}
	for _, notArticle := range []string{"http://" + g.host + "/news/", "http://" + g.host + "/news/contact.html"} {
		if a := got[notArticle]; a != nil {
			t.Errorf("%s is not an article but has a record (kind %s)", notArticle, a.Kind)
		}
	}
	if an.Stats.Articles.Load() < 4 || an.Stats.Others.Load() < 2 {
		t.Errorf("stats: %d articles, %d others", an.Stats.Articles.Load(), an.Stats.Others.Load())
	}
}

func TestRecordLifecycle(t *testing.T) {
	// The analyzer on hand-built documents: first sight, an unchanged refetch, a changed
	// one, and the page turning into a non-article.
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	an, err := NewAnalyzer(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	norm := urlnorm.New(urlnorm.DefaultOptions())
	u, _ := norm.Parse("https://gazeta.example/news/storm.html")
	s := stories[0]
	visit := func(at time.Time, body string) {
		t.Helper()
		d := testDocument(t, u, at, body)
		if err := an.Analyze(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		commit(t, db, d)
	}
	t1 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	visit(t1, s.page("gazeta.example", 1))
	visit(t1.Add(time.Hour), s.page("gazeta.example", 1))
	a, ok, err := Get(db, u.Key())
	if err != nil || !ok || !a.FirstSeen.Equal(t1) || !a.Changed.Equal(t1) || !a.FetchedAt.Equal(t1.Add(time.Hour)) {
		t.Fatalf("after an unchanged refetch: %v %v %+v", ok, err, a)
	}
	visit(t1.Add(2*time.Hour), s.page("gazeta.example", 2))
	a, _, _ = Get(db, u.Key())
	if !a.FirstSeen.Equal(t1) || !a.Changed.Equal(t1.Add(2*time.Hour)) {
		t.Errorf("after a changed refetch: first seen %v, changed %v", a.FirstSeen, a.Changed)
	}
	visit(t1.Add(3*time.Hour), `<html><body><p>This page has moved.</p></body></html>`)
	if _, ok, _ := Get(db, u.Key()); ok {
		t.Error("a page that is no longer an article keeps its record")
	}
}

// testDocument is what the crawler hands analyzers for an HTML page fetched at at.
func testDocument(t *testing.T, u urlnorm.URL, at time.Time, body string) *crawl.Document {
	t.Helper()
	page, err := parse.Parse([]byte(body), u.String(), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &crawl.Document{
		URL:    u,
		Item:   frontier.Item{URL: u.String()},
		Fetch:  &fetch.Result{Status: 200, MediaType: "text/html", Body: []byte(body), UTF8: []byte(body)},
		Page:   page,
		Text:   page.Text(),
		Record: &store.Page{URL: u.String(), FinalURL: u.String(), FetchedAt: at, Status: 200},
	}
}

// commit stores a document's analyzer writes as the crawler would.
func commit(t *testing.T, db *store.DB, d *crawl.Document) {
	t.Helper()
	b := db.Pebble().NewBatch()
	if err := d.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
}

func TestIndexedAsArticle(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	an, _ := NewAnalyzer(db, Options{})
	u, _ := urlnorm.New(urlnorm.DefaultOptions()).Parse("https://gazeta.example/news/storm.html")
	d := testDocument(t, u, time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), stories[0].page("gazeta.example", 1))
	if err := an.Analyze(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	doc, action := index.DocFromCrawl(d)
	if action != index.Add || doc.Kind != index.KindArticle || doc.Title != stories[0].title || doc.Lang != "pt" ||
		!doc.Date().Equal(stories[0].published) || doc.Fields["site_name"] != "Gazeta" || strings.Contains(doc.Body, "© Gazeta") {
		t.Errorf("index document %+v (action %v)", doc, action)
	}
	// A page that is not an article stays a page.
	d = testDocument(t, u, time.Now(), `<html><body><p>Contact us.</p></body></html>`)
	an.Analyze(context.Background(), d)
	if doc, _ := index.DocFromCrawl(d); doc.Kind != index.KindPage {
		t.Errorf("a non-article indexed as %q", doc.Kind)
	}
}

// TestSourceRevisitSchedules crawls with a revisit policy (Nutch's adaptive schedule,
// starting at 300 ms, at least 100 ms) and a topic whose source is the news front page. By default the
// monitor keeps the source to its own daily schedule, ahead of the policy; with a negative
// SourceInterval the policy schedules the source like every other page.
func TestSourceRevisitSchedules(t *testing.T) {
	for _, tt := range []struct {
		name     string
		interval time.Duration
		refetch  bool
	}{{"daily", 0, false}, {"revisit policy", -1, true}} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gazeta{}
			g.published.Store(1)
			web, cfg, db, norm := gazetaCrawl(t, g, 7, 2, 3)
			cfg.Crawl.Concurrency = 2
			front := "http://" + g.host + "/news/"
			cfg.Crawl.Seeds = append(cfg.Crawl.Seeds, front)
			mon, err := OpenMonitor(db, MonitorOptions{Normalizer: norm, SourceInterval: tt.interval})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := mon.AddTopic(context.Background(), TopicRequest{Name: "storm", Sites: []string{front}}); err != nil {
				t.Fatal(err)
			}
			an, err := NewAnalyzer(db, Options{Monitor: mon})
			if err != nil {
				t.Fatal(err)
			}
			policy, err := revisit.NewCrawlPolicy("adaptive", revisit.Options{Interval: 300 * time.Millisecond, Adaptive: revisit.AdaptiveOptions{Min: 100 * time.Millisecond}}, false)
			if err != nil {
				t.Fatal(err)
			}
			stop := startCrawl(t, cfg, append(an.CrawlOptions(), crawl.WithRevisitPolicy(policy), crawl.WithStore(db))...)
			// Wait until the policy has brought an ordinary page back three times.
			counts := func() (source, other int) {
				m := map[string]int{}
				for _, r := range web.Requests() {
					m[r.URL]++
				}
				for u, n := range m {
					if u != front && !strings.HasSuffix(u, "/robots.txt") {
						other = max(other, n)
					}
				}
				return m[front], other
			}
			deadline := time.Now().Add(30 * time.Second)
			for source, other := counts(); other < 3 || (tt.refetch && source < 2); source, other = counts() {
				if time.Now().After(deadline) {
					t.Fatalf("timed out: the most fetched page %d times, the source %d times", other, source)
				}
				time.Sleep(20 * time.Millisecond)
			}
			stop()
			if n, _ := counts(); !tt.refetch && n != 1 {
				t.Errorf("the topic's source was fetched %d times; the monitor's daily schedule must win over the policy", n)
			}
		})
	}
}

// TestOptionsFromConfigNeedsARevisitPolicy: a negative news.source-interval hands topic
// sources to revisit.policy; without a policy the crawl is refused, naming both settings.
func TestOptionsFromConfigNeedsARevisitPolicy(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		policy   string
		ok       bool
	}{
		{24 * time.Hour, "none", true},
		{-time.Second, "", false},
		{-time.Second, "none", false},
		{-time.Second, "adaptive", true},
	} {
		cfg := config.Default()
		cfg.News.Enabled, cfg.News.SourceInterval, cfg.Revisit.Policy = true, c.interval, c.policy
		_, err := OptionsFromConfig(cfg)
		if c.ok != (err == nil) {
			t.Errorf("interval %v, policy %q: %v", c.interval, c.policy, err)
		}
		if err != nil && !(strings.Contains(err.Error(), "news.source-interval") && strings.Contains(err.Error(), "revisit.policy")) {
			t.Errorf("the error must name both settings: %v", err)
		}
	}
}
