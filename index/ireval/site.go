package ireval

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
)

// Site serves the collection as a small website, the way a user's crawl would meet it:
// every abstract is a page (/doc/ID) with its title as <title> and <h1> and its text as
// the body, inside a site template (navigation bar, "latest" box, footer) whose words are
// the same on every page; listing pages (/list/N, 50 abstracts each, linked from the home
// page and from each other) link to every abstract, and each abstract links to its
// neighbours by number. The links carry no relevance information: which abstract links
// to which is decided by ID order alone, so a ranking that gains from them here is
// reading noise.
//
// Its Template chooses how the pages are made: TemplateArchive (the default) marks the
// site's parts with HTML landmarks (<nav>, <aside>, <footer>) as a careful site does;
// TemplatePortal is a CMS page of plain <div>s, which a crawler cannot tell from the
// abstract by its markup: a menu, breadcrumbs, a "popular topics" box naming subjects of
// the field on every page, a "readers also viewed" box with the titles of three other
// abstracts (chosen by ID arithmetic, so they say nothing about relevance either) and a
// legal footer; the title is in <title> with the site's name after it and in an <h2>.
type Site struct {
	c        *Collection
	index    map[string]int // doc ID → position in c.Docs
	Template string
}

// The site templates (Site.Template).
const (
	TemplateArchive = "archive"
	TemplatePortal  = "portal"
)

// Templates are the site templates, the default first.
var Templates = []string{TemplateArchive, TemplatePortal}

// SitePerList is how many abstracts one listing page links to.
const SitePerList = 50

// NewSite returns the site of c.
func NewSite(c *Collection) *Site {
	s := &Site{c: c, index: make(map[string]int, len(c.Docs))}
	for i, d := range c.Docs {
		s.index[d.ID] = i
	}
	return s
}

// DocPath is the path of an abstract's page.
func DocPath(id string) string { return "/doc/" + id }

// DocOf returns the abstract ID of a page URL of the site, or false.
func DocOf(rawURL string) (string, bool) {
	i := strings.Index(rawURL, "/doc/")
	if i < 0 {
		return "", false
	}
	id := strings.TrimSuffix(rawURL[i+len("/doc/"):], "/")
	return id, id != ""
}

func (s *Site) lists() int { return (len(s.c.Docs) + SitePerList - 1) / SitePerList }

// ServeHTTP serves /, /robots.txt, /about, /list/N and /doc/ID.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	case p == "/" || p == "/about":
		var b strings.Builder
		b.WriteString("<p>The Aeronautical Abstracts Archive collects research summaries in aerodynamics, heat transfer and structures.</p><ul>")
		for i := 1; i <= s.lists(); i++ {
			fmt.Fprintf(&b, `<li><a href="/list/%d">Abstracts, page %d</a></li>`, i, i)
		}
		b.WriteString("</ul>")
		s.page(w, "Aeronautical Abstracts Archive", "Welcome to the archive", b.String())
	case strings.HasPrefix(p, "/list/"):
		n, err := strconv.Atoi(strings.TrimPrefix(p, "/list/"))
		if err != nil || n < 1 || n > s.lists() {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		b.WriteString("<ul>")
		for _, d := range s.c.Docs[(n-1)*SitePerList : min(n*SitePerList, len(s.c.Docs))] {
			fmt.Fprintf(&b, `<li><a href="%s">Abstract %s</a></li>`, DocPath(d.ID), d.ID)
		}
		b.WriteString("</ul>")
		if n > 1 {
			fmt.Fprintf(&b, `<a href="/list/%d">Previous page</a> `, n-1)
		}
		if n < s.lists() {
			fmt.Fprintf(&b, `<a href="/list/%d">Next page</a>`, n+1)
		}
		s.page(w, fmt.Sprintf("Abstracts, page %d", n), fmt.Sprintf("Abstracts, page %d", n), b.String())
	case strings.HasPrefix(p, "/doc/"):
		i, ok := s.index[strings.TrimPrefix(p, "/doc/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if s.Template == TemplatePortal {
			s.portalDoc(w, i)
			return
		}
		d := s.c.Docs[i]
		var b strings.Builder
		fmt.Fprintf(&b, `<p class="byline">%s · %s</p>`, html.EscapeString(d.Authors), html.EscapeString(d.Source))
		fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(d.Text))
		b.WriteString(`<p class="pager">`)
		if i > 0 {
			fmt.Fprintf(&b, `<a href="%s">Previous abstract</a> `, DocPath(s.c.Docs[i-1].ID))
		}
		if i+1 < len(s.c.Docs) {
			fmt.Fprintf(&b, `<a href="%s">Next abstract</a>`, DocPath(s.c.Docs[i+1].ID))
		}
		fmt.Fprintf(&b, `</p><p><a href="/list/%d">Back to the list</a></p>`, i/SitePerList+1)
		s.page(w, d.Title, d.Title, b.String())
	default:
		http.NotFound(w, r)
	}
}

// page writes one page in the site template.
func (s *Site) page(w http.ResponseWriter, title, h1, main string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if s.Template == TemplatePortal {
		s.portalPage(w, title, h1, "", main)
		return
	}
	fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>%s</title></head><body>
<header><nav><a href="/">Home</a> <a href="/about">About the archive</a> <a href="/list/1">Browse all abstracts</a> <a href="/">Search</a></nav></header>
<main><article><h1>%s</h1>%s</article></main>
<aside><h2>About</h2><p>Research summaries from the aeronautics literature, free to read.</p></aside>
<footer><p>Aeronautical Abstracts Archive. Texts from the Cranfield collection. Contact the editors for corrections.</p></footer>
</body></html>`, html.EscapeString(title), html.EscapeString(h1), main)
}

// portalDoc writes abstract i in the portal template.
func (s *Site) portalDoc(w http.ResponseWriter, i int) {
	d := s.c.Docs[i]
	n := len(s.c.Docs)
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="meta">By %s. Published in %s.</div><div class="text">%s</div>`,
		html.EscapeString(d.Authors), html.EscapeString(d.Source), html.EscapeString(d.Text))
	b.WriteString(`<div class="related"><h3>Readers also viewed</h3><ul>`)
	for _, step := range []int{7, 100, 331} {
		o := s.c.Docs[(i+step)%n]
		fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, DocPath(o.ID), html.EscapeString(o.Title))
	}
	b.WriteString(`</ul></div>`)
	crumbs := fmt.Sprintf(`<a href="/">Home</a> › <a href="/list/%d">Library</a> › Abstract %s`, i/SitePerList+1, html.EscapeString(d.ID))
	s.portalPage(w, d.Title, d.Title, crumbs, b.String())
}

// portalPage writes one page in the portal template: no landmarks, only <div>s.
func (s *Site) portalPage(w http.ResponseWriter, title, h2, crumbs, main string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>%s - AeroPortal research library</title></head><body>
<div id="top"><div class="menu"><a href="/">Home</a> | <a href="/list/1">Browse the library</a> | <a href="/about">About AeroPortal</a> | Sign in | Register</div></div>
<div id="crumbs">%s</div>
<div id="content"><h2>%s</h2>%s</div>
<div id="sidebar"><h3>Popular topics</h3><p>Boundary layers · Heat transfer · Shock waves · Supersonic flow · Wing design · Buckling of shells</p></div>
<div id="footer">Copyright AeroPortal. All rights reserved. Terms of use. Privacy policy. Texts from the Cranfield collection.</div>
</body></html>`, html.EscapeString(title), crumbs, html.EscapeString(h2), main)
}
