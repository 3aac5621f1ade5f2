package alloc

import (
	"fmt"
	"math"

	"github.com/sonda-search/sonda/revisit/estimate"
)

// Item is one page in an allocation problem. Its change rate is known (Known), has a Gamma
// posterior (Rate), or a discrete posterior (Rates and Probs, when Probs is set).
type Item struct {
	// Rate is the posterior over the page's change rate.
	Rate estimate.Gamma
	// Known says the rate is exactly Rate.Mean() (the oracle of a simulation).
	Known bool
	// Rates and Probs are a discrete posterior: the page changes at Rates[i] with
	// probability Probs[i]. Components of negligible probability may be left out.
	Rates, Probs []float64
	// Weight scales the page's freshness in the objective (relevance, link rank); pages of
	// weight 0 get the least visits the bounds allow.
	Weight float64
	// Host indexes Problem.HostCaps; negative means no host limit.
	Host int
}

// Problem is a fetch budget and the bounds on each page's revisit interval, all in one time
// unit (the unit of the rates).
type Problem struct {
	Budget      float64   // fetches per time unit shared by the items
	MinInterval float64   // shortest interval any page is given (0: none)
	MaxInterval float64   // longest interval before a page is fetched anyway (0: none, pages may be dropped)
	HostCaps    []float64 // most fetches per time unit for each host (0: no cap)
}

// Solution is an optimal allocation: Intervals[i] is item i's revisit interval (+Inf:
// never), and the multipliers let later changes of one page's posterior be turned into an
// interval without solving again (Interval).
type Solution struct {
	Intervals []float64
	Mu        float64         // the budget's Lagrange multiplier
	HostMu    map[int]float64 // hosts held at their cap, with their own multiplier
	// Used is Σ 1/Intervals, the budget actually planned: less than the budget when the
	// bounds bind, and short by a fraction of a percent when a page sits at its cut-off,
	// where its optimal frequency falls to zero only logarithmically in μ.
	Used     float64
	Expected float64 // Σ Weight·E[freshness], the objective
}

// bounds are the interval limits with defaults filled in.
func (p Problem) bounds() (lo, hi float64) {
	lo, hi = p.MinInterval, p.MaxInterval
	if lo <= 0 {
		lo = 0
	}
	if hi <= 0 {
		hi = math.Inf(1)
	}
	return lo, hi
}

// Validate reports a problem that has no meaningful answer.
func (p Problem) Validate() error {
	switch {
	case !(p.Budget > 0) || math.IsInf(p.Budget, 0):
		return fmt.Errorf("alloc: the fetch budget must be a positive number (got %v)", p.Budget)
	case p.MaxInterval > 0 && p.MaxInterval < p.MinInterval:
		return fmt.Errorf("alloc: the longest interval (%v) is shorter than the shortest (%v)", p.MaxInterval, p.MinInterval)
	}
	return nil
}

// Solve finds the freshness-optimal intervals. warm, when it came from a Solve of nearly the
// same problem (the same items after a few posterior updates), speeds the search up.
func Solve(p Problem, items []Item, warm *Solution) (Solution, error) {
	if err := p.Validate(); err != nil {
		return Solution{}, err
	}
	s := &solver{p: p, items: items, logI: make([]float64, len(items))}
	s.lo, s.hi = p.bounds()
	start := 0.0
	if warm != nil && len(warm.Intervals) == len(items) {
		for i, iv := range warm.Intervals {
			s.logI[i] = warmLog(iv)
		}
		if warm.Mu > 0 && !math.IsInf(warm.Mu, 0) {
			start = math.Log(warm.Mu)
		}
	} else {
		for i := range s.logI {
			s.logI[i] = math.NaN()
		}
	}
	sol := Solution{Intervals: make([]float64, len(items)), HostMu: map[int]float64{}}
	free := make([]int, 0, len(items))
	byHost := map[int][]int{}
	for i, it := range items {
		free = append(free, i)
		if it.Host >= 0 && it.Host < len(p.HostCaps) && p.HostCaps[it.Host] > 0 {
			byHost[it.Host] = append(byHost[it.Host], i)
		}
	}
	budget := p.Budget
	for {
		mu := s.solveBudget(free, budget, start)
		start = logOr(mu, start)
		newlyCapped := false
		for h, members := range byHost {
			if _, done := sol.HostMu[h]; done {
				continue
			}
			var use float64
			for _, i := range members {
				use += 1 / s.interval(i, mu)
			}
			if use <= p.HostCaps[h]*(1+1e-9) {
				continue
			}
			sol.HostMu[h] = s.solveBudget(members, p.HostCaps[h], logOr(mu, 0))
			budget -= p.HostCaps[h]
			newlyCapped = true
		}
		if !newlyCapped {
			sol.Mu = mu
			break
		}
		free = free[:0]
		for i, it := range items {
			if _, capped := sol.HostMu[it.Host]; !capped || it.Host < 0 {
				free = append(free, i)
			}
		}
	}
	for i, it := range items {
		mu := sol.Mu
		if hm, ok := sol.HostMu[it.Host]; ok && it.Host >= 0 {
			mu = hm
		}
		iv := s.interval(i, mu)
		sol.Intervals[i] = iv
		sol.Used += 1 / iv
		sol.Expected += weight(it) * itemFreshness(it, iv)
	}
	return sol, nil
}

