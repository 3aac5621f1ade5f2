package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/html"
)

type fixture struct {
	srv   *Server
	index *fakeIndex
	crawl *fakeCrawl
	graph fakeGraph
	news  *fakeNews
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{index: &fakeIndex{docs: testDocs()}, crawl: &fakeCrawl{}, news: newFakeNews(),
		graph: fakeGraph{
			"http://www.alpha.test/p0.html": {{URL: "http://www.beta.test/p1.html", Anchor: "beta <one>"}},
			"http://www.beta.test/p3.html":  {{URL: "http://www.beta.test/p1.html", Anchor: "again"}},
		}}
	srv, err := New(Options{Searcher: f.index, Documents: f.index, Relations: f.graph, Stats: f.index, Crawl: f.crawl, News: f.news,
		Datasets: newFakeDatasets(), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	return f
}

// do sends a request through the server and returns the response and its body.
func (f *fixture) do(t testing.TB, method, target, token, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func decode[T any](t testing.TB, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	return v
}

func TestNewNeedsAToken(t *testing.T) {
	for _, tok := range []string{"", "short"} {
		if _, err := New(Options{Token: tok}); err == nil || !strings.Contains(err.Error(), "SONDA_SERVE_TOKEN") {
			t.Errorf("New(token %q) = %v; want an error naming how to set the token", tok, err)
		}
	}
}

// TestSearchAPIContract checks the architecture's contract for GET /api/search.
func TestSearchAPIContract(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/api/search?q=solar&page=2", "", "")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, %s: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	raw := decode[map[string]any](t, body)
	for _, k := range []string{"total", "took_ms", "hits", "facets"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("answer lacks %q: %s", k, body)
		}
	}
	out := decode[apiSearchResult](t, body)
	if out.Total != 25 || len(out.Hits) != 10 || out.Page != 2 || out.TookMS != 1.5 {
		t.Fatalf("total %d, %d hits, page %d, took %v", out.Total, len(out.Hits), out.Page, out.TookMS)
	}
	first := decode[struct {
		Hits []map[string]any `json:"hits"`
	}](t, body).Hits[0]
	for _, k := range []string{"id", "url", "title", "snippet", "score", "kind", "rank", "host", "fetched", "in_links"} {
		if _, ok := first[k]; !ok {
			t.Errorf("hit lacks %q: %v", k, first)
		}
	}
	if out.Hits[0].Rank != 11 || out.Hits[0].ID != "doc10" {
		t.Errorf("first hit of page 2: rank %d id %s", out.Hits[0].Rank, out.Hits[0].ID)
	}
	if site := out.Facets["site"]; len(site) != 2 || site[0].Filter == "" {
		t.Errorf("site facet = %+v", site)
	}
	if f.index.lastReq.PerPage != 10 || !f.index.lastReq.Facets {
		t.Errorf("backend asked for %+v", f.index.lastReq)
	}
	// facets=false: the backend is not asked to count them; the answer still has the key.
	res, body = f.do(t, "GET", "/api/search?q=solar&facets=false", "", "")
	if raw := decode[map[string]any](t, body); res.StatusCode != 200 || f.index.lastReq.Facets || raw["facets"] == nil {
		t.Errorf("facets=false: status %d, backend asked for %+v, answer %s", res.StatusCode, f.index.lastReq, body)
	}
	if res, body = f.do(t, "GET", "/api/search?q=solar&facets=maybe", "", ""); res.StatusCode != 400 || !strings.Contains(body, "facets must be true or false") {
		t.Errorf("facets=maybe: status %d: %s", res.StatusCode, body)
	}
}

func TestSearchAPISanitizesSnippets(t *testing.T) {
	f := newFixture(t)
	_, body := f.do(t, "GET", "/api/search?q=guide+3", "", "")
	out := decode[apiSearchResult](t, body)
	if len(out.Hits) == 0 {
		t.Fatal("no hits")
	}
	for _, h := range out.Hits {
		if strings.Contains(h.Snippet, "<img") {
			t.Errorf("snippet kept markup: %q", h.Snippet)
		}
	}
}

func TestSearchAPIErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		target   string
		code     int
		contains string
	}{
		{"/api/search", 400, "q="},
		{"/api/search?q=", 400, "q="},
		{"/api/search?q=solar&page=0", 400, "page must be"},
		{"/api/search?q=solar&page=x", 400, "page must be"},
		{"/api/search?q=solar&per_page=1000", 400, "per_page must be"},
		{"/api/search?q=solar&page=101", 400, "first 1000 results"},
		{"/api/search?q=" + strings.Repeat("a", 2001), 400, "at most 2000"},
		{"/api/search?q=(solar+wind", 400, "never closed"},
	} {
		res, body := f.do(t, "GET", tc.target, "", "")
		if res.StatusCode != tc.code || !strings.Contains(body, tc.contains) {
			t.Errorf("%s: %d %s; want %d containing %q", tc.target[:min(len(tc.target), 60)], res.StatusCode, body, tc.code, tc.contains)
		}
	}
	_, body := f.do(t, "GET", "/api/search?q=(solar+wind", "", "")
	if e := decode[apiError](t, body); e.Position == nil || *e.Position != 0 {
		t.Errorf("query error without its position: %s", body)
	}

	f.index.err = errors.New("disk on fire at /secret/path")
	res, body := f.do(t, "GET", "/api/search?q=solar", "", "")
	if res.StatusCode != 500 || strings.Contains(body, "/secret/path") {
		t.Errorf("backend failure: %d %s; want 500 without internals", res.StatusCode, body)
	}
	f.index.err = context.DeadlineExceeded
	if res, _ := f.do(t, "GET", "/api/search?q=solar", "", ""); res.StatusCode != 503 {
		t.Errorf("timeout: %d; want 503", res.StatusCode)
	}
	f.index.err = fmt.Errorf("too many searches at once: 4 are running and none finished within 1s; try again in a moment: %w", ErrBusy)
	for _, target := range []string{"/api/search?q=solar", "/search?q=solar"} {
		res, body := f.do(t, "GET", target, "", "")
		if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || !strings.Contains(body, "the server is busy: too many searches at once") {
			t.Errorf("%s overloaded: %d Retry-After %q %s; want 503 with Retry-After and the reason", target, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	f.index.err = nil
	f.index.panicky = true
	if res, _ := f.do(t, "GET", "/api/search?q=solar", "", ""); res.StatusCode != 500 {
		t.Errorf("panic: %d; want 500", res.StatusCode)
	}
}

func TestDocumentAndRelationsAPI(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/api/document?id=doc04", "", "")
	d := decode[map[string]any](t, body)
	if res.StatusCode != 200 || d["kind"] != "dataset" || d["relevance"] != nil || d["body"] == "" {
		t.Errorf("document: %d %v", res.StatusCode, d)
	}
	if res, _ := f.do(t, "GET", "/api/document?id=nope", "", ""); res.StatusCode != 404 {
		t.Errorf("missing document: %d", res.StatusCode)
	}
	if res, _ := f.do(t, "GET", "/api/document", "", ""); res.StatusCode != 400 {
		t.Errorf("no id: %d", res.StatusCode)
	}
	res, body = f.do(t, "GET", "/api/relations?url="+url.QueryEscape("http://www.beta.test/p1.html"), "", "")
	rel := decode[apiRelations](t, body)
	if res.StatusCode != 200 || len(rel.In) != 2 || len(rel.Out) != 0 {
		t.Errorf("relations: %d %+v", res.StatusCode, rel)
	}
	if res, _ := f.do(t, "GET", "/api/relations?url=x&limit=0", "", ""); res.StatusCode != 400 {
		t.Errorf("limit 0: %d", res.StatusCode)
	}
}

func TestCrawlControlNeedsToken(t *testing.T) {
	f := newFixture(t)
	for _, tok := range []string{"", "wrong-token-wrong-token", testToken + "x"} {
		res, body := f.do(t, "POST", "/api/crawl/start", tok, `{}`)
		if res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") == "" || !strings.Contains(body, "Bearer") {
			t.Errorf("token %q: %d %s", tok, res.StatusCode, body)
		}
	}
	if len(f.crawl.starts) != 0 {
		t.Fatal("an unauthorized request started a crawl")
	}
	res, body := f.do(t, "POST", "/api/crawl/start", testToken, `{"seeds":["http://a.test/"],"max_pages":50,"duration":"2m"}`)
	if res.StatusCode != 202 || len(f.crawl.starts) != 1 || f.crawl.starts[0].MaxPages != 50 || f.crawl.starts[0].Duration.Minutes() != 2 {
		t.Fatalf("start: %d %s %+v", res.StatusCode, body, f.crawl.starts)
	}
	if res, _ := f.do(t, "POST", "/api/crawl/start", testToken, `{}`); res.StatusCode != 409 {
		t.Errorf("second start: %d; want 409", res.StatusCode)
	}
	for _, bad := range []string{`{"seeds":["ftp://x"]}`, `{"duration":"soon"}`, `{"max_pages":-1}`, `{"unknown":1}`, `[`} {
		f.crawl.running = false
		if res, body := f.do(t, "POST", "/api/crawl/start", testToken, bad); res.StatusCode != 400 {
			t.Errorf("start %s: %d %s; want 400", bad, res.StatusCode, body)
		}
	}
	res, body = f.do(t, "POST", "/api/crawl/seeds", testToken, `{"seeds":["http://b.test/"]}`)
	if s := decode[apiSeeds](t, body); res.StatusCode != 200 || len(s.Seeds) != 2 {
		t.Errorf("add seeds: %d %s", res.StatusCode, body)
	}
	if res, _ := f.do(t, "POST", "/api/crawl/seeds", testToken, `{"seeds":[]}`); res.StatusCode != 400 {
		t.Errorf("no seeds: %d", res.StatusCode)
	}
	if res, _ := f.do(t, "POST", "/api/crawl/stop", testToken, ""); res.StatusCode != 200 || f.crawl.stops != 1 {
		t.Errorf("stop: %d, %d stops", res.StatusCode, f.crawl.stops)
	}
	if res, _ := f.do(t, "GET", "/api/crawl/stop", testToken, ""); res.StatusCode != 405 || res.Header.Get("Allow") != "POST" {
		t.Errorf("GET stop: %d allow %q; want 405 POST", res.StatusCode, res.Header.Get("Allow"))
	}
}

func TestNoBackends(t *testing.T) {
	srv, err := New(Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv}
	for _, target := range []string{"/api/search?q=a", "/api/document?id=a", "/api/relations?url=a", "/api/crawl/status", "/search?q=a"} {
		if res, body := f.do(t, "GET", target, "", ""); res.StatusCode != 503 || !strings.Contains(body, "not available") {
			t.Errorf("%s: %d %s", target, res.StatusCode, body)
		}
	}
	for _, target := range []string{"/", "/dashboard", "/api/stats", "/metrics"} {
		if res, _ := f.do(t, "GET", target, "", ""); res.StatusCode != 200 {
			t.Errorf("%s: %d", target, res.StatusCode)
		}
	}
}

// TestSecurityHeaders: every answer, including errors and assets, carries the policy.
func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t)
	for _, target := range []string{"/", "/search?q=solar", "/api/search?q=solar", "/nope", "/api/nope", "/static/app.css", "/metrics", "/doc?id=doc01"} {
		res, _ := f.do(t, "GET", target, "", "")
		h := res.Header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", target, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "nonce-") {
			t.Errorf("%s: CSP allows inline code: %q", target, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" {
			t.Errorf("%s: headers %v", target, h)
		}
	}
}

