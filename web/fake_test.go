package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The fakes below stand in for the index, the link graph and the crawler, so the HTTP
// layer's own behaviour (validation, contracts, escaping, auth) is tested in isolation.
// web/local tests the same server end to end over real components.

const testToken = "test-token-0123456789abcdef"

// fakeIndex answers from a fixed list of documents: a hit is every document whose title
// or body contains every query word; "(" without ")" is a malformed query.
type fakeIndex struct {
	docs     []Document
	err      error // returned by every call when set
	panicky  bool
	lastReq  SearchRequest
	mu       sync.Mutex
	searches int
}

func (f *fakeIndex) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	f.mu.Lock()
	f.lastReq = req
	f.searches++
	f.mu.Unlock()
	if f.panicky {
		panic("fake index exploded")
	}
	if f.err != nil {
		return nil, f.err
	}
	if i := strings.IndexByte(req.Query, '('); i >= 0 && !strings.Contains(req.Query[i:], ")") {
		return nil, &QueryError{Pos: i, Msg: "this parenthesis is never closed; add ')' or remove '('"}
	}
	var matched []Document
	var site string
	var words []string
	relaxed := false
	for _, w := range strings.Fields(req.Query) {
		if w == "relaxme" { // stands for a word no document has, dropped by the engine
			relaxed = true
			continue
		}
		if v, ok := strings.CutPrefix(w, "site:"); ok {
			site = v
			continue
		}
		words = append(words, strings.ToLower(w))
	}
	for _, d := range f.docs {
		if site != "" && d.Host != site {
			continue
		}
		text := strings.ToLower(d.Title + " " + d.Body)
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(text, w)
		}
		if ok && (req.Kind == "" || req.Kind == d.Kind) {
			matched = append(matched, d)
		}
	}
	res := &SearchResult{Total: uint64(len(matched)), Took: 1500 * time.Microsecond, Query: req.Query, Relaxed: relaxed,
		Facets: map[string][]FacetCount{}}
	hosts := map[string]int{}
	for _, d := range matched {
		hosts[d.Host]++
	}
	for h, n := range hosts {
		res.Facets["site"] = append(res.Facets["site"], FacetCount{Value: h, Count: n, Filter: "site:" + h})
	}
	from := (req.Page - 1) * req.PerPage
	for i := from; i < len(matched) && i < from+req.PerPage; i++ {
		d := matched[i]
		res.Hits = append(res.Hits, Hit{ID: d.ID, Kind: d.Kind, URL: d.URL, Title: d.Title, Snippet: d.Description,
			Score: float64(len(matched) - i), Fetched: d.Fetched, Host: d.Host, InLinks: d.InLinks, Fields: d.Fields})
	}
	return res, nil
}

func (f *fakeIndex) Document(ctx context.Context, id string) (Document, bool, error) {
	if f.err != nil {
		return Document{}, false, f.err
	}
	for _, d := range f.docs {
		if d.ID == id {
			return d, true, nil
		}
	}
	return Document{}, false, nil
}

func (f *fakeIndex) Stats(ctx context.Context) (Stats, error) {
	return Stats{Documents: uint64(len(f.docs)), Pages: uint64(len(f.docs)), Links: 7}, f.err
}

// fakeGraph holds edges as source → targets with anchors.
type fakeGraph map[string][]Edge

func (g fakeGraph) Relations(ctx context.Context, u string, limit int) (in, out []Edge, err error) {
	for src, edges := range g {
		for _, e := range edges {
			if e.URL == u && len(in) < limit {
				in = append(in, Edge{URL: src, Anchor: e.Anchor})
			}
		}
	}
	out = g[u]
	if len(out) > limit {
		out = out[:limit]
	}
	return in, out, nil
}

// fakeCrawl records control calls.
type fakeCrawl struct {
	mu      sync.Mutex
	running bool
	seeds   []string
	starts  []CrawlRequest
	stops   int
	pages   int64
	reg     *prometheus.Registry
}

func (c *fakeCrawl) Start(ctx context.Context, req CrawlRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return ErrCrawlRunning
	}
	for _, s := range req.Seeds {
		if !strings.HasPrefix(s, "http") {
			return fmt.Errorf("seed %q is not an http(s) URL", s)
		}
	}
	c.running = true
	c.seeds = append(c.seeds, req.Seeds...)
	c.starts = append(c.starts, req)
	return nil
}

func (c *fakeCrawl) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	c.stops++
	return nil
}

func (c *fakeCrawl) AddSeeds(ctx context.Context, seeds []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range seeds {
		if !strings.HasPrefix(s, "http") {
			return errors.New("not a URL: " + s)
		}
	}
	c.seeds = append(c.seeds, seeds...)
	return nil
}

func (c *fakeCrawl) Seeds(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string{}, c.seeds...), nil
}

func (c *fakeCrawl) Status() CrawlStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	state := "idle"
	if c.running {
		state = "running"
	}
	c.pages += 5
	h := 0.25
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return CrawlStatus{State: state, Pages: c.pages, PagesPerSecond: 5, Queued: 40, InFlight: 2, Hosts: 3,
		Errors: map[string]int64{"http-404": 2, "timeout-first-byte": 1}, TopHosts: []HostCount{{"a.test", 9}, {"<b>.test", 3}},
		Judged: 8, Relevant: 2, HarvestRate: &h, Updated: now,
		History: []Sample{{At: now.Add(-time.Second), Pages: c.pages - 5, PagesPerSecond: 4, Queued: 41, HarvestRate: &h},
			{At: now, Pages: c.pages, PagesPerSecond: 5, Queued: 40, HarvestRate: &h}}}
}

func (c *fakeCrawl) Gatherer() prometheus.Gatherer {
	if c.reg == nil {
		return nil
	}
	return c.reg
}

// testDocs are 25 documents on two hosts; doc 7's title is a script tag, doc 3's
// description (used as its snippet) carries markup that must not survive.
func testDocs() []Document {
	var docs []Document
	for i := range 25 {
		host := "www.alpha.test"
		if i%2 == 1 {
			host = "www.beta.test"
		}
		d := Document{ID: fmt.Sprintf("doc%02d", i), Kind: "page", URL: fmt.Sprintf("http://%s/p%d.html", host, i),
			Title: fmt.Sprintf("Solar panel guide %d", i), Body: fmt.Sprintf("Solar panels convert light. Page %d about solar energy and Energía.", i),
			Description: "About <mark>solar</mark> panels &amp; more", Host: host, Lang: "en", ContentType: "text/html",
			Fetched: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Relevance: -1, InLinks: i}
		docs = append(docs, d)
	}
	docs[7].Title = `<script>window.pwned=1</script> solar`
	docs[3].Description = `solar <img src=x onerror="window.pwned=1"> <mark>panels</mark>`
	docs[4].Kind, docs[4].Fields = "dataset", map[string]any{"format": "shapefile", "features": 12.0}
	return docs
}
