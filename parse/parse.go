// Package parse turns an HTML document (already transcoded to UTF-8) into a
// Page: title, language, description, keywords, robots and other metas,
// canonical and alternate links, the visible text split into blocks, every
// followable link with its anchor text and position in that text, and the
// resources the page embeds.
//
// It owns what focused crawling needs from a page's structure: the text
// between a link and its neighbours up to any distance (Page.LinkContext,
// seed 001's link-MLP inputs) and the words around a link
// (Page.AnchorWindow, seed 000's extended anchor text). Both are slices of
// one text string, so asking for them costs no copies.
//
// Parse runs golang.org/x/net/html's tokenizer rather than its tree builder.
// The tokenizer implements the HTML5 tokenization rules exactly (attribute
// quoting, character references, raw-text elements, comments), which is
// where malformed markup is decided; building the tree on top would cost a
// node per element and several times the time and allocations, and the only
// tree-construction rules that change what a crawler sees are reproduced
// here directly: an <a> ends at the next <a> or at the end of its table
// cell, <p> closes before a block, foreign (SVG) content ends at HTML
// breakout tags, and <template> content is inert. Nothing recurses, so
// deeply nested input cannot exhaust the stack.
package parse

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// LinkResolver makes a link reference absolute. The crawler passes its URL
// normalizer so links come out in canonical form; an error drops the link
// (counted in Page.BadLinks).
type LinkResolver interface {
	Resolve(base, ref string) (string, error)
}

// Defaults for the zero Options.
const (
	DefaultMaxLinks     = 10000
	DefaultMaxTextBytes = 1 << 20
)

// maxAnchorBytes bounds Link.Anchor: an <a> never closed takes in the rest
// of the page (as in a browser), which is not useful anchor text.
const maxAnchorBytes = 1024

// maxRefBytes bounds link references: longer ones are counted as bad
// without resolving them (resolving megabytes of URL takes the better part
// of a second, and no crawl scope accepts such URLs).
const maxRefBytes = 16 << 10

// maxTitleBytes bounds Page.Title for the same reason.
const maxTitleBytes = 1024

// maxBlockStack bounds the stack of open block elements used to label
// blocks, so pathological nesting costs bounded memory.
const maxBlockStack = 256

// Options tune Parse. The zero value is ready to use.
type Options struct {
	// Resolver makes link references absolute. nil means plain WHATWG URL
	// resolution (github.com/nlnwa/whatwg-url) against Page.BaseURL,
	// fragments kept. It must be deterministic: Parse asks once per
	// distinct reference.
	Resolver LinkResolver
	// MaxLinks bounds each of Links, Resources, Hreflang and Feeds; what is
	// beyond is counted in Page.DroppedLinks. Links count as they are
	// found, before references that fail to resolve are dropped. 0 means
	// DefaultMaxLinks, negative means no limit.
	MaxLinks int
	// MaxTextBytes bounds Page.Text(); the rest of the page is still read
	// for links and metadata and Page.TextTruncated is set. 0 means
	// DefaultMaxTextBytes, negative means no limit.
	MaxTextBytes int
	// RobotsNames are extra <meta name> values (compared case-insensitively)
	// that go to Page.Robots, typically the crawler's own product token.
	RobotsNames []string
}

// Parse reads body, an HTML document in UTF-8, fetched from pageURL.
// Malformed markup is read the way browsers read it and invalid UTF-8 is
// replaced, so the only error is a pageURL that cannot be parsed.
func Parse(body []byte, pageURL string, opts Options) (*Page, error) {
	doc, err := whatwg.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("parse: page URL %q: %w", pageURL, err)
	}
	p := parser{
		page:     &Page{URL: pageURL},
		opts:     opts,
		maxLinks: limit(opts.MaxLinks, DefaultMaxLinks),
	}
	p.tb.max = limit(opts.MaxTextBytes, DefaultMaxTextBytes)
	p.tb.nextTag = atom.Body
	p.presize(body)
	p.tokenize(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	p.finish(doc)
	return p.page, nil
}

