package alloc

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sonda-search/sonda/revisit/estimate"
)

func known(rate float64) Item {
	return Item{Rate: estimate.Gamma{Shape: rate, Rate: 1}, Known: true, Weight: 1, Host: -1}
}

// TestChoGarciaMolinaExample is the worked example of Cho & Garcia-Molina (TODS 2003,
// Table I): five pages changing 1, 2, 3, 4 and 5 times a day and 5 fetches a day. The
// freshness-optimal frequencies are 1.15, 1.36, 1.35, 1.14 and 0: the fastest page is
// given up.
func TestChoGarciaMolinaExample(t *testing.T) {
	var items []Item
	for _, r := range []float64{1, 2, 3, 4, 5} {
		items = append(items, known(r))
	}
	sol, err := Solve(Problem{Budget: 5}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.15, 1.36, 1.35, 1.14, 0}
	for i, iv := range sol.Intervals {
		if f := 1 / iv; math.Abs(f-want[i]) > 0.006 {
			t.Errorf("page %d (λ=%d): frequency %.3f, want %.2f", i, i+1, f, want[i])
		}
	}
	if math.Abs(sol.Used-5) > 1e-6 {
		t.Errorf("budget used %v, want 5", sol.Used)
	}
	// Optimal beats uniform (1 fetch a day each) and proportional (f ∝ λ).
	var uniform, proportional float64
	for i, it := range items {
		uniform += Freshness(it.Rate.Mean(), 1)
		proportional += Freshness(it.Rate.Mean(), 3/float64(i+1))
	}
	if !(sol.Expected > uniform && uniform > proportional) {
		t.Errorf("freshness optimal %.4f, uniform %.4f, proportional %.4f: want optimal > uniform > proportional", sol.Expected, uniform, proportional)
	}
}

// TestSolveIsOptimal checks the KKT conditions on random problems: every visited page has
// the same weighted marginal gain, no dropped page would gain more, the budget is spent, and
// moving budget between two pages never helps.
func TestSolveIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 20; trial++ {
		var items []Item
		for i := 0; i < 200; i++ {
			it := Item{Weight: 0.2 + rng.Float64(), Host: -1}
			if trial%2 == 0 {
				it.Known = true
				it.Rate = estimate.Gamma{Shape: math.Exp(rng.NormFloat64() * 2), Rate: 1}
			} else {
				it.Rate = estimate.Gamma{Shape: 0.3 + 5*rng.Float64(), Rate: math.Exp(rng.NormFloat64() * 2)}
			}
			items = append(items, it)
		}
		budget := 10 + 200*rng.Float64()
		sol, err := Solve(Problem{Budget: budget}, items, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Near a page's cut-off its optimal frequency falls to zero only logarithmically in
		// μ, so the last fraction of a percent of the budget may stay unplanned.
		if sol.Used > budget*(1+1e-6) || sol.Used < budget*0.99 {
			t.Fatalf("trial %d: used %v of %v", trial, sol.Used, budget)
		}
		for i, it := range items {
			shape, rate := it.Rate.Shape, it.Rate.Rate
			if it.Known {
				shape = it.Rate.Mean()
			}
			if math.IsInf(sol.Intervals[i], 1) {
				limit := 1 / shape
				if !it.Known {
					limit = rate / (shape - 1)
				}
				if it.Weight*limit > sol.Mu*(1+1e-6) {
					t.Errorf("trial %d item %d dropped with marginal %v > μ %v", trial, i, it.Weight*limit, sol.Mu)
				}
				continue
			}
			m := it.Weight * marginal(it.Known, shape, rate, sol.Intervals[i])
			if math.Abs(m-sol.Mu)/sol.Mu > 1e-5 {
				t.Errorf("trial %d item %d: marginal %v, μ %v", trial, i, m, sol.Mu)
			}
		}
		// Perturb: move a little budget from one page to another.
		objective := func(iv []float64) float64 {
			var s float64
			for i, it := range items {
				s += it.Weight * itemFreshness(it, iv[i])
			}
			return s
		}
		best := objective(sol.Intervals)
		for k := 0; k < 50; k++ {
			i, j := rng.IntN(len(items)), rng.IntN(len(items))
			fi := 1 / sol.Intervals[i]
			if i == j || fi == 0 {
				continue
			}
			d := fi * 0.1
			iv := append([]float64{}, sol.Intervals...)
			iv[i] = 1 / (fi - d)
			iv[j] = 1 / (1/sol.Intervals[j] + d)
			if got := objective(iv); got > best*(1+1e-9) {
				t.Errorf("trial %d: moving %.3g fetches from %d to %d improves %.9f -> %.9f", trial, d, i, j, best, got)
			}
		}
	}
}

