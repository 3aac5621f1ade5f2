package index

import (
	"bytes"
	"context"
	"sort"

	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// This file is pseudo-relevance feedback: RM3, the relevance model of Lavrenko and Croft
// (SIGIR 2001) interpolated with the query, as Abdul-Jaleel et al. ran it at TREC 2004
// and as Anserini and Terrier run it by default in their feedback experiments.
//
// Why: people type questions in their own words, and the pages that answer them use other
// words as well ("pressure distribution" and "slender bodies" for "cones"). The best
// few matches of a query say which words those are: the words they share, weighted by how
// well each page matched. RM3 adds them to the query with a small weight of their own.
// On Cranfield asked through the HTTP API it gained 5 % of nDCG@10 on the tuning half and
// 7 % on the held-out half with the textbook settings below, chosen on neither (see
// docs/benchmarks.md).
//
// A word found in most of the collection's documents is left out of the model: its
// Robertson–Spärck Jones weight, log((N − df + ½)/(df + ½)), is below zero past half the
// documents — its presence says nothing for a topic. Without this rule, on a collection
// whose every word is common (the demo's generated web, where each word is in about 60 %
// of the pages), the model is ten words that any long page has, and feedback lifted long
// pages that mention the query in passing above the page titled with it (issue 13's
// "museum import"). On Cranfield few words are that common and the scores are unchanged.
//
// Three choices differ from the textbook, to keep what a query matches the same as without
// feedback and its cost bounded: the expansion words only rescore the documents the query
// matches (a result never gains pages that have none of the words typed, and totals,
// facets and the implicit AND mean what they did); they rescore only the best Window
// matches (Ranking.Window, as the link blend does), so a common word's hundred thousand
// matches cost no more than its best two hundred; and the model reads at most
// feedbackRead bytes of each page, so that its cost does not grow with page size.
const (
	feedbackDocs  = 10       // best matches the model is made of (Anserini's fbDocs)
	feedbackTerms = 10       // words it adds (fbTerms)
	feedbackRead  = 16 << 10 // bytes of a document's title and body it reads

	// feedbackCandidates is how many of the model's likeliest words are checked against
	// the collection for the feedbackTerms kept: the common ones among them are dropped.
	feedbackCandidates = 3 * feedbackTerms
)

// feedbackWord is one word of a relevance model: a term of one analyzer language and
// its probability.
type feedbackWord struct {
	lang, term string
	p          float64
}

// relevanceModel returns the feedbackTerms most likely words of the relevance model of
// hits (RM1): P(w|R) = Σ_d P(w|d)·P(d|q), with P(w|d) the word's share of the document's
// terms and P(d|q) the document's share of the hits' text scores. Words for which common
// says true are left out (see the file's comment); common may be nil. Probabilities are
// renormalized over the words kept.
func (ix *Index) relevanceModel(ctx context.Context, hits []scored, common func(feedbackWord) (bool, error)) ([]feedbackWord, error) {
	total := 0.0
	for _, h := range hits {
		total += max(0, h.text)
	}
	if total <= 0 {
		return nil, nil
	}
	model := map[modelKey]float64{}
	tf := map[string]int{}
	for _, h := range hits {
		if h.text <= 0 {
			continue
		}
		d, ok, err := ix.Document(ctx, h.id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // deleted since the search
		}
		code := langCode(d.Lang)
		text := d.Title + "\n" + d.Body
		if len(text) > feedbackRead {
			text = text[:feedbackRead]
		}
		clear(tf)
		n := 0
		for _, t := range textAnalyzerFor(code).Terms(text) {
			// One-letter terms and numbers say little about a topic and match widely.
			if len(t) < 2 || isNumber(t) {
				continue
			}
			tf[t]++
			n++
		}
		if n == 0 {
			continue
		}
		pd := h.text / total
		for t, c := range tf {
			model[modelKey{code, t}] += pd * float64(c) / float64(n)
		}
	}
	words := topWords(model, feedbackCandidates)
	kept := words[:0]
	for _, w := range words {
		if len(kept) == feedbackTerms {
			break
		}
		if common != nil {
			c, err := common(w)
			if err != nil {
				return nil, err
			}
			if c {
				continue
			}
		}
		kept = append(kept, w)
	}
	words = kept
	if len(words) == 0 {
		return nil, nil
	}
	sum := 0.0
	for _, w := range words {
		sum += w.p
	}
	for i := range words {
		words[i].p /= sum
	}
	return words, nil
}

// modelKey is a word of a relevance model: a term of one analyzer language.
type modelKey struct{ lang, term string }

// topWords returns the n most likely words of model, most likely first (see before), in
// one pass that keeps the best so far in order: a model has thousands of words and only
// ten are kept, and sorting them all (ties broken by a concatenated key) cost a twentieth
// of a search's CPU on 100,000 pages.
func topWords(model map[modelKey]float64, n int) []feedbackWord {
	words := make([]feedbackWord, 0, n+1)
	for k, p := range model {
		w := feedbackWord{k.lang, k.term, p}
		if len(words) == n && !w.before(words[n-1]) {
			continue
		}
		i := len(words)
		for i > 0 && w.before(words[i-1]) {
			i--
		}
		words = append(words, feedbackWord{})
		copy(words[i+1:], words[i:])
		words[i] = w
		words = words[:min(len(words), n)]
	}
	return words
}

// before orders a relevance model's words: the more likely first, then by language and
// term (every language code has two letters, so this is the order of lang+term).
func (w feedbackWord) before(o feedbackWord) bool {
	if w.p != o.p {
		return w.p > o.p
	}
	if w.lang != o.lang {
		return w.lang < o.lang
	}
	return w.term < o.term
}

func isNumber(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// feedback returns the collector's rescore step for a query of words words and phrases
// (RM3): when the query matches more documents than the model reads, the model of the best
// feedbackDocs rescores the best r.Window as
//
//	(1 − r.Feedback) × score / words + r.Feedback × Σ P(w|R) × BM25F(w)
//
// so each typed word weighs (1 − r.Feedback)/words against the model's words, as in RM3's
// interpolated query. The matches after the window keep their order, their scores scaled
// alike, below the window's.
func (ix *Index) feedback(ctx context.Context, r Ranking, words int, stats *bm25fStats) func(bindex.IndexReader, []collectedHit, uint64) error {
	return func(ir bindex.IndexReader, best []collectedHit, total uint64) error {
		// With no more matches than the model reads there is no best few to learn from:
		// the model would be all the matches, and would only rank them by their likeness
		// to each other.
		if total <= feedbackDocs || len(best) == 0 {
			return nil
		}
		top := make([]scored, 0, feedbackDocs)
		for _, h := range best[:min(len(best), feedbackDocs)] {
			id, err := ir.ExternalID(h.iid)
			if err != nil {
				return err
			}
			top = append(top, scored{id: id, text: h.score})
		}
		// A word is common when the body fields of more than half of its language's
		// documents have it (the field most documents have; the same counts the query's
		// IDF comes from).
		common := func(w feedbackWord) (bool, error) {
			n := stats.langs[w.lang]
			if n <= 0 {
				return false, nil
			}
			fr, err := ir.TermFieldReader(ctx, []byte(w.term), langField(fieldBody, w.lang), false, false, false)
			if err != nil {
				return false, err
			}
			df := fr.Count()
			if err := fr.Close(); err != nil {
				return false, err
			}
			return float64(df) > n/2, nil
		}
		model, err := ix.relevanceModel(ctx, top, common)
		if err != nil || len(model) == 0 {
			return err
		}
		ws := make([]bm25fWord, len(model))
		for i, m := range model {
			ws[i] = bm25fWord{terms: map[string]string{m.lang: m.term}, weight: r.Feedback * m.p}
		}
		q := &bm25fQuery{words: ws, fields: textFields, r: r, stats: stats}
		s, err := q.Searcher(ctx, ir, ix.bi.Mapping(), search.SearcherOptions{})
		if err != nil {
			return err
		}
		defer s.Close()
		scale := (1 - r.Feedback) / float64(max(1, words))
		for i := range best {
			best[i].score *= scale
		}
		window := best[:min(len(best), r.Window)]
		// The expansion's postings are read forward, in document order.
		order := make([]int, len(window))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return bytes.Compare(window[order[a]].iid, window[order[b]].iid) < 0 })
		sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0), IndexReader: ir}
		var at *search.DocumentMatch // the expansion's last match, at or after the document asked
		for _, i := range order {
			h := &window[i]
			if at == nil || bytes.Compare(at.IndexInternalID, h.iid) < 0 {
				if at != nil {
					sctx.DocumentMatchPool.Put(at)
				}
				if at, err = s.Advance(sctx, h.iid); err != nil {
					return err
				}
				if at == nil {
					break // the expansion matches nothing further
				}
			}
			if bytes.Equal(at.IndexInternalID, h.iid) {
				h.score += at.Score
			}
		}
		sort.SliceStable(window, func(a, b int) bool {
			if window[a].score != window[b].score {
				return window[a].score > window[b].score
			}
			return bytes.Compare(window[a].iid, window[b].iid) < 0
		})
		return nil
	}
}