// TestPagesHaveNoInlineCode: the CSP forbids inline scripts and styles, so the pages must
// not need any: no <style>, no style= or on*= attributes, scripts only from /static/.
func TestPagesHaveNoInlineCode(t *testing.T) {
	f := newFixture(t)
	f.crawl.running = true
	for _, target := range []string{"/", "/search?q=solar", "/search?q=nothingmatches", "/search?q=(x", "/doc?id=doc07&q=solar",
		"/relations?url=" + url.QueryEscape("http://www.beta.test/p1.html"), "/dashboard", "/nope"} {
		res, body := f.do(t, "GET", target, "", "")
		if res.StatusCode >= 500 {
			t.Errorf("%s: %d", target, res.StatusCode)
		}
		for _, problem := range inlineCode(body) {
			t.Errorf("%s: %s", target, problem)
		}
		if !strings.Contains(body, `class="skip" href="#main"`) || !strings.Contains(body, `name="viewport"`) {
			t.Errorf("%s: no skip link or viewport", target)
		}
	}
}

// inlineCode lists what in an HTML page a strict CSP would block: <style> elements, style
// and event-handler attributes, javascript: URLs and scripts not loaded from /static/.
func inlineCode(page string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if tok.Data == "style" {
				out = append(out, "a <style> element")
			}
			src := ""
			for _, a := range tok.Attr {
				switch {
				case a.Key == "style" || strings.HasPrefix(a.Key, "on"):
					out = append(out, fmt.Sprintf("attribute %s on <%s>", a.Key, tok.Data))
				case strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:"):
					out = append(out, "a javascript: URL")
				case a.Key == "src":
					src = a.Val
				}
			}
			if tok.Data == "script" && !strings.HasPrefix(src, "/static/") {
				out = append(out, fmt.Sprintf("script with src %q", src))
			}
		}
	}
}

