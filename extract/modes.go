package extract

import (
	"fmt"
	"net/url"
	"strings"

	trafilatura "github.com/markusmobius/go-trafilatura"
	nethtml "golang.org/x/net/html"
)

// thesis is ModeThesis: the fields and rules of seed 003's news crawler (Figs. 17–20).
func (e *Extractor) thesis(doc *nethtml.Node, pageURL string, base *url.URL) *Article {
	s := gather(doc)
	a := &Article{URL: pageURL, Mode: ModeThesis}
	a.Title = a.pick("title", cand{"og", s.meta("og:title")}, cand{"title", s.title})
	a.Description = a.pick("description", cand{"og", s.meta("og:description")})
	a.SiteName = a.pick("site_name", cand{"og", s.meta("og:site_name")})
	if v := s.meta("article:published_time"); v != "" {
		if t, ok := ParseDate(v, "", e.opts.Location); ok {
			a.Published = t
			a.source("published", "og")
		}
	}
	for _, p := range ThesisParagraphs(doc) {
		a.Body = append(a.Body, Block{Kind: "p", Text: p})
	}
	if len(a.Body) > 0 {
		a.source("body", "thesis")
	}
	e.finish(a)
	// The thesis's validity rule: a page is a news article when its <article> has text.
	if len(a.Body) > 0 {
		a.IsArticle, a.Kind = true, KindArticle
	} else {
		a.Kind, a.NotArticle = KindEmpty, "no <p> text inside the first <article>"
	}
	return a
}

// trafilaturaAlone is ModeTrafilatura: go-trafilatura's own metadata and body, mapped to
// an Article without any of the cascade's signals.
func (e *Extractor) trafilaturaAlone(doc *nethtml.Node, pageURL string, base *url.URL) *Article {
	a := &Article{URL: pageURL, Mode: ModeTrafilatura}
	res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{
		OriginalURL: base, EnableFallback: !e.opts.NoFallback, ExcludeComments: true,
	})
	if err != nil || res == nil {
		a.Kind = KindEmpty
		a.NotArticle = "go-trafilatura found no content"
		if err != nil {
			a.NotArticle = fmt.Sprintf("go-trafilatura: %v", err)
		}
		return a
	}
	m := res.Metadata
	a.Title = cleanText(m.Title)
	a.Description = cleanText(m.Description)
	if m.Author != "" {
		for _, n := range strings.Split(m.Author, ";") {
			if n = cleanText(n); n != "" {
				a.Authors = append(a.Authors, n)
			}
		}
	}
	a.Published = m.Date
	a.SiteName = cleanText(m.Sitename)
	a.Language = m.Language
	if len(m.Categories) > 0 {
		a.Section = m.Categories[0]
	}
	a.Tags = m.Tags
	a.Image = m.Image
	if m.URL != "" && m.URL != pageURL {
		a.CanonicalURL = m.URL
	}
	if res.ContentNode != nil {
		a.Body = blocks(res.ContentNode, nil)
	}
	e.finish(a)
	if a.WordCount >= e.opts.MinArticleWords {
		a.IsArticle, a.Kind = true, KindArticle
	} else {
		a.Kind, a.NotArticle = KindPage, fmt.Sprintf("body has %d words", a.WordCount)
	}
	return a
}
