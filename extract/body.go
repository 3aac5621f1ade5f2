package extract

import (
	"net/url"
	"strings"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ThesisParagraphs applies the thesis's body rule (seed 003, Fig. 20) with its ancestor
// bug fixed: the text of every <p> inside the first <article> under <body>, except
// paragraphs with an <aside>, <header>, <footer> or <section> ancestor below that
// <article>. Empty paragraphs are dropped; text in <script> and <style> is not text. It
// returns nil when the page has no <article> or no such paragraph, which the thesis took
// to mean "not a news page".
func ThesisParagraphs(doc *nethtml.Node) []string {
	art := firstArticle(doc)
	if art == nil {
		return nil
	}
	var out []string
	eachElement(art, func(n *nethtml.Node) bool {
		if n.DataAtom != atom.P {
			return true
		}
		if !hasAncestor(n, art, atom.Aside, atom.Header, atom.Footer, atom.Section) {
			if t := cleanText(nodeText(n)); t != "" {
				out = append(out, t)
			}
		}
		return false // <p> cannot contain <p>; nothing below adds paragraphs
	})
	return out
}

// firstArticle is the first <article> element under <body> ("body article").
func firstArticle(doc *nethtml.Node) *nethtml.Node {
	var body *nethtml.Node
	eachElement(doc, func(n *nethtml.Node) bool {
		if body != nil {
			return false
		}
		if n.DataAtom == atom.Body {
			body = n
			return false
		}
		return true
	})
	if body == nil {
		return nil
	}
	var art *nethtml.Node
	eachElement(body, func(n *nethtml.Node) bool {
		if art != nil {
			return false
		}
		if n.DataAtom == atom.Article && n != body {
			art = n
			return false
		}
		return true
	})
	return art
}

// eachElement visits the elements under root (root included) in document order, without
// recursion; visit returns false to skip an element's descendants.
func eachElement(root *nethtml.Node, visit func(*nethtml.Node) bool) {
	stack := []*nethtml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == nethtml.ElementNode || n.Type == nethtml.DocumentNode {
			if n.Type == nethtml.ElementNode && !visit(n) {
				continue
			}
			for c := n.LastChild; c != nil; c = c.PrevSibling {
				stack = append(stack, c)
			}
		}
	}
}

// hidden reports whether an element is not shown to readers: the hidden attribute,
// aria-hidden, an inline display:none or visibility:hidden, or a dialog.
func hidden(n *nethtml.Node) bool {
	if _, ok := attrOK(n, "hidden"); ok {
		return true
	}
	if strings.EqualFold(attr(n, "aria-hidden"), "true") || strings.EqualFold(attr(n, "role"), "dialog") || n.DataAtom == atom.Dialog {
		return true
	}
	if st := attr(n, "style"); st != "" {
		st = strings.ReplaceAll(strings.ToLower(st), " ", "")
		return strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden")
	}
	return false
}

// detachHidden removes the hidden elements under doc from the tree and returns the
// function that puts them back where they were.
func detachHidden(doc *nethtml.Node) (restore func()) { return detach(doc, hidden) }

// detach removes the elements under doc that match (with everything under them; <html>
// and <body> are never removed) and returns the function that puts them back where they
// were.
func detach(doc *nethtml.Node, match func(*nethtml.Node) bool) (restore func()) {
	type spot struct{ n, parent, next *nethtml.Node }
	var removed []spot
	eachElement(doc, func(n *nethtml.Node) bool {
		if n.Parent != nil && n.DataAtom != atom.Html && n.DataAtom != atom.Body && match(n) {
			removed = append(removed, spot{n, n.Parent, n.NextSibling})
			return false
		}
		return true
	})
	for _, r := range removed {
		r.parent.RemoveChild(r.n)
	}
	return func() {
		for i := len(removed) - 1; i >= 0; i-- {
			r := removed[i]
			r.parent.InsertBefore(r.n, r.next)
		}
	}
}

// boilerplate reports whether an element inside an article holds no article text:
// navigation, asides, headers and footers (title, byline, share and "read more" boxes),
// figures (captions), forms, and hidden elements.
func boilerplate(n *nethtml.Node) bool {
	switch n.DataAtom {
	case atom.Aside, atom.Nav, atom.Header, atom.Footer, atom.Figure, atom.Form, atom.Button, atom.Select,
		atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Svg, atom.Object, atom.Embed,
		atom.Input, atom.Textarea, atom.Label, atom.Dialog, atom.Menu:
		return true
	}
	if hidden(n) {
		return true
	}
	switch strings.ToLower(attr(n, "role")) {
	case "complementary", "navigation", "banner", "contentinfo", "menu", "toolbar", "search":
		return true
	}
	return false
}

