package index

import (
	"html"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sonda-search/sonda/text"
)

// Snippet sizes.
const (
	snippetTokens  = 32       // analyzed words in a snippet window
	snippetLead    = 4        // words shown before the first word found
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
	hits := snippetHits(body, code, want)
	if len(hits) == 0 {
		return plainSnippet(body)
	}
	return markWindow(body, hits)
}

// snippetHit is an occurrence of a query term in a body.
type snippetHit struct {
	tok        int // index among the body's words
	start, end int // its offsets
	term       string
	// The window that starts a few words before it (snippetLead) and holds snippetTokens
	// words: the offset it starts at (0 when it starts with the body) and ends at
	// (len(body) when it ends with the body), and the index of its last word.
	from, to, last int
}

// snippetHits returns the occurrences of the terms in body, in order.
//
// Analyzing every word of a body costs more than the rest of a search: it looks only at
// words that can stem to a wanted term, which starts like the word (stems cut endings;
// folding only maps accented letters to ASCII ones). And it reads the words in one pass
// without keeping them: a body has thousands, and the slice of them all was a third of
// the bytes a search allocated.
func snippetHits(body, code string, want map[string]bool) []snippetHit {
	a := textAnalyzerFor(code)
	filter := prefixFilter(want)
	var hits []snippetHit
	var recent [snippetLead + 1]int // the starts of the last words
	n, open := 0, 0                 // words read; the first hit whose window's end is not read
	text.EachWord(body, func(start, end int) {
		i := n
		n++
		recent[i%len(recent)] = start
		for open < len(hits) && hits[open].last == i {
			hits[open].to = end
			open++
		}
		w := body[start:end]
		if !filter.maybe(w) {
			return
		}
		if term, ok := a.Term(w); ok && want[term] {
			first := max(0, i-snippetLead)
			h := snippetHit{tok: i, start: start, end: end, term: term, from: recent[first%len(recent)], to: -1, last: first + snippetTokens - 1}
			if first == 0 {
				h.from = 0
			}
			hits = append(hits, h) // its last word is after it: read above
		}
	})
	for i := range hits {
		if hits[i].last >= n-1 { // the window reaches the last word: it ends with the body
			hits[i].to = len(body)
		}
	}
	return hits
}

// markWindow shows the window of body with the most distinct terms of hits, then the
// most hits, with the hits marked.
func markWindow(body string, hits []snippetHit) string {
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
	// Start a few words before the first hit, so it is seen in context.
	from, to := hits[bestStart].from, hits[bestStart].to
	var b strings.Builder
	if from > 0 {
		b.WriteString("… ")
	}
	pos := from
	for _, h := range hits {
		if h.start < from || h.end > to || h.start < pos {
			continue
		}
		b.WriteString(html.EscapeString(body[pos:h.start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(body[h.start:h.end]))
		b.WriteString("</mark>")
		pos = h.end
	}
	b.WriteString(html.EscapeString(body[pos:to]))
	if to < len(body) {
		b.WriteString(" …")
	}
	return strings.TrimSpace(b.String())
}

// prefixes is a quick test of whether a word can analyze to one of a set of terms: the
// lowercase ASCII first three bytes of the word against those of the terms. Words that
// are short or start with non-ASCII letters always pass. It is asked about every word of
// a result's body: the first byte is looked up in a bitmap, and the three in a short list
// (a map of them was a sixth of a snippet's CPU).
type prefixes struct {
	all   bool            // a term is short: its words may be short too; test them all
	first [4]uint64       // the terms' first bytes
	keys  []uint32        // the terms' first three bytes, distinct
	many  map[uint32]bool // keys, when there are many
}

func prefixFilter(terms map[string]bool) *prefixes {
	p := &prefixes{}
	for t := range terms {
		if len(t) < 3 {
			return &prefixes{all: true}
		}
		k := uint32(t[0])<<16 | uint32(t[1])<<8 | uint32(t[2])
		if !slices.Contains(p.keys, k) {
			p.keys = append(p.keys, k)
		}
		p.first[t[0]>>6] |= 1 << (t[0] & 63)
	}
	if len(p.keys) > 16 {
		p.many = make(map[uint32]bool, len(p.keys))
		for _, k := range p.keys {
			p.many[k] = true
		}
	}
	return p
}

func (p *prefixes) maybe(word string) bool {
	if p.all || len(word) < 3 {
		return true
	}
	var k uint32
	for i := 0; i < 3; i++ {
		c := word[i]
		if c >= utf8.RuneSelf {
			return true
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if i == 0 && p.first[c>>6]&(1<<(c&63)) == 0 {
			return false
		}
		k = k<<8 | uint32(c)
	}
	if p.many != nil {
		return p.many[k]
	}
	return slices.Contains(p.keys, k)
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
