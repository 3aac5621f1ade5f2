package ireval

import (
	"context"
	"fmt"

	"github.com/sonda-search/sonda/index"
)

// Depth is how many results a run ranks per query (TREC's usual depth, and sonda's cap).
const Depth = 1000

// Scores are a run's mean metrics over a set of queries.
type Scores struct {
	MAP     float64 `json:"map"`
	NDCG10  float64 `json:"ndcg10"`
	Queries int     `json:"queries"`
}

// Split says which queries a score covers: the tuning half (odd query numbers), the test
// half (even ones) or all of them. Ranking parameters are chosen on the tuning half only,
// so the test half shows whether the choice generalizes.
type Split int

const (
	All Split = iota
	Tune
	Test
)

func (s Split) String() string { return [...]string{"all", "tune", "test"}[s] }

func (s Split) has(num int) bool {
	switch s {
	case Tune:
		return num%2 == 1
	case Test:
		return num%2 == 0
	}
	return true
}

// Ranker ranks the collection for a query.
type Ranker func(ctx context.Context, q Query) ([]string, error)

// Evaluate runs rank over the queries of split that have judgements.
func Evaluate(ctx context.Context, c *Collection, split Split, rank Ranker) (Scores, error) {
	var s Scores
	for _, q := range c.Queries {
		gains := c.Grades[q.Num]
		if !split.has(q.Num) || len(gains) == 0 {
			continue
		}
		ranking, err := rank(ctx, q)
		if err != nil {
			return Scores{}, fmt.Errorf("query %d (%s): %w", q.Num, q.ID, err)
		}
		s.MAP += AveragePrecision(ranking, gains)
		s.NDCG10 += NDCG(ranking, gains, 10)
		s.Queries++
	}
	if s.Queries > 0 {
		s.MAP /= float64(s.Queries)
		s.NDCG10 /= float64(s.Queries)
	}
	return s, nil
}

// Baseline returns the plain BM25 ranker (k1 = 1.2, b = 0.75, title and body in one field).
func Baseline(c *Collection) (Ranker, error) {
	ids := make([]string, len(c.Docs))
	texts := make([]string, len(c.Docs))
	for i, d := range c.Docs {
		ids[i], texts[i] = d.ID, d.Title+"\n"+d.Text
	}
	bm, err := NewBM25(ids, texts, 1.2, 0.75)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, q Query) ([]string, error) { return bm.Search(q.Text, Depth), nil }, nil
}

// Documents are the collection as sonda documents: the title, the abstract as body,
// English.
func Documents(c *Collection) []index.Doc {
	docs := make([]index.Doc, len(c.Docs))
	for i, d := range c.Docs {
		docs[i] = index.Doc{ID: d.ID, Kind: "abstract", Title: d.Title, Body: d.Text, Lang: "en", Relevance: -1}
	}
	return docs
}

// Load indexes the collection into ix.
func Load(ctx context.Context, ix *index.Index, c *Collection) error {
	docs := Documents(c)
	for i := 0; i < len(docs); i += 500 {
		if err := ix.Put(ctx, docs[i:min(i+500, len(docs))]...); err != nil {
			return err
		}
	}
	return nil
}

// Sonda returns the ranker that searches ix. Each query is given to sonda's query parser
// as written, with OR as the implicit operator: Cranfield queries are questions in plain
// English, which no abstract answers word for word, so they are run as bags of words, as
// the baseline runs them.
func Sonda(ix *index.Index) Ranker {
	return func(ctx context.Context, q Query) ([]string, error) {
		ids, _, err := ix.SearchIDs(ctx, q.Text, Depth, "or")
		return ids, err
	}
}

// Row is one system's scores.
type Row struct {
	System string `json:"system"`
	All    Scores `json:"all"`
	Tune   Scores `json:"tune"`
	Test   Scores `json:"test"`
	// An end-to-end run's pages indexed from the crawl and its API latency (first result
	// page per query, milliseconds).
	Pages int     `json:"pages,omitempty"`
	P50MS float64 `json:"p50_ms,omitempty"`
	P99MS float64 `json:"p99_ms,omitempty"`
}

// Compare evaluates the baseline and sonda's search (ix, loaded with the collection) on
// every split.
func Compare(ctx context.Context, c *Collection, ix *index.Index) ([]Row, error) {
	base, err := Baseline(c)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, sys := range []struct {
		name string
		rank Ranker
	}{{"plain BM25 (k1 1.2, b 0.75; title+body; no stemming)", base}, {"sonda", Sonda(ix)}} {
		// Rank each query once; the splits only choose which rankings to average.
		rankings := map[int][]string{}
		for _, q := range c.Queries {
			if rankings[q.Num], err = sys.rank(ctx, q); err != nil {
				return nil, fmt.Errorf("%s: query %d (%s): %w", sys.name, q.Num, q.ID, err)
			}
		}
		row, err := Score(ctx, c, sys.name, rankings)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Score evaluates rankings made elsewhere (query number → document IDs, best first; the
// end-to-end run reads them from the HTTP API) on every split.
func Score(ctx context.Context, c *Collection, system string, rankings map[int][]string) (Row, error) {
	cached := func(_ context.Context, q Query) ([]string, error) { return rankings[q.Num], nil }
	row := Row{System: system}
	for _, sp := range []struct {
		split Split
		out   *Scores
	}{{All, &row.All}, {Tune, &row.Tune}, {Test, &row.Test}} {
		var err error
		if *sp.out, err = Evaluate(ctx, c, sp.split, cached); err != nil {
			return Row{}, err
		}
	}
	return row, nil
}
