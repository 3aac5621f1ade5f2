// Package estimate owns sonda's change-rate estimators: how often a page changes, judged from
// what a crawler sees when it revisits it. A visit sees only whether the page differs from
// the previous visit (several changes in between look like one), sometimes the server's
// Last-Modified time, and nothing in between visits: the "incomplete change history" of
// Cho & Garcia-Molina ("Estimating frequency of change", ACM TOIT 2003), under their model
// of changes as a Poisson process of rate λ per page.
//
// The estimators, all in changes per unit of the intervals given to them:
//
//   - Naive: X/n per visit interval (the "intuitive" estimator; biased low, since it cannot
//     see more than one change per interval).
//   - ChoGarciaMolina: r̂ = −ln((n − X + 0.5)/(n + 0.5)) per interval, the bias-reduced
//     estimator for regular visits that seed 004 uses (Eq. 14).
//   - MLE: the maximum-likelihood rate for irregular intervals, the generalization of the
//     above (it reduces to −ln(1 − X/n) for equal intervals).
//   - MeanChangeInterval: observation time divided by detected changes (seed 004's
//     descriptive statistic; an interval, not a rate).
//   - LastModified: X/S when every changed interval also tells when the last change
//     happened (the server's Last-Modified), which is the exact MLE in that case.
//   - Grid and History: a Bayesian posterior over λ on a grid of rates, from each page's
//     exact likelihood (kept as a few sufficient statistics), under a prior of any shape
//     fitted to the whole population by expectation maximization. It is what sonda's
//     scheduler uses (see package alloc for the allocation it feeds).
//   - Gamma and Evidence: a Gamma posterior, updated exactly for unchanged intervals and
//     Last-Modified observations and by moment matching (assumed density filtering) for
//     changed ones, with its prior fitted by type-II maximum likelihood (FitPrior): two
//     numbers per page, the scheduler's alternative model.
//   - ClassPosterior: seed 004's Bayesian class estimator (Eq. 4–7), a posterior over a few
//     change classes of known period.
package estimate

import (
	"math"
)

// Interval is one visit interval: its length and whether the page was found changed at
// its end.
type Interval struct {
	Length  float64
	Changed bool
}

// Naive is the intuitive estimator X/n: changes detected per visit. It is a rate per
// interval when intervals are regular. It returns 0 when n is 0.
func Naive(n, x int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(x) / float64(n)
}

// ChoGarciaMolina is the estimator r̂ = −ln((n − X + 0.5)/(n + 0.5)) for n regular visits of
// which X found a change: a rate per visit interval. The 0.5 terms keep it finite when every
// visit found a change and remove most of the bias of −ln(1 − X/n). Seed 004 prints the
// formula without brackets; this is the published, bracketed form. It returns 0 for n ≤ 0
// and clamps X to [0, n].
func ChoGarciaMolina(n, x int) float64 {
	if n <= 0 {
		return 0
	}
	x = min(max(x, 0), n)
	return -math.Log((float64(n-x) + 0.5) / (float64(n) + 0.5))
}

// MeanChangeInterval is the observation time divided by the number of detected changes
// (seed 004, after Cho & Garcia-Molina 2000): 10 changes in 100 days give 10 days. It is
// +Inf when nothing changed. It overestimates the true interval of pages that change more
// than once between visits.
func MeanChangeInterval(observed float64, changes int) float64 {
	if changes <= 0 {
		return math.Inf(1)
	}
	return observed / float64(changes)
}

// MLE is the maximum-likelihood Poisson rate for irregular visit intervals: it maximizes
//
//	Π_changed (1 − e^(−λ·t_i)) · Π_unchanged e^(−λ·t_j)
//
// whose derivative gives Σ_changed t_i/(e^(λ·t_i) − 1) = Σ_unchanged t_j; the left side
// falls monotonically in λ, so the root is found by bisection on log λ. It is 0 when no
// interval changed and +Inf when every interval did (the likelihood grows without bound;
// callers that need a number should use ChoGarciaMolina-style smoothing or the Gamma
// posterior). Intervals of non-positive length are ignored.
func MLE(intervals []Interval) float64 {
	var unchanged float64
	changed := 0
	shortest := math.Inf(1)
	for _, iv := range intervals {
		if iv.Length <= 0 || math.IsNaN(iv.Length) || math.IsInf(iv.Length, 0) {
			continue
		}
		if iv.Changed {
			changed++
			shortest = min(shortest, iv.Length)
		} else {
			unchanged += iv.Length
		}
	}
	if changed == 0 {
		return 0
	}
	if unchanged == 0 {
		return math.Inf(1)
	}
	score := func(rate float64) float64 { // positive while rate is below the root
		var s float64
		for _, iv := range intervals {
			if iv.Changed && iv.Length > 0 && !math.IsInf(iv.Length, 0) {
				s += iv.Length / math.Expm1(rate*iv.Length)
			}
		}
		return s - unchanged
	}
	// The root lies where some interval's term is of the order of the unchanged time:
	// bracket it generously in log space, then bisect.
	lo, hi := 1e-12/shortest, 1e3/shortest
	for score(lo) < 0 {
		lo /= 1e3
		if lo < 1e-300 {
			return lo
		}
	}
	for score(hi) > 0 {
		hi *= 1e3
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi/lo > 1+1e-12; i++ {
		mid := math.Sqrt(lo * hi)
		if score(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// LastModifiedObservation is one visit interval when the server reports Last-Modified:
// Exposure is the time during which the page is known not to have changed (the whole
// interval when unchanged; from the last modification to the visit when changed).
type LastModifiedObservation struct {
	Exposure float64
	Changed  bool
}

// LastModified is the rate estimate from visits with trustworthy Last-Modified times.
// Under the Poisson model the likelihood of "last change at c, none after until the
// visit" is λ·e^(−λ(t−c)), and of "no change in an interval of length t" is e^(−λt), so
// the likelihood of a history is λ^X · e^(−λS) with S the total exposure: the MLE is X/S.
// With unbiased set, it returns (X − 1)/S, which is unbiased for a Poisson process
// observed until its X-th event (Cho & Garcia-Molina reach a similar correction). It is 0
// without changes and +Inf without exposure.
func LastModified(obs []LastModifiedObservation, unbiased bool) float64 {
	var exposure float64
	changes := 0
	for _, o := range obs {
		if o.Exposure > 0 && !math.IsInf(o.Exposure, 0) {
			exposure += o.Exposure
		}
		if o.Changed {
			changes++
		}
	}
	if changes == 0 {
		return 0
	}
	if exposure == 0 {
		return math.Inf(1)
	}
	x := float64(changes)
	if unbiased {
		x--
	}
	return x / exposure
}

// ClassPosterior updates seed 004's Bayesian class estimator (§3.4 of the dissertation,
// after Cho & Garcia-Molina): prior holds P(page ∈ class k), periods the mean change interval
// of each class. After a visit interval of length t that found a change, the likelihood of
// class k is 1 − e^(−t/period_k) (Eq. 5); after one that did not, e^(−t/period_k). The
// posterior is written into prior, which must have len(periods) entries. A prior that
// collapses to zero everywhere (an impossible observation) is reset to uniform.
func ClassPosterior(prior, periods []float64, t float64, changed bool) {
	for k, p := range periods {
		like := math.Exp(-t / p)
		if changed {
			like = -math.Expm1(-t / p)
		}
		prior[k] *= like
	}
	normalize(prior)
}
