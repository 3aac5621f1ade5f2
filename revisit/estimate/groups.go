package estimate

import (
	"math"
	"slices"
)

// Groups are priors over change rates for groups of pages that look alike (the same URL
// section, the same kind of content), nested in a tree whose root is the whole crawl's
// prior (a Grid). They carry seed 004's point: a page's change rate can be predicted from
// what the page looks like before its own history says anything. Seed 004 trained a
// decision tree offline on 100 days of monitoring; here the mapping is learned during the
// crawl from the pages of each group that have been revisited, so it holds for whatever
// web is being crawled and needs no training set.
//
// A group's prior is the average posterior of its revisited pages, shrunk towards its
// parent's prior by Strength pseudo-pages (the posterior mean of a Dirichlet whose base is
// the parent): a group of few pages, or of pages that say little yet, keeps its parent's
// prior, and a group whose features say nothing about change (its pages change like
// everyone else's) ends up with its parent's prior too, so grouping cannot make the prior
// worse than the crawl's own by more than the noise of a group's sample.
type Groups struct {
	// Strength is how many pages' worth of evidence the parent's prior counts for in a
	// group's (default 16).
	Strength float64

	parent []int // of each group; −1: the root grid
	w      [][]float64
	logW   [][]float64
}

// DefaultGroupStrength is Groups.Strength's default.
const DefaultGroupStrength = 16

// Len is the number of groups.
func (s *Groups) Len() int { return len(s.parent) }

// Parent is group g's parent (−1: the root).
func (s *Groups) Parent(g int) int { return s.parent[g] }

// Add makes a group under parent (−1: the root) whose prior starts as its parent's, and
// returns its index; a group's index is always above its parent's.
func (s *Groups) Add(parent int, root *Grid) int {
	w := slices.Clone(s.Weights(parent, root))
	s.parent = append(s.parent, parent)
	s.w = append(s.w, w)
	s.logW = append(s.logW, logsOf(w, nil))
	return len(s.parent) - 1
}

// Weights are group g's prior weights over root.Rates (g < 0: the root's).
func (s *Groups) Weights(g int, root *Grid) []float64 {
	if g < 0 || s == nil || g >= len(s.w) {
		return root.Weights
	}
	return s.w[g]
}

// Clone is an independent copy.
func (s *Groups) Clone() *Groups {
	c := &Groups{Strength: s.Strength, parent: slices.Clone(s.parent)}
	for g := range s.w {
		c.w = append(c.w, slices.Clone(s.w[g]))
		c.logW = append(c.logW, slices.Clone(s.logW[g]))
	}
	return c
}

// CopyFrom takes the priors of the groups src has (a fitted copy of an earlier s); groups
// added to s since keep their parents' new priors.
func (s *Groups) CopyFrom(src *Groups, root *Grid) {
	for g := range s.w {
		if g < len(src.w) {
			copy(s.w[g], src.w[g])
		} else {
			copy(s.w[g], s.Weights(s.parent[g], root))
		}
		logsOf(s.w[g], s.logW[g])
	}
}

// PosteriorFrom writes into out the posterior of a page of group g (< 0: no group) whose
// log-likelihood row (Grid.Likelihoods) is given; row and out may be the same slice.
func (s *Groups) PosteriorFrom(g int, root *Grid, row, out []float64) {
	if g < 0 || s == nil || g >= len(s.w) {
		root.PosteriorFrom(row, out)
		return
	}
	posteriorWith(s.logW[g], row, out)
}

// Posterior writes into out the posterior of a page of group g with history h.
func (s *Groups) Posterior(g int, root *Grid, h *History, out []float64) {
	root.prepare()
	for i, r := range root.Rates {
		out[i] = h.logLikelihood(r, root.logRates[i])
	}
	s.PosteriorFrom(g, root, out, out)
}

// posteriorWith writes into out the posterior under log prior weights logW of a page
// whose log-likelihood row is given (row and out may be the same slice).
func posteriorWith(logW, row, out []float64) {
	best := math.Inf(-1)
	for i := range out {
		out[i] = logW[i] + row[i]
		best = math.Max(best, out[i])
	}
	for i := range out {
		out[i] = math.Exp(out[i] - best)
	}
	normalize(out)
}

func logsOf(w, out []float64) []float64 {
	if out == nil {
		out = make([]float64, len(w))
	}
	for i, v := range w {
		out[i] = math.Inf(-1)
		if v >= negligible {
			out[i] = math.Log(v)
		}
	}
	return out
}

// FitGroups is FitLikelihoods for the root and groups together: every round each page's
// posterior is taken under its own group's prior (group[k] < 0: the root's), the root's
// weights become the average posterior of all pages (plus smoothing pseudo-pages spread
// over the grid, as in Fit), and each group's, top down, the average posterior of its
// pages and its descendants' shrunk towards its parent's (Groups). It returns false,
// leaving everything unchanged, when fewer than two histories have evidence.
func FitGroups(root *Grid, s *Groups, logL []float64, hs []*History, group []int, rounds int, smoothing float64) bool {
	n := len(root.Rates)
	rows := withEvidence(hs)
	if len(rows) < 2 {
		return false
	}
	root.prepare()
	strength := s.Strength
	if strength <= 0 {
		strength = DefaultGroupStrength
	}
	groups := s.Len()
	sums := make([][]float64, groups)
	counts := make([]float64, groups)
	for g := range sums {
		sums[g] = make([]float64, n)
	}
	rootSum := make([]float64, n)
	post := make([]float64, n)
	for round := 0; round < rounds; round++ {
		for i := range rootSum {
			rootSum[i] = smoothing / float64(n)
		}
		for g := range sums {
			clear(sums[g])
			counts[g] = 0
		}
		for _, k := range rows {
			g := -1
			if k < len(group) {
				g = group[k]
			}
			if g >= groups {
				g = -1
			}
			logW := root.logWeights
			if g >= 0 {
				logW = s.logW[g]
			}
			posteriorWith(logW, logL[k*n:(k+1)*n], post)
			for i, v := range post {
				rootSum[i] += v
			}
			for ; g >= 0; g = s.parent[g] {
				for i, v := range post {
					sums[g][i] += v
				}
				counts[g]++
			}
		}
		copy(root.Weights, rootSum)
		normalize(root.Weights)
		root.weightsChanged()
		for g := range groups { // parents come before their children
			parent := s.Weights(s.parent[g], root)
			for i := range s.w[g] {
				s.w[g][i] = (sums[g][i] + strength*parent[i]) / (counts[g] + strength)
			}
			normalize(s.w[g])
			logsOf(s.w[g], s.logW[g])
		}
	}
	return true
}
