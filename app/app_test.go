package app

import (
	"context"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/discover"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// TestOpenWhatWhen: the database is always opened; the link graph and the index only when
// searching, or crawling with search.index on; a second opener is told the directory is in
// use; CrawlOptions needs an instance opened for crawling.
func TestOpenWhatWhen(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		index     bool // search.index
		wantIndex bool
		wantSinks []string
	}{
		{"store only", Options{}, true, false, nil},
		{"search, index off", Options{Search: true}, false, true, nil},
		{"crawl, index on", Options{Crawl: true}, true, true, []string{"linkgraph", "index"}},
		{"crawl, index off", Options{Crawl: true}, false, false, nil},
		{"serve", Options{Search: true, Crawl: true}, false, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Data = t.TempDir()
			cfg.Search.Index = c.index
			in, err := Open(cfg, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.DB == nil || (in.Index != nil) != c.wantIndex || (in.Graph != nil) != c.wantIndex {
				t.Errorf("opened db %v, graph %v, index %v; want the index %v", in.DB != nil, in.Graph != nil, in.Index != nil, c.wantIndex)
			}
			if _, err := os.Stat(index.DataDir(cfg.Data)); (err == nil) != c.wantIndex {
				t.Errorf("index directory exists: %v, want %v", err == nil, c.wantIndex)
			}
			if _, err := Open(cfg, c.opts); !errors.Is(err, ErrInUse) {
				t.Errorf("second Open: %v, want ErrInUse", err)
			}
			a, err := in.assemble(&cfg)
			if !c.opts.Crawl {
				if err == nil {
					t.Error("crawl options from an instance not opened for crawling")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.sinks, c.wantSinks) {
				t.Errorf("sinks %v, want %v", a.sinks, c.wantSinks)
			}
			if err := in.Close(); err != nil {
				t.Fatal(err)
			}
			if err := in.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// TestAssemblyComposes: whatever the verticals on, one link scorer (the configured
// strategy, with geo's boost on top), analyzers in their order, language detection when no
// topic does it, one revisit policy, and the sinks with the link graph before the index.
func TestAssemblyComposes(t *testing.T) {
	cases := []struct {
		name      string
		set       func(c *config.Config)
		analyzers []string
		sinks     []string
		geo       bool
		base      string // "bfs" or "focus"
		policy    bool
	}{
		{"plain", func(*config.Config) {}, []string{"language"}, []string{"linkgraph", "index"}, false, "bfs", false},
		{"topic", func(c *config.Config) { c.Focus.Topics = []string{"nuclear"} }, []string{"relevance"}, []string{"linkgraph", "index"}, false, "focus", false},
		{"topic, bfs", func(c *config.Config) { c.Focus.Topics = []string{"nuclear"}; c.Crawl.LinkStrategy = "bfs" },
			[]string{"relevance"}, []string{"linkgraph", "index"}, false, "bfs", false},
		{"geo", func(c *config.Config) { c.Geo.Enabled = true }, []string{"language", "geo"}, []string{"geo", "linkgraph", "index", "geo-index"}, true, "bfs", false},
		{"everything", func(c *config.Config) {
			c.Geo.Enabled, c.Feeds.Enabled, c.News.Enabled = true, true, true
			c.Focus.Topics = []string{"geo"}
			c.Revisit.Policy, c.Crawl.Budget = "optimal", 10
			c.Search.Index = false
		}, []string{"geo", "feeds", "news", "relevance"}, []string{"geo"}, true, "focus", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			c.set(&cfg)
			a := assembleFor(t, &cfg)
			if !slices.Equal(a.analyzers, c.analyzers) || !slices.Equal(a.sinks, c.sinks) {
				t.Errorf("analyzers %v, sinks %v; want %v, %v", a.analyzers, a.sinks, c.analyzers, c.sinks)
			}
			if c.geo != (a.geo != nil) || c.geo && a.scorer != crawl.LinkScorer(a.geo) || !c.geo && a.scorer != a.base {
				t.Errorf("scorer %T (geo %v), base %T", a.scorer, a.geo != nil, a.base)
			}
			_, bfs := a.base.(crawl.BreadthFirst)
			if bfs != (c.base == "bfs") {
				t.Errorf("configured strategy %T, want %s", a.base, c.base)
			}
			if (a.policy != nil) != c.policy {
				t.Errorf("revisit policy %v, want one: %v", a.policy, c.policy)
			}
		})
	}

	// A strategy that needs its concurrency sets it; a bad setting names itself.
	cfg := config.Default()
	cfg.Data = t.TempDir()
	in, err := Open(cfg, Options{Crawl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	bestN := cfg
	bestN.Focus.Topics, bestN.Crawl.LinkStrategy, bestN.Focus.BestN = []string{"nuclear"}, "best-n-first", 7
	if _, err := in.CrawlOptions(&bestN); err != nil || bestN.Crawl.Concurrency != 7 {
		t.Errorf("best-n-first: concurrency %d (%v), want 7", bestN.Crawl.Concurrency, err)
	}
	for _, bad := range []func(*config.Config){
		func(c *config.Config) { c.Crawl.LinkStrategy = "shark" },                      // needs a topic
		func(c *config.Config) { c.Revisit.Policy = "optimal" },                        // needs a budget
		func(c *config.Config) { c.Crawl.LinkStrategy = "nonsense" },                   // unknown
		func(c *config.Config) { c.Focus.Topics = []string{"no-such-topic-anywhere"} }, // unreadable
	} {
		b := cfg
		bad(&b)
		if _, err := in.CrawlOptions(&b); err == nil {
			t.Errorf("no error for a bad setting: %+v %+v %+v", b.Crawl, b.Revisit.Policy, b.Focus.Topics)
		}
	}
}

// assembleFor opens a fresh data directory for crawling with cfg and assembles a crawl.
func assembleFor(t *testing.T, cfg *config.Config) *assembly {
	t.Helper()
	cfg.Data = t.TempDir()
	in, err := Open(*cfg, Options{Crawl: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	a, err := in.assemble(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestGeoBoostsTheConfiguredStrategy: with geo on and a topic, links are scored by the
// topic's strategy (best-first: the relevance of their page), and links found on producer
// pages get the geo vertical's boost on top of that score.
func TestGeoBoostsTheConfiguredStrategy(t *testing.T) {
	cfg := config.Default()
	cfg.Geo.Enabled, cfg.Focus.Topics, cfg.Crawl.LinkStrategy = true, []string{"geo"}, "best-first"
	a := assembleFor(t, &cfg)
	norm := urlnorm.New(urlnorm.DefaultOptions())
	doc := func(raw, html string, relevance float64) *crawl.Document {
		u, err := norm.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parse.Parse([]byte(html), u.String(), parse.Options{Resolver: norm})
		if err != nil {
			t.Fatal(err)
		}
		return &crawl.Document{URL: u, Page: p, Text: p.Text(), Record: &store.Page{URL: u.String(), Relevance: &relevance}}
	}
	plain := doc("http://a.test/about.html", `<html><body><p>About us.</p><a href="/team.html">team</a></body></html>`, 0.25)
	producer := doc("http://b.test/data.html", `<html><body><p>Mapas e dados geográficos do município.</p>
		<a href="/files/rios.geojson">rios (GeoJSON)</a><a href="/next.html">next</a></body></html>`, 0.75)
	for _, d := range []*crawl.Document{plain, producer} {
		if err := a.geo.Analyze(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	link := func(src *crawl.Document, i int) crawl.Link {
		u, _ := norm.Parse(src.Page.Links[i].URL)
		return crawl.Link{URL: u, Depth: 3, Source: src, Index: i}
	}
	l1, l2 := link(plain, 0), link(producer, 1)
	if got := a.base.Score(l1); got < 0.25 || got > 0.2501 {
		t.Errorf("the topic's best-first scores a link from a page of relevance 0.25 at %v (breadth-first would give -3)", got)
	}
	if got, want := a.scorer.Score(l1), a.base.Score(l1); got != want {
		t.Errorf("link from an ordinary page: %v, want the strategy's %v", got, want)
	}
	if got, want := a.scorer.Score(l2), a.base.Score(l2)+1000; got != want {
		t.Errorf("link from a producer page: %v, want the strategy's score plus the boost, %v", got, want)
	}
	var _ *discover.Vertical = a.geo
}

// crawlWeb crawls web into a fresh data directory with the instance's assembly and closes
// everything; set adjusts the configuration first.
func crawlWeb(t *testing.T, web *testweb.Web, set func(*config.Config)) config.Config {
	t.Helper()
	cfg := testConfig(t, web)
	if set != nil {
		set(&cfg)
	}
	in, err := Open(cfg, Options{Crawl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	runCrawl(t, in, cfg)
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func runCrawl(t *testing.T, in *Instance, cfg config.Config) crawl.Summary {
	t.Helper()
	opts, err := in.CrawlOptions(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum, err := c.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != "frontier empty" {
		t.Fatalf("crawl ended with %q", sum.Reason)
	}
	return sum
}

func testConfig(t testing.TB, web *testweb.Web) config.Config {
	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Politeness.MinDelay = 0
	cfg.Crawl.Concurrency = 8
	return cfg
}

func startWeb(t testing.TB, c testweb.Config) *testweb.Web {
	t.Helper()
	web := testweb.New(c)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	return web
}

// htmlPages counts the records of pages fetched as HTML: what the index must hold.
func htmlPages(t *testing.T, db *store.DB) int {
	t.Helper()
	n := 0
	err := db.Pages(func(p *store.Page) error {
		if p.Status == 200 && p.ContentType == "text/html" && p.DuplicateOf == "" && !p.NoIndex {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func search(t *testing.T, ix *index.Index, q string) *index.Result {
	t.Helper()
	res, err := ix.Search(context.Background(), index.Request{Query: q, PerPage: 100})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res
}

// TestEveryCrawlDetectsLanguage: without a topic, a page that does not declare its
// language (no lang attribute, no Content-Language) gets the one its text is in; pages
// that declare theirs keep it.
func TestEveryCrawlDetectsLanguage(t *testing.T) {
	const sobre = `<!DOCTYPE html><html><head><title>Sobre nós</title></head><body>
<p>Esta é a página da nossa associação, que trabalha com as escolas da região desde o ano de mil novecentos e noventa.</p>
<p>Para falar conosco, escreva para o endereço que está no fim da página ou venha nos visitar durante a semana.</p></body></html>`
	web := startWeb(t, testweb.Config{Seed: 2, Hosts: 2, PagesPerHost: 3, Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra: func(string, *rand.Rand) []testweb.Page {
			return []testweb.Page{{Path: "/sobre.html", Title: "Sobre nós", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, sobre)
			})}}
		}})
	cfg := crawlWeb(t, web, nil)
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pt, en := 0, 0
	err = db.Pages(func(p *store.Page) error {
		switch {
		case strings.HasSuffix(p.URL, "/sobre.html"):
			pt++
			if p.Lang != "pt" {
				t.Errorf("%s: lang %q, want pt", p.URL, p.Lang)
			}
		case p.Status == 200 && p.ContentType == "text/html":
			en++
			if p.Lang != "en" {
				t.Errorf("%s declares en; recorded %q", p.URL, p.Lang)
			}
		}
		return nil
	})
	if err != nil || pt != len(web.Hosts()) || en == 0 {
		t.Errorf("%d undeclared Portuguese pages (want %d), %d declared English ones; %v", pt, len(web.Hosts()), en, err)
	}
}

// TestRebuildKeepsArticles: an article page crawled with news on is indexed as kind
// article, and stays so after sonda index rebuild, even when the rebuild's configuration
// has the news vertical off (the store's records say what the crawl found).
func TestRebuildKeepsArticles(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 4, Hosts: 2, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots, Extra: articlePage})
	cfg := crawlWeb(t, web, func(c *config.Config) { c.News.Enabled = true })
	articles := func() (kinds map[string]string, docs int64) {
		in, err := Open(cfg, Options{Search: true})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		kinds = map[string]string{}
		for _, h := range search(t, in.Index, "type:article").Hits {
			kinds[h.URL] = h.Kind
		}
		return kinds, in.Index.Stats().Documents
	}
	before, docs := articles()
	storms := 0
	for u, k := range before {
		if strings.HasSuffix(u, "/news/storm.html") && k == index.KindArticle {
			storms++
		}
	}
	if storms != len(web.Hosts()) {
		t.Fatalf("crawl indexed articles %v; want every host's storm page among them", before)
	}
	cfg.News.Enabled = false
	st, err := Rebuild(context.Background(), cfg, RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, rebuilt := articles()
	if !maps.Equal(after, before) || rebuilt != docs || st.Documents != docs {
		t.Errorf("after rebuild: articles %v (before %v), %d documents (before %d, stats %+v)", after, before, rebuilt, docs, st)
	}
}

// articlePage gives every host a news article of its own (copies would be duplicates,
// which the index leaves out).
func articlePage(host string, _ *rand.Rand) []testweb.Page {
	body := `<html lang="en"><head><title>Storm floods the coast near ` + host + ` | Gazette</title>
<meta property="og:title" content="Storm floods the coast near ` + host + `"><meta property="og:type" content="article">
<meta property="article:published_time" content="2024-03-01T08:30:00-03:00"><meta name="author" content="Ana Souza">
</head><body><article>` + strings.Repeat("<p>Rain fell all night on the coastal towns near "+host+", and rivers rose above their banks before dawn, residents said.</p>", 10) +
		`</article></body></html>`
	return []testweb.Page{{Path: "/news/storm.html", Title: "Storm", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	})}}
}

// crashEnv makes the test process a child that crawls and then exits without closing
// anything, as a killed process would.
const crashEnv = "APP_TEST_CRASH_CHILD"

// TestCatchUpAfterCrash: a process crawls with the index's batches held back (a long batch
// delay) and exits without closing the index, as sonda serve or sonda crawl killed
// mid-crawl would. The index is then unclean and short of pages, which wait in its queue;
// the next Open of the directory (serve's: search and crawl) catches it up from the store
// and the WARC files, article kind included, and empties the queue.
func TestCatchUpAfterCrash(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		crashChild(t)
		return
	}
	web := startWeb(t, testweb.Config{Seed: 6, Hosts: 3, PagesPerHost: 6, Disable: testweb.AllFeatures &^ testweb.Robots, Extra: articlePage})
	env := []string{"SONDA_DATA=" + t.TempDir(), "SONDA_CRAWL_SEEDS=" + strings.Join(web.Seeds(), ","),
		"SONDA_FETCH_RESOLVE=" + web.Resolve(), "SONDA_FETCH_ALLOW_PRIVATE=true", "SONDA_SCOPE_FOLLOW=any",
		"SONDA_POLITENESS_MIN_DELAY=0s", "SONDA_NEWS_ENABLED=true"}
	cfg, err := config.Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestCatchUpAfterCrash$", "-test.count=1")
	child.Env = append(append(os.Environ(), env...), crashEnv+"=1")
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("crawling child: %v\n%s", err, out)
	}

	// What the crash left: look at a copy, since opening the index marks it open again.
	cp := filepath.Join(t.TempDir(), "index")
	if err := os.CopyFS(cp, os.DirFS(index.DataDir(cfg.Data))); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(cp, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	left := ix.Stats()
	ix.Close()
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pages := htmlPages(t, db)
	articles := 0
	if err := news.Each(db, func(*news.Article) error { articles++; return nil }); err != nil {
		t.Fatal(err)
	}
	q, err := index.OpenQueue(db)
	if err != nil {
		t.Fatal(err)
	}
	queued := q.Len()
	db.Close()
	if queued+int(left.Documents) < pages {
		t.Errorf("the crash left %d pages in the index queue and %d in the index, the store has %d: pages were lost", queued, left.Documents, pages)
	}
	if !left.Unclean || left.Documents >= int64(pages) {
		t.Fatalf("the crash left an index that is unclean: %v, with %d of %d pages; the test needs one that lost pages", left.Unclean, left.Documents, pages)
	}

	in, err := Open(cfg, Options{Search: true, Crawl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if got := search(t, in.Index, "type:page").Total + search(t, in.Index, "type:article").Total; int(got) != pages {
		t.Errorf("after catching up the index has %d documents, the store %d pages", got, pages)
	}
	if got := search(t, in.Index, "type:article").Total; int(got) != articles || articles < len(web.Hosts()) {
		t.Errorf("%d articles after catching up; the store has %d article records (at least one per host)", got, articles)
	}
	if n := in.queue.Len(); n != 0 {
		t.Errorf("%d pages left in the index queue after catching up", n)
	}
}

// TestAsyncIndexMatchesSync: the same web crawled with search.index-mode sync (each page
// searchable before the crawl moves on), and with async by a process that exits with the
// index far behind (nothing persisted, everything in the queue), caught up when the
// directory is opened again: both indexes hold every page once and rank every query's
// top 10 alike.
func TestAsyncIndexMatchesSync(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		crashChild(t)
		return
	}
	web := startWeb(t, testweb.Config{Seed: 8, Hosts: 4, PagesPerHost: 12, Disable: testweb.AllFeatures &^ testweb.Robots})
	syncCfg := crawlWeb(t, web, func(c *config.Config) { c.Search.IndexMode = config.IndexSync })

	asyncData := t.TempDir()
	env := []string{"SONDA_DATA=" + asyncData, "SONDA_CRAWL_SEEDS=" + strings.Join(web.Seeds(), ","),
		"SONDA_FETCH_RESOLVE=" + web.Resolve(), "SONDA_FETCH_ALLOW_PRIVATE=true", "SONDA_POLITENESS_MIN_DELAY=0s",
		"SONDA_SCOPE_FOLLOW=any", "SONDA_SCOPE_ALLOW_DOMAINS=test", "SONDA_SCOPE_MAX_DEPTH=0", "SONDA_SEARCH_INDEX_MODE=async"}
	child := exec.Command(os.Args[0], "-test.run=^TestAsyncIndexMatchesSync$", "-test.count=1")
	child.Env = append(append(os.Environ(), env...), crashEnv+"=1")
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("crawling child: %v\n%s", err, out)
	}
	asyncCfg := syncCfg
	asyncCfg.Data = asyncData
	db, err := store.Open(crawl.StateDir(asyncData), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := index.OpenQueue(db)
	if err != nil {
		t.Fatal(err)
	}
	if queued := q.Len(); queued < 40 {
		t.Errorf("the crawling child left %d pages in the index queue; the test needs the index far behind", queued)
	}
	db.Close()

	open := func(cfg config.Config) (*Instance, map[string]bool) {
		in, err := Open(cfg, Options{Search: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close() })
		if _, err := in.Graph.ComputePageRank(context.Background()); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for page := 1; ; page++ {
			res, err := in.Index.Search(context.Background(), index.Request{Query: "type:page", PerPage: 100, Page: page})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				if ids[h.ID] {
					t.Errorf("%s: %s is in the index twice", cfg.Data, h.ID)
				}
				ids[h.ID] = true
			}
			if len(res.Hits) < 100 {
				break
			}
		}
		if n := htmlPages(t, in.DB); n != len(ids) || n < 40 {
			t.Errorf("%s: %d documents in the index, %d pages in the store", cfg.Data, len(ids), n)
		}
		return in, ids
	}
	syncIn, syncIDs := open(syncCfg)
	asyncIn, asyncIDs := open(asyncCfg)
	if !maps.Equal(syncIDs, asyncIDs) {
		t.Fatalf("the indexes hold different pages: %d sync, %d async", len(syncIDs), len(asyncIDs))
	}
	// Queries: words of the pages' titles, one and two at a time.
	var queries []string
	err = syncIn.DB.Pages(func(p *store.Page) error {
		if w := strings.Fields(p.Title); len(w) >= 2 && len(queries) < 30 {
			queries = append(queries, w[0], w[0]+" "+w[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	top := func(in *Instance, q string) []string {
		res, err := in.Index.Search(context.Background(), index.Request{Query: q, PerPage: 10})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	compared := 0
	for _, q := range queries {
		s, a := top(syncIn, q), top(asyncIn, q)
		if !slices.Equal(s, a) {
			t.Errorf("%q: top 10 differ\nsync  %v\nasync %v", q, s, a)
		}
		if len(s) > 1 {
			compared++
		}
	}
	if compared < 10 {
		t.Errorf("only %d of %d queries found more than one page; the comparison needs more", compared, len(queries))
	}
}

// crashChild is the crawling process of TestCatchUpAfterCrash: it crawls the
// configuration its environment gives and exits without closing the instance.
func crashChild(t *testing.T) {
	cfg, err := config.Load("", os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Search.BatchSize, cfg.Search.BatchDelay = 1<<20, time.Hour // nothing reaches the index
	in, err := Open(cfg, Options{Search: true, Crawl: true})
	if err != nil {
		t.Fatal(err)
	}
	runCrawl(t, in, cfg)
	os.Exit(0) // no Close: the index keeps its open mark and loses the queued batch
}

// TestRebuildsIndexItCannotUse: a crawl killed while its index was being created left a
// data directory that no later crawl could open; an index written by an older sonda in a
// format this one no longer reads would be misread. In both cases the next Open makes the
// index anew and replays into it everything the store holds.
func TestRebuildsIndexItCannotUse(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 8, Hosts: 2, PagesPerHost: 5, Disable: testweb.AllFeatures &^ testweb.Robots})
	for _, c := range []struct {
		name  string
		leave func(t *testing.T, dir string) // what is left in the index folder
	}{
		{"creation never finished", func(t *testing.T, dir string) {
			// What a kill during creation leaves: an index folder whose metadata was never written.
			if err := os.WriteFile(filepath.Join(dir, "index_meta.json"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"older format", func(t *testing.T, dir string) {
			bi, err := bleve.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := bi.SetInternal([]byte("sonda:format"), []byte("0")); err != nil {
				t.Fatal(err)
			}
			if err := bi.Close(); err != nil {
				t.Fatal(err)
			}
			// The mark took: this sonda does not read the index as it is.
			if ix, err := index.Open(dir, index.Options{ReadOnly: true}); !errors.Is(err, index.ErrFormat) {
				if err == nil {
					ix.Close()
				}
				t.Fatalf("read-only Open of an index in format 0: %v, want index.ErrFormat", err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := crawlWeb(t, web, nil)
			db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pages := htmlPages(t, db)
			db.Close()
			if pages == 0 {
				t.Fatal("the crawl stored no pages")
			}
			c.leave(t, index.DataDir(cfg.Data))
			in, err := Open(cfg, Options{Search: true, Crawl: true})
			if err != nil {
				t.Fatalf("opening the data directory: %v", err)
			}
			defer in.Close()
			if got := search(t, in.Index, "type:page").Total; int(got) != pages {
				t.Errorf("the remade index has %d pages, the store %d", got, pages)
			}
		})
	}
}

// TestIndexOptionsCaches: search.facet-cache, forward-cache and postings-cache reach the index, 0
// meaning no cache (index.Options' zero is its default size), and default to the index's
// defaults.
func TestIndexOptionsCaches(t *testing.T) {
	for _, c := range []struct {
		key      string
		set      func(*config.Search) *config.ByteSize
		got      func(index.Options) int64
		fallback int64
	}{
		{"facet-cache", func(s *config.Search) *config.ByteSize { return &s.FacetCache }, func(o index.Options) int64 { return o.FacetCache }, index.DefaultFacetCache},
		{"forward-cache", func(s *config.Search) *config.ByteSize { return &s.ForwardCache }, func(o index.Options) int64 { return o.ForwardCache }, index.DefaultForwardCache},
		{"postings-cache", func(s *config.Search) *config.ByteSize { return &s.PostingsCache }, func(o index.Options) int64 { return o.PostingsCache }, index.DefaultPostingsCache},
	} {
		for _, tc := range []struct {
			set  config.ByteSize
			want int64
		}{{128 << 20, 128 << 20}, {1 << 30, 1 << 30}, {0, -1}} {
			cfg := config.Default()
			*c.set(&cfg.Search) = tc.set
			o, err := IndexOptions(cfg, nil)
			if err != nil || c.got(o) != tc.want {
				t.Errorf("%s %d: index.Options has %d (%v), want %d", c.key, tc.set, c.got(o), err, tc.want)
			}
		}
		cfg := config.Default()
		if got := *c.set(&cfg.Search); int64(got) != c.fallback {
			t.Errorf("search.%s defaults to %d, the index's default is %d", c.key, got, c.fallback)
		}
	}
}
