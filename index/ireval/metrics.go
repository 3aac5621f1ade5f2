package ireval

import "math"

// AveragePrecision is the mean of the precision at each relevant document's rank in
// ranking, over all relevant documents (those retrieved too late or never count 0).
// gains holds the judged documents; any gain above 0 is relevant.
func AveragePrecision(ranking []string, gains map[string]int) float64 {
	relevant := 0
	for _, g := range gains {
		if g > 0 {
			relevant++
		}
	}
	if relevant == 0 {
		return 0
	}
	found, sum := 0, 0.0
	seen := make(map[string]bool, len(ranking))
	for i, id := range ranking {
		if seen[id] {
			continue // a ranking that repeats a document gets no credit for it twice
		}
		seen[id] = true
		if gains[id] > 0 {
			found++
			sum += float64(found) / float64(i+1)
		}
	}
	return sum / float64(relevant)
}

// NDCG is the normalized discounted cumulative gain of ranking at depth k: the sum over
// the first k results of gain / log2(rank + 1), divided by the same sum for the ideal
// ordering of the judged documents (linear gains, as trec_eval's ndcg_cut).
func NDCG(ranking []string, gains map[string]int, k int) float64 {
	dcg := 0.0
	seen := map[string]bool{}
	for i, id := range ranking {
		if i >= k {
			break
		}
		if !seen[id] {
			dcg += float64(gains[id]) / math.Log2(float64(i+2))
		}
		seen[id] = true
	}
	ideal := make([]int, 0, len(gains))
	for _, g := range gains {
		if g > 0 {
			ideal = append(ideal, g)
		}
	}
	// Sort gains descending (few of them: insertion sort).
	for i := 1; i < len(ideal); i++ {
		for j := i; j > 0 && ideal[j] > ideal[j-1]; j-- {
			ideal[j], ideal[j-1] = ideal[j-1], ideal[j]
		}
	}
	idcg := 0.0
	for i, g := range ideal {
		if i >= k {
			break
		}
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}