// Interval is the optimal interval of a page under the multipliers of sol: how a page whose
// posterior changed since the solve is rescheduled without solving again.
func (sol *Solution) Interval(p Problem, it Item) float64 {
	mu := sol.Mu
	if hm, ok := sol.HostMu[it.Host]; ok && it.Host >= 0 {
		mu = hm
	}
	lo, hi := p.bounds()
	return intervalFor(it, mu, lo, hi, math.NaN())
}

func itemFreshness(it Item, interval float64) float64 {
	if it.Probs != nil {
		var f float64
		for i, p := range it.Probs {
			f += p * Freshness(it.Rates[i], interval)
		}
		return f
	}
	if it.Known {
		return Freshness(it.Rate.Mean(), interval)
	}
	return ExpectedFreshness(it.Rate.Shape, it.Rate.Rate, interval)
}

func weight(it Item) float64 { return max(it.Weight, 0) }

func warmLog(iv float64) float64 {
	if iv > 0 && !math.IsInf(iv, 0) {
		return math.Log(iv)
	}
	return math.NaN()
}

func logOr(x, fallback float64) float64 {
	if x > 0 && !math.IsInf(x, 0) {
		return math.Log(x)
	}
	return fallback
}

type solver struct {
	p      Problem
	items  []Item
	lo, hi float64
	logI   []float64 // last interval found per item (log), the next search's start
}

func (s *solver) interval(i int, mu float64) float64 {
	iv := intervalFor(s.items[i], mu, s.lo, s.hi, s.logI[i])
	if w := warmLog(iv); !math.IsNaN(w) {
		s.logI[i] = w
	}
	return iv
}

// budgetTolerance is how closely a solution spends the budget (relative): far below any
// difference in freshness that matters, and it saves most of the search's evaluations.
const budgetTolerance = 1e-7

// solveBudget finds the multiplier μ at which the members' frequencies add up to budget.
// Σ 1/I_i(μ) falls as μ rises, so the root of ln Σ − ln budget is bracketed by doubling
// steps in ln μ from start and then found by the Illinois variant of regula falsi. It
// returns 0 when even μ → 0 (every page at the shortest interval) spends less than budget,
// and +Inf when the longest intervals alone spend more.
func (s *solver) solveBudget(members []int, budget, start float64) float64 {
	total := func(logMu float64) float64 {
		mu := math.Exp(logMu)
		var sum float64
		for _, i := range members {
			sum += 1 / s.interval(i, mu)
		}
		return sum
	}
	g := func(logMu float64) float64 {
		t := total(logMu)
		if t <= 0 {
			return math.Inf(-1)
		}
		return math.Log(t) - math.Log(budget)
	}
	if len(members) == 0 {
		return 0
	}
	a, b := start, start
	ga := g(a)
	gb := ga
	step := 0.05      // a warm start is usually close
	const limit = 700 // e^±700 spans every rate a double can hold
	switch {
	case ga > 0: // too many fetches: raise μ
		for gb > 0 {
			a, ga = b, gb
			b += step
			step *= 2
			if b > limit {
				return math.Inf(1)
			}
			gb = g(b)
		}
	case ga < 0:
		for ga < 0 {
			b, gb = a, ga
			a -= step
			step *= 2
			if a < -limit {
				return 0
			}
			ga = g(a)
		}
	default:
		return math.Exp(a)
	}
	// ga > 0 > gb (or -Inf): Illinois.
	side := 0
	for iter := 0; iter < 200 && b-a > 1e-12; iter++ {
		var c float64
		if math.IsInf(gb, -1) || math.IsInf(ga, 1) {
			c = (a + b) / 2
		} else {
			c = b - gb*(b-a)/(gb-ga)
			if !(c > a && c < b) {
				c = (a + b) / 2
			}
		}
		gc := g(c)
		if math.Abs(gc) < budgetTolerance {
			return math.Exp(c)
		}
		if gc > 0 {
			a, ga = c, gc
			if side == -1 {
				gb /= 2
			}
			side = -1
		} else {
			b, gb = c, gc
			if side == 1 {
				ga /= 2
			}
			side = 1
		}
	}
	return math.Exp(b) // the side that does not overspend
}

