package revisit

import (
	"math"
	"sync"
	"time"

	"github.com/sonda-search/sonda/revisit/alloc"
	"github.com/sonda-search/sonda/revisit/estimate"
)

// planFreshness estimates the freshness a crawl's revisit plan expects, whatever the
// policy: the weighted share of the planned pages up to date at a random moment. Each page
// has a Gamma posterior over its change rate, from what its visits showed (a change or not
// over each interval) under a prior fitted to all pages by empirical Bayes, as the optimal
// policy's gamma model keeps; the plan gives each page the interval until its next visit.
// A page's expected freshness is then E[(1 − e^(−λI))/(λI)] over its posterior
// (alloc.ExpectedFreshness), 0 for a page the plan never visits again, and the plan's is
// the weighted mean over the pages it keeps.
//
// Every policy is judged by the same model, so the figure compares policies; the optimal
// policy's own objective (its grid model) may differ from it by a little.
type planFreshness struct {
	mu    sync.Mutex
	pages map[Key]freshPage
	prior estimate.Gamma // the last prior fitted to the pages' evidence (initially a fixed one)

	value    float64
	valid    bool
	computed time.Time // when value was computed
	changed  bool      // an observation arrived since
}

type freshPage struct {
	last     int64 // last content visit, Unix nanoseconds
	ev       estimate.Evidence
	interval float64 // seconds from the last visit to the next planned one; +Inf: never
	weight   float64
}

// freshnessEvery is how often the estimate is recomputed at most: it is a sum over every
// planned page, and the progress line asks for it every second.
const freshnessEvery = 5 * time.Second

// priorSample is the most pages whose evidence fits the prior.
const priorSample = 4096

// newPlanFreshness starts with the prior the optimal policy's gamma model starts from: a
// change about once per uniform interval, shape 0.5.
func newPlanFreshness(o Options) *planFreshness {
	iv := o.Interval.Seconds()
	if !(iv > 0) {
		iv = (24 * time.Hour).Seconds()
	}
	return &planFreshness{pages: map[Key]freshPage{}, prior: estimate.Gamma{Shape: defaultShape, Rate: defaultShape * iv}}
}

// observe records what a visit showed and when the policy will visit the page next (the
// zero time: never).
func (f *planFreshness) observe(key Key, o Observation, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changed = true
	if o.Status == Gone {
		delete(f.pages, key)
		return
	}
	p := f.pages[key]
	if g := gap(&p.last, o); g.informative {
		if g.changed {
			p.ev.Changed(g.seconds, f.prior)
		} else {
			p.ev.Unchanged(g.seconds)
		}
	}
	p.interval = math.Inf(1)
	if !next.IsZero() {
		p.interval = max(next.Sub(o.At).Seconds(), 1e-3)
	}
	p.weight = o.Weight
	if p.weight <= 0 {
		p.weight = 1
	}
	f.pages[key] = p
}

// expected is the plan's expected freshness; ok is false before any page is planned.
func (f *planFreshness) expected(now time.Time) (float64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.valid && (!f.changed || now.Sub(f.computed) < freshnessEvery) {
		return f.value, true
	}
	if len(f.pages) == 0 {
		f.valid = false
		return 0, false
	}
	// The prior has two parameters: a few thousand pages fit it as well as all of them,
	// and fitting it costs tens of passes over the pages it is given (at 100,000 pages,
	// half a second under this lock, which every fetch's observation waits for). Map
	// order has nothing to do with the pages, so the first ones met are a fair sample.
	evs := make([]estimate.Evidence, 0, min(len(f.pages), priorSample))
	for _, p := range f.pages {
		if len(evs) == priorSample {
			break
		}
		if p.ev.Rate > 0 {
			evs = append(evs, p.ev)
		}
	}
	if len(evs) >= minPriorPages {
		if g, ok := estimate.FitPrior(evs, minPriorShape, maxPriorShape); ok {
			f.prior = g
		}
	}
	var sum, weights float64
	for _, p := range f.pages {
		post := p.ev.Posterior(f.prior)
		sum += p.weight * alloc.ExpectedFreshness(post.Shape, post.Rate, p.interval)
		weights += p.weight
	}
	f.value, f.valid, f.computed, f.changed = sum/weights, true, now, false
	return f.value, true
}
