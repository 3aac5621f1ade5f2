package ireval

import (
	"math"
	"sort"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/registry"
)

// BM25 is a textbook BM25 ranker over an in-memory inverted index.
type BM25 struct {
	K1, B float64

	analyzer analysis.Analyzer
	ids      []string
	lengths  []int
	avgLen   float64
	postings map[string][]posting
}

type posting struct {
	doc int
	tf  int
}

// NewBM25 indexes texts (by ID) for BM25 ranking with parameters k1 and b, analyzing them
// with Bleve's standard analyzer: Unicode word segmentation, lowercase, English stop words.
func NewBM25(ids, texts []string, k1, b float64) (*BM25, error) {
	a, err := registry.NewCache().AnalyzerNamed(standard.Name)
	if err != nil {
		return nil, err
	}
	return NewBM25With(a, ids, texts, k1, b), nil
}

// NewBM25With is NewBM25 with another analyzer.
func NewBM25With(a analysis.Analyzer, ids, texts []string, k1, b float64) *BM25 {
	x := &BM25{K1: k1, B: b, analyzer: a, ids: ids, lengths: make([]int, len(ids)), postings: map[string][]posting{}}
	total := 0
	for i, text := range texts {
		tf := map[string]int{}
		for _, t := range a.Analyze([]byte(text)) {
			tf[string(t.Term)]++
			x.lengths[i]++
		}
		total += x.lengths[i]
		for term, n := range tf {
			x.postings[term] = append(x.postings[term], posting{i, n})
		}
	}
	if len(ids) > 0 {
		x.avgLen = float64(total) / float64(len(ids))
	}
	return x
}

// Search returns the IDs of the best n documents for q, best first (ties by index order).
func (x *BM25) Search(q string, n int) []string {
	scores := x.scores(q)
	docs := make([]int, 0, len(scores))
	for d := range scores {
		docs = append(docs, d)
	}
	sort.Slice(docs, func(i, j int) bool {
		if scores[docs[i]] != scores[docs[j]] {
			return scores[docs[i]] > scores[docs[j]]
		}
		return docs[i] < docs[j]
	})
	out := make([]string, 0, min(n, len(docs)))
	for _, d := range docs[:min(n, len(docs))] {
		out = append(out, x.ids[d])
	}
	return out
}

// scores returns the BM25 score of every document that has a query term, by index.
func (x *BM25) scores(q string) map[int]float64 {
	seen := map[string]bool{}
	scores := map[int]float64{}
	N := float64(len(x.ids))
	for _, t := range x.analyzer.Analyze([]byte(q)) {
		term := string(t.Term)
		if seen[term] {
			continue
		}
		seen[term] = true
		ps := x.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (N-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := 1 - x.B + x.B*float64(x.lengths[p.doc])/x.avgLen
			scores[p.doc] += idf * tf * (x.K1 + 1) / (tf + x.K1*norm)
		}
	}
	return scores
}
