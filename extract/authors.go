package extract

import (
	"regexp"
	"strings"
	"unicode"

	nethtml "golang.org/x/net/html"
)

// authors fills Article.Authors from, in order: the JSON-LD article's author (people
// before organizations), author metas, microdata, then the byline elements of the page.
func (e *Extractor) authors(a *Article, s *signals, main ldObject) {
	set := func(names []string, from string) bool {
		if names = cleanNames(names); len(names) == 0 {
			return false
		}
		a.Authors = names
		a.source("authors", from)
		return true
	}
	g := &s.ld
	if main != nil {
		for _, key := range []string{"author", "creator"} {
			persons, orgs := g.people(main[key])
			if set(persons, "jsonld") || set(orgs, "jsonld") {
				return
			}
		}
	}
	for _, key := range []string{"author", "article:author", "parsely-author", "sailthru.author", "dc.creator", "dcterms.creator", "byl", "citation_author", "og:article:author"} {
		var names []string
		for _, v := range s.metaAll(key) {
			names = append(names, splitByline(v)...)
		}
		if set(names, "meta") {
			return
		}
	}
	for _, n := range s.itemprop["author"] {
		if set(microPerson(n), "microdata") {
			return
		}
	}
	set(domByline(s), "byline")
}

// microPerson reads a microdata author: the itemprop=name inside an itemscope, else the
// element's value.
func microPerson(n *nethtml.Node) []string {
	if _, scoped := attrOK(n, "itemscope"); scoped {
		var found []string
		var walk func(c *nethtml.Node, depth int)
		walk = func(c *nethtml.Node, depth int) {
			if depth > 16 || len(found) > 0 {
				return
			}
			for ch := c.FirstChild; ch != nil; ch = ch.NextSibling {
				if ch.Type == nethtml.ElementNode && hasToken(attr(ch, "itemprop"), "name") {
					found = append(found, itemValue(ch))
					return
				}
				walk(ch, depth+1)
			}
		}
		walk(n, 0)
		if len(found) > 0 {
			return splitByline(found[0])
		}
	}
	return splitByline(itemValue(n))
}

// domByline reads the page's byline elements: rel=author links, then elements whose class
// or id says byline or author. Candidates inside the page's <article> or <main> are
// preferred; text longer than a byline (an author's biography box) is skipped.
func domByline(s *signals) []string {
	var scope []*nethtml.Node
	scope = append(scope, s.articles...)
	scope = append(scope, s.mains...)
	within := func(n *nethtml.Node) bool {
		for _, r := range scope {
			if isAncestor(r, n) {
				return true
			}
		}
		return false
	}
	for _, pass := range []int{0, 1} {
		for _, how := range []string{"rel", "class"} {
			var names []string
			for _, c := range s.bylines {
				if c.how != how {
					continue
				}
				if pass == 0 && len(scope) > 0 && !within(c.node) {
					continue
				}
				text := cleanText(nodeText(c.node))
				if text == "" || len([]rune(text)) > 120 {
					continue
				}
				names = append(names, splitByline(text)...)
				if how == "class" && len(names) > 0 {
					break // the first byline element is the byline
				}
			}
			if names = cleanNames(names); len(names) > 0 {
				if len(names) > 6 {
					names = names[:6]
				}
				return names
			}
		}
	}
	return nil
}

func isAncestor(anc, n *nethtml.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p == anc {
			return true
		}
	}
	return false
}

// bylinePrefix matches the words that introduce a byline in the languages sonda reads.
var bylinePrefix = regexp.MustCompile(`(?i)^(?:(?:written|posted|published|reported|story|text|words|photos?)\s+by|by|from|por|escrito\s+por|texto|reportagem|reportaje|redacción|par|von|door|autor|autora|author|auteur|verfasser)\s*[:\-–—]?\s+`)

// bylineNoise cuts a byline at the first sign of what follows names: a date, "Updated",
// a pipe or a middle dot, an email address.
var bylineNoise = regexp.MustCompile(`(?i)\s*(?:[|·•]|\blast\s+(?:updated|modified)\b|\bupdated\b|\bpublished\b|\bposted\b|\batualizad[oa]\b|\bactualizad[oa]\b|\bmis à jour\b|\baktualisiert\b|\bon\s+\w+\s+\d|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|\b(?:19|20)\d{2}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4}|\S+@\S+\.\w+)`)

// nameSplit separates several names in one byline.
var nameSplit = regexp.MustCompile(`(?i)\s*(?:,\s*(?:and|e|y|et|und|en)\s+|\s+(?:and|e|y|et|und|en)\s+|\s*&\s*|\s*;\s*|\s*,\s*)`)

// splitByline cleans a byline and splits it into names.
func splitByline(s string) []string {
	s = cleanText(s)
	if s == "" {
		return nil
	}
	for i := 0; i < 2; i++ {
		s = bylinePrefix.ReplaceAllString(s, "")
	}
	if loc := bylineNoise.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == '-' || r == ':' || r == '|' })
	if s == "" {
		return nil
	}
	// "Jong, Michiel de": a comma between two single words is "Family, Given", one name.
	if parts := strings.Split(s, ","); len(parts) == 2 && len(strings.Fields(parts[0])) == 1 && len(strings.Fields(parts[1])) <= 2 &&
		!strings.Contains(strings.ToLower(s), " and ") {
		return []string{s}
	}
	return splitOutsideParens(s)
}

// splitOutsideParens splits at name separators that are not inside parentheses:
// "Martin Untersinger (avec Damien Leloup et Morgane Tual)" is one credit.
func splitOutsideParens(s string) []string {
	var out []string
	depth, last := 0, 0
	seps := nameSplit.FindAllStringIndex(s, -1)
	pos := 0
	for _, sep := range seps {
		for ; pos < sep[0]; pos++ {
			switch s[pos] {
			case '(', '[':
				depth++
			case ')', ']':
				depth = max(depth-1, 0)
			}
		}
		if depth == 0 {
			out = append(out, s[last:sep[0]])
			last = sep[1]
		}
	}
	return append(out, s[last:])
}

// cleanNames trims names, drops what cannot be a person's or organization's name (URLs,
// empty strings, long sentences, strings without letters) and duplicates.
func cleanNames(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimFunc(cleanText(n), func(r rune) bool {
			return unicode.IsSpace(r) || r == ',' || r == '-' || r == ':' || r == '|' || r == '@'
		})
		if n == "" || looksLikeURL(n) || len([]rune(n)) > 80 || len(strings.Fields(n)) > 8 || !hasLetter(n) {
			continue
		}
		k := strings.ToLower(n)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, n)
	}
	return out
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}
