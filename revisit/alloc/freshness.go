// Package alloc owns the freshness arithmetic of the Poisson page model and the optimal
// allocation of a fetch budget across pages (Cho & Garcia-Molina, "Synchronizing a database
// to improve freshness", SIGMOD 2000, and "Effective page refresh policies for Web
// crawlers", TODS 2003).
//
// A page whose changes form a Poisson process of rate λ and that is fetched every I time
// units is, averaged over time, fresh with probability F(λ, I) = (1 − e^(−λI))/(λI). Given a
// budget of B fetches per time unit, the freshness-optimal revisit frequencies f_i = 1/I_i
// maximize Σ w_i·F(λ_i, 1/f_i) subject to Σ f_i = B. F is concave in f, so the optimum is where
// every visited page has the same weighted marginal gain w_i·∂F/∂f = μ (a Lagrange
// multiplier found by a monotone search), and pages whose marginal gain at f = 0 is below μ
// are not visited at all: pages that change far more often than the budget can follow are
// given up, which is the counter-intuitive result of Cho & Garcia-Molina.
//
// sonda does not know λ; it has a posterior over it (package estimate): a discrete one over
// a grid of rates, or a Gamma. The allocation therefore maximizes expected freshness
// E[F(λ, I)] under the posterior: a weighted sum for a discrete posterior, a closed form for
// a Gamma, and so for their marginals. Uncertainty changes the answer in the right
// direction: a page whose history cannot yet tell a slow page from a fast one keeps the
// marginal gain of the slow possibility, and is given up only when its history says it
// changes too fast for the budget. Per-host limits (politeness) are constraints of their
// own; hosts that would exceed theirs get a larger multiplier of their own.
package alloc

import "math"

// Freshness is the time-averaged freshness of a Poisson page of the given rate fetched
// every interval: (1 − e^(−λI))/(λI). It is 1 for a page that never changes and 0 for one
// never fetched (interval +Inf) that changes.
func Freshness(rate, interval float64) float64 {
	if rate <= 0 {
		return 1
	}
	if math.IsInf(interval, 1) {
		return 0
	}
	x := rate * interval
	if x < 1e-8 {
		return 1 - x/2
	}
	return -math.Expm1(-x) / x
}

// Age is the time-averaged age of a Poisson page of the given rate fetched every interval:
// the time since its first unseen change, zero while fresh. Averaged over one interval it is
// I/2 − 1/λ + (1 − e^(−λI))/(λ²I).
func Age(rate, interval float64) float64 {
	if rate <= 0 {
		return 0
	}
	if math.IsInf(interval, 1) {
		return math.Inf(1)
	}
	x := rate * interval
	if x < 1e-4 {
		// Series of the expression above, which cancels catastrophically here.
		return interval * (x/6 - x*x/24)
	}
	return interval/2 - 1/rate + -math.Expm1(-x)/(rate*x)
}

// ExpectedFreshness is E[F(λ, I)] for λ ~ Gamma(shape α, rate β):
//
//	E[(1 − e^(−λI))/(λI)] = (1 − (1 + u)^(1−α)) / ((α − 1)·u),  u = I/β
//
// (from E[λ^(−1)·e^(−sλ)] = β^α/((α−1)(β+s)^(α−1))), and ln(1 + u)/u when α = 1.
func ExpectedFreshness(shape, rate, interval float64) float64 {
	if math.IsInf(interval, 1) {
		return 0
	}
	u := interval / rate
	if u < 1e-6 {
		return 1 - u*shape/2 // E[1 − λI/2]
	}
	return hfun(shape, u, math.Log1p(u)) / u
}

// The marginal gain ∂F/∂f of a page at interval I = 1/f is I·(F − e^(−λI)) for a known rate,
// and its expectation under Gamma(α, β) otherwise. Both are a scale times one increasing
// function of a scaled interval, which is what the allocation inverts:
//
//	known λ:      ∂F/∂f = ψ∞(λI)/λ,   ψ∞(x) = 1 − (1 + x)·e^(−x),        ψ∞'(x) = x·e^(−x)
//	Gamma(α, β):  ∂F/∂f = β·ψα(I/β),  ψα(u) = H(u) − u·(1 + u)^(−α),     ψα'(u) = α·u·(1 + u)^(−α−1)
//
// where H(u) = (1 − (1 + u)^(1−α))/(α − 1) = u·E[F]. ψ rises from 0 to its limit: 1 for a known
// rate, 1/(α − 1) for α > 1 and +Inf for α ≤ 1 (E[1/λ] diverges: the page may change very
// rarely, so some visits are always worth making).

// psi is ψα(u), or ψ∞(u) when alpha is +Inf.
func psi(alpha, u float64) float64 {
	if math.IsInf(alpha, 1) {
		if u < 1e-3 {
			return u * u * (0.5 - u/3 + u*u/8)
		}
		return -math.Expm1(-u) - u*math.Exp(-u)
	}
	if u*(alpha+1) < 1e-3 {
		// Series; the closed form cancels catastrophically here.
		return alpha * u * u * (0.5 - (alpha+1)*u/3 + (alpha+1)*(alpha+2)*u*u/8)
	}
	l := math.Log1p(u)
	return hfun(alpha, u, l) - u*math.Exp(-alpha*l)
}

// psiPrime is the derivative of psi in u.
func psiPrime(alpha, u float64) float64 {
	if math.IsInf(alpha, 1) {
		return u * math.Exp(-u)
	}
	return alpha * u * math.Exp(-(alpha+1)*math.Log1p(u))
}

// psiLimit is ψ at u → ∞.
func psiLimit(alpha float64) float64 {
	switch {
	case math.IsInf(alpha, 1):
		return 1
	case alpha > 1:
		return 1 / (alpha - 1)
	}
	return math.Inf(1)
}

// hfun is H(u) = (1 − (1+u)^(1−α))/(α − 1) given l = ln(1 + u).
func hfun(alpha, u, l float64) float64 {
	d := 1 - alpha
	if math.Abs(d) < 1e-9 {
		return l
	}
	return math.Expm1(d*l) / d
}

// marginal is the unweighted ∂F/∂f at the given interval (see psi). For a known rate the
// caller passes λ as shape.
func marginal(known bool, shape, rate, interval float64) float64 {
	if known {
		if shape <= 0 {
			return 0
		}
		return psi(math.Inf(1), shape*interval) / shape
	}
	return rate * psi(shape, interval/rate)
}
