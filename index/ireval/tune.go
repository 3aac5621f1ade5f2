package ireval

import (
	"context"
	"fmt"
	"io"

	"github.com/sonda-search/sonda/index"
)

// Parameter is a ranking parameter the tuner varies, with the values it tries.
type Parameter struct {
	Name   string
	Values []float64
	set    func(r *index.Ranking, v float64)
	get    func(r index.Ranking) float64
}

// Parameters are the ranking parameters Cranfield can inform: the title's weight against
// the body's (1), BM25's k1 and b, and the proximity weight. (The collection has no
// headings, descriptions, anchors or URLs, so it says nothing about their weights.)
func Parameters() []Parameter {
	return []Parameter{
		{"title", []float64{0.5, 1, 1.5, 2, 3, 4}, func(r *index.Ranking, v float64) { r.Title = v }, func(r index.Ranking) float64 { return r.Title }},
		{"k1", []float64{0.6, 0.9, 1.2, 1.5, 2, 2.5, 3}, func(r *index.Ranking, v float64) { r.K1 = v }, func(r index.Ranking) float64 { return r.K1 }},
		{"b", []float64{0.3, 0.45, 0.6, 0.75, 0.9}, func(r *index.Ranking, v float64) { r.B = v }, func(r index.Ranking) float64 { return r.B }},
		{"proximity", []float64{0, 0.1, 0.25, 0.5, 1, 2}, func(r *index.Ranking, v float64) { r.Proximity = v }, func(r index.Ranking) float64 { return r.Proximity }},
	}
}

// TuneRanking chooses ranking parameters by coordinate ascent on the tuning half of the queries:
// starting from start, it sets each parameter in turn to the value with the best MAP
// (nDCG@10 breaking ties), and repeats until a round changes nothing (at most rounds
// rounds). It never looks at the test half. Progress goes to log (nil: nowhere).
func TuneRanking(ctx context.Context, c *Collection, ix *index.Index, start index.Ranking, rounds int, log io.Writer) (index.Ranking, Scores, error) {
	if log == nil {
		log = io.Discard
	}
	eval := func(r index.Ranking) (Scores, error) {
		if err := ix.SetRanking(r); err != nil {
			return Scores{}, err
		}
		return Evaluate(ctx, c, Tune, Sonda(ix))
	}
	best := start
	bestScore, err := eval(best)
	if err != nil {
		return best, Scores{}, err
	}
	fmt.Fprintf(log, "start: MAP %.4f nDCG@10 %.4f\n", bestScore.MAP, bestScore.NDCG10)
	better := func(a, b Scores) bool { return a.MAP > b.MAP+1e-9 || a.MAP > b.MAP-1e-9 && a.NDCG10 > b.NDCG10+1e-9 }
	for round := 1; round <= rounds; round++ {
		changed := false
		for _, p := range Parameters() {
			for _, v := range p.Values {
				if v == p.get(best) {
					continue
				}
				r := best
				p.set(&r, v)
				s, err := eval(r)
				if err != nil {
					return best, bestScore, err
				}
				if better(s, bestScore) {
					best, bestScore, changed = r, s, true
					fmt.Fprintf(log, "round %d: %s = %g: MAP %.4f nDCG@10 %.4f\n", round, p.Name, v, s.MAP, s.NDCG10)
				}
			}
		}
		if !changed {
			break
		}
	}
	return best, bestScore, ix.SetRanking(best)
}
