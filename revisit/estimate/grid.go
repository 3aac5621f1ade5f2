package estimate

import (
	"math"
	"slices"
)

// History is what a crawler's visits have shown about one page, kept as the sufficient
// statistics of the Poisson likelihood (so any prior can be applied later):
//
//	L(λ) = λ^Exact · e^(−λ·Exposure) · Π_b (1 − e^(−λ·t_b))^(n_b)
//
// Exposure is the time the page is known to have gone unchanged (whole unchanged
// intervals, and the stretch from a known last modification to the visit); Exact counts
// changes whose time Last-Modified gave; the changed intervals without a known time are
// counted by length in bins a factor of two wide (t_b is a bin's geometric middle), which
// keeps a page's history a few bytes long whatever its number of visits. The likelihood of
// a changed interval is exact up to that rounding of its length.
type History struct {
	Exposure float64
	Exact    uint32
	bins     []uint32 // bin index in the top 8 bits, count in the low 24
}

// Bins of changed-interval lengths: bin b holds lengths in [binBase·2^b, binBase·2^(b+1)).
const (
	binBase  = 1.0 / 16 // seconds: intervals shorter than 62.5 ms share bin 0
	maxBin   = 255
	maxCount = 1<<24 - 1
)

// Unchanged records an interval of length t (seconds) without a change.
func (h *History) Unchanged(t float64) {
	if t > 0 && !math.IsInf(t, 0) {
		h.Exposure += t
	}
}

// ChangedAt records a change whose time is known: the page changed exposure seconds
// before the visit and not since.
func (h *History) ChangedAt(exposure float64) {
	h.Exact++
	h.Unchanged(exposure)
}

// Changed records an interval of length t at whose end the page had changed, when is
// unknown.
func (h *History) Changed(t float64) {
	if !(t > 0) || math.IsInf(t, 0) {
		return
	}
	b := 0
	if t > binBase {
		b = min(int(math.Log2(t/binBase)), maxBin)
	}
	for i, e := range h.bins {
		if int(e>>24) == b {
			if e&maxCount < maxCount {
				h.bins[i]++
			}
			return
		}
	}
	h.bins = append(h.bins, uint32(b)<<24|1)
}

// CopyHistories copies histories into one block of memory: a snapshot that later updates
// of the originals do not touch (a re-plan reads it without holding the owner's lock).
func CopyHistories(hs []*History) []History {
	bins := 0
	for _, h := range hs {
		bins += len(h.bins)
	}
	arena := make([]uint32, 0, bins)
	out := make([]History, len(hs))
	for i, h := range hs {
		start := len(arena)
		arena = append(arena, h.bins...)
		out[i] = History{Exposure: h.Exposure, Exact: h.Exact, bins: arena[start:len(arena):len(arena)]}
	}
	return out
}

// Changes is the number of changed intervals recorded (with and without known times).
func (h *History) Changes() int {
	n := int(h.Exact)
	for _, e := range h.bins {
		n += int(e & maxCount)
	}
	return n
}

// Empty says nothing was recorded.
func (h *History) Empty() bool { return h.Exposure == 0 && h.Exact == 0 && len(h.bins) == 0 }

// binLengths[b] is bin b's geometric middle, binBase·2^(b+½).
var binLengths = func() (t [maxBin + 1]float64) {
	for b := range t {
		t[b] = binBase * math.Exp2(float64(b)+0.5)
	}
	return t
}()

func binLength(b int) float64 { return binLengths[b] }

// LogLikelihood is ln L(rate) (see History).
func (h *History) LogLikelihood(rate float64) float64 {
	return h.logLikelihood(rate, math.Log(rate))
}

func (h *History) logLikelihood(rate, logRate float64) float64 {
	l := -rate * h.Exposure
	if h.Exact > 0 {
		l += float64(h.Exact) * logRate
	}
	for _, e := range h.bins {
		x := rate * binLengths[e>>24]
		l += float64(e&maxCount) * math.Log(-math.Expm1(-x))
	}
	return l
}

// Grid is a discrete prior over change rates: log-spaced rates and their probabilities. It
// can take any shape, so a population that mixes pages changing hourly with pages changing
// yearly (the usual case, and seed 004's data) is represented as it is rather than smeared
// into one wide Gamma, and each page's posterior is exact for its History.
type Grid struct {
	Rates   []float64 // per second, ascending
	Weights []float64 // prior probabilities, summing to one; set them with SetLogNormal or Fit

	logRates, logWeights []float64
}

// NewGrid makes a grid of n rates spaced evenly in log between lo and hi (per second),
// with prior weights from a normal distribution of log10 rate centred on center with the
// given spread in decades (spread ≤ 0: uniform).
func NewGrid(lo, hi float64, n int, center, spread float64) *Grid {
	g := &Grid{Rates: make([]float64, n), Weights: make([]float64, n), logRates: make([]float64, n), logWeights: make([]float64, n)}
	for i := range g.Rates {
		g.Rates[i] = lo * math.Pow(hi/lo, float64(i)/float64(n-1))
		g.logRates[i] = math.Log(g.Rates[i])
	}
	g.SetLogNormal(center, spread)
	return g
}

// Clone is an independent copy of g: fitting it leaves g as it was.
func (g *Grid) Clone() *Grid {
	g.prepare()
	return &Grid{Rates: slices.Clone(g.Rates), Weights: slices.Clone(g.Weights),
		logRates: slices.Clone(g.logRates), logWeights: slices.Clone(g.logWeights)}
}

