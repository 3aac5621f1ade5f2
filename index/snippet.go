package index

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/sonda-search/sonda/text"
)

// Snippet sizes.
const (
	snippetTokens  = 32       // analyzed words in a snippet window
	snippetScanMax = 64 << 10 // bytes of a body scanned for the best window
	snippetPlain   = 200      // bytes shown when no query word occurs
)

// snippet returns the part of body that best shows the query terms (analyzed in language
// code), HTML-escaped, with each occurrence wrapped in <mark>…</mark> and "…" where the text
// was cut. The best window is the one with the most distinct query terms, then the most
// occurrences: a reader sees as many of the words they asked for as possible.
func snippet(body, code string, want map[string]bool) string {
	if len(body) > snippetScanMax {
		body = text.CutBytes(body, snippetScanMax)
	}
	if len(want) == 0 {
		return plainSnippet(body)
	}
	a := textAnalyzerFor(code)
	ts := text.Words(body)
	// Analyzing every word of a body costs more than the rest of a search: look only at
	// words that can stem to a wanted term, which starts like the word (stems cut endings;
	// folding only maps accented letters to ASCII ones).
	filter := prefixFilter(want)
	type hit struct {
		tok  int // index in ts
		term string
	}
	var hits []hit
	for i, w := range ts {
		if !filter.maybe(w.Term) {
			continue
		}
		if term, ok := a.Term(w.Term); ok && want[term] {
			hits = append(hits, hit{i, term})
		}
	}
	if len(hits) == 0 {
		return plainSnippet(body)
	}
	// Slide a window of snippetTokens tokens over the hits.
	bestStart, bestDistinct, bestCount := 0, 0, 0
	counts := map[string]int{}
	lo := 0
	for hi := range hits {
		counts[hits[hi].term]++
		for hits[hi].tok-hits[lo].tok >= snippetTokens {
			if counts[hits[lo].term]--; counts[hits[lo].term] == 0 {
				delete(counts, hits[lo].term)
			}
			lo++
		}
		if d, c := len(counts), hi-lo+1; d > bestDistinct || d == bestDistinct && c > bestCount {
			bestStart, bestDistinct, bestCount = lo, d, c
		}
	}
	first := hits[bestStart].tok
	// Start a few words before the first hit, so it is seen in context.
	startTok := max(0, first-4)
	endTok := min(len(ts)-1, startTok+snippetTokens-1)
	from, to := ts[startTok].Start, ts[endTok].End
	if startTok == 0 {
		from = 0
	}
	if endTok == len(ts)-1 {
		to = len(body)
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("… ")
	}
	pos := from
	for _, h := range hits {
		tok := ts[h.tok]
		if tok.Start < from || tok.End > to || tok.Start < pos {
			continue
		}
		b.WriteString(html.EscapeString(body[pos:tok.Start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(body[tok.Start:tok.End]))
		b.WriteString("</mark>")
		pos = tok.End
	}
	b.WriteString(html.EscapeString(body[pos:to]))
	if to < len(body) {
		b.WriteString(" …")
	}
	return strings.TrimSpace(b.String())
}

// prefixes is a quick test of whether a word can analyze to one of a set of terms: the
// lowercase ASCII first three bytes of the word against those of the terms. Words that
// are short or start with non-ASCII letters always pass.
type prefixes map[[3]byte]bool

func prefixFilter(terms map[string]bool) prefixes {
	p := prefixes{}
	for t := range terms {
		if len(t) < 3 {
			return nil // a short term: its words may be short too; test them all
		}
		p[[3]byte{t[0], t[1], t[2]}] = true
	}
	return p
}

func (p prefixes) maybe(word string) bool {
	if p == nil || len(word) < 3 {
		return true
	}
	var k [3]byte
	for i := 0; i < 3; i++ {
		c := word[i]
		if c >= utf8.RuneSelf {
			return true
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		k[i] = c
	}
	return p[k]
}

// plainSnippet is the start of text, cut at a word boundary.
func plainSnippet(body string) string {
	body = strings.TrimSpace(body)
	if len(body) <= snippetPlain {
		return html.EscapeString(body)
	}
	cut := text.CutBytes(body, snippetPlain)
	if i := strings.LastIndexAny(cut, " \n\t"); i > snippetPlain/2 {
		cut = cut[:i]
	}
	return html.EscapeString(cut) + " …"
}