// articleNoise is what the fast path leaves out of an <article>: boilerplate elements,
// containers whose class or id names a non-content role (share bars, related stories,
// newsletter boxes, captions, charts), and containers made mostly of links.
func articleNoise(n *nethtml.Node) bool {
	if boilerplate(n) {
		return true
	}
	if hasToken(attr(n, "itemprop"), "articleBody") {
		return false
	}
	if noiseName(attr(n, "class") + " " + attr(n, "id")) {
		return true
	}
	switch n.DataAtom {
	case atom.Ul, atom.Ol, atom.Div, atom.Section, atom.Table, atom.Dl, atom.P, atom.Li:
		words, linkWords := linkDensity(n)
		return words > 0 && float64(linkWords) > 0.5*float64(words)
	}
	return false
}

// noiseWords are class and id words of elements that hold no article text; contentWords
// rescue an element whose name also says it holds the text ("comment-body" is kept,
// "related-links" is not).
var (
	noiseWords = wordSet("share", "sharing", "social", "related", "recommended", "recommendations",
		"newsletter", "subscribe", "subscription", "promo", "advert", "advertisement", "ad", "ads",
		"sponsor", "sponsored", "comment", "comments", "caption", "credit", "credits", "byline",
		"author", "tags", "breadcrumb", "breadcrumbs", "toolbar", "print", "readmore", "outbrain",
		"taboola", "recirc", "recirculation", "signup", "popup", "modal", "cookie", "pagination",
		"pager", "widget", "nav", "menu", "sidebar", "ai2html", "chart", "graphic", "disclaimer",
		"meta", "timestamp", "dateline", "footer", "header", "hidden", "visually", "sr")
	contentWords = wordSet("content", "body", "text", "main")
)

func noiseName(v string) bool {
	if v == "" {
		return false
	}
	noise := false
	for _, w := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if contentWords[w] {
			return false
		}
		if noiseWords[w] {
			noise = true
		}
	}
	return noise
}

// pruneBlocks drops what the fast path's markup tests cannot see: the title repeated as a
// heading, and short fragments without a sentence in them ("Tweet", "Print", "$915",
// "Read more ›") that sit between paragraphs in widgets and charts.
func pruneBlocks(bs []Block, title string) []Block {
	bs = dropTitle(bs, title)
	out := bs[:0]
	for _, b := range bs {
		if b.Kind == "p" && countWords(b.Text) <= 3 && !endsSentence(b.Text) {
			continue
		}
		out = append(out, b)
	}
	return out
}

// dropTitle removes a heading that repeats the article's title: the title is metadata.
func dropTitle(bs []Block, title string) []Block {
	if title == "" {
		return bs
	}
	nt := strings.ToLower(collapseSpace(title))
	out := bs[:0]
	for _, b := range bs {
		if b.Kind != "p" && b.Kind != "li" && strings.ToLower(b.Text) == nt {
			continue
		}
		out = append(out, b)
	}
	return out
}

func endsSentence(s string) bool {
	s = strings.TrimRight(s, " \"'”’)»")
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") || strings.HasSuffix(s, "…")
}

// proseStats measures the paragraph text under root: words in <p> elements not inside
// boilerplate, and how many of those words are link text.
type proseStats struct {
	words, linkWords, paragraphs int
}

func measureProse(root *nethtml.Node) proseStats {
	var st proseStats
	eachElement(root, func(n *nethtml.Node) bool {
		if n != root && boilerplate(n) {
			return false
		}
		if n.DataAtom != atom.P {
			return true
		}
		w := countWords(nodeText(n))
		if w == 0 {
			return false
		}
		st.words += w
		st.paragraphs++
		eachElement(n, func(c *nethtml.Node) bool {
			if c.DataAtom == atom.A {
				st.linkWords += countWords(nodeText(c))
				return false
			}
			return true
		})
		return false
	})
	return st
}

// Fast-path thresholds: the <article> must hold enough prose, most of the page's prose,
// and little of it may be link text; otherwise the page goes to the full extractor.
const (
	fastMinWords       = 150
	fastMinShare       = 0.8
	fastMaxLinkDensity = 0.15
	fastTeaserWords    = 40 // an <article> with this many words counts as one story
)

