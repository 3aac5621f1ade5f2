package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// exactMoments integrates λ^k·Gamma(λ; a, b)·(1 − e^(−λt)) numerically (normalized), the
// posterior Changed approximates.
func exactMoments(a, b, t float64) (m1, m2 float64) {
	const steps = 200000
	hi := (a + 40*math.Sqrt(a+1)) / b
	h := hi / steps
	var z, s1, s2 float64
	for i := 1; i <= steps; i++ {
		l := (float64(i) - 0.5) * h
		w := math.Exp((a-1)*math.Log(l)-b*l) * -math.Expm1(-l*t)
		z += w
		s1 += w * l
		s2 += w * l * l
	}
	return s1 / z, s2 / z
}

func TestGammaChangedMatchesExactMoments(t *testing.T) {
	for _, tc := range []struct{ a, b, t float64 }{
		{1, 1, 1}, {0.5, 3, 0.2}, {3, 10, 5}, {2, 0.5, 40}, {10, 100, 1},
	} {
		var e Evidence
		prior := Gamma{Shape: tc.a, Rate: tc.b}
		e.Changed(tc.t, prior)
		post := e.Posterior(prior)
		m1, m2 := exactMoments(tc.a, tc.b, tc.t)
		if !near(post.Mean(), m1, 1e-3) || !near(post.Var(), m2-m1*m1, 2e-3) {
			t.Errorf("a=%v b=%v t=%v: posterior mean %.5g var %.5g, exact %.5g %.5g",
				tc.a, tc.b, tc.t, post.Mean(), post.Var(), m1, m2-m1*m1)
		}
	}
}

func TestGammaExactUpdates(t *testing.T) {
	prior := Gamma{Shape: 2, Rate: 4}
	var e Evidence
	e.Unchanged(3)
	e.Unchanged(-1)          // ignored
	e.Unchanged(math.Inf(1)) // ignored
	e.ChangedAt(1.5)
	got := e.Posterior(prior)
	if got.Shape != 3 || got.Rate != 8.5 {
		t.Fatalf("posterior %v, want Gamma(3, 8.5)", got)
	}
	// A prior swapped later still combines with the same evidence (empirical Bayes).
	if p := e.Posterior(Gamma{Shape: 1, Rate: 1}); p.Shape != 2 || p.Rate != 5.5 {
		t.Errorf("re-prior: %v", p)
	}
}

// TestGammaChangedEdges: a change in a very short interval behaves like a change observed
// at its end (shape +1); in a very long one it teaches almost nothing.
func TestGammaChangedEdges(t *testing.T) {
	prior := Gamma{Shape: 2, Rate: 5}
	var short Evidence
	short.Changed(1e-9, prior)
	if p := short.Posterior(prior); !near(p.Mean(), 3.0/5, 1e-4) {
		t.Errorf("short interval: mean %v, want 3/5", p.Mean())
	}
	var long Evidence
	long.Changed(1e9, prior)
	if p := long.Posterior(prior); !near(p.Mean(), prior.Mean(), 1e-4) {
		t.Errorf("long interval: mean %v, want the prior's %v", p.Mean(), prior.Mean())
	}
	var none Evidence
	none.Changed(0, prior)
	none.Changed(math.NaN(), prior)
	none.Changed(math.Inf(1), prior)
	if none != (Evidence{}) {
		t.Errorf("invalid intervals changed the evidence: %+v", none)
	}
}

// TestGammaConverges follows one page through many irregular visits: the posterior mean
// approaches the true rate and its spread shrinks.
func TestGammaConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	prior := Gamma{Shape: 0.5, Rate: 0.5}
	for _, rate := range []float64{0.02, 0.3, 2} {
		var e Evidence
		for i := 0; i < 3000; i++ {
			length := (0.2 + rng.Float64()) / rate
			if rng.Float64() < -math.Expm1(-rate*length) {
				e.Changed(length, prior)
			} else {
				e.Unchanged(length)
			}
		}
		post := e.Posterior(prior)
		if !near(post.Mean(), rate, 0.06) {
			t.Errorf("rate %v: posterior mean %v", rate, post.Mean())
		}
		if cv := math.Sqrt(post.Var()) / post.Mean(); cv > 0.05 {
			t.Errorf("rate %v: posterior still wide (cv %.3f)", rate, cv)
		}
	}
}

func TestFitGammaPrior(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var rates []float64
	truth := Gamma{Shape: 0.8, Rate: 4}
	for i := 0; i < 100000; i++ {
		// Gamma(0.8, 4) via the Marsaglia–Tsang boost for shape < 1.
		rates = append(rates, gammaSample(rng, truth.Shape)/truth.Rate)
	}
	g, ok := FitGammaPrior(append(rates, -1, math.NaN(), math.Inf(1)), 10)
	if !ok || !near(g.Shape, truth.Shape, 0.05) || !near(g.Rate, truth.Rate, 0.05) {
		t.Errorf("fit %v (ok %v), want %v", g, ok, truth)
	}
	if g, _ := FitGammaPrior(rates, 0.5); g.Shape != 0.5 || !near(g.Mean(), truth.Mean(), 0.02) {
		t.Errorf("capped fit %v: want shape 0.5 and mean %v", g, truth.Mean())
	}
	if _, ok := FitGammaPrior([]float64{1}, 1); ok {
		t.Error("one rate fitted a prior")
	}
	if _, ok := FitGammaPrior([]float64{2, 2, 2}, 1); ok {
		t.Error("constant rates fitted a prior")
	}
}

func gammaSample(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaSample(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// TestFitPriorRecovers: pages with rates drawn from a known Gamma, each observed through a
// few exact intervals, give back that Gamma.
func TestFitPriorRecovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	truth := Gamma{Shape: 0.7, Rate: 20}
	var evs []Evidence
	for i := 0; i < 20000; i++ {
		rate := gammaSample(rng, truth.Shape) / truth.Rate
		var e Evidence
		for v := 0; v < 10; v++ {
			length := 1 + rng.Float64()*4
			if rng.Float64() < -math.Expm1(-rate*length) {
				// Last-Modified known: the time since the last change, an exponential
				// conditioned on falling inside the interval.
				since := rng.ExpFloat64() / rate
				for since > length {
					since = rng.ExpFloat64() / rate
				}
				e.ChangedAt(since)
			} else {
				e.Unchanged(length)
			}
		}
		evs = append(evs, e)
	}
	evs = append(evs, Evidence{}) // no evidence: skipped
	g, ok := FitPrior(evs, 0.05, 20)
	if !ok || !near(g.Shape, truth.Shape, 0.1) || !near(g.Mean(), truth.Mean(), 0.1) {
		t.Errorf("fitted %v (ok %v), want %v", g, ok, truth)
	}
	if _, ok := FitPrior([]Evidence{{Rate: 3}, {Rate: 4}}, 0.05, 20); ok {
		t.Error("a fit without any change succeeded")
	}
}