func TestResultsPage(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/search?q=solar&page=2", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	for _, want := range []string{
		`Results 11–20 of 25`, `<ol class="hits" start="11">`, `#11`, `updated <time datetime="2025-01-02T03:04:05Z">2025-01-02</time>`,
		`href="/relations?url=http%3A%2F%2Fwww.alpha.test%2Fp10.html"`, `10 in-links`, `href="/doc?id=doc10&amp;q=solar"`,
		`rel="prev" href="/search?q=solar"`, `rel="next" href="/search?page=3&amp;q=solar"`, `aria-current="page" href="/search?page=2&amp;q=solar"`,
		`href="/search?q=solar&#43;site%3Awww.alpha.test"`, `www.alpha.test <span class="count" title="matching results with this value">13</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("results page lacks %q", want)
		}
	}
	// The title that is a script tag is text.
	_, body = f.do(t, "GET", "/search?q=solar", "", "")
	if strings.Contains(body, "<script>window.pwned") || !strings.Contains(body, "&lt;script&gt;window.pwned=1&lt;/script&gt; solar") {
		t.Error("a crawled title was not escaped")
	}
	if strings.Contains(body, "<img") || !strings.Contains(body, "<mark>panels</mark>") {
		t.Error("snippet markup was not reduced to <mark>")
	}
	// An active facet links to the query without it.
	_, body = f.do(t, "GET", "/search?q=solar+site:www.beta.test", "", "")
	if !strings.Contains(body, `aria-current="true" class="active"`) || !strings.Contains(body, `href="/search?q=solar"`) {
		t.Error("active facet does not offer its removal")
	}
	_, body = f.do(t, "GET", "/search?q=solar+relaxme", "", "")
	if !strings.Contains(body, `id="relaxed"`) {
		t.Error("no notice that the results have only some of the words")
	}
	if _, body := f.do(t, "GET", "/api/search?q=solar+relaxme", "", ""); !strings.Contains(body, `"relaxed":true`) {
		t.Error("the API does not say the results are relaxed")
	}
	_, body = f.do(t, "GET", "/search?q=zebra", "", "")
	if !strings.Contains(body, `id="no-results"`) {
		t.Error("no warning for an empty result")
	}
	res, body = f.do(t, "GET", "/search?q=solar+(wind", "", "")
	if res.StatusCode != 400 || !strings.Contains(body, "never closed") || !strings.Contains(body, `solar <mark class="err">(</mark>wind`) {
		t.Errorf("malformed query page: %d\n%s", res.StatusCode, body)
	}
	if res, _ := f.do(t, "GET", "/search?q=", "", ""); res.StatusCode != http.StatusSeeOther {
		t.Errorf("empty query: %d; want a redirect home", res.StatusCode)
	}
	// Kind-specific fields show on the hit.
	_, body = f.do(t, "GET", "/search?q=guide+4", "", "")
	if !strings.Contains(body, "<dt>format</dt><dd>shapefile</dd>") || !strings.Contains(body, "<dt>features</dt><dd>12</dd>") {
		t.Error("dataset fields not shown")
	}
}

func TestDocumentPage(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/doc?id=doc07&q=solar+-panels+energia+site:x.test", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	for _, want := range []string{`<h1 id="doc-title">&lt;script&gt;window.pwned=1&lt;/script&gt; solar</h1>`,
		`<mark>Solar</mark> panels convert light`, `<mark>Energía</mark>`, `Last update`} {
		if !strings.Contains(body, want) {
			t.Errorf("document page lacks %q", want)
		}
	}
	if strings.Contains(body, "<mark>panels</mark>") {
		t.Error("an excluded term was highlighted")
	}
	if res, _ := f.do(t, "GET", "/doc?id=missing", "", ""); res.StatusCode != 404 {
		t.Errorf("missing document page: %d", res.StatusCode)
	}
}

func TestRelationsPage(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/relations?url="+url.QueryEscape("http://www.beta.test/p1.html"), "", "")
	if res.StatusCode != 200 || !strings.Contains(body, `<q class="anchor">beta &lt;one&gt;</q>`) ||
		!strings.Contains(body, `href="/relations?url=http%3A%2F%2Fwww.alpha.test%2Fp0.html"`) || !strings.Contains(body, "No links from this page") {
		t.Errorf("relations page: %d\n%s", res.StatusCode, body)
	}
}

func TestDashboardPage(t *testing.T) {
	f := newFixture(t)
	f.crawl.seeds = []string{"http://a.test/"}
	res, body := f.do(t, "GET", "/dashboard", "", "")
	for _, want := range []string{`data-figure="pages"`, `id="chart-pps"`, `id="chart-errors"`, `id="chart-hosts"`, `25.0%`,
		`<label for="token">`, `src="/static/dashboard.js?v=`, `<li>http://a.test/</li>`} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if res.StatusCode != 200 {
		t.Fatal(res.StatusCode)
	}
	_, body = f.do(t, "GET", "/api/crawl/status", "", "")
	st := decode[CrawlStatus](t, body)
	if len(st.History) != 2 || st.HarvestRate == nil || st.TopHosts[1].Host != "<b>.test" {
		t.Errorf("status: %s", body)
	}
}

