package topical

import (
	"html"
	"math"
	"math/rand/v2"
)

// writer renders one page's prose deterministically from the page's seed.
type writer struct {
	rng *rand.Rand
	p   *page
}

// word draws the next word of text about theme t (-1: about nothing) with the given share
// of theme words; boiler says the page is boilerplate.
func (w *writer) word(t int, share float64, boiler bool) string {
	u := w.rng.Float64()
	switch {
	case u < 0.42:
		return function[w.rng.IntN(len(function))]
	case t >= 0 && u < 0.42+share:
		return w.zipf(themes[t].words)
	case boiler && u < 0.42+0.25:
		return boilerplate[w.rng.IntN(len(boilerplate))]
	case w.p.theme >= 0 && u < 0.42+share+0.04:
		return w.zipf(themes[w.p.other].words)
	}
	return general[w.rng.IntN(len(general))]
}

func (w *writer) zipf(words []string) string {
	n := len(words)
	r := int(math.Exp(w.rng.Float64()*math.Log(float64(n)+1))) - 1
	return words[min(max(r, 0), n-1)]
}

// sentence appends n words about theme t as a sentence.
func (w *writer) sentence(b []byte, n, t int, share float64, boiler bool) []byte {
	for i := 0; i < n; i++ {
		word := w.word(t, share, boiler)
		if i == 0 {
			word = capitalize(word)
		} else {
			b = append(b, ' ')
		}
		b = append(b, word...)
	}
	return append(b, '.')
}

func appendLink(b []byte, from *page, l plink) []byte {
	b = append(b, `<a href="`...)
	b = append(b, html.EscapeString(l.to.href(from))...)
	b = append(b, `">`...)
	b = append(b, html.EscapeString(l.anchor)...)
	return append(b, "</a>"...)
}

// render writes the page as HTML: navigation, title, prose with the body links inside it,
// lists of links with short descriptions, footer.
func render(b []byte, p *page) []byte {
	w := &writer{rng: rand.New(rand.NewPCG(p.seed, 0x9a6e)), p: p}
	boiler := p.kind == pageBoiler
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	b = append(b, html.EscapeString(p.title)...)
	b = append(b, "</title>\n</head>\n<body>\n<nav>"...)
	var lists, body []plink
	first := true
	for _, l := range p.links {
		switch l.place {
		case placeNav:
			if !first {
				b = append(b, " | "...)
			}
			first = false
			b = appendLink(b, p, l)
		case placeList:
			lists = append(lists, l)
		default:
			body = append(body, l)
		}
	}
	b = append(b, "</nav>\n<h1>"...)
	b = append(b, html.EscapeString(p.title)...)
	b = append(b, "</h1>\n"...)
	paras := 1
	switch p.kind {
	case pageArticle:
		paras = 4 + w.rng.IntN(4)
	case pageBoiler:
		paras = 2
	}
	for i := 0; i < paras; i++ {
		b = append(b, "<p>"...)
		for s := 0; s < 3+w.rng.IntN(3); s++ {
			if s > 0 {
				b = append(b, ' ')
			}
			b = w.sentence(b, 8+w.rng.IntN(9), p.theme, p.share, boiler)
		}
		for j := i; j < len(body); j += paras {
			b = append(b, ' ')
			b = w.linkSentence(b, body[j])
		}
		b = append(b, "</p>\n"...)
	}
	if len(lists) > 0 {
		b = append(b, "<ul>\n"...)
		for _, l := range lists {
			b = append(b, "<li>"...)
			b = appendLink(b, p, l)
			if p.kind == pageCategory || p.kind == pageDepts {
				// A directory describes each entry in a few words about its theme.
				b = append(b, " — "...)
				b = w.sentence(b, 6+w.rng.IntN(5), l.ctx, 0.3, false)
			}
			b = append(b, "</li>\n"...)
		}
		b = append(b, "</ul>\n"...)
	}
	b = append(b, "<footer>&copy; "...)
	b = append(b, html.EscapeString(p.site.name)...)
	return append(b, "</footer>\n</body>\n</html>\n"...)
}

// linkSentence writes a sentence with a link in it; its words are about the link's context
// theme, so the text around a link says something about where it leads (or, when the
// context theme is the page's own, nothing more than the page does).
func (w *writer) linkSentence(b []byte, l plink) []byte {
	before, after := 4+w.rng.IntN(6), 3+w.rng.IntN(6)
	for i := 0; i < before; i++ {
		word := w.word(l.ctx, 0.35, false)
		if i == 0 {
			word = capitalize(word)
		} else {
			b = append(b, ' ')
		}
		b = append(b, word...)
	}
	b = append(b, ' ')
	b = appendLink(b, w.p, l)
	for i := 0; i < after; i++ {
		b = append(b, ' ')
		b = append(b, w.word(l.ctx, 0.35, false)...)
	}
	return append(b, '.')
}
