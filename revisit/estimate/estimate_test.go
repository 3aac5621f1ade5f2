package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestChoGarciaMolinaSeed004 checks the estimator against seed 004's class boundary: with
// 100 daily visits, 2.47009 is exactly r̂ at X = 92 (§3.4 of the digest).
func TestChoGarciaMolinaSeed004(t *testing.T) {
	tests := []struct {
		n, x int
		want float64
	}{
		{100, 92, 2.47009},
		{100, 0, 0},
		{100, 100, math.Log(100.5 / 0.5)},
		{10, 5, -math.Log(5.5 / 10.5)},
		{0, 0, 0},
		{5, 9, math.Log(5.5 / 0.5)}, // X clamped to n
	}
	for _, tt := range tests {
		if got := ChoGarciaMolina(tt.n, tt.x); !near(got, tt.want, 1e-5) {
			t.Errorf("ChoGarciaMolina(%d, %d) = %.6f, want %.6f", tt.n, tt.x, got, tt.want)
		}
	}
}

// TestChoGarciaMolinaLessBiased checks the reason the estimator exists: on simulated daily
// visits of Poisson pages its mean error is smaller than the naive X/n's and the plain
// −ln(1 − X/n)'s is infinite whenever every visit saw a change.
func TestChoGarciaMolinaLessBiased(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rate := range []float64{0.1, 0.5, 1, 2} {
		var naive, cho float64
		const pages, visits = 4000, 30
		for p := 0; p < pages; p++ {
			x := 0
			for v := 0; v < visits; v++ {
				if rng.Float64() < -math.Expm1(-rate) {
					x++
				}
			}
			naive += Naive(visits, x)
			cho += ChoGarciaMolina(visits, x)
		}
		naive /= pages
		cho /= pages
		if math.Abs(cho-rate) >= math.Abs(naive-rate) {
			t.Errorf("rate %.1f: Cho–Garcia-Molina mean %.3f is no closer than naive %.3f", rate, cho, naive)
		}
		if rate <= 1 && math.Abs(cho-rate) > 0.05*rate+0.01 {
			t.Errorf("rate %.1f: Cho–Garcia-Molina mean %.3f is biased", rate, cho)
		}
	}
}

func TestNaiveAndMeanInterval(t *testing.T) {
	if got := Naive(100, 10); got != 0.1 {
		t.Errorf("Naive(100, 10) = %v", got)
	}
	if got := Naive(0, 0); got != 0 {
		t.Errorf("Naive(0, 0) = %v", got)
	}
	// Seed 004's example: 10 changes in 100 days is a 10-day mean change interval.
	if got := MeanChangeInterval(100, 10); got != 10 {
		t.Errorf("MeanChangeInterval(100, 10) = %v, want 10", got)
	}
	if got := MeanChangeInterval(100, 0); !math.IsInf(got, 1) {
		t.Errorf("MeanChangeInterval without changes = %v, want +Inf", got)
	}
}

// TestMLERegular checks that on equal intervals the MLE is the closed form −ln(1 − X/n)/Δ.
func TestMLERegular(t *testing.T) {
	for _, tc := range []struct {
		n, x  int
		delta float64
	}{{10, 3, 1}, {50, 40, 2}, {7, 1, 0.25}, {100, 99, 1}} {
		var ivs []Interval
		for i := 0; i < tc.n; i++ {
			ivs = append(ivs, Interval{Length: tc.delta, Changed: i < tc.x})
		}
		want := -math.Log(1-float64(tc.x)/float64(tc.n)) / tc.delta
		if got := MLE(ivs); !near(got, want, 1e-9) {
			t.Errorf("n=%d X=%d Δ=%v: MLE %.9f, want %.9f", tc.n, tc.x, tc.delta, got, want)
		}
	}
}