// presize allocates the text buffer and the link list once, at sizes
// typical for HTML (visible text is a fraction of the markup; "<a" counts
// every anchor plus a few other tags), instead of growing them by doubling.
func (p *parser) presize(body []byte) {
	text := len(body)/3 + 64
	if p.tb.max >= 0 {
		text = min(text, p.tb.max)
	}
	p.scratch = scratchPool.Get().(*textScratch)
	if cap(p.scratch.buf) < text {
		p.scratch.buf = make([]byte, 0, text)
	}
	p.tb.buf, p.tb.spans = p.scratch.buf[:0], p.scratch.spans[:0]
	links := bytes.Count(body, []byte("<a")) + bytes.Count(body, []byte("<A"))
	if p.maxLinks >= 0 {
		links = min(links, p.maxLinks)
	}
	p.page.Links = make([]Link, 0, links)
	p.extras = make([]linkExtra, 0, links)
}

// textScratch is a page's text buffer and its block spans, which Parse copies into the
// Page's text and Blocks when it finishes: they are recycled from page to page, where
// growing them from a guess by doubling made 40 % of what a crawl allocated.
type textScratch struct {
	buf   []byte
	spans []blockSpan
}

var scratchPool = sync.Pool{New: func() any { return new(textScratch) }}

// maxScratchText is the largest text buffer kept for the next page: one for a rare page
// of a megabyte of text is let go.
const maxScratchText = 256 << 10

// release gives the text buffer and spans back for the next page; the parser uses them
// no more.
func (p *parser) release() {
	s := p.scratch
	s.buf, s.spans = p.tb.buf[:0], p.tb.spans[:0]
	p.tb.buf, p.tb.spans, p.scratch = nil, nil, nil
	if cap(s.buf) <= maxScratchText && cap(s.spans) <= maxScratchText/16 {
		scratchPool.Put(s)
	}
}

func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

// parser is the state of one Parse call.
type parser struct {
	page     *Page
	opts     Options
	maxLinks int
	tb       textBuilder
	scratch  *textScratch // where tb's buffers came from
	a        attrs

	raw           atom.Atom   // raw-text element whose content is the next text token
	blocks        []atom.Atom // open block elements, innermost last
	templateDepth int         // > 0 inside inert <template> content
	svgDepth      int         // > 0 inside SVG content
	tableDepth    int         // open <table> elements

	anchorOpen bool
	anchor     openAnchor
	extras     []linkExtra // parallel to page.Links until finish

	haveTitle, haveHTML, haveBase, haveDesc, haveKeywords, haveRefresh bool
	baseRaw, htmlLang, metaLang                                        string
	canonicalRaw, nextRaw, prevRaw, refreshRaw                         string
}

// openAnchor is the <a> whose text is being read.
type openAnchor struct {
	link       int // index in page.Links
	pos        int // text offset when it opened
	tableDepth int // table nesting it opened at
}

// linkExtra is what Anchor is built from besides the text span.
type linkExtra struct {
	alts     []altText // img alt texts inside the anchor
	fallback string    // title (or area alt) used when the anchor has no text
}

type altText struct {
	pos  int
	text string
}

func (p *parser) tokenize(body []byte) {
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		raw := p.raw
		p.raw = 0
		switch tt {
		case html.ErrorToken:
			// The reader is in memory, so this is io.EOF: the tokenizer
			// has no other failure for a complete input.
			p.closeAnchor()
			p.tb.finish()
			return
		case html.TextToken:
			if raw != 0 {
				p.rawText(raw, z)
			} else if p.templateDepth == 0 && p.svgDepth == 0 {
				p.tb.write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			a := tagAtom(z.Raw())
			f := elements[a]
			if f&wantAttrs != 0 {
				p.a.read(z)
			} else {
				p.a.has = [numAttrKeys]bool{}
			}
			p.startTag(a, f, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			a := tagAtom(z.Raw())
			p.endTag(a, elements[a])
		}
	}
}

// tagAtom returns the atom for the name of the tag token whose raw bytes
// are raw ("<div ...>" or "</div>"), reading the name the way the
// tokenizer delimits it. Tokenizer.TagName would do the same but copies the
// name on every call, which was a third of all allocations.
func tagAtom(raw []byte) atom.Atom {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	var name [32]byte // longer than any atom: no match
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if isHTMLSpace(c) || c == '/' || c == '>' {
			break
		}
		if n == len(name) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		name[n] = c
		n++
	}
	return atom.Lookup(name[:n])
}