// fastPathArticle returns the <article> that clearly holds the page's text and the words
// of prose in it, or nil. It is the thesis's idea made safe: the thesis took the first
// <article> whatever it held (a teaser, a related-story card) and dropped pages without one.
func fastPathArticle(s *signals) (*nethtml.Node, int) {
	if len(s.articles) == 0 || s.body == nil {
		return nil, 0
	}
	var best *nethtml.Node
	var bestStats proseStats
	stories := 0
	for _, art := range s.articles {
		st := measureProse(art)
		if st.words >= fastTeaserWords && !nestedInArticle(art) {
			stories++
		}
		if st.words > bestStats.words {
			best, bestStats = art, st
		}
	}
	if best == nil || stories > 1 || bestStats.words < fastMinWords {
		return nil, 0
	}
	if float64(bestStats.linkWords) > fastMaxLinkDensity*float64(bestStats.words) {
		return nil, 0
	}
	page := measureProse(s.body)
	if float64(bestStats.words) < fastMinShare*float64(page.words) {
		return nil, 0
	}
	return best, bestStats.words
}

func nestedInArticle(n *nethtml.Node) bool { return hasAncestor(n, nil, atom.Article) }

// unitAtoms are the elements whose text forms one body block.
var unitKinds = map[atom.Atom]string{
	atom.P: "p", atom.H1: "h1", atom.H2: "h2", atom.H3: "h3", atom.H4: "h4", atom.H5: "h5", atom.H6: "h6",
	atom.Li: "li", atom.Dt: "p", atom.Dd: "p", atom.Blockquote: "quote", atom.Pre: "pre", atom.Tr: "row",
}

// blocks turns the subtree under root into body blocks: each paragraph, heading, list
// item, quotation, preformatted block and table row becomes one block; text lying
// directly in containers becomes a paragraph. skip, when not nil, drops elements and
// everything under them.
func blocks(root *nethtml.Node, skip func(*nethtml.Node) bool) []Block {
	b := &blockBuilder{skip: skip}
	b.walk(root, 0, false)
	b.flush("p")
	return b.out
}

type blockBuilder struct {
	skip  func(*nethtml.Node) bool
	out   []Block
	loose strings.Builder // text outside any unit, waiting to become a paragraph

	// With links set, linked[i] counts the words of out[i] that are link text.
	links      bool
	inLink     int
	looseLinks strings.Builder // the link text of loose
	linked     []int
}

func (b *blockBuilder) flush(kind string) {
	if t := collapseSpace(b.loose.String()); t != "" {
		b.out = append(b.out, Block{Kind: kind, Text: t})
		if b.links {
			b.linked = append(b.linked, countWords(b.looseLinks.String()))
		}
	}
	b.loose.Reset()
	b.looseLinks.Reset()
}

// walk adds the blocks under n; inUnit says n is inside a unit element, whose whole text
// is one block.
func (b *blockBuilder) walk(n *nethtml.Node, depth int, inUnit bool) {
	if depth > 256 || len(b.out) > 20000 {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case nethtml.TextNode:
			b.loose.WriteString(c.Data)
			if b.inLink > 0 {
				b.looseLinks.WriteString(c.Data)
				b.looseLinks.WriteByte(' ')
			}
			continue
		case nethtml.ElementNode:
		default:
			continue
		}
		if b.skip != nil && b.skip(c) {
			continue
		}
		tag := tagAtom(c)
		switch tag {
		case atom.Script, atom.Style, atom.Template, atom.Noscript:
			continue
		case atom.A:
			if b.links {
				b.inLink++
				b.walk(c, depth+1, inUnit)
				b.inLink--
				continue
			}
		case atom.Br:
			b.loose.WriteByte('\n')
			continue
		case atom.Td, atom.Th:
			b.loose.WriteByte(' ')
			b.walk(c, depth+1, inUnit)
			b.loose.WriteByte(' ')
			continue
		}
		if inUnit {
			if isBlock(tag) {
				b.loose.WriteByte(' ')
			}
			b.walk(c, depth+1, true)
			continue
		}
		if kind, unit := unitKinds[tag]; unit && !hasUnitChild(c) {
			b.flush("p")
			b.walk(c, depth+1, true)
			b.flush(kind)
			continue
		}
		if isBlock(tag) || isTrafilaturaBlock(c.Data) {
			b.flush("p")
			b.walk(c, depth+1, false)
			b.flush("p")
			continue
		}
		b.walk(c, depth+1, false) // inline: its text joins the current run
	}
}

