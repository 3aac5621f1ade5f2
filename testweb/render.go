package testweb

import (
	"math/rand/v2"
	"strconv"
)

// textGen writes the deterministic prose of one page. It is a value with no
// allocations: pages are rendered on every request.
type textGen struct {
	pcg    rand.PCG
	words  int // words written so far
	swapAt int // 1-based word replaced by its neighbour in the vocabulary (near-duplicates)
}

func newTextGen(seed uint64, swapAt int) textGen {
	g := textGen{swapAt: swapAt}
	g.pcg.Seed(seed, 0x7e47)
	return g
}

func (g *textGen) intn(n int) int { return int(g.pcg.Uint64() % uint64(n)) }

func (g *textGen) word() string {
	i := g.intn(len(vocabulary))
	g.words++
	if g.words == g.swapAt {
		i = (i + 1) % len(vocabulary)
	}
	return vocabulary[i]
}

// sentences appends n words as sentences: capitalised, ending with a period.
func (g *textGen) sentences(b []byte, n int) []byte {
	left := 0
	for i := range n {
		w := g.word()
		if left == 0 {
			left = 6 + g.intn(9)
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, w[0]-'a'+'A')
			b = append(b, w[1:]...)
		} else {
			b = append(b, ' ')
			b = append(b, w...)
		}
		if left--; left == 0 || i == n-1 {
			b = append(b, '.')
		}
	}
	return b
}

func appendEscaped[S string | []byte](b []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&#34;"...)
		case '\'':
			b = append(b, "&#39;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendLink(b []byte, from *resource, l link) []byte {
	b = append(b, `<a href="`...)
	var tmp [512]byte
	b = appendEscaped(b, appendHref(tmp[:0], from, l.to, l.form))
	b = append(b, `">`...)
	b = appendEscaped(b, l.to.title)
	return append(b, "</a>"...)
}

// navLinks is how many of a page's first links go in its <nav>.
const navLinks = 3

// appendPage renders res as an HTML page. Copies render their original with
// the original's links, so exact duplicates are byte-identical and
// near-duplicates differ in one word.
func (w *Web) appendPage(b []byte, res *resource) []byte {
	src := res
	if res.copyOf != nil {
		src = res.copyOf
	}
	g := newTextGen(src.seed, res.swapAt)

	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	b = appendEscaped(b, src.title)
	b = append(b, "</title>\n"...)
	if src.base {
		b = append(b, `<base href="`...)
		b = append(b, src.site.origin...)
		b = append(b, "/\">\n"...)
	}
	if src.meta[0] != "" {
		b = append(b, `<meta name="`...)
		b = append(b, src.meta[0]...)
		b = append(b, `" content="`...)
		b = append(b, src.meta[1]...)
		b = append(b, "\">\n"...)
	}
	b = append(b, `<meta name="description" content="`...)
	desc := g // the description repeats the first words of the text
	b = desc.sentences(b, 12)
	b = append(b, "\">\n</head>\n<body id=\"top\">\n<nav>"...)
	links := src.links
	nav := min(navLinks, len(links))
	for i, l := range links[:nav] {
		if i > 0 {
			b = append(b, " | "...)
		}
		b = appendLink(b, src, l)
	}
	b = append(b, "</nav>\n<h1>"...)
	b = appendEscaped(b, src.title)
	b = append(b, "</h1>\n"...)
	if src.img != nil {
		b = append(b, `<p><img src="`...)
		b = append(b, src.img.uri...)
		b = append(b, "\" alt=\"logo\"></p>\n"...)
	}
	for _, t := range src.text {
		b = append(b, "<p>"...)
		b = appendEscaped(b, t)
		b = append(b, "</p>\n"...)
	}
	rest := links[nav:]
	paras := len(rest) + src.paragraphs
	if len(src.text) == 0 {
		paras += 2
	}
	for i := range paras {
		if i%3 == 2 {
			b = append(b, "<h2>"...)
			w := g.word()
			b = append(b, w[0]-'a'+'A')
			b = append(b, w[1:]...)
			b = append(b, ' ')
			b = append(b, g.word()...)
			b = append(b, "</h2>\n"...)
		}
		b = append(b, "<p>"...)
		n := 18 + g.intn(30)
		if i < len(rest) {
			// The link sits inside the prose, so each link has text on
			// both sides, as focused crawling wants.
			b = g.sentences(b, n/2)
			b = append(b, ' ')
			b = appendLink(b, src, rest[i])
			b = append(b, ' ')
			b = g.sentences(b, n-n/2)
		} else {
			b = g.sentences(b, n)
		}
		b = append(b, "</p>\n"...)
	}
	if c := w.cfg.Corpus; len(c) > 0 && len(src.text) == 0 {
		for i, n := int(src.seed%uint64(len(c))), 0; n < w.cfg.TextBytes; i = (i + 1) % len(c) {
			b = append(b, "<p>"...)
			b = appendEscaped(b, c[i])
			b = append(b, "</p>\n"...)
			n += len(c[i])
		}
	}
	if src.extras {
		b = append(b, "<ul class=\"tools\">\n<li><a href=\"mailto:editor@"...)
		b = append(b, src.site.name...)
		b = append(b, "\">Write to us</a></li>\n<li><a href=\"javascript:window.print()\">Print</a></li>\n"...)
		b = append(b, "<li><a href=\"tel:+15550100\">Call</a></li>\n<li><a href=\"#top\">Back to top</a></li>\n"...)
		b = append(b, "<li><a href=\"\">Reload</a></li>\n</ul>\n"...)
	}
	b = append(b, "<footer>&copy; "...)
	b = strconv.AppendInt(b, int64(2000+src.seed%25), 10)
	b = append(b, ' ')
	if src.site != nil {
		b = append(b, src.site.name...)
	}
	return append(b, "</footer>\n</body>\n</html>\n"...)
}

// tinyPage renders a short page with the given title, paragraph and links
// spelled as hrefs; used by answers generated per request (traps, the
// index of the web) and by fixed-bytes pages.
func tinyPage(b []byte, title, text string, hrefs ...string) []byte {
	b = append(b, "<!DOCTYPE html>\n<html>\n<head><title>"...)
	b = appendEscaped(b, title)
	b = append(b, "</title></head>\n<body>\n<h1>"...)
	b = appendEscaped(b, title)
	b = append(b, "</h1>\n<p>"...)
	b = appendEscaped(b, text)
	b = append(b, "</p>\n<ul>\n"...)
	for i := 0; i+1 < len(hrefs); i += 2 {
		b = append(b, `<li><a href="`...)
		b = appendEscaped(b, hrefs[i])
		b = append(b, `">`...)
		b = appendEscaped(b, hrefs[i+1])
		b = append(b, "</a></li>\n"...)
	}
	return append(b, "</ul>\n</body>\n</html>\n"...)
}

// makeFiller returns 64 KiB of HTML paragraphs for huge and endless bodies.
func makeFiller() []byte {
	const size = 64 << 10
	g := newTextGen(1, 0)
	b := make([]byte, 0, size+1024)
	for len(b) < size {
		b = append(b, "<p>"...)
		b = g.sentences(b, 60)
		b = append(b, "</p>\n"...)
	}
	return b[:size]
}