// rawText handles the content of a raw-text element.
func (p *parser) rawText(raw atom.Atom, z *html.Tokenizer) {
	if p.templateDepth > 0 || p.svgDepth > 0 {
		return
	}
	switch raw {
	case atom.Title:
		if !p.haveTitle {
			p.haveTitle = true
			var tb textBuilder
			tb.max = maxTitleBytes
			tb.write(z.Text())
			p.page.Title = string(tb.buf)
		}
	case atom.Xmp, atom.Plaintext:
		p.tb.write(z.Text())
	}
}

func (p *parser) startTag(a atom.Atom, f elemFlags, selfClosing bool) {
	if p.templateDepth > 0 {
		if a == atom.Template {
			p.templateDepth++
		}
		return
	}
	if p.svgDepth > 0 {
		switch {
		case a == atom.Svg:
			if !selfClosing {
				p.svgDepth++
			}
			return
		case a == atom.A:
			p.svgLink()
			return
		case f&breaksForeign == 0:
			return
		}
		p.svgDepth = 0 // an HTML element ends the SVG, as in a browser
	}
	if isRawText(a) {
		p.raw = a // the tokenizer reads its content raw, even if self-closed
	}
	switch {
	case f&block != 0:
		p.openBlock(a, f)
	case f&lineBreak != 0:
		if f&closesP != 0 {
			p.closeOpenP()
		}
		p.boundary(p.currentBlock())
	case f&wordBreak != 0:
		p.tb.wordBreak()
	}

	switch a {
	case atom.A:
		p.startAnchor()
	case atom.Area:
		if href, ok := p.a.get(attrHref); ok {
			fallback := p.a.str(attrAlt)
			if fallback == "" {
				fallback = p.a.str(attrTitle)
			}
			p.addLink(href, "area", p.a.str(attrRel), fallback)
		}
	case atom.Iframe, atom.Frame:
		if src, ok := p.a.get(attrSrc); ok {
			p.addLink(src, a.String(), "", p.a.str(attrTitle))
		}
	case atom.Img:
		p.resource(atom.Img, attrSrc, attrSrcset, attrDataSrc)
		if alt := p.a.str(attrAlt); alt != "" && p.anchorOpen {
			x := &p.extras[p.anchor.link]
			x.alts = append(x.alts, altText{len(p.tb.buf), alt})
		}
	case atom.Input:
		if strings.EqualFold(strings.TrimSpace(p.a.str(attrType)), "image") {
			p.resource(atom.Input, attrSrc)
		}
	case atom.Script, atom.Embed, atom.Track:
		p.resource(a, attrSrc)
	case atom.Source:
		p.resource(a, attrSrc, attrSrcset)
	case atom.Video:
		p.resource(a, attrSrc, attrPoster)
	case atom.Audio:
		p.resource(a, attrSrc)
	case atom.Object:
		p.resource(a, attrData)
	case atom.Link:
		p.linkElement()
	case atom.Meta:
		p.meta()
	case atom.Base:
		if href, ok := p.a.get(attrHref); ok && !p.haveBase {
			p.haveBase, p.baseRaw = true, href
		}
	case atom.Html:
		if !p.haveHTML {
			p.haveHTML = true
			p.htmlLang = p.a.str(attrLang)
			if p.htmlLang == "" {
				p.htmlLang = p.a.str(attrXMLLang)
			}
		}
	case atom.Template:
		p.templateDepth = 1
	case atom.Svg:
		if !selfClosing {
			p.svgDepth = 1
		}
	case atom.Table:
		p.tableDepth++
	}
	if f&tablePart != 0 {
		p.closeAnchorInCell()
	}
}

