package index

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestTopWords: the relevance model's kept words are those a full sort by likelihood, then
// language and term, would put first, ties included.
func TestTopWords(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 200 {
		model := map[modelKey]float64{}
		for i := range rng.Intn(60) {
			// Few distinct probabilities: many ties, as words counted once in one page have.
			model[modelKey{[]string{"en", "pt", "xx"}[rng.Intn(3)], fmt.Sprintf("w%d", i)}] = float64(1+rng.Intn(4)) / 8
		}
		var all []feedbackWord
		for k, p := range model {
			all = append(all, feedbackWord{k.lang, k.term, p})
		}
		slices.SortFunc(all, func(a, b feedbackWord) int {
			switch {
			case a.p != b.p && a.p > b.p:
				return -1
			case a.p != b.p:
				return 1
			case a.lang+a.term < b.lang+b.term:
				return -1
			default:
				return 1
			}
		})
		n := 1 + rng.Intn(12)
		want := all[:min(n, len(all))]
		if got := topWords(model, n); !slices.Equal(got, want) {
			t.Fatalf("trial %d, n %d: %v, want %v", trial, n, got, want)
		}
	}
}
