package index

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"sort"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
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
// Two choices differ from the textbook, both to keep what a query matches the same as
// without feedback: the expansion words only rescore the documents the query matches
// (a result never gains pages that have none of the words typed, and totals, facets and
// the implicit AND mean what they did), and the model reads at most feedbackRead bytes of
// each page, so that its cost does not grow with page size.
const (
	feedbackDocs  = 10       // best matches the model is made of (Anserini's fbDocs)
	feedbackTerms = 10       // words it adds (fbTerms)
	feedbackRead  = 16 << 10 // bytes of a document's title and body it reads
)

// feedbackWord is one word of a relevance model: a term of one analyzer language and
// its probability.
type feedbackWord struct {
	lang, term string
	p          float64
}

// relevanceModel returns the feedbackTerms most likely words of the relevance model of
// hits (RM1): P(w|R) = Σ_d P(w|d)·P(d|q), with P(w|d) the word's share of the document's
// terms and P(d|q) the document's share of the hits' text scores. Probabilities are
// renormalized over the words kept.
func (ix *Index) relevanceModel(ctx context.Context, hits []scored) ([]feedbackWord, error) {
	total := 0.0
	for _, h := range hits {
		total += max(0, h.text)
	}
	if total <= 0 {
		return nil, nil
	}
	type key struct{ lang, term string }
	model := map[key]float64{}
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
			model[key{code, t}] += pd * float64(c) / float64(n)
		}
	}
	words := make([]feedbackWord, 0, len(model))
	for k, p := range model {
		words = append(words, feedbackWord{k.lang, k.term, p})
	}
	sort.Slice(words, func(i, j int) bool {
		if words[i].p != words[j].p {
			return words[i].p > words[j].p
		}
		return words[i].lang+words[i].term < words[j].lang+words[j].term
	})
	words = words[:min(len(words), feedbackTerms)]
	sum := 0.0
	for _, w := range words {
		sum += w.p
	}
	for i := range words {
		words[i].p /= sum
	}
	return words, nil
}

func isNumber(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// feedbackQuery is q with the relevance model mixed in (RM3): a document q matches scores
// (1 − weight) × its score for q / words + weight × Σ P(w|R) × BM25F(w), where words is
// the number of words and phrases in q, so that each typed word weighs (1 − weight)/words
// against the model's words as in RM3's interpolated query.
func feedbackQuery(q bq.Query, model []feedbackWord, weight float64, words int, r Ranking, stats *bm25fStats) bq.Query {
	ws := make([]bm25fWord, len(model))
	for i, m := range model {
		ws[i] = bm25fWord{terms: map[string]string{m.lang: m.term}, weight: weight * m.p}
	}
	expansion := &bm25fQuery{words: ws, fields: textFields, r: r, stats: stats}
	return &rescoreQuery{q: q, scale: (1 - weight) / float64(max(1, words)), extra: expansion}
}

// rescoreQuery matches what q matches and scores scale × q's score plus extra's score
// where extra matches too: extra changes the order of q's matches, never which they are.
type rescoreQuery struct {
	q, extra bq.Query
	scale    float64
}

// Searcher implements Bleve's query.Query.
func (q *rescoreQuery) Searcher(ctx context.Context, i bindex.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	main, err := q.q.Searcher(ctx, i, m, options)
	if err != nil {
		return nil, err
	}
	extra, err := q.extra.Searcher(ctx, i, m, options)
	if err != nil {
		main.Close()
		return nil, err
	}
	return &rescoreSearcher{Searcher: main, extra: extra, scale: q.scale}, nil
}

type rescoreSearcher struct {
	search.Searcher
	extra search.Searcher
	scale float64
	at    *search.DocumentMatch // extra's current match (nil: none yet or done)
	done  bool                  // extra has no more matches
}

var reflectStaticSizeRescore = int(reflect.TypeOf(rescoreSearcher{}).Size())

func (s *rescoreSearcher) Size() int {
	return reflectStaticSizeRescore + s.Searcher.Size() + s.extra.Size()
}

func (s *rescoreSearcher) DocumentMatchPoolSize() int {
	return s.Searcher.DocumentMatchPoolSize() + s.extra.DocumentMatchPoolSize() + 1
}

func (s *rescoreSearcher) Close() error {
	err := s.Searcher.Close()
	if e := s.extra.Close(); err == nil {
		err = e
	}
	return err
}

func (s *rescoreSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	dm, err := s.Searcher.Next(ctx)
	if err != nil || dm == nil {
		return dm, err
	}
	return s.rescore(ctx, dm)
}

func (s *rescoreSearcher) Advance(ctx *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	dm, err := s.Searcher.Advance(ctx, id)
	if err != nil || dm == nil {
		return dm, err
	}
	return s.rescore(ctx, dm)
}

// rescore scales dm's score and adds extra's score for the same document: extra is
// advanced to it (documents come in increasing order from both).
func (s *rescoreSearcher) rescore(ctx *search.SearchContext, dm *search.DocumentMatch) (*search.DocumentMatch, error) {
	dm.Score *= s.scale
	if s.done {
		return dm, nil
	}
	if s.at == nil || bytes.Compare(s.at.IndexInternalID, dm.IndexInternalID) < 0 {
		if s.at != nil {
			ctx.DocumentMatchPool.Put(s.at)
		}
		at, err := s.extra.Advance(ctx, dm.IndexInternalID)
		if err != nil {
			return nil, err
		}
		s.at = at
		if at == nil {
			s.done = true
			return dm, nil
		}
	}
	if bytes.Equal(s.at.IndexInternalID, dm.IndexInternalID) && !math.IsNaN(s.at.Score) {
		dm.Score += s.at.Score
	}
	return dm, nil
}