func (p *parser) endTag(a atom.Atom, f elemFlags) {
	if p.templateDepth > 0 {
		if a == atom.Template {
			p.templateDepth--
		}
		return
	}
	if p.svgDepth > 0 {
		if a == atom.Svg {
			p.svgDepth--
		}
		return
	}
	switch {
	case a == atom.A:
		p.closeAnchor()
	case a == atom.Br:
		p.boundary(p.currentBlock()) // browsers read </br> as <br>
	case a == atom.Table:
		p.closeAnchorInCell()
		if p.tableDepth > 0 {
			p.tableDepth--
		}
	case f&tablePart != 0:
		p.closeAnchorInCell()
	}
	if f&block != 0 {
		p.closeBlock(a)
	}
}

// --- blocks ---

func (p *parser) currentBlock() atom.Atom {
	if n := len(p.blocks); n > 0 {
		return p.blocks[n-1]
	}
	return atom.Body
}

// boundary ends the current text block; the next is labelled tag, and chrome when the
// open blocks make it so (inChrome).
func (p *parser) boundary(tag atom.Atom) {
	p.tb.nextChrome = p.inChrome()
	p.tb.boundary(tag)
}

// inChrome reports whether text here belongs to the site's chrome (Block.Chrome): an open
// <nav> or <aside>, or a <header> or <footer> with no <article>, <section> or <main>
// around it (HTML-AAM maps only those to the banner and contentinfo landmarks).
func (p *parser) inChrome() bool {
	sectioned := false
	for _, b := range p.blocks {
		switch b {
		case atom.Nav, atom.Aside:
			return true
		case atom.Article, atom.Section, atom.Main:
			sectioned = true
		case atom.Header, atom.Footer:
			if !sectioned {
				return true
			}
		}
	}
	return false
}

// closeOpenP closes a <p> that is the innermost open block.
func (p *parser) closeOpenP() {
	if n := len(p.blocks); n > 0 && p.blocks[n-1] == atom.P {
		p.blocks = p.blocks[:n-1]
	}
}

// popTo pops the stack through the innermost element in targets, unless an
// element in stops (or the search bound) comes first.
func (p *parser) popTo(targets, stops []atom.Atom) {
	for i := len(p.blocks) - 1; i >= 0 && i >= len(p.blocks)-16; i-- {
		b := p.blocks[i]
		for _, t := range targets {
			if b == t {
				p.blocks = p.blocks[:i]
				return
			}
		}
		for _, s := range stops {
			if b == s {
				return
			}
		}
	}
}

var (
	listItems   = []atom.Atom{atom.Li}
	lists       = []atom.Atom{atom.Ul, atom.Ol, atom.Menu, atom.Dir}
	defItems    = []atom.Atom{atom.Dd, atom.Dt}
	defLists    = []atom.Atom{atom.Dl}
	cells       = []atom.Atom{atom.Td, atom.Th}
	rows        = []atom.Atom{atom.Tr}
	rowGroups   = []atom.Atom{atom.Tbody, atom.Thead, atom.Tfoot}
	tables      = []atom.Atom{atom.Table}
	rowStops    = []atom.Atom{atom.Table, atom.Tbody, atom.Thead, atom.Tfoot}
	cellStops   = []atom.Atom{atom.Table, atom.Tr}
	options     = []atom.Atom{atom.Option}
	optionStops = []atom.Atom{atom.Optgroup}
)

// openBlock applies the implied end tags that matter for labelling blocks
// (a new <li> ends the previous one, a <div> ends an open <p>, ...), then
// pushes a and starts a new block.
func (p *parser) openBlock(a atom.Atom, f elemFlags) {
	if f&closesP != 0 {
		p.closeOpenP()
	}
	switch a {
	case atom.Li:
		p.popTo(listItems, lists)
	case atom.Dd, atom.Dt:
		p.popTo(defItems, defLists)
	case atom.Td, atom.Th:
		p.popTo(cells, cellStops)
	case atom.Tr:
		p.popTo(cells, cellStops)
		p.popTo(rows, rowStops)
	case atom.Tbody, atom.Thead, atom.Tfoot:
		p.popTo(cells, cellStops)
		p.popTo(rows, rowStops)
		p.popTo(rowGroups, tables)
	case atom.Option, atom.Optgroup:
		p.popTo(options, optionStops)
	}
	if len(p.blocks) < maxBlockStack {
		p.blocks = append(p.blocks, a)
	}
	p.boundary(a)
}

