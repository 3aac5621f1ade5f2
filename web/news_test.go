package web

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// fakeNews is an in-memory News: topic "doc01" (the id the OpenAPI test uses) with two
// stories, the first with a copy.
type fakeNews struct {
	mu       sync.Mutex
	topics   []Topic
	stories  map[string][]Story
	articles map[string]Article
}

func newFakeNews() *fakeNews {
	pub := time.Date(2018, 5, 12, 5, 0, 0, 0, time.FixedZone("", -3*3600))
	return &fakeNews{
		topics: []Topic{{ID: "doc01", Name: "Copa do mundo", Terms: []string{"copa", "mundo"}, Sites: []string{}, Created: pub}},
		stories: map[string][]Story{"doc01": {
			{ID: "doc01", URL: "http://news.test/copa", Title: "Seleção <convocada> para a Copa do Mundo", Description: "Lista sai hoje",
				SiteName: "Gazeta", Published: &pub, Date: pub, Score: 0.9, Copies: []StoryCopy{{ID: "doc03", URL: "http://agency.test/copa", SiteName: "Agência"}}},
			{ID: "doc02", URL: "http://other.test/mundo", Title: "Copa do Mundo: estádios prontos", SiteName: "Outro", Date: pub.Add(-time.Hour), Read: true, Score: 0.5, Copies: []StoryCopy{}},
		}},
		articles: map[string]Article{"doc01": {ID: "doc01", URL: "http://news.test/copa", Title: "Seleção <convocada> para a Copa do Mundo",
			Authors: []string{"Ana Souza"}, Published: &pub, SiteName: "Gazeta", Language: "pt-BR",
			Body: []ArticleBlock{{Kind: "p", Text: "O técnico anunciou a lista."}, {Kind: "h2", Text: "Os nomes"}, {Kind: "li", Text: "Goleiro <script>x</script>"}}, WordCount: 9}},
	}
}

func (n *fakeNews) Topics(context.Context) ([]Topic, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := append([]Topic(nil), n.topics...)
	for i := range out {
		out[i].Stories = len(n.stories[out[i].ID])
		out[i].Unread = 0
		for _, s := range n.stories[out[i].ID] {
			if !s.Read {
				out[i].Unread++
			}
		}
	}
	return out, nil
}

func (n *fakeNews) AddTopic(_ context.Context, req TopicRequest) (Topic, []string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if strings.Contains(req.Name, "bad") {
		return Topic{}, nil, fmt.Errorf("news: bad topic %q", req.Name)
	}
	t := Topic{ID: "t" + fmt.Sprint(len(n.topics)), Name: req.Name, Terms: req.Terms, Sites: req.Sites, Created: time.Now()}
	if t.Terms == nil {
		t.Terms = []string{}
	}
	if t.Sites == nil {
		t.Sites = []string{}
	}
	n.topics = append([]Topic{t}, n.topics...)
	return t, req.Sites, nil
}

func (n *fakeNews) Stories(_ context.Context, id string, unreadOnly bool) ([]Story, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	found := false
	for _, t := range n.topics {
		found = found || t.ID == id
	}
	if !found {
		return nil, fmt.Errorf("fake: %w", ErrNoTopic)
	}
	var out []Story
	for _, s := range n.stories[id] {
		if !unreadOnly || !s.Read {
			out = append(out, s)
		}
	}
	return out, nil
}

func (n *fakeNews) Article(_ context.Context, id string) (Article, bool, error) {
	a, ok := n.articles[id]
	return a, ok, nil
}

func (n *fakeNews) MarkRead(_ context.Context, topic, article string, read bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ss, ok := n.stories[topic]
	if !ok {
		return fmt.Errorf("fake: %w", ErrNoTopic)
	}
	for i := range ss {
		if ss[i].ID == article {
			ss[i].Read = read
			return nil
		}
	}
	return fmt.Errorf("article %s is not in topic %s", article, topic)
}

