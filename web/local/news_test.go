package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/feeds"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/web"
)

// newsWeb is a news site on the first host of a test web: a front page naming its RSS
// feed, the feed (which gains an article when Publish is called), a news sitemap, articles
// reachable only through the feed or the sitemap, an AMP copy of one article (canonical
// link to the original) and an article on another subject.
type newsWeb struct {
	host      string
	published atomic.Bool // the late article is in the feed
	once      sync.Once
}

type newsStory struct {
	slug, title, author string
	date                time.Time
	body                string
	canonical           string
}

var brt = time.FixedZone("", -3*3600)

func (n *newsWeb) stories() []newsStory {
	strike := strings.Repeat("Os caminhoneiros mantêm a greve nas estradas federais e o governo negocia o preço do diesel com os sindicatos da categoria. ", 6)
	return []newsStory{
		{"greve-1", "Greve dos caminhoneiros chega ao quinto dia", "Ana Souza", time.Date(2018, 5, 25, 9, 0, 0, 0, brt), strike, ""},
		{"greve-amp", "Greve dos caminhoneiros chega ao quinto dia", "Ana Souza", time.Date(2018, 5, 25, 9, 0, 0, 0, brt),
			strings.Repeat("Versão para celular: bloqueios continuam, postos sem combustível, e a negociação segue sem acordo à vista. ", 6), "/news/greve-1.html"},
		{"greve-2", "Caminhoneiros e governo fecham acordo", "João Lima", time.Date(2018, 5, 27, 18, 30, 0, 0, brt),
			strings.Repeat("Depois de uma semana de greve, os caminhoneiros aceitaram a redução do preço do diesel proposta pelo governo federal. ", 6), ""},
		{"greve-3", "Estradas liberadas após o fim da greve dos caminhoneiros", "Maria Reis", time.Date(2018, 5, 28, 7, 45, 0, 0, brt),
			strings.Repeat("As estradas foram liberadas e o abastecimento começa a voltar ao normal depois da greve dos caminhoneiros. ", 6), ""},
		{"chuva", "Chuva forte atinge o litoral", "Pedro Alves", time.Date(2018, 5, 26, 12, 0, 0, 0, brt),
			strings.Repeat("A previsão indica chuva forte no litoral durante todo o fim de semana, segundo os meteorologistas. ", 6), ""},
	}
}

func (n *newsWeb) page(s newsStory) string {
	canonical := ""
	if s.canonical != "" {
		canonical = `<link rel="canonical" href="http://` + n.host + s.canonical + `">`
	}
	return fmt.Sprintf(`<!DOCTYPE html><html lang="pt-BR"><head><title>%s | Gazeta</title>
<meta property="og:title" content="%s"><meta property="og:site_name" content="Gazeta"><meta property="og:type" content="article">
<meta property="og:description" content="%s">%s
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":%q,
"author":{"@type":"Person","name":%q},"datePublished":%q}</script></head>
<body><header><a href="/news/">Gazeta</a></header><article><h1>%s</h1><p>%s</p><p>%s</p></article></body></html>`,
		s.title, s.title, s.title+".", canonical, s.title, s.author, s.date.Format(time.RFC3339), s.title, s.body, s.body)
}

func (n *newsWeb) extra(host string, _ *rand.Rand) []testweb.Page {
	first := false
	n.once.Do(func() { n.host, first = host, true })
	if !first {
		return nil
	}
	write := func(ctype string, body func() string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			io.WriteString(w, body())
		}
	}
	pages := []testweb.Page{
		{Path: "/news/", Title: "Gazeta", Handler: write("text/html; charset=utf-8", func() string {
			return `<html><head><title>Gazeta</title><link rel="alternate" type="application/rss+xml" title="Gazeta" href="/news/feed.xml"></head>` +
				`<body><h1>Gazeta</h1><p>As notícias do dia estão no nosso feed.</p></body></html>`
		})},
		{Path: "/news/feed.xml", Unlinked: true, Handler: write("application/rss+xml", func() string {
			items := []string{"greve-1", "chuva"}
			if n.published.Load() {
				items = append(items, "greve-3")
			}
			var b strings.Builder
			b.WriteString(`<?xml version="1.0"?><rss version="2.0"><channel><title>Gazeta</title>`)
			for _, slug := range items {
				fmt.Fprintf(&b, `<item><title>%s</title><link>http://%s/news/%s.html</link></item>`, slug, n.host, slug)
			}
			b.WriteString(`</channel></rss>`)
			return b.String()
		})},
		{Path: "/news/sitemap-news.xml", Unlinked: true, Handler: write("application/xml", func() string {
			return `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">` +
				`<url><loc>http://` + n.host + `/news/greve-2.html</loc><news:news><news:title>Acordo</news:title></news:news></url>` +
				`<url><loc>http://` + n.host + `/news/greve-amp.html</loc></url></urlset>`
		})},
	}
	for _, s := range n.stories() {
		s := s
		pages = append(pages, testweb.Page{Path: "/news/" + s.slug + ".html", Unlinked: true, Handler: write("text/html; charset=utf-8", func() string { return n.page(s) })})
	}
	return pages
}