func TestStaticAssets(t *testing.T) {
	f := newFixture(t)
	for name, ctype := range map[string]string{"app.css": "text/css", "dashboard.js": "text/javascript", "favicon.svg": "image/svg+xml"} {
		u, err := assetURL(name)
		if err != nil {
			t.Fatal(err)
		}
		res, body := f.do(t, "GET", u, "", "")
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ctype) || len(body) == 0 ||
			!strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d %q %q", u, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
		}
		if res, _ := f.do(t, "GET", "/static/"+name, "", ""); res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("unversioned %s cached for good", name)
		}
	}
	for _, bad := range []string{"/static/nope.js", "/static/../server.go", "/static/"} {
		if res, _ := f.do(t, "GET", bad, "", ""); res.StatusCode != 404 && res.StatusCode/100 != 3 {
			t.Errorf("%s: %d", bad, res.StatusCode)
		}
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t)
	f.do(t, "GET", "/api/search?q=solar", "", "")
	_, body := f.do(t, "GET", "/metrics", "", "")
	if !strings.Contains(body, `sonda_http_requests_total{code="200",route="api-search"} 1`) || !strings.Contains(body, "go_goroutines") {
		t.Errorf("metrics without the server's own or the process's:\n%s", body[:min(len(body), 400)])
	}
	// With a crawl running, its registry (which has the Go collector itself) is served.
	f.crawl.reg = prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "sonda_pages_fetched_total", Help: "x"})
	f.crawl.reg.MustRegister(c)
	c.Add(3)
	res, body := f.do(t, "GET", "/metrics", "", "")
	if res.StatusCode != 200 || !strings.Contains(body, "sonda_pages_fetched_total 3") || strings.Contains(body, "go_goroutines") {
		t.Errorf("metrics with a crawl: %d\n%s", res.StatusCode, body[:min(len(body), 400)])
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	f := newFixture(t)
	res, body := f.do(t, "GET", "/api/nothing", "", "")
	if res.StatusCode != 404 || !strings.Contains(body, `"error"`) {
		t.Errorf("api 404: %d %s", res.StatusCode, body)
	}
	res, body = f.do(t, "GET", "/nothing", "", "")
	if res.StatusCode != 404 || !strings.Contains(body, "<h1>404 Not Found</h1>") {
		t.Errorf("page 404: %d", res.StatusCode)
	}
	if res, _ := f.do(t, "POST", "/api/search?q=a", "", ""); res.StatusCode != 405 || res.Header.Get("Allow") != "GET" {
		t.Errorf("POST search: %d %q", res.StatusCode, res.Header.Get("Allow"))
	}
}

