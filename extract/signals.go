package extract

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// signals is everything the metadata cascade reads from a page, gathered in one walk over
// its tree: the <head> metas and links, JSON-LD, microdata properties, <time> elements,
// byline candidates and the elements the body extractors start from.
type signals struct {
	htmlLang string
	title    string
	metas    []metaTag
	links    []linkTag
	ld       ldGraph
	itemprop map[string][]*nethtml.Node // microdata properties (not <meta>), lowercased, document order
	times    []*nethtml.Node
	bylines  []bylineCandidate
	h1       []string
	articles []*nethtml.Node // <article> elements, document order
	mains    []*nethtml.Node // <main> and role=main elements
	body     *nethtml.Node
}

// metaTag is one <meta> with a content: its name, property, itemprop or http-equiv
// (lowercased) and content.
type metaTag struct {
	key, content string
}

// linkTag is one <link> (or <a rel=author>).
type linkTag struct {
	rel, href, typ, hreflang string
}

// bylineCandidate is an element that may hold the author's name, and why it was picked.
type bylineCandidate struct {
	node *nethtml.Node
	how  string // "rel", "itemprop", "class"
}

// maxWalkNodes bounds the nodes examined on one page (pages of a million elements exist;
// their metadata is in the first part).
const maxWalkNodes = 500_000

// gather walks doc once and collects the signals.
func gather(doc *nethtml.Node) *signals {
	s := &signals{itemprop: map[string][]*nethtml.Node{}}
	type frame struct {
		n          *nethtml.Node
		inSVG      bool
		inTemplate bool
	}
	stack := []frame{{n: doc}}
	seen := 0
	for len(stack) > 0 && seen < maxWalkNodes {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := f.n
		seen++
		if n.Type == nethtml.ElementNode && !f.inTemplate {
			s.element(n, f.inSVG)
		}
		if n.Type == nethtml.ElementNode && n.DataAtom == atom.Script {
			continue // its text is one node, read by element
		}
		inSVG := f.inSVG || (n.Type == nethtml.ElementNode && n.DataAtom == atom.Svg)
		inTemplate := f.inTemplate || (n.Type == nethtml.ElementNode && n.DataAtom == atom.Template)
		// Push children in reverse so they pop in document order.
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, frame{n: c, inSVG: inSVG, inTemplate: inTemplate})
		}
	}
	return s
}

func (s *signals) element(n *nethtml.Node, inSVG bool) {
	switch n.DataAtom {
	case atom.Html:
		if s.htmlLang == "" {
			s.htmlLang = strings.TrimSpace(attr(n, "lang"))
			if s.htmlLang == "" {
				s.htmlLang = strings.TrimSpace(attr(n, "xml:lang"))
			}
		}
	case atom.Body:
		if s.body == nil {
			s.body = n
		}
	case atom.Title:
		if s.title == "" && !inSVG {
			s.title = cleanText(nodeText(n))
		}
	case atom.Meta:
		content, hasContent := attrOK(n, "content")
		if !hasContent {
			if cs := attr(n, "charset"); cs != "" {
				return
			}
		}
		content = strings.TrimSpace(content)
		for _, k := range []string{"property", "name", "itemprop", "http-equiv"} {
			v := strings.ToLower(strings.TrimSpace(attr(n, k)))
			if v == "" {
				continue
			}
			// property and itemprop may hold several space-separated names.
			for _, key := range strings.Fields(v) {
				s.metas = append(s.metas, metaTag{key: key, content: content})
			}
		}
	case atom.Link:
		s.links = append(s.links, linkTag{
			rel: strings.ToLower(attr(n, "rel")), href: strings.TrimSpace(attr(n, "href")),
			typ: strings.ToLower(attr(n, "type")), hreflang: attr(n, "hreflang"),
		})
	case atom.Script:
		if strings.Contains(strings.ToLower(attr(n, "type")), "ld+json") && n.FirstChild != nil {
			s.ld.add(n.FirstChild.Data)
		}
	case atom.Time:
		s.times = append(s.times, n)
	case atom.H1:
		if t := cleanText(nodeText(n)); t != "" && len(s.h1) < 8 {
			s.h1 = append(s.h1, t)
		}
	case atom.Article:
		s.articles = append(s.articles, n)
	case atom.Main:
		s.mains = append(s.mains, n)
	}
	if strings.EqualFold(attr(n, "role"), "main") && n.DataAtom != atom.Main {
		s.mains = append(s.mains, n)
	}
	if ip := attr(n, "itemprop"); ip != "" && n.DataAtom != atom.Meta {
		for _, p := range strings.Fields(strings.ToLower(ip)) {
			if len(s.itemprop[p]) < 16 {
				s.itemprop[p] = append(s.itemprop[p], n)
			}
			if p == "author" || p == "creator" {
				s.addByline(n, "itemprop")
			}
		}
	}
	if n.DataAtom == atom.A && hasToken(attr(n, "rel"), "author") {
		s.addByline(n, "rel")
	}
	if isBylineClass(attr(n, "class")) || isBylineClass(attr(n, "id")) {
		s.addByline(n, "class")
	}
}