// closeBlock pops through the innermost open a, if near the top, and
// starts a new block labelled with what is then innermost.
func (p *parser) closeBlock(a atom.Atom) {
	for i := len(p.blocks) - 1; i >= 0 && i >= len(p.blocks)-16; i-- {
		if p.blocks[i] == a {
			p.blocks = p.blocks[:i]
			break
		}
	}
	p.boundary(p.currentBlock())
}

// --- links ---

// full reports whether a list of n entries has reached MaxLinks, counting
// the entry that will not be added.
func (p *parser) full(n int) bool {
	if p.maxLinks >= 0 && n >= p.maxLinks {
		p.page.DroppedLinks++
		return true
	}
	return false
}

// addLink records a link at the current text position and returns its
// index, or -1 if it is not followable or over the limit. URL is filled in
// by finish, once the base URL is known.
func (p *parser) addLink(raw, tag, rel, fallback string) int {
	if nonHTTPScheme(raw) {
		p.page.NonHTTPLinks++
		return -1
	}
	if len(raw) > maxRefBytes {
		p.page.BadLinks++
		return -1
	}
	if p.full(len(p.page.Links)) {
		return -1
	}
	pos := len(p.tb.buf)
	p.page.Links = append(p.page.Links, Link{
		Raw: raw, Tag: tag, Rel: splitTokens(rel), TextStart: pos, TextEnd: pos,
	})
	p.extras = append(p.extras, linkExtra{fallback: fallback})
	return len(p.page.Links) - 1
}

func (p *parser) startAnchor() {
	p.closeAnchor() // <a> inside <a> ends the outer one, as in a browser
	href, ok := p.a.get(attrHref)
	if !ok {
		return // a named anchor, not a link
	}
	if p.a.has[attrDownload] {
		p.addResource(href, atom.A, "href")
	}
	if i := p.addLink(href, "a", p.a.str(attrRel), p.a.str(attrTitle)); i >= 0 {
		p.anchorOpen = true
		p.anchor = openAnchor{link: i, pos: len(p.tb.buf), tableDepth: p.tableDepth}
	}
}

// closeAnchor ends the open anchor's text span. The span starts at the
// anchor's first character: a separator written before it is not part of it.
func (p *parser) closeAnchor() {
	if !p.anchorOpen {
		return
	}
	p.anchorOpen = false
	l := &p.page.Links[p.anchor.link]
	start, end := p.anchor.pos, len(p.tb.buf)
	if start < end && isTextSpace(p.tb.buf[start]) {
		start++
	}
	if next := p.anchor.link + 1; next < len(p.page.Links) {
		// A link inside this one (an iframe, an SVG link) was placed
		// before the separator; keep spans ordered by start.
		start = min(start, p.page.Links[next].TextStart)
	}
	l.TextStart, l.TextEnd = start, end
}

// closeAnchorInCell ends an anchor opened inside the table cell that is
// now ending: browsers do not carry formatting elements across cells.
func (p *parser) closeAnchorInCell() {
	if p.anchorOpen && p.tableDepth > 0 && p.anchor.tableDepth >= p.tableDepth {
		p.closeAnchor()
	}
}

// svgLink records an SVG <a>; its text is not page text.
func (p *parser) svgLink() {
	href, ok := p.a.get(attrHref)
	if !ok {
		href, ok = p.a.get(attrXlinkHref)
	}
	if ok {
		p.addLink(href, "a", p.a.str(attrRel), "")
	}
}