// TestSolveHostCaps: a host's pages may not take more than its cap, and the budget they
// cannot use goes to the other pages.
func TestSolveHostCaps(t *testing.T) {
	var items []Item
	for i := 0; i < 10; i++ {
		it := known(0.5 + float64(i))
		it.Host = i % 2
		items = append(items, it)
	}
	free, err := Solve(Problem{Budget: 20}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	use := func(sol Solution, host int) float64 {
		var s float64
		for i, it := range items {
			if it.Host == host {
				s += 1 / sol.Intervals[i]
			}
		}
		return s
	}
	cap0 := use(free, 0) / 2
	capped, err := Solve(Problem{Budget: 20, HostCaps: []float64{cap0, 0}}, items, &free)
	if err != nil {
		t.Fatal(err)
	}
	if got := use(capped, 0); math.Abs(got-cap0) > 1e-6 {
		t.Errorf("host 0 uses %v, cap %v", got, cap0)
	}
	if got := use(capped, 1); math.Abs(got-(20-cap0)) > 1e-6 {
		t.Errorf("host 1 uses %v, want the rest %v", got, 20-cap0)
	}
	if _, ok := capped.HostMu[0]; !ok || capped.HostMu[0] < capped.Mu {
		t.Errorf("host 0 multiplier %v should exceed μ %v", capped.HostMu[0], capped.Mu)
	}
	// Interval agrees with the solution for an unchanged item.
	for i, it := range items {
		if got := capped.Interval(Problem{Budget: 20, HostCaps: []float64{cap0, 0}}, it); math.Abs(got-capped.Intervals[i]) > 1e-6*got {
			t.Errorf("Interval(item %d) = %v, solution %v", i, got, capped.Intervals[i])
		}
	}
}

// TestUncertainPagesAreKept: a page whose posterior has shape ≤ 1 is never given up, while
// the same mean rate known exactly (or with a narrow posterior) is.
func TestUncertainPagesAreKept(t *testing.T) {
	items := []Item{known(0.1), known(0.2), {Rate: estimate.Gamma{Shape: 100, Rate: 20}, Weight: 1, Host: -1},
		{Rate: estimate.Gamma{Shape: 0.9, Rate: 0.18}, Weight: 1, Host: -1}}
	sol, err := Solve(Problem{Budget: 0.5}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(sol.Intervals[2], 1) {
		t.Errorf("a page known to change 5 times per unit was kept (interval %v) on a budget of 0.5", sol.Intervals[2])
	}
	if math.IsInf(sol.Intervals[3], 1) {
		t.Error("an uncertain page (shape 0.9) was given up")
	}
}

func TestSolveBounds(t *testing.T) {
	items := []Item{known(1), known(2), known(0)}
	// A budget larger than the shortest interval allows: everyone at the bound.
	sol, err := Solve(Problem{Budget: 100, MinInterval: 0.5}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Intervals[0] != 0.5 || sol.Intervals[1] != 0.5 {
		t.Errorf("intervals %v, want the 0.5 bound for changing pages", sol.Intervals)
	}
	// A budget smaller than the longest interval requires: everyone at that bound.
	sol, err = Solve(Problem{Budget: 0.01, MaxInterval: 10}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range sol.Intervals {
		if iv != 10 {
			t.Errorf("item %d: interval %v, want the 10 bound", i, iv)
		}
	}
	if _, err := Solve(Problem{Budget: 0}, items, nil); err == nil {
		t.Error("a zero budget was accepted")
	}
	if _, err := Solve(Problem{Budget: 1, MinInterval: 2, MaxInterval: 1}, items, nil); err == nil {
		t.Error("crossed bounds were accepted")
	}
	// Zero weight: the least visits allowed.
	z := known(1)
	z.Weight = 0
	sol, _ = Solve(Problem{Budget: 1}, []Item{z, known(1)}, nil)
	if !math.IsInf(sol.Intervals[0], 1) || math.Abs(sol.Intervals[1]-1) > 1e-9 {
		t.Errorf("zero weight: intervals %v", sol.Intervals)
	}
}

func TestFreshnessAndAge(t *testing.T) {
	// Numeric time averages over one interval.
	for _, tc := range []struct{ rate, interval float64 }{{1, 1}, {0.1, 3}, {5, 0.2}, {1e-6, 1}, {3, 10}} {
		const steps = 100000
		var fresh, age float64
		for k := 0; k < steps; k++ {
			s := (float64(k) + 0.5) / steps * tc.interval
			fresh += math.Exp(-tc.rate * s)
			// E[age at s] = ∫0^s P(first change at c)·(s − c) dc = s − (1 − e^(−λs))/λ.
			age += s + math.Expm1(-tc.rate*s)/tc.rate
		}
		fresh /= steps
		age /= steps
		if got := Freshness(tc.rate, tc.interval); math.Abs(got-fresh) > 1e-6 {
			t.Errorf("Freshness(%v, %v) = %v, numeric %v", tc.rate, tc.interval, got, fresh)
		}
		if got := Age(tc.rate, tc.interval); math.Abs(got-age) > 1e-6*max(1, age) {
			t.Errorf("Age(%v, %v) = %v, numeric %v", tc.rate, tc.interval, got, age)
		}
	}
	if Freshness(0, 5) != 1 || Freshness(1, math.Inf(1)) != 0 || Age(0, 3) != 0 || !math.IsInf(Age(1, math.Inf(1)), 1) {
		t.Error("edge cases of Freshness/Age")
	}
}

func TestExpectedFreshness(t *testing.T) {
	for _, tc := range []struct{ shape, rate, interval float64 }{{0.5, 2, 1}, {1, 1, 3}, {4, 2, 0.5}, {20, 10, 2}, {1 + 1e-12, 3, 1}} {
		// ∫ F(λ, I)·Gamma(λ; α, β) dλ on a log grid (λ = e^y, dλ = λ dy).
		lg, _ := math.Lgamma(tc.shape)
		var s float64
		const lo, hi, steps = -40.0, 10.0, 200000
		h := (hi - lo) / steps
		for k := 0; k < steps; k++ {
			y := lo + (float64(k)+0.5)*h
			l := math.Exp(y)
			logPdf := tc.shape*math.Log(tc.rate) - lg + (tc.shape-1)*y - tc.rate*l
			s += Freshness(l, tc.interval) * math.Exp(logPdf+y) * h
		}
		if got := ExpectedFreshness(tc.shape, tc.rate, tc.interval); math.Abs(got-s) > 1e-6 {
			t.Errorf("ExpectedFreshness(%v) = %v, numeric %v", tc, got, s)
		}
	}
}

// TestMarginalIsDerivative checks the closed-form marginal against a numeric derivative of
// freshness with respect to frequency.
func TestMarginalIsDerivative(t *testing.T) {
	for _, tc := range []struct {
		known              bool
		shape, rate, inter float64
	}{{true, 2, 0, 0.7}, {true, 0.01, 0, 3}, {false, 0.5, 2, 1}, {false, 3, 0.4, 0.1}, {false, 1, 1, 5}} {
		f := 1 / tc.inter
		val := func(f float64) float64 {
			if tc.known {
				return Freshness(tc.shape, 1/f)
			}
			return ExpectedFreshness(tc.shape, tc.rate, 1/f)
		}
		h := f * 1e-5
		num := (val(f+h) - val(f-h)) / (2 * h)
		if got := marginal(tc.known, tc.shape, tc.rate, tc.inter); math.Abs(got-num) > 1e-6*max(1, math.Abs(num)) {
			t.Errorf("%+v: marginal %v, numeric %v", tc, got, num)
		}
	}
}

func BenchmarkSolve10k(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	items := make([]Item, 10000)
	for i := range items {
		items[i] = Item{Rate: estimate.Gamma{Shape: 0.5 + 3*rng.Float64(), Rate: math.Exp(rng.NormFloat64() * 2)}, Weight: 1, Host: -1}
	}
	p := Problem{Budget: 3000}
	sol, _ := Solve(p, items, nil)
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Solve(p, items, nil)
		}
	})
	b.Run("warm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			items[i%len(items)].Rate.Rate *= 1.01
			sol, _ = Solve(p, items, &sol)
		}
	})
}

