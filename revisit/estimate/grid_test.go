package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHistoryLikelihood(t *testing.T) {
	var h History
	h.Unchanged(10)
	h.ChangedAt(2)
	h.Changed(3)
	h.Changed(3.1) // same bin as 3
	h.Changed(100)
	h.Changed(0)           // ignored
	h.Changed(math.Inf(1)) // ignored
	if h.Changes() != 4 || h.Exposure != 12 || h.Exact != 1 || len(h.bins) != 2 {
		t.Fatalf("history %+v: want 4 changes, exposure 12, 2 bins", h)
	}
	// Against the exact likelihood with lengths rounded to their bins' middles.
	for _, rate := range []float64{1e-4, 0.01, 0.3, 5} {
		want := math.Log(rate) - rate*12 + 2*math.Log(-math.Expm1(-rate*binLength(5))) + math.Log(-math.Expm1(-rate*binLength(10)))
		if got := h.LogLikelihood(rate); math.Abs(got-want) > 1e-9 {
			t.Errorf("rate %v: log-likelihood %v, want %v", rate, got, want)
		}
	}
	// Bins are a factor of two wide: 3 s lies in [2, 4) = bin 5 (1/16 · 2^5).
	if b := int(h.bins[0] >> 24); b != 5 || binLength(5) < 2 || binLength(5) > 4 {
		t.Errorf("3 s went to bin %d (middle %v)", b, binLength(b))
	}
	var empty History
	if !empty.Empty() || empty.LogLikelihood(1) != 0 {
		t.Error("an empty history must have likelihood 1")
	}
}

// TestGridRecoversMixture fits the prior to pages drawn from seed 004's four classes,
// visited at irregular intervals without Last-Modified, and checks that the fitted prior
// puts its mass near the four rates and that each page's posterior mean is close to its
// class's rate.
func TestGridRecoversMixture(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	day := 86400.0
	classes := []float64{1 / day, 1 / (3.1 * day), 1 / (31.8 * day), 1 / (96.9 * day)}
	shares := []float64{0.11, 0.09, 0.11, 0.69}
	var hs []History
	var truth []float64
	for i := 0; i < 4000; i++ {
		x, c := rng.Float64(), 0
		for x > shares[c] {
			x -= shares[c]
			c++
		}
		rate := classes[c]
		var h History
		for v := 0; v < 40; v++ {
			length := (0.5 + rng.Float64()*4) * day
			if rng.Float64() < -math.Expm1(-rate*length) {
				h.Changed(length)
			} else {
				h.Unchanged(length)
			}
		}
		hs = append(hs, h)
		truth = append(truth, rate)
	}
	g := NewGrid(1e-9, 10, 50, 1/day, 2)
	if !g.Fit(hs, 200, 1) {
		t.Fatal("fit refused")
	}
	mass := func(lo, hi float64) float64 {
		var m float64
		for i, r := range g.Rates {
			if r >= lo && r <= hi {
				m += g.Weights[i]
			}
		}
		return m
	}
	// 40 visits over about 110 days tell daily from 3-day pages well, but a page changing
	// every 32 days from one changing every 97 only roughly: check those two together.
	for _, tc := range []struct {
		lo, hi, want float64
	}{
		{classes[0] / 1.8, classes[0] * 2.5, shares[0]},
		{classes[1] / 2.5, classes[1] * 1.8, shares[1]},
		{0, classes[2] * 2.5, shares[2] + shares[3]},
	} {
		if m := mass(tc.lo, tc.hi); math.Abs(m-tc.want) > 0.05 {
			t.Errorf("prior mass %.3f between every %.1f and %.1f days, want about %.2f", m, 1/tc.hi/day, 1/tc.lo/day, tc.want)
		}
	}
	var logErr float64
	for i := range hs {
		logErr += math.Abs(math.Log(g.Mean(&hs[i]) / truth[i]))
	}
	if e := logErr / float64(len(hs)); e > 0.35 {
		t.Errorf("mean |log(estimate/truth)| = %.3f", e)
	}
	if (&Grid{Rates: []float64{1}, Weights: []float64{1}}).Fit(hs[:1], 5, 1) {
		t.Error("fit on one page accepted")
	}
}

// TestSnapshots: copies of histories and grids (what a re-plan reads without the policy's
// lock) give the same likelihoods and posteriors, and later updates of the originals, or
// fitting the copy, leave the other side as it was.
func TestSnapshots(t *testing.T) {
	hs := []*History{{}, {}, {}}
	hs[0].Unchanged(10)
	hs[1].Changed(3)
	hs[1].Changed(100)
	hs[2].ChangedAt(5)
	hs[2].Changed(0.5)
	copies := CopyHistories(hs)
	rates := []float64{1e-3, 0.1, 2}
	want := make([][]float64, len(hs))
	for i, h := range hs {
		for _, r := range rates {
			want[i] = append(want[i], h.LogLikelihood(r))
		}
	}
	// The originals go on: a bin's count grows in place, a new bin is appended.
	hs[1].Changed(3.2)
	hs[2].Changed(1000)
	hs[0].Unchanged(5)
	for i := range copies {
		for j, r := range rates {
			if got := copies[i].LogLikelihood(r); got != want[i][j] {
				t.Errorf("copy %d at rate %v: log-likelihood %v, want %v as when copied", i, r, got, want[i][j])
			}
		}
	}
	// Updating a copy does not reach its neighbour in the shared block, nor the original.
	copies[0].Changed(7)
	if copies[1].Changes() != 2 || hs[0].Changes() != 0 {
		t.Errorf("after updating copy 0: copy 1 has %d changes (want 2), original 0 has %d (want 0)", copies[1].Changes(), hs[0].Changes())
	}

	g := NewGrid(1e-4, 10, 20, 0.01, 1)
	before := append([]float64{}, g.Weights...)
	c := g.Clone()
	post, cpost := make([]float64, 20), make([]float64, 20)
	g.Posterior(hs[1], post)
	c.Posterior(hs[1], cpost)
	for i := range post {
		if post[i] != cpost[i] {
			t.Fatalf("clone's posterior %v differs from the grid's %v", cpost, post)
		}
	}
	if !c.Fit([]History{*hs[0], *hs[1], *hs[2]}, 5, 1) {
		t.Fatal("the clone did not fit three histories")
	}
	for i := range before {
		if g.Weights[i] != before[i] {
			t.Fatalf("fitting the clone changed the grid's weights: %v, was %v", g.Weights, before)
		}
	}
	g.Posterior(hs[1], cpost)
	for i := range post {
		if post[i] != cpost[i] {
			t.Fatalf("fitting the clone changed the grid's posterior: %v, was %v", cpost, post)
		}
	}
}
