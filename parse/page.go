package parse

import (
	"slices"
	"strings"
)

// Page is what the rest of sonda knows about a fetched HTML document.
//
// All visible text lives in one string (see Text); Blocks and the anchor
// spans of Links are windows into it, so the text around any link can be
// recovered by slicing rather than copying.
type Page struct {
	URL     string // the document URL given to Parse
	BaseURL string // what relative links resolve against: the first <base href> (resolved), else URL

	Title       string   // first <title> outside SVG, whitespace collapsed
	Lang        string   // primary language subtag, lowercase ("pt" for lang="pt-BR"); "" if absent or malformed
	Description string   // <meta name=description>
	Keywords    []string // <meta name=keywords>, split on commas

	// Link relations found in the head (or anywhere, as browsers accept).
	// They are not in Links because they have no place in the text stream;
	// the crawler decides which of them to enqueue.
	Canonical    string      // <link rel=canonical>, resolved
	Next, Prev   string      // <link rel=next> and <link rel=prev|previous>, resolved
	RefreshURL   string      // target of <meta http-equiv=refresh>, resolved ("" if none or no URL)
	RefreshDelay int         // its delay in whole seconds
	Hreflang     []Alternate // <link rel=alternate hreflang=..>
	Feeds        []Alternate // <link rel=alternate type=RSS/Atom/JSON feed>

	// Robots holds every meta whose name addresses crawlers: "robots", any
	// name containing "bot" (googlebot, bingbot, ...) and Options.RobotsNames.
	// Interpreting them (noindex, nofollow, ...) is package robots' job.
	Robots []Meta
	// Meta holds the other <meta name|property=.. content=..> pairs (og:*,
	// article:*, twitter:*, author, ...), keys lowercased, first value wins.
	// nil when there are none.
	Meta map[string]string

	Blocks    []Block    // visible text, in document order, one entry per block
	Links     []Link     // followable http(s) links in document order, duplicates kept
	Resources []Resource // embedded or downloadable things: images, scripts, styles, media, a[download]

	BadLinks      int  // link targets that did not resolve to a URL, or longer than 16 KiB
	NonHTTPLinks  int  // javascript:, mailto:, tel:, data:, ftp: ... links: counted, not kept
	DroppedLinks  int  // links and resources beyond Options.MaxLinks
	TextTruncated bool // visible text exceeded Options.MaxTextBytes and was cut

	text string
}

// Meta is one <meta name=.. content=..> pair. Name is lowercased.
type Meta struct {
	Name    string
	Content string
}

// Alternate is a <link rel=alternate>: another language version or a feed.
type Alternate struct {
	URL      string // resolved
	Hreflang string // as written, e.g. "pt-BR", "x-default"
	Type     string // lowercased media type, e.g. "application/rss+xml"
	Title    string
}

// Block is a run of visible text between two block boundaries.
type Block struct {
	Text  string // whitespace collapsed, never empty
	Tag   string // innermost block element around it: "p", "h2", "li", "td", "div", "body", ...
	Start int    // byte offset of Text within Page.Text()
	// Chrome says the block is the site's rather than the page's: inside <nav> or <aside>,
	// or inside a <header> or <footer> that belongs to the page as a whole (not to an
	// <article>, <section> or <main>: the ARIA banner and contentinfo landmarks).
	Chrome bool
}

// Link is one followable hyperlink.
type Link struct {
	URL    string   // absolute, as returned by the resolver
	Raw    string   // the attribute value as written (entities decoded)
	Anchor string   // visible text inside the link, with img alt inside it; the title attribute if that is empty
	Rel    []string // lowercased rel tokens: nofollow, ugc, sponsored, noopener, ...
	Tag    string   // a, area, iframe or frame

	// TextStart and TextEnd delimit the link's visible text in Page.Text()
	// (TextStart == TextEnd for links without text, such as images and
	// frames). Spans are ordered: a link starts at or after the previous
	// link's start. They are what LinkContext and AnchorWindow slice with.
	TextStart, TextEnd int
}

// HasRel reports whether the link carries the given rel token (lowercase).
func (l *Link) HasRel(token string) bool {
	for _, r := range l.Rel {
		if r == token {
			return true
		}
	}
	return false
}

// Resource is a URL the page embeds or offers for download.
type Resource struct {
	URL  string // absolute
	Tag  string // img, script, link, source, video, audio, track, embed, object, input, a
	Attr string // attribute the URL came from: src, srcset, data-src, href, data, poster
}

// Text returns the page's visible text: the blocks joined with "\n".
// Within a block, words are separated by single spaces.
func (p *Page) Text() string { return p.text }