// TestDiscreteItems: a discrete posterior concentrated on one rate behaves like that known
// rate, and mixed posteriors satisfy the optimality conditions.
func TestDiscreteItems(t *testing.T) {
	rates := []float64{0.01, 0.1, 1, 10}
	var items, point []Item
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 40; i++ {
		r := rates[i%4]
		point = append(point, known(r))
		items = append(items, Item{Rates: []float64{r}, Probs: []float64{1}, Weight: 1, Host: -1})
	}
	a, _ := Solve(Problem{Budget: 5}, point, nil)
	b, _ := Solve(Problem{Budget: 5}, items, nil)
	for i := range a.Intervals {
		if x, y := a.Intervals[i], b.Intervals[i]; !(math.IsInf(x, 1) && math.IsInf(y, 1)) && math.Abs(x-y) > 1e-6*x {
			t.Errorf("item %d: known-rate interval %v, discrete %v", i, x, y)
		}
	}
	var mixed []Item
	for i := 0; i < 60; i++ {
		p := []float64{rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64()}
		var s float64
		for _, v := range p {
			s += v
		}
		for k := range p {
			p[k] /= s
		}
		mixed = append(mixed, Item{Rates: rates, Probs: p, Weight: 0.5 + rng.Float64(), Host: -1})
	}
	sol, err := Solve(Problem{Budget: 20}, mixed, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range mixed {
		iv := sol.Intervals[i]
		var m float64
		for k, p := range it.Probs {
			m += p * marginal(true, it.Rates[k], 0, iv)
		}
		if !math.IsInf(iv, 1) && math.Abs(it.Weight*m-sol.Mu)/sol.Mu > 1e-5 {
			t.Errorf("item %d: weighted marginal %v, μ %v", i, it.Weight*m, sol.Mu)
		}
	}
}
