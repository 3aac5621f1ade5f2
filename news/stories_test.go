package news

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sonda-search/sonda/fingerprint"
)

// pairwiseGroups is the reference grouping: every pair compared.
func pairwiseGroups(canon []string, sims []uint64) map[int][]int {
	parent := make([]int, len(sims))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	for i := range sims {
		for j := 0; j < i; j++ {
			if (canon[i] != "" && canon[i] == canon[j]) || (sims[i] != 0 && sims[j] != 0 && fingerprint.NearDuplicate(sims[i], sims[j])) {
				parent[find(i)] = find(j)
			}
		}
	}
	groups := map[int][]int{}
	for i := range sims {
		groups[find(i)] = append(groups[find(i)], i)
	}
	return groups
}

// partition is a grouping in a comparable form: each group's members, sorted.
func partition(groups map[int][]int) []string {
	var out []string
	for _, g := range groups {
		g = slices.Clone(g)
		slices.Sort(g)
		out = append(out, fmt.Sprint(g))
	}
	slices.Sort(out)
	return out
}

// storyArticles makes n articles in stories of a few copies each: copies flip up to five
// bits of their story's SimHash (so some are near copies and some are not, and chains
// join through a middle copy), some share a canonical URL, some are exact copies and some
// have no SimHash.
func storyArticles(n int, seed uint64) (canon []string, sims []uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(sims) < n {
		base := rng.Uint64()
		story := len(sims)
		for c := 0; c < 1+rng.IntN(4) && len(sims) < n; c++ {
			h := base
			for range rng.IntN(6) {
				h ^= 1 << rng.IntN(64)
			}
			switch rng.IntN(10) {
			case 0:
				h = 0
			case 1:
				h = base
			}
			cn := ""
			if rng.IntN(5) == 0 {
				cn = fmt.Sprintf("https://news.example/story/%d", story)
			}
			canon, sims = append(canon, cn), append(sims, h)
		}
	}
	return canon, sims
}

// TestStoryGroupsMatchPairwise: grouping through SimHash bands finds exactly the groups
// that comparing every pair finds.
func TestStoryGroupsMatchPairwise(t *testing.T) {
	for seed := range uint64(20) {
		canon, sims := storyArticles(600, seed)
		got, want := partition(storyGroups(canon, sims)), partition(pairwiseGroups(canon, sims))
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: %d groups through bands, %d comparing every pair", seed, len(got), len(want))
		}
		if len(want) >= len(sims) || len(want) < len(sims)/5 {
			t.Fatalf("seed %d: %d groups of %d articles: the fixture does not exercise grouping", seed, len(want), len(sims))
		}
	}
}

// BenchmarkStoryGroups: grouping 20,000 articles of one topic into stories, through SimHash
// bands and (for comparison) by comparing every pair, as Stories did before.
func BenchmarkStoryGroups(b *testing.B) {
	canon, sims := storyArticles(20000, 7)
	b.Run("bands", func(b *testing.B) {
		for b.Loop() {
			storyGroups(canon, sims)
		}
	})
	b.Run("pairwise", func(b *testing.B) {
		for b.Loop() {
			pairwiseGroups(canon, sims)
		}
	})
}
