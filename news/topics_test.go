package news

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/feeds"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

func art(lang, title, desc string, body ...string) *extract.Article {
	a := &extract.Article{Language: lang, Title: title, Description: desc}
	for _, b := range body {
		a.Body = append(a.Body, extract.Block{Kind: "p", Text: b})
	}
	return a
}

func TestMatcher(t *testing.T) {
	m := NewMatcher()
	copa := &Topic{Name: "Copa do mundo"}
	tests := []struct {
		name  string
		topic *Topic
		a     *extract.Article
		ok    bool
	}{
		{"accents, case and plural in the title", copa, art("pt", "COPAS DO MUNDO: a seleção", ""), true},
		{"terms spread over description and body", copa, art("pt", "Futebol", "A copa começa", "O mundo assiste."), true},
		{"one term missing", copa, art("pt", "A copa do Brasil", "", "Campeonato nacional."), false},
		{"stemming in English", &Topic{Name: "election results"}, art("en", "Elections: the result", ""), true},
		{"accent folding across spellings", &Topic{Name: "eleição"}, art("pt", "Eleicao presidencial", ""), true},
		{"only stop words kept", &Topic{Name: "The Who"}, art("en", "The Who announce a tour", ""), true},
		{"some of the words (MinMatch)", &Topic{Name: "preço gasolina diesel", MinMatch: 0.6}, art("pt", "Preço da gasolina sobe", ""), true},
		{"explicit terms", &Topic{Name: "Truckers", Terms: []string{"greve", "caminhoneiros"}}, art("pt", "Greve dos caminhoneiros", ""), true},
		{"unrelated", copa, art("pt", "Chuva forte", "", "Sem relação."), false},
	}
	for _, tt := range tests {
		if _, ok := m.Match(tt.topic, tt.a); ok != tt.ok {
			t.Errorf("%s: match %v, want %v", tt.name, ok, tt.ok)
		}
	}
	inTitle, _ := m.Match(copa, art("pt", "Copa do mundo começa", ""))
	inBody, _ := m.Match(copa, art("pt", "Esporte", "", "A copa do mundo começa."))
	if !(inTitle > inBody && inBody > 0 && inTitle <= 1) {
		t.Errorf("scores: title %.2f, body %.2f; the title must weigh more", inTitle, inBody)
	}
	if TopicID("Copa  do Mundo") != TopicID("copa do mundo") || TopicID("Eleição") != TopicID("eleicao") || TopicID("a") == TopicID("b") {
		t.Error("TopicID must ignore case, accents and spacing only")
	}
}

// TestPreparedMatchesLikeMatch: one prepared article matched against topics of both
// analyses (with and without stop words) scores each exactly as a fresh Match does.
func TestPreparedMatchesLikeMatch(t *testing.T) {
	m := NewMatcher()
	a := art("en", "The Who announce election tour", "Results of the vote", "The band's tour follows the election results.", "Fuel prices rise.")
	topics := []*Topic{
		{Name: "election results"}, {Name: "The Who"}, {Name: "fuel prices"}, {Name: "reactor"},
		{Name: "tour vote band", MinMatch: 0.6}, {Name: "x", Terms: []string{"prices", "band"}},
	}
	p := m.Prepare(a)
	matched := 0
	for _, tp := range topics {
		gotScore, gotOK := p.Match(tp)
		wantScore, wantOK := m.Match(tp, a)
		if gotScore != wantScore || gotOK != wantOK {
			t.Errorf("%s: prepared %.4f %v, Match %.4f %v", tp.Name, gotScore, gotOK, wantScore, wantOK)
		}
		if gotOK {
			matched++
		}
	}
	if matched < 4 || p.views[0] == nil || p.views[1] == nil {
		t.Errorf("%d topics matched; analyses made: without stop words %v, with %v", matched, p.views[0] != nil, p.views[1] != nil)
	}
}

