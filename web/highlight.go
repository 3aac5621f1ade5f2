package web

import (
	"html"
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

const (
	markOpen  = "<mark>"
	markClose = "</mark>"
)

// SafeSnippet returns s as HTML in which the only markup is balanced <mark> elements.
// Everything else is treated as text: entities are decoded once and the text is escaped
// again, so a snippet that is escaped text plus <mark> (what the index promises) comes out
// unchanged, and one that is not (a bug, a raw tag from a crawled page) cannot inject
// markup. It is the web layer's own guarantee, not a trust in the backend.
func SafeSnippet(s string) template.HTML {
	var b strings.Builder
	b.Grow(len(s) + 16)
	open := false
	for len(s) > 0 {
		i := strings.Index(s, "<mark>")
		j := strings.Index(s, "</mark>")
		next, tag := -1, ""
		switch {
		case i >= 0 && (j < 0 || i < j):
			next, tag = i, markOpen
		case j >= 0:
			next, tag = j, markClose
		}
		text := s
		if next >= 0 {
			text = s[:next]
		}
		b.WriteString(html.EscapeString(html.UnescapeString(text)))
		if next < 0 {
			break
		}
		s = s[next+len(tag):]
		switch {
		case tag == markOpen && !open:
			b.WriteString(markOpen)
			open = true
		case tag == markClose && open:
			b.WriteString(markClose)
			open = false
		}
		// A nested <mark> or a stray </mark> is dropped: the output stays balanced.
	}
	if open {
		b.WriteString(markClose)
	}
	return template.HTML(b.String())
}

// fieldsWithoutText are query fields whose values filter rather than match words of the
// document text, so the document view does not highlight them.
var fieldsWithoutText = map[string]bool{
	"site": true, "host": true, "lang": true, "type": true, "kind": true, "topic": true,
	"after": true, "before": true, "date": true, "inurl": true, "url": true,
}

// QueryTerms lists the words of a query that should be highlighted in a document: the
// words of terms and phrases, including those of title: and other text fields, but not
// excluded ones (-word, -"a phrase", NOT word), operators, or the values of filter
// fields such as site: and lang:. It never fails: it reads any string.
func QueryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		for _, w := range words(s) {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	negateNext := false
	for len(q) > 0 {
		r, size := utf8.DecodeRuneInString(q)
		switch {
		case unicode.IsSpace(r) || r == '(' || r == ')' || r == '+':
			q = q[size:]
			continue
		case r == '-' || r == '!':
			negateNext = true
			q = q[size:]
			continue
		}
		// One clause: an optional field, then a quoted phrase or a bare token.
		var token string
		field := ""
		if r != '"' {
			end := strings.IndexFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == ')' || r == '"' })
			if end < 0 {
				end = len(q)
			}
			token = q[:end]
			if f, v, ok := strings.Cut(token, ":"); ok && f != "" {
				field = strings.ToLower(f)
				token = v
				if v == "" && end < len(q) && q[end] == '"' { // title:"a phrase"
					q = q[end:]
					token, q = quoted(q)
				} else {
					q = q[end:]
				}
			} else {
				q = q[end:]
			}
		} else {
			token, q = quoted(q)
		}
		switch upper := strings.ToUpper(token); {
		case field == "" && (upper == "OR" || upper == "AND" || token == "||" || token == "&&"):
			continue
		case field == "" && upper == "NOT":
			negateNext = true
			continue
		}
		if !negateNext && !fieldsWithoutText[field] {
			add(token)
		}
		negateNext = false
	}
	return out
}

// quoted splits a leading "quoted phrase" (the quote may be unterminated) from the rest.
func quoted(q string) (phrase, rest string) {
	q = q[1:]
	if end := strings.IndexByte(q, '"'); end >= 0 {
		return q[:end], q[end+1:]
	}
	return q, ""
}

// words splits s into folded words: runs of letters and digits, lower-cased, without
// diacritics.
func words(s string) []string {
	var out []string
	for _, span := range wordSpans(s) {
		if w := fold(s[span[0]:span[1]]); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// wordSpans returns the byte ranges of the words of s: a letter or digit followed by
// letters, digits and combining marks.
func wordSpans(s string) [][2]int {
	var spans [][2]int
	start := -1
	for i, r := range s {
		// A word starts with a letter or digit; combining marks continue one.
		in := unicode.IsLetter(r) || unicode.IsDigit(r) || start >= 0 && unicode.Is(unicode.Mn, r)
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(s)})
	}
	return spans
}

// fold lower-cases w and removes its diacritics (é→e, ç→c), as search engines compare words.
func fold(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(w)
	}
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, w)
	if err != nil {
		out = w
	}
	return strings.ToLower(out)
}

// Highlight returns text as escaped HTML with <mark> around each word that matches one of
// the query terms. Words are compared through the analyzer when one is given (so stems
// match), otherwise after case and accent folding.
func Highlight(text string, terms []string, lang string, an TermAnalyzer) template.HTML {
	key := func(w string) []string { return []string{fold(w)} }
	if an != nil {
		key = func(w string) []string { return an.Terms(lang, w) }
	}
	want := map[string]bool{}
	for _, t := range terms {
		for _, k := range key(t) {
			want[k] = true
		}
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	if len(want) == 0 {
		b.WriteString(html.EscapeString(text))
		return template.HTML(b.String())
	}
	// Documents repeat their words: analyze each distinct word once.
	verdict := map[string]bool{}
	last := 0
	for _, span := range wordSpans(text) {
		w := text[span[0]:span[1]]
		hit, ok := verdict[w]
		if !ok {
			for _, k := range key(w) {
				if want[k] {
					hit = true
					break
				}
			}
			verdict[w] = hit
		}
		if !hit {
			continue
		}
		b.WriteString(html.EscapeString(text[last:span[0]]))
		b.WriteString(markOpen)
		b.WriteString(html.EscapeString(w))
		b.WriteString(markClose)
		last = span[1]
	}
	b.WriteString(html.EscapeString(text[last:]))
	return template.HTML(b.String())
}
