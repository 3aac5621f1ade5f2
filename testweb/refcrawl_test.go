package testweb

// A reference crawler that shares no code with the generator: its own
// robots.txt parser (regular expressions, not the model's glob matcher), its
// own URL resolution and normalization (net/url), HTML parsing with
// golang.org/x/net/html. Crawling the web with it and comparing with the
// ground truth checks that what is served means what the model says.

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html"
	"golang.org/x/text/encoding/charmap"
)

// capWriter is an http.ResponseWriter that keeps at most limit body bytes
// and fails writes beyond, as a client that hangs up would.
type capWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
	limit  int
}

var errCapped = errors.New("body limit reached")

func newCapWriter(limit int) *capWriter { return &capWriter{h: http.Header{}, limit: limit} }

func (c *capWriter) Header() http.Header { return c.h }
func (c *capWriter) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *capWriter) Flush() {}
func (c *capWriter) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	if room := c.limit - c.body.Len(); len(p) > room {
		c.body.Write(p[:max(room, 0)])
		return max(room, 0), errCapped
	}
	return c.body.Write(p)
}

// refResponse is what refGet saw.
type refResponse struct {
	status int
	header http.Header
	body   []byte // content-decoded, capped
}

// refGet sends one GET straight to the handler with a deadline.
func refGet(h http.Handler, rawURL string, timeout time.Duration) refResponse {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		panic(err)
	}
	req.RequestURI = req.URL.RequestURI()
	req.Header.Set("User-Agent", "sonda-reference/1.0")
	rw := newCapWriter(256 << 10)
	h.ServeHTTP(rw, req)
	body := rw.body.Bytes()
	var zr io.Reader
	switch rw.h.Get("Content-Encoding") {
	case "gzip":
		if r, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
			zr = r
		}
	case "deflate":
		if r, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
			zr = r
		}
	case "br":
		zr = brotli.NewReader(bytes.NewReader(body))
	}
	if zr != nil {
		body, _ = io.ReadAll(io.LimitReader(zr, 1<<20))
	}
	return refResponse{status: rw.status, header: rw.h, body: body}
}

// refNormalize resolves ref against base and returns the canonical form the
// test web promises, or "" for links a crawler does not follow.
func refNormalize(base *url.URL, ref string) string {
	ref = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, strings.TrimSpace(ref))
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	u = base.ResolveReference(u)
	if u.Scheme != "http" || !strings.HasSuffix(strings.ToLower(u.Hostname()), ".test") {
		return ""
	}
	var kept []string
	for _, p := range strings.Split(u.RawQuery, "&") {
		if p != "" && !strings.HasPrefix(p, "utm_") {
			kept = append(kept, p)
		}
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	c := url.URL{Scheme: "http", Host: strings.ToLower(u.Hostname()), Path: path, RawQuery: strings.Join(kept, "&")}
	return c.String()
}

// refRobots is a robots.txt as the reference crawler reads it.
type refRobots struct {
	status int
	groups []refGroup
}

type refGroup struct {
	agents []string
	rules  []refRule
	delay  float64
}

type refRule struct {
	allow  bool
	len    int
	prefix string // literal start of the pattern: a cheap test before the expression
	re     *regexp.Regexp
}

