package index

import (
	"bytes"
	"context"
	"reflect"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
)

// sumQuery matches documents that match any of its clauses and scores them with the sum
// of the clauses' scores. It is Bleve's disjunction without the coordination factor,
// which multiplies a document's score by the fraction of clauses it matched: on top of
// BM25, whose sum already rewards documents that match more of the query, that factor
// punishes a document heavily for missing one clause (a phrase, a group) of a long query.
type sumQuery struct {
	clauses []bq.Query
}

// Searcher implements Bleve's query.Query.
func (q *sumQuery) Searcher(ctx context.Context, i bindex.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	s := &sumSearcher{}
	for _, c := range q.clauses {
		cs, err := c.Searcher(ctx, i, m, options)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.children = append(s.children, cs)
	}
	s.current = make([]*search.DocumentMatch, len(s.children))
	return s, nil
}

type sumSearcher struct {
	children []search.Searcher
	current  []*search.DocumentMatch // each child's next match; nil when done
	started  bool
}

var reflectStaticSizeSum = int(reflect.TypeOf(sumSearcher{}).Size())

func (s *sumSearcher) Size() int {
	n := reflectStaticSizeSum
	for _, c := range s.children {
		n += c.Size()
	}
	return n
}

func (s *sumSearcher) Weight() float64 {
	w := 0.0
	for _, c := range s.children {
		w += c.Weight()
	}
	return w
}

func (s *sumSearcher) SetQueryNorm(n float64) {
	for _, c := range s.children {
		c.SetQueryNorm(n)
	}
}

func (s *sumSearcher) Count() uint64 {
	var n uint64
	for _, c := range s.children {
		n += c.Count()
	}
	return n
}

func (s *sumSearcher) Min() int { return 0 }

func (s *sumSearcher) DocumentMatchPoolSize() int {
	n := 1
	for _, c := range s.children {
		n += c.DocumentMatchPoolSize()
	}
	return n
}

func (s *sumSearcher) Close() error {
	var first error
	for _, c := range s.children {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *sumSearcher) start(ctx *search.SearchContext) error {
	if s.started {
		return nil
	}
	s.started = true
	for i, c := range s.children {
		m, err := c.Next(ctx)
		if err != nil {
			return err
		}
		s.current[i] = m
	}
	return nil
}

func (s *sumSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s.emit(ctx)
}

func (s *sumSearcher) Advance(ctx *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	for i, c := range s.children {
		m := s.current[i]
		if m == nil || bytes.Compare(m.IndexInternalID, id) >= 0 {
			continue
		}
		ctx.DocumentMatchPool.Put(m)
		next, err := c.Advance(ctx, id)
		if err != nil {
			return nil, err
		}
		s.current[i] = next
	}
	return s.emit(ctx)
}

// emit returns the smallest current document with the sum of the scores of the children
// at it, and moves those children on.
func (s *sumSearcher) emit(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	var low bindex.IndexInternalID
	for _, m := range s.current {
		if m != nil && (low == nil || bytes.Compare(m.IndexInternalID, low) < 0) {
			low = m.IndexInternalID
		}
	}
	if low == nil {
		return nil, nil
	}
	out := ctx.DocumentMatchPool.Get()
	out.IndexInternalID = append(out.IndexInternalID[:0], low...)
	out.Score = 0
	for i, c := range s.children {
		m := s.current[i]
		if m == nil || !bytes.Equal(m.IndexInternalID, out.IndexInternalID) {
			continue
		}
		out.Score += m.Score
		ctx.DocumentMatchPool.Put(m)
		next, err := c.Next(ctx)
		if err != nil {
			return nil, err
		}
		s.current[i] = next
	}
	return out, nil
}

// constQuery matches what its query matches, every document with the same score. Range
// filters (after:, before:, bbox:) use it: Bleve expands a range into one term per value
// and precision the index holds and scores a match by that term's rarity and the number
// of terms, so the same document would score differently in indexes holding different
// dates — and a filter's matches are all equally good anyway.
type constQuery struct {
	q     bq.Query
	score float64
}

// Searcher implements Bleve's query.Query.
func (q *constQuery) Searcher(ctx context.Context, i bindex.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	s, err := q.q.Searcher(ctx, i, m, options)
	if err != nil {
		return nil, err
	}
	return &constSearcher{Searcher: s, score: q.score}, nil
}

type constSearcher struct {
	search.Searcher
	score float64
}

func (s *constSearcher) Weight() float64      { return s.score * s.score }
func (s *constSearcher) SetQueryNorm(float64) {}

func (s *constSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	dm, err := s.Searcher.Next(ctx)
	if dm != nil {
		dm.Score = s.score
	}
	return dm, err
}

func (s *constSearcher) Advance(ctx *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	dm, err := s.Searcher.Advance(ctx, id)
	if dm != nil {
		dm.Score = s.score
	}
	return dm, err
}