// intervalFor solves weight·marginal(I) = μ for I within [lo, hi]: the interval at which
// one more visit per time unit is worth exactly μ. warm is a previous answer's log interval
// (NaN: none). In scaled form (see psi) this is ψ(u) = τ with u = I·scale.
func intervalFor(it Item, mu, lo, hi, warm float64) float64 {
	w := weight(it)
	if w == 0 || math.IsInf(mu, 1) {
		return hi
	}
	if mu <= 0 {
		return max(lo, math.SmallestNonzeroFloat64)
	}
	if it.Probs != nil {
		return discreteInterval(it, mu/w, lo, hi, warm)
	}
	// marginal(I) = ψ(I·k)/k: k = λ for a known rate, 1/β for a Gamma posterior.
	alpha, k := it.Rate.Shape, 1/it.Rate.Rate
	if it.Known {
		alpha, k = math.Inf(1), it.Rate.Mean()
		if k <= 0 {
			return hi // a page that never changes needs no visit beyond the bound
		}
	}
	tau := mu * k / w
	if lo > 0 && psi(alpha, lo*k) >= tau {
		return lo
	}
	if psiLimit(alpha) <= tau {
		return hi // not worth a visit: as few as the bound allows (+Inf: none)
	}
	if !math.IsInf(hi, 1) && psi(alpha, hi*k) <= tau {
		return hi
	}
	ylo, yhi := math.Inf(-1), math.Inf(1)
	if lo > 0 {
		ylo = math.Log(lo * k)
	}
	if !math.IsInf(hi, 1) {
		yhi = math.Log(hi * k)
	}
	y := warm + math.Log(k)
	if math.IsNaN(y) {
		// Small-u asymptote ψ ≈ αu²/2 (x²/2 for a known rate), capped where ψ flattens.
		a := alpha
		if math.IsInf(a, 1) {
			a = 1
		}
		y = min(0.5*math.Log(2*tau/a), 5)
	}
	return math.Exp(solveLogPsi(alpha, math.Log(tau), y, ylo, yhi)) / k
}

// solveLogPsi finds y with ln ψ(e^y) = target inside (ylo, yhi), starting from y0 (see
// solveLog).
func solveLogPsi(alpha, target, y0, ylo, yhi float64) float64 {
	return solveLog(func(y float64) (float64, float64) {
		u := math.Exp(y)
		p := psi(alpha, u)
		if !(p > 0) {
			return math.Inf(-1), 0
		}
		return math.Log(p) - target, u * psiPrime(alpha, u) / p
	}, y0, ylo, yhi)
}

// discreteInterval solves Σ p_i·ψ∞(λ_i·I)/λ_i = tau for I within [lo, hi], the marginal
// gain of a discrete posterior (see psi).
func discreteInterval(it Item, tau, lo, hi, warm float64) float64 {
	m := func(interval float64) (value, slope float64) {
		for i, p := range it.Probs {
			r := it.Rates[i]
			x := r * interval
			e := math.Exp(-x) // one exponential serves ψ∞ and its derivative
			if x < 1e-3 {
				value += p * x * x * (0.5 - x/3 + x*x/8) / r
			} else {
				value += p * (1 - e - x*e) / r
			}
			slope += p * x * e
		}
		return value, slope
	}
	if lo > 0 {
		if v, _ := m(lo); v >= tau {
			return lo
		}
	}
	var limit, meanRate float64
	for i, p := range it.Probs {
		limit += p / it.Rates[i]
		meanRate += p * it.Rates[i]
	}
	if limit <= tau {
		return hi
	}
	if !math.IsInf(hi, 1) {
		if v, _ := m(hi); v <= tau {
			return hi
		}
	}
	ylo, yhi := math.Inf(-1), math.Inf(1)
	if lo > 0 {
		ylo = math.Log(lo)
	}
	if !math.IsInf(hi, 1) {
		yhi = math.Log(hi)
	}
	y := warm
	if math.IsNaN(y) {
		y = -math.Log(meanRate)
	}
	logTau := math.Log(tau)
	return math.Exp(solveLog(func(y float64) (float64, float64) {
		interval := math.Exp(y)
		v, d := m(interval)
		if !(v > 0) {
			return math.Inf(-1), 0
		}
		return math.Log(v) - logTau, interval * d / v
	}, y, ylo, yhi))
}

// solveLog finds the root of an increasing function of y = ln(interval) inside (ylo, yhi),
// starting from y0, by Newton's method on f (given with its slope), kept inside a bracket
// that shrinks as it goes, with bisection or steps of 20 (a factor of e^20) as the
// fallback. f returns −Inf where it is not defined (below its domain).
func solveLog(f func(y float64) (value, slope float64), y0, ylo, yhi float64) float64 {
	a, b := ylo, yhi // f(a) < 0 < f(b)
	y := min(max(y0, ylo), yhi)
	if math.IsInf(y, 0) {
		y = 0
	}
	for iter := 0; iter < 100; iter++ {
		g, slope := f(y)
		if math.IsInf(g, -1) {
			a = y
			y = math.Min(y+20, (y+b)/2)
			continue
		}
		if math.Abs(g) < 1e-12 {
			return y
		}
		if g < 0 {
			a = y
		} else {
			b = y
		}
		next := y - g/math.Max(slope, 1e-300)
		next = min(max(next, y-20), y+20)
		if !(next > a && next < b) {
			switch {
			case math.IsInf(a, -1):
				next = y - 20
			case math.IsInf(b, 1):
				next = y + 20
			default:
				next = (a + b) / 2
			}
		}
		if math.Abs(next-y) < 1e-13 || b-a < 1e-13 {
			return next
		}
		y = next
	}
	return y
}