// nonHTTPScheme reports whether ref is an absolute reference with a scheme
// other than http or https (javascript:, mailto:, tel:, data:, ...), so it
// can be dropped without resolving. References it cannot judge cheaply go
// to the resolver, and the resolved scheme is checked again.
func nonHTTPScheme(ref string) bool {
	i := 0
	for i < len(ref) && ref[i] <= ' ' { // WHATWG strips leading C0 controls and spaces
		i++
	}
	start := i
	for ; i < len(ref); i++ {
		c := ref[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > start && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > start:
			s := ref[start:i]
			return !strings.EqualFold(s, "http") && !strings.EqualFold(s, "https")
		default:
			return false
		}
	}
	return false
}

func isHTTPURL(u string) bool {
	return len(u) >= 7 && strings.EqualFold(u[:7], "http://") ||
		len(u) >= 8 && strings.EqualFold(u[:8], "https://")
}

// --- resources, link elements, metas ---

func (p *parser) resource(tag atom.Atom, keys ...attrKey) {
	for _, k := range keys {
		v, ok := p.a.get(k)
		if !ok {
			continue
		}
		name := attrNames[k]
		if k == attrSrcset {
			srcsetURLs(v, func(u string) { p.addResource(u, tag, name) })
		} else {
			p.addResource(v, tag, name)
		}
	}
}

var attrNames = [numAttrKeys]string{
	attrSrc: "src", attrSrcset: "srcset", attrDataSrc: "data-src", attrData: "data",
	attrPoster: "poster", attrHref: "href",
}

// addResource records a resource; its URL is resolved in finish.
func (p *parser) addResource(raw string, tag atom.Atom, attr string) {
	if strings.TrimSpace(raw) == "" || len(raw) > maxRefBytes || nonHTTPScheme(raw) || p.full(len(p.page.Resources)) {
		return
	}
	p.page.Resources = append(p.page.Resources, Resource{URL: raw, Tag: tag.String(), Attr: attr})
}

// feedTypes are the media types of <link rel=alternate> that are feeds.
var feedTypes = map[string]bool{
	"application/rss+xml":   true,
	"application/atom+xml":  true,
	"application/feed+json": true,
}

func (p *parser) linkElement() {
	href, ok := p.a.get(attrHref)
	if !ok {
		return
	}
	isResource := false
	for _, rel := range splitTokens(p.a.str(attrRel)) {
		switch rel {
		case "canonical":
			if p.canonicalRaw == "" {
				p.canonicalRaw = href
			}
		case "next":
			if p.nextRaw == "" {
				p.nextRaw = href
			}
		case "prev", "previous":
			if p.prevRaw == "" {
				p.prevRaw = href
			}
		case "alternate":
			alt := Alternate{URL: href, Hreflang: collapseSpace(p.a.str(attrHreflang)),
				Type: mediaType(p.a.str(attrType)), Title: collapseSpace(p.a.str(attrTitle))}
			if alt.Hreflang != "" && !p.full(len(p.page.Hreflang)) {
				p.page.Hreflang = append(p.page.Hreflang, alt)
			}
			if feedTypes[alt.Type] && !p.full(len(p.page.Feeds)) {
				p.page.Feeds = append(p.page.Feeds, alt)
			}
		case "stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed",
			"mask-icon", "manifest", "preload", "modulepreload":
			isResource = true
		}
	}
	if isResource {
		p.addResource(href, atom.Link, "href")
	}
}

// mediaType lowercases a type attribute and drops its parameters.
func mediaType(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(collapseSpace(s))
}

