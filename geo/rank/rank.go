// Package rank owns the ranking of geographic-data producers and the evaluation measures
// the GeoDiscover thesis used (seed 000 §4.4, §4.6).
//
// Producer score (the thesis's method): build a site-to-site link map from absolute links,
// ignoring links within a site; each in-link weighs P = 2 when its origin site is a producer
// and P = 1 otherwise; a site's score is the sum. Results are ordered by score, then number
// of geographic files, then downloads. Duplicate edges count: the thesis's own example
// (Fig. 4-9) lists gismaps→inpe twice and scores inpe 7 with both. In sonda an edge is one
// page of the origin site linking to the destination site, so the count is "how many pages
// of a site link to another site", which is what the duplicate edge in the example means.
//
// LinkRank is the variant the issue asks for: PageRank over the same weighted site graph,
// so that a link from a well-linked producer is worth more than one from an obscure one.
package rank

import (
	"math"
	"sort"
	"strings"
)

// Edge is one link-map entry: a page of site From links to site To.
type Edge struct{ From, To string }

// Site normalizes a host or URL-ish site name: lowercase, no scheme, no "www.", no path.
func Site(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[i:], "]") {
		s = s[:i]
	}
	return strings.TrimPrefix(s, "www.")
}

// Scores computes every destination site's score: Σ P over its in-links, P = 2 from a
// producer site, 1 from any other; links within a site do not count.
func Scores(edges []Edge, producer func(site string) bool) map[string]int {
	out := map[string]int{}
	for _, e := range edges {
		from, to := Site(e.From), Site(e.To)
		if from == "" || to == "" || from == to {
			continue
		}
		p := 1
		if producer(from) {
			p = 2
		}
		out[to] += p
	}
	return out
}

// Producer is a site with what the ranking orders it by.
type Producer struct {
	Site      string  `json:"site"`
	Score     int     `json:"score"`
	LinkRank  float64 `json:"link_rank,omitempty"`
	Files     int     `json:"files"`
	Downloads int     `json:"downloads"`
}

// Order sorts producers as the thesis does: score, then files, then downloads, all
// descending (then by site, for a stable order).
func Order(ps []Producer) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Files != b.Files {
			return a.Files > b.Files
		}
		if a.Downloads != b.Downloads {
			return a.Downloads > b.Downloads
		}
		return a.Site < b.Site
	})
}

// OrderByLinkRank sorts by LinkRank, then files, then downloads.
func OrderByLinkRank(ps []Producer) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.LinkRank != b.LinkRank {
			return a.LinkRank > b.LinkRank
		}
		if a.Files != b.Files {
			return a.Files > b.Files
		}
		return a.Downloads > b.Downloads || a.Downloads == b.Downloads && a.Site < b.Site
	})
}

// LinkRank is PageRank over the site graph, each edge weighted by the thesis's P (2 from a
// producer, 1 otherwise; duplicates add up). damping is the probability of following a link
// (0.85 is usual); iteration stops when the ranks move less than 1e-10 in total or after
// 100 rounds. Sites without out-links spread their rank evenly. Ranks sum to 1.
func LinkRank(edges []Edge, producer func(site string) bool, damping float64) map[string]float64 {
	index := map[string]int{}
	var sites []string
	id := func(s string) int {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(sites)
		sites = append(sites, s)
		return len(sites) - 1
	}
	type wedge struct {
		to int
		w  float64
	}
	out := map[int][]wedge{}
	outW := map[int]float64{}
	for _, e := range edges {
		from, to := Site(e.From), Site(e.To)
		if from == "" || to == "" || from == to {
			continue
		}
		w := 1.0
		if producer(from) {
			w = 2
		}
		f, t := id(from), id(to)
		out[f] = append(out[f], wedge{t, w})
		outW[f] += w
	}
	n := len(sites)
	if n == 0 {
		return map[string]float64{}
	}
	rank := make([]float64, n)
	for i := range rank {
		rank[i] = 1 / float64(n)
	}
	next := make([]float64, n)
	for round := 0; round < 100; round++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i := 0; i < n; i++ {
			if outW[i] == 0 {
				dangling += rank[i]
				continue
			}
			for _, e := range out[i] {
				next[e.to] += rank[i] * e.w / outW[i]
			}
		}
		delta := 0.0
		for i := range next {
			v := (1-damping)/float64(n) + damping*(next[i]+dangling/float64(n))
			delta += math.Abs(v - rank[i])
			rank[i] = v
		}
		if delta < 1e-10 {
			break
		}
	}
	res := make(map[string]float64, n)
	for i, s := range sites {
		res[s] = rank[i]
	}
	return res
}

// PR is recall and precision at one rank of a result list.
type PR struct {
	Rank      int     `json:"rank"`
	Recall    float64 `json:"recall"`
	Precision float64 `json:"precision"`
}

// AtRelevant computes recall and precision at the rank of each relevant result (Buckland &
// Gey's retrieval matrix, as the thesis's Figs. 4-12 to 4-17 tabulate them). relevant lists
// the 1-based ranks of the relevant results; total is the number of relevant items (0: as
// many as listed).
func AtRelevant(relevant []int, total int) []PR {
	ranks := append([]int(nil), relevant...)
	sort.Ints(ranks)
	if total <= 0 {
		total = len(ranks)
	}
	out := make([]PR, 0, len(ranks))
	for i, r := range ranks {
		if r <= 0 {
			continue
		}
		found := float64(i + 1)
		out = append(out, PR{Rank: r, Recall: found / float64(total), Precision: found / float64(r)})
	}
	return out
}