func parseRefRobots(body []byte) refRobots {
	if len(body) > 500<<10 {
		body = body[:500<<10]
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var rb refRobots
	var cur *refGroup
	inRules := false
	for _, line := range strings.Split(string(body), "\n") {
		line, _, _ = strings.Cut(line, "#")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "user-agent":
			if cur == nil || inRules {
				rb.groups = append(rb.groups, refGroup{})
				cur, inRules = &rb.groups[len(rb.groups)-1], false
			}
			cur.agents = append(cur.agents, strings.ToLower(v))
		case "allow", "disallow":
			if cur == nil || v == "" {
				continue
			}
			inRules = true
			expr := regexp.QuoteMeta(v)
			expr = strings.ReplaceAll(expr, `\*`, ".*")
			if strings.HasSuffix(expr, `\$`) {
				expr = strings.TrimSuffix(expr, `\$`) + "$"
			}
			prefix, _, _ := strings.Cut(strings.TrimSuffix(v, "$"), "*")
			cur.rules = append(cur.rules, refRule{allow: k == "allow", len: len(v), prefix: prefix, re: regexp.MustCompile("^" + expr)})
		case "crawl-delay":
			if cur != nil {
				inRules = true
				cur.delay, _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return rb
}

// rules are the rules for agent sonda.
func (rb refRobots) rules() (rules []refRule, delay float64) {
	for _, want := range []string{"sonda", "*"} {
		found := false
		for _, g := range rb.groups {
			for _, a := range g.agents {
				if a == want {
					found = true
					rules = append(rules, g.rules...)
					delay = max(delay, g.delay)
				}
			}
		}
		if found {
			return rules, delay
		}
	}
	return nil, 0
}

func (rb refRobots) allowed(pathQuery string) bool {
	switch {
	case rb.status >= 400 && rb.status < 500:
		return true
	case rb.status >= 500:
		return false
	}
	rules, _ := rb.rules()
	best, allow := -1, true
	for _, r := range rules {
		if strings.HasPrefix(pathQuery, r.prefix) && r.re.MatchString(pathQuery) && (r.len > best || r.len == best && r.allow) {
			best, allow = r.len, r.allow
		}
	}
	return allow
}

// refCrawler crawls a Web in process, one request at a time.
type refCrawler struct {
	w        *Web
	timeout  time.Duration
	robots   map[string]refRobots
	seen     map[string]bool
	variants map[string]int // distinct queries per host and path: the trap guard
	queue    []refItem
	retried  map[string]bool
	pages    map[string]refResponse // every 2xx answer, by URL
	links    map[string][]string    // normalized <a href> of each HTML page followed
}

type refItem struct {
	url  string
	hops int
}

func newRefCrawler(w *Web, timeout time.Duration) *refCrawler {
	return &refCrawler{
		w: w, timeout: timeout,
		robots: map[string]refRobots{}, seen: map[string]bool{}, variants: map[string]int{},
		retried: map[string]bool{}, pages: map[string]refResponse{}, links: map[string][]string{},
	}
}

func (c *refCrawler) add(u string, hops int) {
	if u == "" || c.seen[u] {
		return
	}
	p, _ := url.Parse(u)
	// Trap guards: a path segment three times in a row, more than ten
	// queries on one path, very long URLs.
	if len(u) > 1000 || strings.Contains(p.Path, "/sub/sub/sub/") {
		return
	}
	if p.RawQuery != "" {
		key := p.Host + p.Path
		if c.variants[key] >= 10 {
			return
		}
		c.variants[key]++
	}
	c.seen[u] = true
	c.queue = append(c.queue, refItem{u, hops})
}

func (c *refCrawler) robotsFor(host string) refRobots {
	if rb, ok := c.robots[host]; ok {
		return rb
	}
	u := "http://" + host + "/robots.txt"
	var resp refResponse
	for range 6 {
		resp = refGet(c.w, u, c.timeout)
		if resp.status < 300 || resp.status >= 400 {
			break
		}
		base, _ := url.Parse(u)
		u = refNormalize(base, resp.header.Get("Location"))
	}
	rb := parseRefRobots(resp.body)
	rb.status = resp.status
	c.robots[host] = rb
	return rb
}

func (c *refCrawler) run(seeds []string) {
	for _, s := range seeds {
		c.add(s, 0)
	}
	for len(c.queue) > 0 {
		it := c.queue[0]
		c.queue = c.queue[1:]
		c.visit(it)
	}
}

func (c *refCrawler) visit(it refItem) {
	u, _ := url.Parse(it.url)
	if !c.robotsFor(u.Host).allowed(u.RequestURI()) {
		return
	}
	resp := refGet(c.w, it.url, c.timeout)
	switch {
	case resp.status == http.StatusTooManyRequests || resp.status == http.StatusServiceUnavailable:
		if !c.retried[it.url] {
			c.retried[it.url] = true
			c.queue = append(c.queue, it)
		}
		return
	case resp.status >= 300 && resp.status < 400:
		if it.hops < 5 {
			next := refNormalize(u, resp.header.Get("Location"))
			c.add(next, it.hops+1)
		}
		return
	case resp.status != http.StatusOK:
		return
	}
	c.pages[it.url] = resp
	ctype := resp.header.Get("Content-Type")
	if ctype == "" || ctype == "application/octet-stream" {
		ctype = http.DetectContentType(resp.body)
	}
	if !strings.HasPrefix(ctype, "text/html") {
		return
	}
	xr := strings.ToLower(strings.Join(resp.header.Values("X-Robots-Tag"), ","))
	if strings.Contains(xr, "nofollow") || strings.Contains(xr, "none") {
		return
	}
	links, nofollow := refLinks(u, resp.body)
	if nofollow {
		return
	}
	c.links[it.url] = links
	for _, l := range links {
		c.add(l, 0)
	}
}

// refLinks extracts the normalized <a href> targets of a page, honouring
// <base href>, and whether meta robots (or meta sonda) says nofollow.
func refLinks(page *url.URL, body []byte) (links []string, nofollow bool) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	base := page
	var hrefs []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch n.Data {
			case "base":
				if b, err := url.Parse(strings.TrimSpace(attr["href"])); err == nil {
					base = page.ResolveReference(b)
				}
			case "meta":
				name := strings.ToLower(attr["name"])
				content := strings.ToLower(attr["content"])
				if (name == "robots" || name == "sonda") && (strings.Contains(content, "nofollow") || strings.Contains(content, "none")) {
					nofollow = true
				}
			case "a":
				if h, ok := attr["href"]; ok {
					hrefs = append(hrefs, h)
				}
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	for _, h := range hrefs {
		if l := refNormalize(base, h); l != "" {
			links = append(links, l)
		}
	}
	return links, nofollow
}

// refTitle decodes a page the way the fetcher is specified to (a BOM, the
// header, the meta prescan, then a guess; a UTF-8 label on invalid UTF-8
// means windows-1252, a Latin-1 label on valid multibyte UTF-8 means UTF-8)
// and returns its <title>.
func refTitle(resp refResponse) string {
	body := resp.body
	label := ""
	if _, params, ok := strings.Cut(resp.header.Get("Content-Type"), "charset="); ok {
		label = strings.ToLower(params)
	} else if m := regexp.MustCompile(`(?i)<meta charset="([^"]+)"`).FindSubmatch(body); m != nil {
		label = strings.ToLower(string(m[1]))
	}
	utf := utf8.Valid(body)
	switch {
	case label == "utf-8" && !utf, label == "" && !utf:
		label = "windows-1252"
	case utf && bytes.ContainsFunc(body, func(r rune) bool { return r >= 0x80 }):
		label = "utf-8"
	}
	if label != "utf-8" {
		body, _ = charmap.Windows1252.NewDecoder().Bytes(body)
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var title string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "title" && n.FirstChild != nil && title == "" {
			title = n.FirstChild.Data
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	return title
}

func urlParse(s string) (*url.URL, error) { return url.Parse(s) }