// TestHostGuard: with Options.Hosts set, a request naming a host that is not this server's
// (DNS rebinding) is refused with 421; IP addresses, localhost and the configured names pass.
func TestHostGuard(t *testing.T) {
	f := newFixture(t)
	f.srv.o.Hosts = []string{"search.example.org", "*.corp.example"}
	for host, want := range map[string]int{
		"127.0.0.1:8080":             200,
		"[::1]:8080":                 200,
		"localhost:8080":             200,
		"LOCALHOST":                  200,
		"search.example.org":         200,
		"search.example.org.:443":    200,
		"intranet.corp.example:80":   200,
		"rebind.attacker.example":    421,
		"search.example.org.evil":    421,
		"corp.example":               421,
		"127.0.0.1.attacker.example": 421,
	} {
		req := httptest.NewRequest("GET", "/api/stats", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
		if want == 421 && !strings.Contains(rec.Body.String(), "serve.hosts") {
			t.Errorf("Host %q: the refusal does not say how to allow the name: %s", host, rec.Body.String())
		}
	}
	// Without Hosts (a library user's choice) nothing is checked.
	f.srv.o.Hosts = nil
	req := httptest.NewRequest("GET", "/api/stats", nil)
	req.Host = "rebind.attacker.example"
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("without Hosts: %d", rec.Code)
	}
}