func (s *signals) addByline(n *nethtml.Node, how string) {
	if len(s.bylines) < 32 {
		s.bylines = append(s.bylines, bylineCandidate{node: n, how: how})
	}
}

// isBylineClass matches the class and id names sites give the element holding the author
// (byline, author, writtenby, p-author; not dateline, which names a place), but not the
// names of author boxes that hold biographies or comment authors.
func isBylineClass(v string) bool {
	if v == "" {
		return false
	}
	v = strings.ToLower(v)
	if !strings.Contains(v, "byline") && !strings.Contains(v, "author") && !strings.Contains(v, "writtenby") {
		return false
	}
	for _, bad := range []string{"comment", "avatar", "bio", "authors-list", "more-from", "related", "photo", "img", "image"} {
		if strings.Contains(v, bad) {
			return false
		}
	}
	return true
}

// meta returns the content of the first <meta> named by one of keys (in the order of keys,
// so callers list the most reliable name first).
func (s *signals) meta(keys ...string) string {
	for _, k := range keys {
		for _, m := range s.metas {
			if m.key == k && m.content != "" {
				return m.content
			}
		}
	}
	return ""
}

// metaAll returns every non-empty content of the metas named key, in document order.
func (s *signals) metaAll(key string) []string {
	var out []string
	for _, m := range s.metas {
		if m.key == key && m.content != "" {
			out = append(out, m.content)
		}
	}
	return out
}

// link returns the href of the first <link> whose rel has token.
func (s *signals) link(token string) string {
	for _, l := range s.links {
		if l.href != "" && hasToken(l.rel, token) {
			return l.href
		}
	}
	return ""
}

// micro returns the value of the first microdata property named prop (HTML's itemprop
// value rules: content, href, src, datetime, value, else the text).
func (s *signals) micro(prop string) string {
	for _, n := range s.itemprop[prop] {
		if v := itemValue(n); v != "" {
			return v
		}
	}
	return ""
}

func itemValue(n *nethtml.Node) string {
	if v, ok := attrOK(n, "content"); ok {
		return strings.TrimSpace(v)
	}
	switch n.DataAtom {
	case atom.A, atom.Link, atom.Area:
		return strings.TrimSpace(attr(n, "href"))
	case atom.Img, atom.Audio, atom.Video, atom.Source, atom.Iframe, atom.Embed, atom.Track:
		return strings.TrimSpace(attr(n, "src"))
	case atom.Time:
		if v := attr(n, "datetime"); v != "" {
			return strings.TrimSpace(v)
		}
	case atom.Data, atom.Meter:
		return strings.TrimSpace(attr(n, "value"))
	}
	return cleanText(nodeText(n))
}

func attr(n *nethtml.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *nethtml.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

// hasToken reports whether the space-separated list v contains token (case-insensitive).
func hasToken(v, token string) bool {
	for _, f := range strings.Fields(v) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}

// nodeText is the text under n, without scripts, styles and templates, with a space
// between block elements.
func nodeText(n *nethtml.Node) string {
	var b strings.Builder
	appendText(&b, n, 0)
	return b.String()
}

func appendText(b *strings.Builder, n *nethtml.Node, depth int) {
	if depth > 512 || b.Len() > 1<<20 {
		return
	}
	switch n.Type {
	case nethtml.TextNode:
		b.WriteString(n.Data)
		return
	case nethtml.ElementNode:
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Head:
			return
		case atom.Br:
			b.WriteByte(' ')
			return
		}
	}
	block := n.Type == nethtml.ElementNode && isBlock(n.DataAtom)
	if block {
		b.WriteByte(' ')
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		appendText(b, c, depth+1)
	}
	if block {
		b.WriteByte(' ')
	}
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Li, atom.Ul, atom.Ol, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Blockquote, atom.Pre, atom.Table, atom.Tr, atom.Td, atom.Th, atom.Section, atom.Article,
		atom.Header, atom.Footer, atom.Aside, atom.Nav, atom.Figure, atom.Figcaption, atom.Dl, atom.Dt, atom.Dd,
		atom.Main, atom.Form, atom.Address, atom.Hr, atom.Caption:
		return true
	}
	return false
}

// cleanText unescapes entities left in metadata values (JSON-LD and some CMSs write
// "&amp;" and "&#8217;" into values) and collapses whitespace.
func cleanText(s string) string {
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return collapseSpace(s)
}

// collapseSpace trims s and turns every run of white space (including no-break spaces)
// into one space.
func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || r == '\u00a0' || r == '\u200b' || r == '\ufeff' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r == utf8.RuneError {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
