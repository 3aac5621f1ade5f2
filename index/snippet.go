package index

import (
	"html"
	"strings"
	"unicode/utf8"
)

// Snippet sizes.
const (
	snippetTokens  = 32       // analyzed words in a snippet window
	snippetScanMax = 64 << 10 // bytes of a body scanned for the best window
	snippetPlain   = 200      // bytes shown when no query word occurs
)

// snippet returns the part of text that best shows the query terms (analyzed in language
// code), HTML-escaped, with each occurrence wrapped in <mark>…</mark> and "…" where the text
// was cut. The best window is the one with the most distinct query terms, then the most
// occurrences: a reader sees as many of the words they asked for as possible.
func snippet(text, code string, want map[string]bool) string {
	if len(text) > snippetScanMax {
		text = cutAt(text, snippetScanMax)
	}
	if len(want) == 0 {
		return plainSnippet(text)
	}
	ts := analyzerFor(code).Analyze([]byte(text))
	type hit struct {
		tok  int // index in ts
		term string
	}
	var hits []hit
	for i, tok := range ts {
		if want[string(tok.Term)] {
			hits = append(hits, hit{i, string(tok.Term)})
		}
	}
	if len(hits) == 0 {
		return plainSnippet(text)
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
		to = len(text)
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
		b.WriteString(html.EscapeString(text[pos:tok.Start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[tok.Start:tok.End]))
		b.WriteString("</mark>")
		pos = tok.End
	}
	b.WriteString(html.EscapeString(text[pos:to]))
	if to < len(text) {
		b.WriteString(" …")
	}
	return strings.TrimSpace(b.String())
}

// plainSnippet is the start of text, cut at a word boundary.
func plainSnippet(text string) string {
	text = strings.TrimSpace(text)
	if len(text) <= snippetPlain {
		return html.EscapeString(text)
	}
	cut := cutAt(text, snippetPlain)
	if i := strings.LastIndexAny(cut, " \n\t"); i > snippetPlain/2 {
		cut = cut[:i]
	}
	return html.EscapeString(cut) + " …"
}

// cutAt cuts s to at most n bytes, on a rune boundary.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