// BenchmarkMatchTopics: filing one article under 50 topics, preparing it once (what the
// monitor does) against analyzing it for every topic.
func BenchmarkMatchTopics(b *testing.B) {
	m := NewMatcher()
	body := strings.Repeat("The government announced new fuel prices after the election, and the opposition asked for a vote. ", 40)
	a := art("en", "Fuel prices rise after the election", "Government announces new prices", strings.Split(body, ". ")...)
	var topics []*Topic
	for i := range 50 {
		topics = append(topics, &Topic{Name: fmt.Sprintf("topic%d fuel", i)})
	}
	b.Run("prepared", func(b *testing.B) {
		for b.Loop() {
			p := m.Prepare(a)
			for _, t := range topics {
				p.Match(t)
			}
		}
	})
	b.Run("per-topic", func(b *testing.B) {
		for b.Loop() {
			for _, t := range topics {
				m.Match(t, a)
			}
		}
	})
}

// storeArticle runs the analyzer on an HTML page at u and commits its writes.
func storeArticle(t *testing.T, db *store.DB, an *Analyzer, u urlnorm.URL, at time.Time, page string) {
	t.Helper()
	d := testDocument(t, u, at, page)
	if err := an.Analyze(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	commit(t, db, d)
}

func articlePage(title, canonical, site string, published time.Time, paragraphs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<html lang="pt-BR"><head><title>%s</title><meta property="og:title" content="%s">
<meta property="og:site_name" content="%s"><meta property="og:type" content="article">
<meta property="article:published_time" content="%s">`, title, title, site, published.Format(time.RFC3339))
	if canonical != "" {
		fmt.Fprintf(&b, `<link rel="canonical" href="%s">`, canonical)
	}
	b.WriteString(`</head><body><article>`)
	for _, p := range paragraphs {
		fmt.Fprintf(&b, "<p>%s</p>", p)
	}
	b.WriteString(`</article></body></html>`)
	return b.String()
}

func TestMonitorStories(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	norm := urlnorm.New(urlnorm.DefaultOptions())
	mon, err := OpenMonitor(db, MonitorOptions{Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	an, err := NewAnalyzer(db, Options{Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2018, 5, d, 10, 0, 0, 0, time.FixedZone("", -3*3600)) }
	story := strings.Repeat("Os caminhoneiros mantêm a greve nas estradas e o governo negocia o preço do diesel com os sindicatos. ", 8)
	other := strings.Repeat("A previsão do tempo indica chuva forte no litoral durante todo o fim de semana, segundo os meteorologistas. ", 8)
	parse := func(s string) urlnorm.URL { u, _ := norm.Parse(s); return u }

	// One article before the topic exists: filed when the topic is added.
	storeArticle(t, db, an, parse("https://a.example/greve-1"), day(21), articlePage("Greve dos caminhoneiros chega ao quinto dia", "", "Jornal A", day(21), story))
	topic, sources, err := mon.AddTopic(context.Background(), TopicRequest{Name: "Greve caminhoneiros", Sites: []string{"https://a.example/", "https://b.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 2 || sources[0].URL != "https://a.example/" || sources[0].Provider != "sites" {
		t.Errorf("sources %+v", sources)
	}
	again, _, err := mon.AddTopic(context.Background(), TopicRequest{Name: "greve  CAMINHONEIROS"})
	if err != nil || again.ID != topic.ID || len(mon.Topics()) != 1 {
		t.Errorf("adding the same topic again: %v %+v", err, again)
	}

	// New articles are filed as they are stored: a newer story, a syndicated copy of it
	// (other site, same text), a copy under the same canonical URL, and an unrelated one.
	storeArticle(t, db, an, parse("https://b.example/greve-2"), day(23), articlePage("Caminhoneiros: greve termina com acordo", "", "Jornal B", day(23), story+" Acordo fechado."))
	storeArticle(t, db, an, parse("https://c.example/agencia/greve-2"), day(23), articlePage("Caminhoneiros: greve termina com acordo", "", "Agência C", day(23), story+" Acordo fechado."))
	storeArticle(t, db, an, parse("https://a.example/amp/greve-1"), day(21), articlePage("Greve dos caminhoneiros (AMP)", "https://a.example/greve-1", "Jornal A", day(21), strings.Repeat("Versão móvel da greve dos caminhoneiros com outro texto completamente diferente para o leitor. ", 8)))
	storeArticle(t, db, an, parse("https://a.example/chuva"), day(22), articlePage("Chuva forte no litoral", "", "Jornal A", day(22), other))

	stories, err := mon.Stories(topic.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(stories) != 2 {
		t.Fatalf("%d stories, want 2 (each with its copies): %+v", len(stories), stories)
	}
	if stories[0].URL != "https://b.example/greve-2" || len(stories[0].Copies) != 1 || stories[0].Copies[0].URL != "https://c.example/agencia/greve-2" {
		t.Errorf("newest story and its syndicated copy: %+v", stories[0])
	}
	if stories[1].SiteName != "Jornal A" || len(stories[1].Copies) != 1 || !stories[1].Date.Equal(day(21)) {
		t.Errorf("older story and its canonical copy: %+v", stories[1])
	}

	// Read state: marking one copy marks the story.
	if err := mon.MarkRead(topic.ID, stories[0].Copies[0].ID, true); err != nil {
		t.Fatal(err)
	}
	unread, _ := mon.Stories(topic.ID, true)
	if len(unread) != 1 || unread[0].ID != stories[1].ID {
		t.Errorf("unread after marking a copy read: %+v", unread)
	}
	// Read state survives a refetch of the article, and a restart.
	storeArticle(t, db, an, parse("https://b.example/greve-2"), day(24), articlePage("Caminhoneiros: greve termina com acordo", "", "Jornal B", day(23), story+" Acordo fechado."))
	mon2, err := OpenMonitor(db, MonitorOptions{Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := mon2.Stories(topic.ID, false)
	if len(all) != 2 || !all[0].Read || all[1].Read {
		t.Errorf("after a refetch and a restart: %+v", all)
	}
	if err := mon2.MarkRead(topic.ID, all[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if u, _ := mon2.Stories(topic.ID, true); len(u) != 2 {
		t.Errorf("mark unread: %d unread", len(u))
	}
	// Errors name what is wrong.
	if err := mon2.MarkRead("nope", all[0].ID, true); err != ErrNoTopic {
		t.Errorf("unknown topic: %v", err)
	}
	if err := mon2.MarkRead(topic.ID, "zz", true); err == nil || !strings.Contains(err.Error(), "not an article id") {
		t.Errorf("bad id: %v", err)
	}
	if _, _, err := mon2.AddTopic(context.Background(), TopicRequest{Name: "  "}); err == nil {
		t.Error("an empty topic must be refused")
	}

	// Topic sources are revisited daily; other pages are left to the revisit policy.
	now := time.Now()
	if next, ok := mon2.Revisit(&crawl.Document{URL: parse("https://a.example/"), Fetch: &fetch.Result{Status: 200}}, now); !ok || next.Sub(now) != 24*time.Hour {
		t.Errorf("source revisit %v %v", next, ok)
	}
	if _, ok := mon2.Revisit(&crawl.Document{URL: parse("https://a.example/chuva")}, now); ok {
		t.Error("an ordinary page was claimed")
	}
	if err := mon2.DeleteTopic(topic.ID); err != nil || len(mon2.Topics()) != 0 {
		t.Errorf("delete: %v", err)
	}
	if _, err := mon2.Stories(topic.ID, false); err != ErrNoTopic {
		t.Errorf("stories of a deleted topic: %v", err)
	}
}

func TestTemplateProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/news":
			q := r.URL.Query().Get("q")
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><div class="result"><h3><a href="/story-%s-%s">One</a></h3></div>
				<div class="result"><h3><a href="https://elsewhere.example/two">Two</a></h3></div>
				<div class="ad"><a href="/ad">Ad</a></div></body></html>`, url2slug(q), r.URL.Query().Get("page"))
		}
	}))
	defer srv.Close()
	f, err := fetch.New(fetch.Options{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &TemplateProvider{Label: "test-search", URLTemplate: srv.URL + "/news?q={query}&page={page}", LinkSelector: ".result h3 a", Pages: 2, Fetcher: f,
		Pacer: NewHostPacer(testPoliteness(10 * time.Millisecond))}
	got, err := p.Sources(context.Background(), Topic{Name: "incêndio prédio"})
	if err != nil {
		t.Fatal(err)
	}
	// The query reached the server as "incêndio prédio" (escaped on the way, not just with
	// spaces replaced as the thesis did); the links come back absolute.
	want := []string{srv.URL + "/story-inc%C3%AAndio+pr%C3%A9dio-1", "https://elsewhere.example/two", srv.URL + "/story-inc%C3%AAndio+pr%C3%A9dio-2"}
	if len(got) != 3 {
		t.Fatalf("sources %+v", got)
	}
	for i, w := range want {
		if got[i].URL != w || got[i].Rank != i+1 || got[i].Provider != "test-search" {
			t.Errorf("source %d = %+v, want %s", i, got[i], w)
		}
	}
	p.URLTemplate = srv.URL + "/private?q={query}"
	if _, err := p.Sources(context.Background(), Topic{Name: "x"}); err == nil || !strings.Contains(err.Error(), "robots.txt") {
		t.Errorf("a disallowed results page must be refused: %v", err)
	}
	if _, err := (&TemplateProvider{URLTemplate: "https://x/?q=", LinkSelector: "a"}).Sources(context.Background(), Topic{Name: "x"}); err == nil {
		t.Error("a template without {query} must be refused")
	}
}

// url2slug keeps the query as the server received it, so the test sees the encoding.
func url2slug(q string) string { return strings.ReplaceAll(q, " ", "+") }

func TestMonitorsShareTopics(t *testing.T) {
	// `sonda serve` adds topics through one Monitor while a crawl files articles through
	// another: the crawl's sees the new topic at once.
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	norm := urlnorm.New(urlnorm.DefaultOptions())
	webSide, _ := OpenMonitor(db, MonitorOptions{Normalizer: norm})
	crawlSide, _ := OpenMonitor(db, MonitorOptions{Normalizer: norm})
	an, _ := NewAnalyzer(db, Options{Monitor: crawlSide})
	topic, _, err := webSide.AddTopic(context.Background(), TopicRequest{Name: "eleições", Sites: []string{"https://a.example/"}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := norm.Parse("https://a.example/eleicoes")
	day := time.Date(2018, 10, 7, 20, 0, 0, 0, time.UTC)
	storeArticle(t, db, an, u, day, articlePage("Eleições: resultado do primeiro turno", "", "Jornal A", day,
		strings.Repeat("O resultado das eleições do primeiro turno foi divulgado hoje pelo tribunal eleitoral. ", 8)))
	if ss, err := webSide.Stories(topic.ID, false); err != nil || len(ss) != 1 {
		t.Errorf("the article filed by the crawl's monitor: %v %+v", err, ss)
	}
	src, _ := norm.Parse("https://a.example/")
	if _, ok := crawlSide.Revisit(&crawl.Document{URL: src}, day); !ok {
		t.Error("the crawl's monitor does not revisit the new topic's source")
	}
	if err := webSide.DeleteTopic(topic.ID); err != nil || len(crawlSide.Topics()) != 0 {
		t.Errorf("delete seen by the other monitor: %v %d", err, len(crawlSide.Topics()))
	}
}

func TestFeedsProvider(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	norm := urlnorm.New(urlnorm.DefaultOptions())
	reg, err := feeds.OpenRegistry(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"https://a.example/feed.xml", "https://a.example/sitemap.xml", "https://b.example/rss"} {
		u, _ := norm.Parse(s)
		if _, err := reg.Add(u.Key(), feeds.Source{URL: u.String(), Kind: feeds.KindFeed}, 0); err != nil {
			t.Fatal(err)
		}
	}
	p := FeedsProvider{DB: db}
	got, err := p.Sources(context.Background(), Topic{Name: "x", Sites: []string{"https://a.example/"}})
	if err != nil || len(got) != 2 || got[0].URL != "https://a.example/feed.xml" || got[0].Provider != "feeds" {
		t.Errorf("sources for a.example: %v %+v", err, got)
	}
	if all, _ := p.Sources(context.Background(), Topic{Name: "x"}); len(all) != 3 {
		t.Errorf("a topic without sites gets every known feed: %+v", all)
	}
}

// TestSearchProvidersFromConfig: news.search in the configuration becomes a results-page
// provider that a new topic asks, with the crawl's HTTP settings (its user agent, and its
// address rules: the results page here is on loopback, which only fetch.allow-private
// permits, and its politeness.min-delay between requests); the topic's own site comes first.
func TestSearchProvidersFromConfig(t *testing.T) {
	var agents []string
	var arrivals []time.Time
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		if r.URL.Path == "/search" {
			fmt.Fprintf(w, `<html><body><a class="hit" href="/story-%s">Story</a><a href="/about">About</a></body></html>`, url.QueryEscape(r.URL.Query().Get("q")))
		}
	}))
	defer srv.Close()
	cfg := config.Default()
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.UserAgent = "sonda-test/1.0"
	cfg.Politeness.MinDelay, cfg.Politeness.DelayFactor = 300*time.Millisecond, 0
	cfg.News.Search = []config.SearchProvider{{Name: "local-search", URL: srv.URL + "/search?q={query}", Links: "a.hit", Pages: 1}}
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mon, err := OpenMonitor(db, MonitorOptionsFromConfig(cfg, db))
	if err != nil {
		t.Fatal(err)
	}
	_, sources, err := mon.AddTopic(context.Background(), TopicRequest{Name: "greve", Sites: []string{"https://a.example/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 2 || sources[0].Provider != "sites" || sources[1].Provider != "local-search" || sources[1].URL != srv.URL+"/story-greve" {
		t.Fatalf("sources %+v", sources)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(agents) != 2 || agents[0] != "sonda-test/1.0" || agents[1] != "sonda-test/1.0" {
		t.Errorf("requests (robots.txt, results page) with user agents %q, want the configured one", agents)
	}
	if len(arrivals) == 2 && arrivals[1].Sub(arrivals[0]) < cfg.Politeness.MinDelay {
		t.Errorf("the results page came %v after robots.txt, within politeness.min-delay", arrivals[1].Sub(arrivals[0]))
	}
}

// TestMonitorUnfiles: an article that no longer matches a topic when it is refetched, or
// that is no longer an article, leaves the topic's stories.
func TestMonitorUnfiles(t *testing.T) {
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	norm := urlnorm.New(urlnorm.DefaultOptions())
	mon, err := OpenMonitor(db, MonitorOptions{Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	an, err := NewAnalyzer(db, Options{Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	topic, _, err := mon.AddTopic(context.Background(), TopicRequest{Name: "Greve caminhoneiros"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2018, 5, 21, 10, 0, 0, 0, time.UTC)
	parse := func(s string) urlnorm.URL { u, _ := norm.Parse(s); return u }
	strike := func(n int) string {
		return strings.Repeat(fmt.Sprintf("Os caminhoneiros mantêm a greve pelo %dº dia e o governo negocia o preço do diesel. ", n), 8)
	}
	rain := strings.Repeat("A previsão do tempo indica chuva forte no litoral durante todo o fim de semana. ", 8)
	one, two := parse("https://a.example/greve-1"), parse("https://b.example/greve-2")
	storeArticle(t, db, an, one, at, articlePage("Greve dos caminhoneiros", "", "Jornal A", at, strike(1)))
	storeArticle(t, db, an, two, at, articlePage("Caminhoneiros em greve", "", "Jornal B", at, strike(40)))
	urls := func() []string {
		stories, err := mon.Stories(topic.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range stories {
			out = append(out, s.URL)
		}
		sort.Strings(out)
		return out
	}
	if got := urls(); len(got) != 2 {
		t.Fatalf("stories %v, want both articles", got)
	}
	// Rewritten to another subject: it no longer matches.
	storeArticle(t, db, an, one, at.Add(time.Hour), articlePage("Chuva forte no litoral", "", "Jornal A", at, rain))
	if got := urls(); len(got) != 1 || got[0] != two.String() {
		t.Fatalf("after the first article changed subject: %v, want only %s", got, two)
	}
	// Replaced by a page that is not an article.
	storeArticle(t, db, an, two, at.Add(time.Hour), `<html><head><title>Página não encontrada</title></head><body><p>Nada aqui.</p></body></html>`)
	if got := urls(); len(got) != 0 {
		t.Fatalf("after the second article stopped being one: %v, want none", got)
	}
}
