package estimate

import (
	"fmt"
	"math"
)

// Gamma is a Gamma(Shape, Rate) distribution over a change rate λ: mean Shape/Rate,
// variance Shape/Rate². It is the conjugate prior of the Poisson model for the
// observations that are exact (unchanged intervals, Last-Modified times).
type Gamma struct {
	Shape float64 // α > 0
	Rate  float64 // β > 0, in the time unit of the intervals
}

// Mean is the expected rate α/β.
func (g Gamma) Mean() float64 { return g.Shape / g.Rate }

// Var is the variance α/β².
func (g Gamma) Var() float64 { return g.Shape / (g.Rate * g.Rate) }

// Valid reports whether both parameters are positive and finite.
func (g Gamma) Valid() bool {
	return g.Shape > 0 && g.Rate > 0 && !math.IsInf(g.Shape, 0) && !math.IsInf(g.Rate, 0)
}

func (g Gamma) String() string {
	return fmt.Sprintf("Gamma(shape=%.4g, rate=%.4g; mean %.4g)", g.Shape, g.Rate, g.Mean())
}

// GammaFromMoments is the Gamma with the given mean and variance (both positive).
func GammaFromMoments(mean, variance float64) Gamma {
	return Gamma{Shape: mean * mean / variance, Rate: mean / variance}
}

// Evidence is what a page's visits have taught about its rate, kept apart from the prior
// so that the prior can be re-estimated from the whole population (empirical Bayes) without
// replaying every page's history: the posterior is Gamma(prior.Shape + Shape, prior.Rate +
// Rate). Exact observations add to it exactly; a changed interval without Last-Modified is
// folded in by moment matching against the posterior at that time, which is the one
// approximation (assumed density filtering: the first two moments of the true posterior
// after each such visit are kept exactly).
//
// The zero value is "no evidence".
type Evidence struct {
	Shape float64 // may be negative after moment matching; the posterior stays valid
	Rate  float64
}

// minShape and minRate keep posteriors proper when moment matching pulls a parameter down.
const (
	minShape = 1e-6
	minRate  = 1e-300
)

// Posterior is the Gamma posterior under prior.
func (e Evidence) Posterior(prior Gamma) Gamma {
	return Gamma{Shape: max(prior.Shape+e.Shape, minShape), Rate: max(prior.Rate+e.Rate, minRate)}
}

// Unchanged records an interval of length t without a change: likelihood e^(−λt), so the
// rate parameter grows by t.
func (e *Evidence) Unchanged(t float64) {
	if t > 0 && !math.IsInf(t, 0) {
		e.Rate += t
	}
}

// ChangedAt records a change whose last occurrence is known to have been exposure before
// the visit (Last-Modified), or the age of a page at its first visit from its
// Last-Modified: likelihood λ·e^(−λ·exposure), conjugate, so shape grows by one and rate
// by the exposure.
func (e *Evidence) ChangedAt(exposure float64) {
	e.Shape++
	if exposure > 0 && !math.IsInf(exposure, 0) {
		e.Rate += exposure
	}
}

// Changed records an interval of length t at whose end the page had changed, with no
// Last-Modified to tell when: likelihood 1 − e^(−λt). The exact posterior
// ∝ λ^(α−1)·e^(−βλ)·(1 − e^(−λt)) is not Gamma; its moments are, with r = β/(β+t),
//
//	E[λ]  = (α/β)·(1 − r^(α+1))/(1 − r^α)
//	E[λ²] = (α(α+1)/β²)·(1 − r^(α+2))/(1 − r^α)
//
// and the Gamma with those two moments replaces it. prior is the prior the evidence is
// combined with (the current posterior is taken as prior + e).
func (e *Evidence) Changed(t float64, prior Gamma) {
	if !(t > 0) {
		return
	}
	g := e.Posterior(prior)
	a, b := g.Shape, g.Rate
	if math.IsInf(t, 0) {
		return // a change sometime in an unbounded interval says nothing
	}
	logR := -math.Log1p(t / b)
	oneMinus := func(k float64) float64 { return -math.Expm1(k * logR) }
	den := oneMinus(a)
	if den <= 0 {
		return
	}
	m1 := a / b * oneMinus(a+1) / den
	m2 := a * (a + 1) / (b * b) * oneMinus(a+2) / den
	v := m2 - m1*m1
	if !(v > 0) || !(m1 > 0) || math.IsInf(m1, 0) {
		// Rounding ate the variance: fall back to the conjugate update of a change
		// observed at the end of the interval, which has the right sign and scale.
		e.Shape++
		return
	}
	post := GammaFromMoments(m1, v)
	e.Shape += post.Shape - a
	e.Rate += post.Rate - b
}