func TestMLEEdges(t *testing.T) {
	if got := MLE(nil); got != 0 {
		t.Errorf("MLE(nil) = %v", got)
	}
	if got := MLE([]Interval{{1, false}, {2, false}}); got != 0 {
		t.Errorf("no change: %v", got)
	}
	if got := MLE([]Interval{{1, true}, {2, true}}); !math.IsInf(got, 1) {
		t.Errorf("all changed: %v, want +Inf", got)
	}
	if got := MLE([]Interval{{-1, true}, {0, true}, {math.NaN(), true}, {math.Inf(1), true}}); got != 0 {
		t.Errorf("only invalid intervals: %v, want 0", got)
	}
}

// TestMLEIrregularRecovers checks that the MLE finds the true rate of simulated irregular
// visits (exponentially spaced, as a crawler whose schedule adapts would make them).
func TestMLEIrregularRecovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, rate := range []float64{0.05, 0.3, 1, 3} {
		var ivs []Interval
		for i := 0; i < 20000; i++ {
			length := rng.ExpFloat64() / rate // mean interval 1/rate: about 63% change
			ivs = append(ivs, Interval{Length: length, Changed: rng.Float64() < -math.Expm1(-rate*length)})
		}
		if got := MLE(ivs); !near(got, rate, 0.05) {
			t.Errorf("rate %v: MLE %v", rate, got)
		}
	}
}

func TestLastModified(t *testing.T) {
	obs := []LastModifiedObservation{{Exposure: 3, Changed: true}, {Exposure: 5, Changed: false}, {Exposure: 2, Changed: true}}
	if got := LastModified(obs, false); got != 0.2 {
		t.Errorf("MLE = %v, want 2/10", got)
	}
	if got := LastModified(obs, true); got != 0.1 {
		t.Errorf("unbiased = %v, want 1/10", got)
	}
	if got := LastModified(obs[1:2], false); got != 0 {
		t.Errorf("no change = %v", got)
	}
	if got := LastModified([]LastModifiedObservation{{Exposure: 0, Changed: true}}, false); !math.IsInf(got, 1) {
		t.Errorf("no exposure = %v", got)
	}
	// Recovery on simulated data: exposure of a changed interval is the time since the
	// last change, an exponential truncated at the interval.
	rng := rand.New(rand.NewPCG(5, 6))
	const rate = 0.7
	var sim []LastModifiedObservation
	for i := 0; i < 50000; i++ {
		length := 0.5 + rng.Float64()*3
		first := rng.ExpFloat64() / rate
		if first > length {
			sim = append(sim, LastModifiedObservation{Exposure: length})
			continue
		}
		last := first
		for next := last + rng.ExpFloat64()/rate; next <= length; next += rng.ExpFloat64() / rate {
			last = next
		}
		sim = append(sim, LastModifiedObservation{Exposure: length - last, Changed: true})
	}
	if got := LastModified(sim, true); !near(got, rate, 0.02) {
		t.Errorf("simulated rate %v: estimate %v", rate, got)
	}
}

// TestClassPosteriorSeed004 is seed 004's worked example (Eq. 6–7): weekly (7 days) and
// monthly (30 days) classes, prior 0.5 each, a change seen after 5 days gives 0.77/0.23.
func TestClassPosteriorSeed004(t *testing.T) {
	p := []float64{0.5, 0.5}
	ClassPosterior(p, []float64{7, 30}, 5, true)
	if math.Round(p[0]*100) != 77 || math.Round(p[1]*100) != 23 {
		t.Fatalf("posterior %.4f/%.4f, want 0.77/0.23", p[0], p[1])
	}
	// No change shifts it the other way, as the text says in words.
	q := []float64{0.5, 0.5}
	ClassPosterior(q, []float64{7, 30}, 5, false)
	if !(q[1] > q[0]) {
		t.Errorf("no change: posterior %.3f/%.3f should favour the monthly class", q[0], q[1])
	}
	// An impossible observation resets to uniform instead of dividing by zero.
	r := []float64{1, 0}
	ClassPosterior(r, []float64{1e-300, 1}, 1e6, false)
	if r[0] != 0.5 || r[1] != 0.5 {
		t.Errorf("collapsed posterior %v, want uniform", r)
	}
}