// TestNavLinksOnlyToVerticalsThatAreOn: the header links to Datasets and News topics only
// when the server has them; a link to a section that answers 503 is a dead end.
func TestNavLinksOnlyToVerticalsThatAreOn(t *testing.T) {
	f := newFixture(t)
	_, body := f.do(t, "GET", "/", "", "")
	if !strings.Contains(body, `href="/datasets"`) || !strings.Contains(body, `href="/topics"`) {
		t.Fatalf("with both verticals the header lacks their links:\n%s", body)
	}
	f.srv.o.Datasets, f.srv.o.News = nil, nil
	_, body = f.do(t, "GET", "/", "", "")
	if strings.Contains(body, `href="/datasets"`) || strings.Contains(body, `href="/topics"`) {
		t.Errorf("without the verticals the header still links to them")
	}
}

type fakeCluster struct {
	v   ClusterView
	err error
}

func (f fakeCluster) ClusterStatus(context.Context) (ClusterView, error) { return f.v, f.err }

// TestDashboardCluster: sonda serve --nats shows the cluster's nodes and the partitions
// each serves; a server it cannot read says so on the page.
func TestDashboardCluster(t *testing.T) {
	f := newFixture(t)
	f.srv.o.Cluster = fakeCluster{v: ClusterView{Name: "prod", Partitions: 8, Unassigned: 2, Routing: 1500, Members: []ClusterMember{
		{Node: "alpha", Partitions: []int{0, 3, 5}, Queued: 12000, InFlight: 4, Pages: 900, PagesPerSecond: 21.5, FailOvers: 1},
		{Node: "beta<b>", Partitions: []int{1, 2, 7}, Idle: true}}}}
	res, body := f.do(t, "GET", "/dashboard", "", "")
	if res.StatusCode != 200 {
		t.Fatal(res.StatusCode)
	}
	for _, want := range []string{`<h2 id="cluster-heading">Cluster prod</h2>`, `2 nodes, 8 partitions`, `<strong>2 not served</strong>`, `1,500 routed URLs waiting`,
		`<th scope="row">alpha</th><td title="0 3 5">3</td><td>12,000</td><td>4</td>`, `21.5`, `<th scope="row">beta&lt;b&gt;</th>`, `<td>idle</td>`, `<td>crawling</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	f.srv.o.Cluster = fakeCluster{err: errors.New("cluster: cannot reach the NATS server")}
	if _, body := f.do(t, "GET", "/dashboard", "", ""); !strings.Contains(body, "cannot reach the NATS server") {
		t.Error("dashboard hides the error reading the cluster")
	}
	f.srv.o.Cluster = nil
	if _, body := f.do(t, "GET", "/dashboard", "", ""); strings.Contains(body, "cluster-heading") {
		t.Error("dashboard shows a cluster without one")
	}
}

type fakeWorkers []Worker

func (f fakeWorkers) Workers(context.Context) ([]Worker, error) { return f, nil }

func TestDashboardWorkers(t *testing.T) {
	f := newFixture(t)
	f.srv.o.Workers = fakeWorkers{{Name: "alice", State: "active", Tasks: 1200, Checked: 80, Reputation: 0.988, PagesPerSecond: 2.5},
		{Name: "mallory<x>", State: "quarantined", Reason: "2 of 3 checked pages differed", Tasks: 7, Failed: 2, Reputation: 0.4}}
	res, body := f.do(t, "GET", "/dashboard", "", "")
	for _, want := range []string{`<h2 id="workers-heading">Volunteer workers</h2>`, `<th scope="row">alice</th>`, `1,200`, `0.988`,
		`<tr class="worker-quarantined"><th scope="row">mallory&lt;x&gt;</th>`, `(2 of 3 checked pages differed)`} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if res.StatusCode != 200 {
		t.Fatal(res.StatusCode)
	}
	// Without a worker source (a single data directory) the section is absent.
	f.srv.o.Workers = nil
	if _, body := f.do(t, "GET", "/dashboard", "", ""); strings.Contains(body, "Volunteer workers") {
		t.Error("dashboard lists workers without a cluster")
	}
}