func (p *parser) meta() {
	content := collapseSpace(p.a.str(attrContent))
	if name, ok := p.a.get(attrName); ok {
		name = strings.ToLower(collapseSpace(name))
		switch {
		case name == "description":
			if !p.haveDesc {
				p.haveDesc, p.page.Description = true, content
			}
		case name == "keywords":
			if !p.haveKeywords {
				p.haveKeywords, p.page.Keywords = true, splitKeywords(content)
			}
		case p.isRobotsName(name):
			p.page.Robots = append(p.page.Robots, Meta{Name: name, Content: content})
		default:
			p.setMeta(name, content)
		}
	}
	if prop, ok := p.a.get(attrProperty); ok {
		p.setMeta(strings.ToLower(collapseSpace(prop)), content)
	}
	if equiv, ok := p.a.get(attrHTTPEquiv); ok {
		switch strings.ToLower(strings.TrimSpace(equiv)) {
		case "content-language":
			if p.metaLang == "" {
				p.metaLang = content
			}
		case "refresh":
			if !p.haveRefresh {
				p.haveRefresh = true
				p.page.RefreshDelay, p.refreshRaw = parseRefresh(content)
			}
		}
	}
}

func (p *parser) setMeta(key, content string) {
	if key == "" || content == "" {
		return
	}
	if p.page.Meta == nil {
		p.page.Meta = make(map[string]string)
	}
	if _, dup := p.page.Meta[key]; !dup {
		p.page.Meta[key] = content
	}
}