// tagAtom is n's tag as an atom. Trees built by code rather than the parser (go-trafilatura's
// output) may leave DataAtom unset.
func tagAtom(n *nethtml.Node) atom.Atom {
	if n.DataAtom != 0 || n.Type != nethtml.ElementNode {
		return n.DataAtom
	}
	return atom.Lookup([]byte(n.Data))
}

// isTrafilaturaBlock names the non-HTML block tags go-trafilatura may leave in its output.
func isTrafilaturaBlock(tag string) bool {
	switch tag {
	case "head", "list", "item", "quote", "code", "row", "cell", "graphic", "lb", "doc":
		return true
	}
	return false
}

// hasUnitChild reports whether a unit element holds other units (a <li> or <blockquote>
// made of paragraphs), in which case the inner units are the blocks.
func hasUnitChild(n *nethtml.Node) bool {
	found := false
	eachElement(n, func(c *nethtml.Node) bool {
		if found || c == n {
			return !found
		}
		if _, unit := unitKinds[tagAtom(c)]; unit && tagAtom(c) != atom.Tr {
			found = true
			return false
		}
		return true
	})
	return found
}

// body fills Article.Body: the fast path when enabled, else the extractors' vote
// (consensusBody) up to the comments heading the page may mark (cutAtComments) and
// without the list of links it may end with (trimLinkList), read again without the
// sidebar and the footer when it came from them (bodySides), else JSON-LD articleBody.
func (e *Extractor) body(a *Article, doc *nethtml.Node, s *signals, main ldObject, base *url.URL) {
	if e.opts.FastPath {
		if art, prose := fastPathArticle(s); art != nil {
			// Pruning that removed most of the prose misjudged the markup: let the full
			// extractor decide instead.
			if bs := pruneBlocks(blocks(art, articleNoise), a.Title); bodyWords(bs) >= prose/2 {
				a.Body = bs
				a.source("body", "article")
				return
			}
		}
	}
	// Hidden elements (video-player menus, closed galleries, modal dialogs) would be
	// taken for text by every extractor.
	restore := detachHidden(doc)
	bs, from := e.trimmedBody(doc, base)
	if sides := bodySides(doc, bs, a.Title); sides != nil {
		// The body is the sidebar's or the footer's text (see bodySides): read the page
		// again without them.
		restoreSides := detach(doc, func(n *nethtml.Node) bool { return sides[n] })
		if again, fromAgain := e.trimmedBody(doc, base); len(again) > 0 {
			bs, from = again, fromAgain
		}
		restoreSides()
	}
	restore()
	if len(bs) > 0 {
		// The headline stays when the extractor counts it as content. Dropping it
		// (Readability's convention, which the Readability test set follows) gained 0.001
		// F1 there and lost 0.002 on Dragnet, whose gold keeps headlines (issue 13).
		a.Body = bs
		a.source("body", from)
	}
	if main != nil && bodyWords(a.Body) < e.opts.MinArticleWords {
		if ab := s.ld.text(main["articleBody"]); countWords(ab) > bodyWords(a.Body) {
			a.Body = textBlocks(ab)
			a.source("body", "jsonld")
		}
	}
}

// trimmedBody is the extractors' vote (consensusBody) up to the comments heading the page
// may mark (cutAtComments) and without the list of links it may end with
// (trimLinkList).
func (e *Extractor) trimmedBody(doc *nethtml.Node, base *url.URL) ([]Block, string) {
	bs, from := e.consensusBody(doc, base)
	if len(bs) > 0 {
		bs = trimLinkList(cutAtComments(bs, commentsHeading(doc)), linkShares(doc))
	}
	return bs, from
}

func bodyWords(bs []Block) int {
	n := 0
	for _, b := range bs {
		n += countWords(b.Text)
	}
	return n
}

// textBlocks splits plain text (JSON-LD articleBody) into paragraphs at blank lines or,
// failing that, at line breaks.
func textBlocks(text string) []Block {
	var out []Block
	sep := "\n\n"
	if !strings.Contains(text, sep) {
		sep = "\n"
	}
	for _, p := range strings.Split(text, sep) {
		if t := collapseSpace(p); t != "" {
			out = append(out, Block{Kind: "p", Text: t})
		}
	}
	return out
}