func TestNewsAPI(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/api/topics", "", "")
	list := decode[apiTopicList](t, body)
	if res.StatusCode != 200 || len(list.Topics) != 1 || list.Topics[0].Unread != 1 || list.Topics[0].Stories != 2 {
		t.Fatalf("GET /api/topics: %d %s", res.StatusCode, body)
	}
	res, body = f.do(t, "GET", "/api/topic?id=doc01&unread=true", "", "")
	ts := decode[apiTopicStories](t, body)
	if res.StatusCode != 200 || len(ts.Stories) != 1 || ts.Stories[0].ID != "doc01" || ts.Stories[0].Copies[0].SiteName != "Agência" {
		t.Fatalf("GET /api/topic unread: %d %s", res.StatusCode, body)
	}
	// Writes need the token; adding a topic adds its sources to the crawl's seeds.
	if res, _ := f.do(t, "POST", "/api/topics?name=greve", "", ""); res.StatusCode != 401 {
		t.Errorf("POST /api/topics without a token: %d", res.StatusCode)
	}
	res, body = f.do(t, "POST", "/api/topics?name=Greve+caminhoneiros&sites=http://a.test/,http://b.test/", testToken, "")
	added := decode[apiAddedTopic](t, body)
	if res.StatusCode != 200 || added.Topic.Name != "Greve caminhoneiros" || len(added.Sources) != 2 {
		t.Fatalf("POST /api/topics: %d %s", res.StatusCode, body)
	}
	if got := strings.Join(f.crawl.seeds, " "); got != "http://a.test/ http://b.test/" {
		t.Errorf("crawl seeds after adding a topic: %q", got)
	}
	for target, code := range map[string]int{
		"/api/topics":                         400, // no name
		"/api/topics?name=bad+words":          400,
		"/api/topic/read?id=doc01":            400, // no article
		"/api/topic/read?id=nope&article=x":   404,
		"/api/topic/read?id=doc01&article=zz": 400,
	} {
		if res, body := f.do(t, "POST", target, testToken, ""); res.StatusCode != code {
			t.Errorf("POST %s: %d, want %d: %s", target, res.StatusCode, code, body)
		}
	}
	res, body = f.do(t, "POST", "/api/topic/read?id=doc01&article=doc02&read=false", testToken, "")
	if res.StatusCode != 200 || !strings.Contains(body, `"read":false`) {
		t.Fatalf("mark unread: %d %s", res.StatusCode, body)
	}
	if _, body := f.do(t, "GET", "/api/topic?id=doc01&unread=1", "", ""); len(decode[apiTopicStories](t, body).Stories) != 2 {
		t.Errorf("after marking unread: %s", body)
	}
	for target, code := range map[string]int{"/api/topic?id=nope": 404, "/api/topic": 400, "/api/article?id=nope": 404, "/api/article": 400} {
		if res, body := f.do(t, "GET", target, "", ""); res.StatusCode != code {
			t.Errorf("GET %s: %d, want %d: %s", target, res.StatusCode, code, body)
		}
	}
	res, body = f.do(t, "GET", "/api/article?id=doc01", "", "")
	a := decode[Article](t, body)
	if res.StatusCode != 200 || a.Published.Format(time.RFC3339) != "2018-05-12T05:00:00-03:00" || len(a.Body) != 3 {
		t.Errorf("GET /api/article: %d %s", res.StatusCode, body)
	}
}

func TestNewsUnavailable(t *testing.T) {
	srv, err := New(Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv}
	for _, target := range []string{"/api/topics", "/topics", "/api/article?id=x"} {
		if res, body := f.do(t, "GET", target, "", ""); res.StatusCode != 503 || !strings.Contains(body, "news.enabled") {
			t.Errorf("GET %s without news: %d %s", target, res.StatusCode, body)
		}
	}
}

func TestNewsPages(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/topics?id=doc01", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("topics page: %d %s", res.StatusCode, body)
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	unread, read := 0, 0
	var titles []string
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "li" && strings.Contains(attrOf(n, "class"), "story") {
			if strings.Contains(attrOf(n, "class"), "unread") {
				unread++
			} else {
				read++
			}
		}
		if n.Type == html.ElementNode && n.Data == "h3" {
			titles = append(titles, textOf(n))
		}
	})
	if unread != 1 || read != 1 || len(titles) != 2 || titles[0] != "Seleção <convocada> para a Copa do Mundo" {
		t.Errorf("stories: %d unread, %d read, titles %q", unread, read, titles)
	}
	for _, want := range []string{"#Copa do mundo", "Gazeta", "also at", "Agência", `/article?id=doc01&amp;topic=doc01`, "news.js", "1 unread of 2", `aria-current="page"`} {
		if !strings.Contains(body, want) {
			t.Errorf("topics page lacks %q", want)
		}
	}
	if strings.Contains(body, "<convocada>") {
		t.Error("a title was not escaped")
	}
	res, body = f.do(t, "GET", "/article?id=doc01&topic=doc01", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("article page: %d", res.StatusCode)
	}
	for _, want := range []string{"By Ana Souza", "2018-05-12 08:00 UTC", "O técnico anunciou a lista.", "<h2>Os nomes</h2>", "Source: <a href=\"http://news.test/copa\"", `data-topic="doc01"`} {
		if !strings.Contains(body, want) {
			t.Errorf("article page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>x</script>") {
		t.Error("article text was not escaped")
	}
	if res, _ := f.do(t, "GET", "/topics?id=nope", "", ""); res.StatusCode != 404 {
		t.Errorf("unknown topic page: %d", res.StatusCode)
	}
	if res, body := f.do(t, "GET", "/topics", "", ""); res.StatusCode != 200 || !strings.Contains(body, "Choose a topic") {
		t.Errorf("topics page without a topic: %d", res.StatusCode)
	}
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return strings.TrimSpace(b.String())
}

func TestNewsScriptServed(t *testing.T) {
	f := newFixture(t)
	_, page := f.do(t, "GET", "/topics", "", "")
	i := strings.Index(page, `src="/static/news.js`)
	if i < 0 {
		t.Fatalf("the topics page does not load news.js")
	}
	src := page[i+len(`src="`):]
	src = src[:strings.IndexByte(src, '"')]
	res, body := f.do(t, "GET", src, "", "")
	if res.StatusCode != 200 || !strings.Contains(body, "/api/topic/read") {
		t.Errorf("GET %s: %d", src, res.StatusCode)
	}
}