func (p *parser) isRobotsName(name string) bool {
	if name == "robots" || strings.Contains(name, "bot") {
		return true
	}
	for _, n := range p.opts.RobotsNames {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func splitKeywords(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// parseRefresh reads a meta refresh value ("5; url=/next", "0;URL='x'",
// "3, http://x") the way HTML's declarative refresh does: a delay, then an
// optional URL with or without "url=" and quotes. ref is "" when the page
// only reloads itself.
func parseRefresh(s string) (delay int, ref string) {
	s = strings.TrimLeft(s, htmlSpace)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && (i >= len(s) || s[i] != '.') {
		return 0, "" // no delay: not a refresh
	}
	if i > 0 {
		var err error
		if delay, err = strconv.Atoi(s[:i]); err != nil {
			delay = math.MaxInt32 // overflow: never a redirect in practice
		}
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++ // the fractional part is ignored
	}
	rest := s[i:]
	if rest == "" {
		return delay, ""
	}
	if c := rest[0]; c != ';' && c != ',' && !isHTMLSpace(c) {
		return 0, "" // garbage after the delay: not a refresh
	}
	rest = strings.TrimLeft(rest, htmlSpace)
	if rest != "" && (rest[0] == ';' || rest[0] == ',') {
		rest = strings.TrimLeft(rest[1:], htmlSpace)
	}
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		rest = strings.TrimLeft(rest[3:], htmlSpace)
		if rest != "" && rest[0] == '=' {
			rest = strings.TrimLeft(rest[1:], htmlSpace)
		}
	}
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		q := rest[0]
		rest = rest[1:]
		if j := strings.IndexByte(rest, q); j >= 0 {
			rest = rest[:j]
		}
	}
	return delay, strings.TrimSpace(rest)
}

// --- finishing ---

// finish resolves every collected reference against the base URL and
// builds the strings that are slices of the final text.
func (p *parser) finish(doc *whatwg.Url) {
	pg := p.page
	pg.TextTruncated = p.tb.truncated
	pg.text = string(p.tb.buf)
	if len(p.tb.spans) > 0 {
		pg.Blocks = make([]Block, len(p.tb.spans))
		for i, s := range p.tb.spans {
			pg.Blocks[i] = Block{Text: pg.text[s.start:s.end], Tag: s.tag.String(), Start: s.start, Chrome: s.chrome}
		}
	}
	p.release()
	pg.Lang = primaryLang(p.htmlLang)
	if pg.Lang == "" {
		pg.Lang = primaryLang(p.metaLang)
	}

	base := doc
	if p.haveBase {
		if b, err := doc.Parse(p.baseRaw); err == nil && b.Scheme() != "javascript" && b.Scheme() != "data" {
			base = b
		}
	}
	pg.BaseURL = base.Href(false)
	// Pages repeat links (menus, a title and its thumbnail, header and
	// footer), and resolving costs microseconds, so each distinct
	// reference is resolved once.
	type result struct {
		url string
		err error
	}
	cache := make(map[string]result, len(pg.Links)+len(pg.Resources))
	resolve := func(ref string) (string, error) {
		if r, ok := cache[ref]; ok {
			return r.url, r.err
		}
		var r result
		if p.opts.Resolver != nil {
			r.url, r.err = p.opts.Resolver.Resolve(pg.BaseURL, ref)
		} else if u, err := base.Parse(ref); err != nil {
			r.err = err
		} else {
			r.url = u.Href(false)
		}
		cache[ref] = r
		return r.url, r.err
	}
	// resolveHTTP resolves ref and keeps it only if it is http(s).
	resolveHTTP := func(ref string) (string, bool) {
		if len(ref) > maxRefBytes {
			return "", false
		}
		u, err := resolve(ref)
		return u, err == nil && isHTTPURL(u)
	}

	kept := pg.Links[:0]
	for i := range pg.Links {
		l := pg.Links[i]
		l.Anchor = p.anchorText(&l, &p.extras[i])
		u, err := resolve(l.Raw)
		switch {
		case err != nil:
			pg.BadLinks++
			continue
		case !isHTTPURL(u):
			pg.NonHTTPLinks++
			continue
		}
		l.URL = u
		kept = append(kept, l)
	}
	clear(pg.Links[len(kept):])
	pg.Links = kept

	res := pg.Resources[:0]
	for _, r := range pg.Resources {
		if u, ok := resolveHTTP(r.URL); ok {
			r.URL = u
			res = append(res, r)
		}
	}
	pg.Resources = res

	pg.Hreflang = resolveAlternates(pg.Hreflang, resolveHTTP)
	pg.Feeds = resolveAlternates(pg.Feeds, resolveHTTP)
	for _, f := range []struct {
		raw string
		dst *string
	}{{p.canonicalRaw, &pg.Canonical}, {p.nextRaw, &pg.Next}, {p.prevRaw, &pg.Prev}, {p.refreshRaw, &pg.RefreshURL}} {
		if f.raw != "" {
			if u, ok := resolveHTTP(f.raw); ok {
				*f.dst = u
			}
		}
	}
	if pg.RefreshURL == "" {
		pg.RefreshDelay = 0
	}
}

func resolveAlternates(alts []Alternate, resolve func(string) (string, bool)) []Alternate {
	out := alts[:0]
	for _, a := range alts {
		if u, ok := resolve(a.URL); ok {
			a.URL = u
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// anchorText builds Link.Anchor: the link's text span (a substring of the
// page text when possible), with the alt text of images inside it in place,
// block breaks as spaces, and the fallback when all that is empty.
func (p *parser) anchorText(l *Link, x *linkExtra) string {
	text := p.page.text
	s := text[l.TextStart:l.TextEnd]
	if len(x.alts) > 0 {
		var b strings.Builder
		from := l.TextStart
		for _, alt := range x.alts {
			pos := min(max(alt.pos, from), l.TextEnd)
			b.WriteString(text[from:pos])
			b.WriteByte(' ')
			b.WriteString(alt.text)
			b.WriteByte(' ')
			from = pos
		}
		b.WriteString(text[from:l.TextEnd])
		s = b.String()
	}
	if len(x.alts) > 0 || strings.IndexByte(s, '\n') >= 0 {
		s = collapseSpace(s)
	}
	if s == "" {
		s = collapseSpace(x.fallback)
	}
	return truncateUTF8(s, maxAnchorBytes)
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// primaryLang returns the lowercased primary subtag of a language tag
// ("pt" for "pt-BR", "en" for "EN_us"), or "" if it is not 2 to 8 letters.
// For a Content-Language list the first entry counts.
func primaryLang(tag string) string {
	tag = strings.TrimSpace(tag)
	end := len(tag)
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; c == '-' || c == '_' || c == ',' || isHTMLSpace(c) {
			end = i
			break
		}
	}
	sub := tag[:end]
	if len(sub) < 2 || len(sub) > 8 {
		return ""
	}
	for i := 0; i < len(sub); i++ {
		c := sub[i] | 0x20
		if c < 'a' || c > 'z' {
			return ""
		}
	}
	return strings.ToLower(sub)
}
