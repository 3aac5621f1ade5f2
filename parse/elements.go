package parse

import "golang.org/x/net/html/atom"

// elemFlags classifies the elements the parser treats specially. Everything
// else (span, em, custom elements, ...) is inline and transparent.
type elemFlags uint16

const (
	// block elements end the current text block when they start or end
	// (the default display of these elements is block, list-item or a
	// table part) and label the text inside them.
	block elemFlags = 1 << iota
	// lineBreak elements (br, hr) end the block but contain nothing.
	lineBreak
	// wordBreak elements are inline boxes (buttons, images, form fields)
	// that visually separate the words around them.
	wordBreak
	// closesP elements implicitly close an open <p> when they start.
	closesP
	// tablePart elements start or end cells, rows and row groups; an <a>
	// left open inside a cell ends there, as in a browser.
	tablePart
	// breaksForeign start tags end SVG content (the HTML "breakout" list).
	breaksForeign
	// wantAttrs elements have attributes the parser reads; attributes of
	// all other elements are never decoded.
	wantAttrs
)

var elements = func() map[atom.Atom]elemFlags {
	m := map[atom.Atom]elemFlags{}
	set := func(f elemFlags, as ...atom.Atom) {
		for _, a := range as {
			m[a] |= f
		}
	}
	set(block,
		atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Caption,
		atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Dt,
		atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Frameset,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup,
		atom.Legend, atom.Li, atom.Listing, atom.Main, atom.Menu, atom.Nav,
		atom.Ol, atom.Optgroup, atom.Option, atom.P, atom.Plaintext, atom.Pre, atom.Search,
		atom.Section, atom.Summary, atom.Table, atom.Tbody, atom.Td, atom.Tfoot, atom.Th,
		atom.Thead, atom.Tr, atom.Ul, atom.Xmp)
	set(lineBreak, atom.Br, atom.Hr)
	set(wordBreak,
		atom.Button, atom.Img, atom.Input, atom.Select, atom.Label, atom.Textarea,
		atom.Iframe, atom.Embed, atom.Object, atom.Video, atom.Audio, atom.Canvas,
		atom.Meter, atom.Progress, atom.Image)
	set(closesP,
		atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center, atom.Details,
		atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure,
		atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Header, atom.Hgroup, atom.Hr, atom.Li, atom.Dd, atom.Dt, atom.Listing, atom.Main,
		atom.Menu, atom.Nav, atom.Ol, atom.P, atom.Plaintext, atom.Pre, atom.Search,
		atom.Section, atom.Summary, atom.Table, atom.Ul, atom.Xmp)
	set(tablePart, atom.Td, atom.Th, atom.Tr, atom.Caption, atom.Tbody, atom.Thead, atom.Tfoot)
	set(breaksForeign,
		atom.B, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Center, atom.Code,
		atom.Dd, atom.Div, atom.Dl, atom.Dt, atom.Em, atom.Embed, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Head, atom.Hr, atom.I, atom.Img, atom.Li,
		atom.Listing, atom.Menu, atom.Meta, atom.Nobr, atom.Ol, atom.P, atom.Pre, atom.Ruby,
		atom.S, atom.Small, atom.Span, atom.Strong, atom.Strike, atom.Sub, atom.Sup,
		atom.Table, atom.Tt, atom.U, atom.Ul, atom.Var)
	set(wantAttrs,
		atom.A, atom.Area, atom.Iframe, atom.Frame, atom.Img, atom.Input, atom.Link,
		atom.Meta, atom.Base, atom.Html, atom.Script, atom.Source, atom.Embed, atom.Object,
		atom.Video, atom.Audio, atom.Track)
	return m
}()

// rawText elements have content the tokenizer returns as one unparsed text
// token. Only title (captured as Page.Title) and xmp/plaintext (displayed
// verbatim) contribute text; the content of the others is not page text.
func isRawText(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Textarea, atom.Iframe,
		atom.Noembed, atom.Noframes, atom.Title, atom.Xmp, atom.Plaintext:
		return true
	}
	return false
}