// newsStack is a crawl with the news vertical and the web server over it.
type newsStack struct {
	web    *testweb.Web
	site   *newsWeb
	db     *store.DB
	mon    *news.Monitor
	server string
	start  func(seeds []string)
	stop   func()
}

func newNewsStack(t *testing.T) *newsStack {
	t.Helper()
	st := &newsStack{site: &newsWeb{}}
	st.web = testweb.New(testweb.Config{Seed: 9, Hosts: 3, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots, Extra: st.site.extra})
	if _, err := st.web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.web.Close() })
	cfg := st.web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Concurrency = 4
	cfg.Politeness.MinDelay, cfg.Politeness.DelayFactor = 0, 0
	var err error
	if st.db, err = store.Open(crawl.StateDir(cfg.Data), store.Options{}); err != nil {
		t.Fatal(err)
	}
	norm := urlnorm.New(crawl.NormalizerOptions(cfg))
	fv, err := feeds.New(st.db, feeds.Options{Interval: 200 * time.Millisecond, MaxInterval: time.Second, Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	if st.mon, err = news.OpenMonitor(st.db, news.MonitorOptions{Normalizer: norm}); err != nil {
		t.Fatal(err)
	}
	an, err := news.NewAnalyzer(st.db, news.Options{Monitor: st.mon})
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Options{News: NewsBackend(st.db, st.mon), Token: browserToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	st.server = srv.URL
	var cancel context.CancelFunc
	done := make(chan error, 1)
	st.start = func(seeds []string) {
		cfg.Crawl.Seeds = seeds
		c, err := crawl.New(cfg, append(append(fv.CrawlOptions(), an.CrawlOptions()...), crawl.WithStore(st.db))...)
		if err != nil {
			t.Fatal(err)
		}
		var ctx context.Context
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
		go func() {
			_, err := c.Run(ctx, nil, nil)
			c.Close()
			done <- err
		}()
	}
	st.stop = func() {
		if cancel != nil {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
			cancel = nil
		}
	}
	t.Cleanup(func() {
		st.stop()
		srv.Close()
		st.db.Close()
	})
	return st
}

func (st *newsStack) api(t *testing.T, method, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest(method, st.server+path, nil)
	if method == "POST" {
		req.Header.Set("Authorization", "Bearer "+browserToken)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

type topicAnswer struct {
	Topic   web.Topic   `json:"topic"`
	Stories []web.Story `json:"stories"`
}

func (st *newsStack) waitStories(t *testing.T, topicID string, what string, cond func([]web.Story) bool) []web.Story {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // bounds a broken server only
	for {
		var ans topicAnswer
		st.api(t, "GET", "/api/topic?id="+topicID, &ans)
		if cond(ans.Stories) {
			return ans.Stories
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; stories: %+v", what, ans.Stories)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func storyURLs(ss []web.Story) map[string]web.Story {
	m := map[string]web.Story{}
	for _, s := range ss {
		m[s.URL] = s
	}
	return m
}

// TestNewsEndToEnd is issue 6's acceptance test: a news site with a feed and a sitemap,
// a topic, a crawl, the topic's articles listed through the API with correct metadata,
// and a new article picked up on the feed's next read.
func TestNewsEndToEnd(t *testing.T) {
	st := newNewsStack(t)
	news := "http://" + st.site.host + "/news/"
	var added struct {
		Topic   web.Topic `json:"topic"`
		Sources []string  `json:"sources"`
	}
	st.api(t, "POST", "/api/topics?"+url.Values{"name": {"Greve dos caminhoneiros"}, "sites": {news + " " + news + "sitemap-news.xml"}}.Encode(), &added)
	if len(added.Sources) != 2 {
		t.Fatalf("sources %v", added.Sources)
	}
	st.start(added.Sources)

	stories := st.waitStories(t, added.Topic.ID, "the feed's and the sitemap's strike articles", func(ss []web.Story) bool {
		m := storyURLs(ss)
		return m[news+"greve-1.html"].ID != "" && m[news+"greve-2.html"].ID != ""
	})
	m := storyURLs(stories)
	if len(stories) != 2 {
		t.Errorf("%d stories, want 2 (the AMP copy folded into the original, the rain article left out): %+v", len(stories), stories)
	}
	first := m[news+"greve-1.html"]
	if first.Title != "Greve dos caminhoneiros chega ao quinto dia" || first.SiteName != "Gazeta" || first.Read ||
		first.Published == nil || first.Published.Format(time.RFC3339) != "2018-05-25T09:00:00-03:00" {
		t.Errorf("story %+v", first)
	}
	if stories[0].URL != news+"greve-2.html" {
		t.Errorf("newest first: %s comes first", stories[0].URL)
	}
	var a web.Article
	st.api(t, "GET", "/api/article?id="+first.ID, &a)
	if len(a.Authors) != 1 || a.Authors[0] != "Ana Souza" || a.Language != "pt-BR" || len(a.Body) < 2 || a.WordCount < 100 {
		t.Errorf("article %+v", a)
	}

	// A new article appears in the feed: the feed's next read brings it to the topic.
	st.site.published.Store(true)
	stories = st.waitStories(t, added.Topic.ID, "the article published after the first read", func(ss []web.Story) bool {
		return storyURLs(ss)[news+"greve-3.html"].ID != ""
	})
	if stories[0].URL != news+"greve-3.html" {
		t.Errorf("the newest story %s is not first", stories[0].URL)
	}

	// Read state through the API.
	var state struct{ Read bool }
	st.api(t, "POST", "/api/topic/read?id="+added.Topic.ID+"&article="+first.ID, &state)
	var list struct{ Topics []web.Topic }
	st.api(t, "GET", "/api/topics", &list)
	if !state.Read || len(list.Topics) != 1 || list.Topics[0].Unread != 2 || list.Topics[0].Stories != 3 {
		t.Errorf("after marking one read: %+v %+v", state, list.Topics)
	}
}

// TestBrowserNews: the topics page shows unread stories in bold, marks them read from the
// list and from the article view, and adds a topic from its form.
func TestBrowserNews(t *testing.T) {
	ctx := tab(t)
	st := newNewsStack(t)
	news := "http://" + st.site.host + "/news/"
	topic, sources, err := st.mon.AddTopic(context.Background(), newsTopic(news))
	if err != nil {
		t.Fatal(err)
	}
	urls := make([]string, len(sources))
	for i, s := range sources {
		urls[i] = s.URL
	}
	st.start(urls)
	st.waitStories(t, topic.ID, "two stories", func(ss []web.Story) bool { return len(ss) >= 2 })
	st.stop()

	do(t, ctx, chromedp.Navigate(st.server+"/topics?id="+topic.ID), chromedp.WaitVisible(chromedp.CSS("#stories")))
	if n := eval[int](t, ctx, `document.querySelectorAll("li.story.unread").length`); n < 2 {
		t.Fatalf("%d unread stories shown", n)
	}
	weight := eval[string](t, ctx, `getComputedStyle(document.querySelector("li.story.unread .story-title")).fontWeight`)
	if weight != "700" {
		t.Errorf("an unread title has font-weight %s, want bold", weight)
	}
	// Mark the first story read: the token is asked for once, then kept for the tab.
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#token"), browserToken), chromedp.Click(chromedp.CSS("li.story button.mark")))
	poll(t, ctx, "the story to turn read", `!document.querySelector("li.story").classList.contains("unread")`, 10*time.Second)
	ss, _ := st.mon.Stories(topic.ID, true)
	if eval[int](t, ctx, `document.querySelectorAll("li.story.unread").length`) != len(ss) {
		t.Errorf("the page and the store disagree on unread stories")
	}
	// Opening an unread article marks it read (the token is remembered).
	id := eval[string](t, ctx, `document.querySelector("li.story.unread").dataset.article`)
	do(t, ctx, chromedp.Navigate(st.server+"/article?id="+id+"&topic="+topic.ID))
	poll(t, ctx, "the article to be marked read", `document.querySelector("#news-message").textContent === "Marked read."`, 10*time.Second)
	if title := eval[string](t, ctx, `document.querySelector("#article-title").textContent`); !strings.Contains(title, "caminhoneiros") {
		t.Errorf("article title %q", title)
	}
	if by := eval[string](t, ctx, `document.querySelector(".byline").textContent`); !strings.HasPrefix(by, "By ") {
		t.Errorf("byline %q", by)
	}
	if left, _ := st.mon.Stories(topic.ID, true); len(left) != len(ss)-1 {
		t.Errorf("%d unread after opening one, want %d", len(left), len(ss)-1)
	}
	// A topic added from the form appears in the list.
	do(t, ctx, chromedp.Navigate(st.server+"/topics"), chromedp.WaitVisible(chromedp.CSS("#topic-name")),
		chromedp.SendKeys(chromedp.CSS("#topic-name"), "#Chuva forte\r"))
	// The form navigates to the new topic's page: ask until the new page answers.
	deadline := time.Now().Add(time.Minute) // bounds a broken page only
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.search.startsWith("?id=") && document.querySelector("#stories-heading").textContent.includes("Chuva forte")`))
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new topic's page did not appear: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(st.mon.Topics()) != 2 {
		t.Errorf("topics after adding one from the form: %+v", st.mon.Topics())
	}
}

func newsTopic(site string) news.TopicRequest {
	return news.TopicRequest{Name: "Greve caminhoneiros", Sites: []string{site, site + "sitemap-news.xml"}}
}
