package revisit

import (
	"math"
	"testing"
	"time"

	"github.com/sonda-search/sonda/revisit/alloc"
	"github.com/sonda-search/sonda/revisit/estimate"
)

// TestPlanFreshness: the plan's expected freshness is the weighted mean of each page's
// E[F] under its posterior at its planned interval; pages never revisited count as stale,
// gone pages leave the plan, and more evidence of change lowers the estimate.
func TestPlanFreshness(t *testing.T) {
	const day = 24 * time.Hour
	f := newPlanFreshness(Options{Interval: day})
	if _, ok := f.expected(time.Now()); ok {
		t.Fatal("an expected freshness before any page was planned")
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b, c := Key{1}, Key{2}, Key{3}
	// a: visited daily, never changed, planned a day ahead; b: changed at each of two
	// daily revisits, planned a day ahead; c: planned never.
	f.observe(a, Observation{At: t0, Status: OK, First: true}, t0.Add(day))
	f.observe(b, Observation{At: t0, Status: OK, First: true, Weight: 3}, t0.Add(day))
	for i := 1; i <= 2; i++ {
		at := t0.Add(time.Duration(i) * day)
		f.observe(a, Observation{At: at, Status: NotModified}, at.Add(day))
		f.observe(b, Observation{At: at, Status: OK, Changed: true, Weight: 3}, at.Add(day))
	}
	f.observe(c, Observation{At: t0, Status: OK, First: true}, time.Time{})

	prior := estimate.Gamma{Shape: defaultShape, Rate: defaultShape * day.Seconds()}
	var evA, evB estimate.Evidence
	evA.Unchanged(day.Seconds())
	evA.Unchanged(day.Seconds())
	evB.Changed(day.Seconds(), prior)
	evB.Changed(day.Seconds(), prior)
	ef := func(ev estimate.Evidence) float64 {
		p := ev.Posterior(prior)
		return alloc.ExpectedFreshness(p.Shape, p.Rate, day.Seconds())
	}
	fa, fb := ef(evA), ef(evB)
	want := (fa + 3*fb + 0) / 5
	got, ok := f.expected(t0)
	if !ok || math.Abs(got-want) > 1e-12 {
		t.Fatalf("expected freshness %v (%v), want %v", got, ok, want)
	}
	if !(fa > 0.6 && fb < fa) {
		t.Errorf("a page seen unchanged twice (%v) should look fresher than one seen changed twice (%v)", fa, fb)
	}
	// Cached until freshnessEvery passes.
	f.observe(c, Observation{At: t0, Status: Gone}, time.Time{})
	if again, _ := f.expected(t0.Add(time.Second)); again != got {
		t.Errorf("recomputed within %v: %v", freshnessEvery, again)
	}
	if later, _ := f.expected(t0.Add(freshnessEvery)); math.Abs(later-(fa+3*fb)/4) > 1e-12 {
		t.Errorf("without the gone page: %v, want %v", later, (fa+3*fb)/4)
	}
}

// TestPolicyReportsFreshness: every policy, through the crawl adapter, reports a freshness
// in 0..1 once it has planned a page, and a policy whose pages change faster than it visits
// them reports less than one whose pages do not.
func TestPolicyReportsFreshness(t *testing.T) {
	for _, name := range []string{"uniform", "proportional", "classes", "adaptive", "optimal"} {
		t.Run(name, func(t *testing.T) {
			run := func(changes bool) float64 {
				cp, err := NewCrawlPolicy(name, Options{Budget: 0.01, Interval: time.Hour}, false)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := cp.ExpectedFreshness(); ok {
					t.Fatal("a freshness before any visit")
				}
				t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
				for page := 0; page < 30; page++ {
					at := t0
					for visit := 0; visit < 6; visit++ {
						o := Observation{At: at, Status: OK, First: visit == 0, Changed: changes && visit > 0, Host: "h"}
						next := cp.Policy().Visit(Key{byte(page)}, o)
						cp.freshness().observe(Key{byte(page)}, o, next)
						if next.IsZero() {
							break
						}
						at = next
					}
				}
				f, ok := cp.ExpectedFreshness()
				if !ok || f < 0 || f > 1 {
					t.Fatalf("expected freshness %v (%v)", f, ok)
				}
				return f
			}
			if still, changing := run(false), run(true); !(changing < still) {
				t.Errorf("pages that change at every visit: %v; pages that never do: %v", changing, still)
			}
		})
	}
}

// BenchmarkPlanFreshness is the cost of one recomputation of the plan's expected
// freshness at 100,000 planned pages (the progress line asks at most every
// freshnessEvery; observations wait for it).
func BenchmarkPlanFreshness(b *testing.B) {
	const pages = 100000
	f := newPlanFreshness(Options{Interval: time.Hour})
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < pages; i++ {
		k := Key{byte(i), byte(i >> 8), byte(i >> 16)}
		at := t0
		for v := 0; v < 4; v++ {
			f.observe(k, Observation{At: at, Status: OK, First: v == 0, Changed: v > 0 && (i+v)%(1+i%7) == 0}, at.Add(time.Hour))
			at = at.Add(time.Hour)
		}
	}
	now := t0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.changed = true
		now = now.Add(freshnessEvery)
		if _, ok := f.expected(now); !ok {
			b.Fatal("no estimate")
		}
	}
}
