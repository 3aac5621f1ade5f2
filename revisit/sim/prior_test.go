package sim

import (
	"testing"
	"time"
)

// coldStart is a crawl-like setting in simulated seconds (Config.Unit): 400 pages
// discovered over the first 200 s (first fetches outside the budget), 3.8 revisits per
// second (the live evaluation's 200 pages at 1.9/s, doubled), ten minutes; half the pages
// send Last-Modified. Until 2026-11-27 these runs were made in days by mistake (the
// simulator had no unit), where pages that never change sat at the policy's slowest
// rate and Last-Modified could not single them out.
type coldStart struct {
	early, late float64 // freshness over the first 3 minutes and minutes 5–10
	pageVisits  []int   // in minutes 5–10
	trace       Trace
}

var kindSections = []string{"news", "blog", "docs", "about"}

// runColdStart runs the default policy on mix with the given kind fidelity (0: kinds
// unrelated to rates) over seeds, with or without its feature prior and probes, and
// averages the windows.
func runColdStart(t *testing.T, mix Mixture, fidelity float64, seeds int, noFeatures, noProbe bool) coldStart {
	t.Helper()
	var out coldStart
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		tr := Generate(400, 600, mix, 0.5, seed)
		tr.Kinds(mix, kindSections, fidelity, seed)
		tr.Discover(200, seed)
		cfg := Config{Budget: 3.8, Policies: []string{"optimal"}, Samples: 60, Seed: seed, CountFrom: 300, Unit: time.Second}
		cfg.Options.Optimal.NoFeaturePrior = noFeatures
		cfg.Options.Optimal.NoProbe = noProbe
		res, err := Run(cfg, tr)
		if err != nil {
			t.Fatal(err)
		}
		s := res[0].Series
		out.early += seriesMean(s[:18]) / float64(seeds)
		out.late += seriesMean(s[30:]) / float64(seeds)
		out.pageVisits = append(out.pageVisits, res[0].PageVisits...)
		out.trace.Pages = append(out.trace.Pages, tr.Pages...)
	}
	return out
}

func seriesMean(s []float64) float64 {
	var x float64
	for _, v := range s {
		x += v
	}
	return x / float64(len(s))
}

var (
	// skewed is issue 13's mixture (5 s, 1 min, 10 min, never), in simulated seconds: the
	// feature prior's settings (its shrinkage) were chosen on it.
	skewed = Mixture{{5, 0.25}, {60, 0.25}, {600, 0.25}, {1e7, 0.25}}
	// Held out: seed 004's shape and an even spread.
	seed004Shape = Mixture{{5, 0.11}, {15.5, 0.09}, {159, 0.11}, {485, 0.69}}
	even         = Mixture{{20, 0.25}, {40, 0.25}, {80, 0.25}, {160, 0.25}}
)

// TestFeaturePrior is the regression test of the optimal policy's prior from page
// features (estimate.Groups): pages whose URL section follows their change rate 80 % of
// the time are kept fresher with it than without, from the first minutes, on the mixture
// it was tuned on and on seed 004's shape (held out); and sections unrelated to rates do
// not make it much worse on any mixture. Deterministic: the simulator's visits wait for
// every re-plan.
//
// The bound on the loss with unrelated sections was 0.004 while these runs were made in
// days; in seconds the skewed mixture's loss is 0.005 over these 4 seeds and 0.003 over
// 12 (a group's prior fitted on a noisy sample of rates), so it is 0.006 now: it still
// fails a prior that follows its groups' noise much more than that.
func TestFeaturePrior(t *testing.T) {
	const seeds = 4
	for _, tc := range []struct {
		name     string
		mix      Mixture
		fidelity float64
		gain     float64 // the least gain in both windows (negative: the most loss)
	}{
		{"skewed, sections 80% faithful", skewed, 0.8, 0.005},
		{"seed 004 shape (held out), 80% faithful", seed004Shape, 0.8, 0.002},
		{"skewed, sections unrelated", skewed, 0, -0.006},
		{"seed 004 shape, sections unrelated", seed004Shape, 0, -0.006},
		{"even, sections unrelated", even, 0, -0.006},
	} {
		with := runColdStart(t, tc.mix, tc.fidelity, seeds, false, false)
		without := runColdStart(t, tc.mix, tc.fidelity, seeds, true, false)
		t.Logf("%s: first 3 min %.3f with the feature prior, %.3f without; minutes 5–10 %.3f, %.3f", tc.name, with.early, without.early, with.late, without.late)
		if with.early-without.early < tc.gain || with.late-without.late < tc.gain {
			t.Errorf("%s: the feature prior moved freshness by %+.3f (first 3 min) and %+.3f (min 5–10), want at least %+.3f",
				tc.name, with.early-without.early, with.late-without.late, tc.gain)
		}
	}
}

// TestProbesFindPagesTooFastToFollow: on the skewed mixture, pages changing every 5 s
// cannot be kept fresh at this budget (the oracle gives them no visits), but after long
// intervals they look like the pages changing every minute, which are worth following.
// Probes (early visits that tell the two apart) must cut the visits wasted on them.
func TestProbesFindPagesTooFastToFollow(t *testing.T) {
	wasted := func(r coldStart) int {
		n := 0
		for i, p := range r.trace.Pages {
			if p.Rate == 0.2 {
				n += r.pageVisits[i]
			}
		}
		return n
	}
	with := runColdStart(t, skewed, 0, 2, true, false)
	without := runColdStart(t, skewed, 0, 2, true, true)
	t.Logf("visits in minutes 5–10 to pages changing every 5 s: %d with probes, %d without; freshness in min 5–10 %.3f, %.3f", wasted(with), wasted(without), with.late, without.late)
	if w, wo := wasted(with), wasted(without); float64(w) > 0.7*float64(wo) {
		t.Errorf("%d visits in minutes 5–10 to pages too fast to follow with probes, %d without: want at least 30%% fewer", w, wo)
	}
	if with.late < without.late-0.003 {
		t.Errorf("probes lowered freshness in minutes 5–10: %.3f against %.3f", with.late, without.late)
	}
}