// prepare makes the cached logarithms when the grid was built as a literal.
func (g *Grid) prepare() {
	if len(g.logRates) == len(g.Rates) && len(g.logWeights) == len(g.Weights) {
		return
	}
	g.logRates = make([]float64, len(g.Rates))
	for i, r := range g.Rates {
		g.logRates[i] = math.Log(r)
	}
	g.logWeights = make([]float64, len(g.Weights))
	g.weightsChanged()
}

// weightsChanged refreshes the cached logarithms of the weights.
func (g *Grid) weightsChanged() {
	for i, w := range g.Weights {
		g.logWeights[i] = math.Inf(-1)
		if w >= negligible {
			g.logWeights[i] = math.Log(w)
		}
	}
}

// SetLogNormal sets the weights to a normal distribution of log10 rate centred on center
// with the given spread in decades (spread ≤ 0: uniform).
func (g *Grid) SetLogNormal(center, spread float64) {
	for i, r := range g.Rates {
		w := 1.0
		if spread > 0 {
			z := (math.Log10(r) - math.Log10(center)) / spread
			w = math.Exp(-z * z / 2)
		}
		g.Weights[i] = w
	}
	normalize(g.Weights)
	g.prepare()
	g.weightsChanged()
}

func normalize(w []float64) {
	var s float64
	for _, v := range w {
		s += v
	}
	if s <= 0 || math.IsNaN(s) {
		for i := range w {
			w[i] = 1 / float64(len(w))
		}
		return
	}
	for i := range w {
		w[i] /= s
	}
}

// negligible is the prior weight below which a grid point is skipped.
const negligible = 1e-12

// Posterior writes into out (len(g.Rates)) the posterior probabilities of each rate.
func (g *Grid) Posterior(h *History, out []float64) {
	g.prepare()
	for i, r := range g.Rates {
		out[i] = h.logLikelihood(r, g.logRates[i])
	}
	g.PosteriorFrom(out, out)
}

// Mean is the posterior mean rate of h.
func (g *Grid) Mean(h *History) float64 {
	p := make([]float64, len(g.Rates))
	g.Posterior(h, p)
	var m float64
	for i, r := range g.Rates {
		m += p[i] * r
	}
	return m
}

// Fit re-estimates the prior weights from many pages' histories by expectation
// maximization (the nonparametric maximum-likelihood prior, Laird 1978): each round sets
// the weights to the average posterior. smoothing adds that many pseudo-pages spread
// evenly over the grid, so no rate becomes impossible. Empty histories are skipped. It
// returns false, leaving g unchanged, when fewer than two histories have evidence.
func (g *Grid) Fit(hs []History, rounds int, smoothing float64) bool {
	ptrs := make([]*History, len(hs))
	for i := range hs {
		ptrs[i] = &hs[i]
	}
	return g.FitLikelihoods(g.Likelihoods(ptrs), ptrs, rounds, smoothing)
}

// Likelihoods returns every history's log-likelihood at every rate of the grid: row k
// (len(g.Rates) values) is hs[k]'s. Computing them once serves both Fit and the posteriors
// of the same pages (PosteriorFrom).
func (g *Grid) Likelihoods(hs []*History) []float64 {
	g.prepare()
	n := len(g.Rates)
	logL := make([]float64, len(hs)*n)
	for k, h := range hs {
		for i, r := range g.Rates {
			logL[k*n+i] = h.logLikelihood(r, g.logRates[i])
		}
	}
	return logL
}

// FitLikelihoods is Fit over likelihoods from Likelihoods(hs).
func (g *Grid) FitLikelihoods(logL []float64, hs []*History, rounds int, smoothing float64) bool {
	n := len(g.Rates)
	rows := withEvidence(hs)
	if len(rows) < 2 {
		return false
	}
	post := make([]float64, n)
	sum := make([]float64, n)
	logW := make([]float64, n)
	for round := 0; round < rounds; round++ {
		for i := range sum {
			sum[i] = smoothing / float64(n)
			logW[i] = math.Inf(-1)
			if g.Weights[i] > 0 {
				logW[i] = math.Log(g.Weights[i])
			}
		}
		for _, k := range rows {
			row := logL[k*n : (k+1)*n]
			best := math.Inf(-1)
			for i := range post {
				post[i] = logW[i] + row[i]
				best = math.Max(best, post[i])
			}
			var z float64
			for i := range post {
				post[i] = math.Exp(post[i] - best)
				z += post[i]
			}
			for i := range post {
				sum[i] += post[i] / z
			}
		}
		copy(g.Weights, sum)
		normalize(g.Weights)
	}
	g.prepare()
	g.weightsChanged()
	return true
}

// PosteriorFrom writes into out the posterior of the page whose log-likelihood row (from
// Likelihoods) is given; row and out may be the same slice.
func (g *Grid) PosteriorFrom(row, out []float64) {
	g.prepare()
	posteriorWith(g.logWeights, row, out)
}

// withEvidence lists the indexes of the histories that are not empty.
func withEvidence(hs []*History) []int {
	var rows []int
	for k, h := range hs {
		if !h.Empty() {
			rows = append(rows, k)
		}
	}
	return rows
}