// MainText returns the visible text of the blocks that are not chrome (Block.Chrome),
// joined with "\n": what the page says without its site's menus, banner and footer, which
// change with the site rather than the page. It is Text() when no block is chrome, or
// when every block is (a page that is all chrome is its chrome).
func (p *Page) MainText() string {
	if !slices.ContainsFunc(p.Blocks, func(b Block) bool { return b.Chrome }) {
		return p.text // the common case on the crawl's path: no copy
	}
	size := 0
	for _, bl := range p.Blocks {
		if !bl.Chrome {
			size += len(bl.Text) + 1
		}
	}
	var b strings.Builder
	b.Grow(size) // one allocation: grown by doubling, it was 5 % of a crawl's allocated bytes
	for _, bl := range p.Blocks {
		if bl.Chrome {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(bl.Text)
	}
	if b.Len() == 0 {
		return p.text
	}
	return b.String()
}

// linkEnd and linkStart treat the page start as the end of a virtual link
// -1 and the page end as the start of a virtual link len(Links), so that the
// text before the first link and after the last one are ordinary gaps.
func (p *Page) linkEnd(j int) int {
	if j < 0 {
		return 0
	}
	return p.Links[j].TextEnd
}

func (p *Page) linkStart(j int) int {
	if j >= len(p.Links) {
		return len(p.text)
	}
	return p.Links[j].TextStart
}

// gap returns the trimmed text between the end of link j and the start of
// link j+1 (j may be -1 or len(Links)-1, the virtual boundaries).
func (p *Page) gap(j int) string {
	from, to := p.linkEnd(j), p.linkStart(j+1)
	if from >= to {
		return "" // overlapping spans, e.g. an iframe inside an anchor
	}
	return strings.TrimSpace(p.text[from:to])
}

// LinkContext returns the text block at link distance d on each side of
// link i, the "text between the link and its neighbours" features of focused
// crawling (seed 001, inputs 2-6 of the link MLP):
//
//	before = text between link i-d and link i-d+1
//	after  = text between link i+d-1 and link i+d
//
// so d = 1 gives the text right next to the link and each larger d the next
// block outwards; blocks for different d never overlap (disjoint windows).
// The start and end of the page act as links -1 and len(Links): the text
// before the first link is at distance i+1 from link i. Beyond that, or for
// an out-of-range i or d < 1, the side is "". The results are substrings of
// Text(), trimmed; they may contain "\n" where they cross block boundaries.
func (p *Page) LinkContext(i, d int) (before, after string) {
	n := len(p.Links)
	if i < 0 || i >= n || d < 1 {
		return "", ""
	}
	if j := i - d; j >= -1 {
		before = p.gap(j)
	}
	if j := i + d; j <= n {
		after = p.gap(j - 1)
	}
	return before, after
}

// LinkContextSpan is the cumulative form of LinkContext: all text from the
// end of link i-d to the start of link i, and from the end of link i to the
// start of link i+d, including the anchors of the links in between. When
// fewer than d links exist on a side, the span runs to the page start or end.
// Out-of-range i or d < 1 gives "", "".
func (p *Page) LinkContextSpan(i, d int) (before, after string) {
	n := len(p.Links)
	if i < 0 || i >= n || d < 1 {
		return "", ""
	}
	l := &p.Links[i]
	if from := p.linkEnd(max(i-d, -1)); from < l.TextStart {
		before = strings.TrimSpace(p.text[from:l.TextStart])
	}
	if to := p.linkStart(min(i+d, n)); l.TextEnd < to {
		after = strings.TrimSpace(p.text[l.TextEnd:to])
	}
	return before, after
}

// AnchorWindow returns the extended anchor text of link i (GeoDiscover,
// seed 000 §3.8.3): up to words words before the link, the link's own text,
// and up to words words after it, as one substring of Text(). Words are
// runs of non-space characters; the window crosses block boundaries (they
// appear as "\n"). words <= 0 gives just the link's visible text.
// Out-of-range i gives "".
func (p *Page) AnchorWindow(i, words int) string {
	if i < 0 || i >= len(p.Links) {
		return ""
	}
	l := &p.Links[i]
	from, to := l.TextStart, l.TextEnd
	if words > 0 {
		from = wordsBefore(p.text, from, words)
		to = wordsAfter(p.text, to, words)
	}
	if from >= to {
		return ""
	}
	return strings.TrimSpace(p.text[from:to])
}

func isTextSpace(c byte) bool { return c == ' ' || c == '\n' }

// wordsBefore returns the offset where the n-th word before pos starts.
func wordsBefore(s string, pos, n int) int {
	for ; n > 0 && pos > 0; n-- {
		for pos > 0 && isTextSpace(s[pos-1]) {
			pos--
		}
		for pos > 0 && !isTextSpace(s[pos-1]) {
			pos--
		}
	}
	return pos
}

// wordsAfter returns the offset where the n-th word after pos ends.
func wordsAfter(s string, pos, n int) int {
	for ; n > 0 && pos < len(s); n-- {
		for pos < len(s) && isTextSpace(s[pos]) {
			pos++
		}
		for pos < len(s) && !isTextSpace(s[pos]) {
			pos++
		}
	}
	return pos
}