// FitGammaPrior returns the Gamma whose mean and variance match those of rates (method
// of moments), with its shape capped at maxShape so the prior stays broad enough for
// individual pages to move away from it. Non-positive and non-finite rates are skipped;
// ok is false when fewer than two usable rates remain or they do not vary.
func FitGammaPrior(rates []float64, maxShape float64) (g Gamma, ok bool) {
	var n, sum, sq float64
	for _, r := range rates {
		if r > 0 && !math.IsInf(r, 0) && !math.IsNaN(r) {
			n++
			sum += r
			sq += r * r
		}
	}
	if n < 2 {
		return Gamma{}, false
	}
	mean := sum / n
	v := sq/n - mean*mean
	if !(v > 0) {
		return Gamma{}, false
	}
	g = GammaFromMoments(mean, v)
	if g.Shape > maxShape {
		g = Gamma{Shape: maxShape, Rate: maxShape / mean}
	}
	return g, true
}

// FitPrior is empirical Bayes for a population of pages: the Gamma prior that maximizes the
// marginal likelihood of every page's evidence (type-II maximum likelihood). A page whose
// evidence is the Gamma-shaped likelihood λ^a·e^(−bλ) contributes
//
//	α·ln β − ln Γ(α) + ln Γ(α + a) − (α + a)·ln(β + b)
//
// For a fixed shape α the best β solves Σ α/β = Σ (α + a_i)/(β + b_i), found by Newton's
// method on ln β; the shape is then chosen by golden-section search on ln α within
// [minShape, maxShape]. Pages without evidence are skipped. ok is false when the evidence
// shows no change at all (the likelihood then grows without bound as the prior's rate goes
// to zero) or fewer than two pages have evidence.
func FitPrior(evidence []Evidence, minShape, maxShape float64) (g Gamma, ok bool) {
	var used []Evidence
	var changes float64
	for _, e := range evidence {
		if e.Rate > 0 && !math.IsInf(e.Rate, 0) && !math.IsNaN(e.Shape) {
			used = append(used, e)
			changes += e.Shape
		}
	}
	if len(used) < 2 || !(changes > 0) || !(minShape > 0) || maxShape < minShape {
		return Gamma{}, false
	}
	// bestRate solves Nα − Σ (α+a_i)·β/(β+b_i) = 0 for β: the left side falls from Nα at
	// β → 0 to −Σa_i < 0 as β → ∞.
	n := float64(len(used))
	var meanB float64
	for _, e := range used {
		meanB += e.Rate
	}
	meanB /= n
	logB := math.Log(meanB / math.Max(changes/n, 1e-12)) // warm start shared by the searches
	bestRate := func(alpha float64) float64 {
		if math.IsNaN(logB) || math.IsInf(logB, 0) {
			logB = math.Log(alpha * meanB)
		}
		for iter := 0; iter < 60; iter++ {
			beta := math.Exp(logB)
			var f, df float64 // f(ln β) and its derivative
			for _, e := range used {
				s := math.Max(alpha+e.Shape, 1e-9)
				q := beta / (beta + e.Rate)
				f -= s * q
				df -= s * q * (1 - q)
			}
			f += n * alpha
			if df == 0 {
				break
			}
			step := f / df
			step = math.Max(math.Min(step, 5), -5)
			logB -= step
			if math.Abs(step) < 1e-9 {
				break
			}
		}
		return math.Exp(logB)
	}
	loglik := func(alpha float64) (float64, float64) {
		beta := bestRate(alpha)
		lgA, _ := math.Lgamma(alpha)
		var l float64
		for _, e := range used {
			s := math.Max(alpha+e.Shape, 1e-9)
			lgS, _ := math.Lgamma(s)
			l += alpha*math.Log(beta) - lgA + lgS - s*math.Log(beta+e.Rate)
		}
		return l, beta
	}
	lo, hi := math.Log(minShape), math.Log(maxShape)
	const phi = 0.6180339887498949
	x1, x2 := hi-phi*(hi-lo), lo+phi*(hi-lo)
	f1, _ := loglik(math.Exp(x1))
	f2, _ := loglik(math.Exp(x2))
	for i := 0; i < 40 && hi-lo > 2e-3; i++ {
		if f1 < f2 {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + phi*(hi-lo)
			f2, _ = loglik(math.Exp(x2))
		} else {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - phi*(hi-lo)
			f1, _ = loglik(math.Exp(x1))
		}
	}
	alpha := math.Exp((lo + hi) / 2)
	_, beta := loglik(alpha)
	g = Gamma{Shape: alpha, Rate: beta}
	return g, g.Valid()
}
