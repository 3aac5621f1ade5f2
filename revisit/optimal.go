package revisit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sonda-search/sonda/revisit/alloc"
	"github.com/sonda-search/sonda/revisit/estimate"
)

// OptimalOptions configure the budget-optimal policy.
type OptimalOptions struct {
	// Model is how a page's change rate is inferred from its visits: "grid" (the default)
	// keeps each page's exact likelihood (estimate.History) and a prior of any shape over
	// 50 log-spaced rates, fitted to the whole crawl by expectation maximization; "gamma"
	// keeps a Gamma posterior per page, updated exactly when the page did not change and by
	// moment matching when it did (estimate.Evidence). The Gamma cannot hold a population
	// that mixes fast and slow pages, nor what repeated changes seen at long intervals say
	// (the page is not slow), so it keeps spending visits on pages the budget cannot keep
	// fresh: at 0.05 visits per page per day it fell below uniform, where the grid does not
	// (docs/benchmarks.md).
	Model string
	// Prior is the gamma model's prior over change rates (per second) before the crawl has
	// taught anything. The zero value assumes a page changes about once per uniform
	// interval (pages over budget), with shape 0.5: a scale the crawl itself sets, and a
	// spread wide enough for any page to move away from it. The grid model starts from a
	// log-normal of 1.5 decades around that same rate.
	Prior estimate.Gamma
	// FixedPrior keeps Prior for the whole crawl. By default the prior is re-estimated at
	// every re-plan from all pages' evidence (empirical Bayes, estimate.FitPrior), so new
	// pages start from what this crawl's pages do.
	FixedPrior bool
	// IgnoreLastModified never uses Last-Modified times (by default they are used while
	// they agree with the content: see the policy's Visit).
	IgnoreLastModified bool
	// NoFeaturePrior gives every new page the crawl's prior. By default (grid model) a page
	// starts from the prior of the pages that look like it (its URL section, then its
	// section and content features: Features.GroupKeys), learned during the crawl from the
	// pages of that kind already revisited (estimate.Groups): seed 004's cold start.
	NoFeaturePrior bool
	// NoProbe never schedules a visit early to tell a page too fast to follow from one
	// worth following (see probe); for measuring what probing adds.
	NoProbe bool
	// ReplanEvery is how many visits pass between two re-plans of the whole allocation
	// (default: twice as many as there are pages, at least 16: two uniform cycles). Between
	// re-plans each visited page is rescheduled at once from its new posterior and the last
	// multiplier, which is why re-planning more often gains almost nothing (in simulations,
	// eight times as often changed freshness by less than 0.001).
	ReplanEvery int
}

// Prior shape bounds for empirical Bayes: below 0.05 the prior would claim most pages never
// change; above 4 it would stop individual histories from mattering.
const (
	minPriorShape = 0.05
	maxPriorShape = 4
	defaultShape  = 0.5
)

// optimal allocates the budget to maximize expected freshness (see package alloc).
//
// A re-plan (EM over every page's history and the allocation solve) takes about a second
// at 100,000 pages. It copies what it needs under mu and solves without it, so crawl
// workers keep getting their pages rescheduled from the last plan meanwhile. Then it
// installs the new plan under mu and reschedules the pages visited meanwhile from their
// evidence, which the solve did not see (replan). In a crawl (background), the visit that
// starts a re-plan does not wait for it either once a plan exists; the simulator's visits
// wait, so that its runs are reproducible.
type optimal struct {
	o     Options
	opt   OptimalOptions
	mu    sync.Mutex
	pages map[Key]*optPage
	list  []*optPage // the same pages, for re-planning
	hosts map[string]int
	grid  *estimate.Grid // the grid model's prior; nil for the gamma model
	// groups are the grid model's priors for pages that look alike (estimate.Groups),
	// groupOf their index by key (Features.GroupKeys).
	groups  *estimate.Groups
	groupOf map[string]int
	prior   estimate.Gamma // the gamma model's prior
	post    []float64      // scratch for grid posteriors (under mu)
	prob    alloc.Problem
	sol     alloc.Solution
	// planned is when the allocation was last solved: the number of pages then and the
	// visits since.
	plannedPages, sinceReplan int
	planned                   float64 // Σ 1/interval over the pages: the revisits per second promised
	// pending is how many pages the crawl has admitted and not fetched yet (setPending),
	// and plannedPending how many the last plan counted.
	pending, plannedPending int
	pendingHorizon          float64 // seconds until the pending pages are fetched (setPending)
	held                    float64 // revisits per second the last plan set aside for the pending pages
	cut                     float64 // cutoff's cache; 0: to compute
	solved                  bool
	fitted                  bool // the prior comes from empirical Bayes
	holdReplan              bool // while restoring from history
	// replanning says a re-plan is solving outside mu (one at a time); epoch counts the
	// re-plans started, so the pages visited since the last one's snapshot are known.
	replanning bool
	epoch      uint64
	// background re-plans in their own goroutine when a plan exists (set for crawls);
	// replanned is closed when the re-plan in progress is installed.
	background bool
	replanned  chan struct{}
	// lateness is how long after its due time a page is fetched, in seconds, averaged
	// over recent revisits, and crawlRate the crawl's fetch rate (setCrawlRate; 0:
	// unknown): see ask.
	lateness, crawlRate float64
}

type optPage struct {
	idx      int               // in list; -1 once removed
	epoch    uint64            // the policy's epoch at the page's last visit
	last     int64             // last content visit (Unix ns)
	lastMod  int64             // last Last-Modified seen (Unix ns; 0 none)
	trustLM  int               // > 0 after Last-Modified agreed with the content; < 0 after it did not
	ev       estimate.Evidence // gamma model
	hist     estimate.History  // grid model
	weight   float64
	host     int
	group    int     // the page's feature group (estimate.Groups); −1: none
	probes   int     // visits scheduled early to learn whether the page is too fast to follow (probe)
	interval float64 // seconds; the last planned interval
	due      int64   // when the last visit asked for the next one (Unix ns; 0: none)
}

func newOptimal(o Options) (*optimal, error) {
	if o.Budget <= 0 {
		return nil, errors.New("revisit: the optimal policy allocates a fetch budget: set one (sonda crawl --budget 10/s, crawl.budget or revisit.budget)")
	}
	p := &optimal{o: o, opt: o.Optimal, pages: map[Key]*optPage{}, hosts: map[string]int{}}
	switch o.Optimal.Model {
	case "", "grid":
		p.grid = estimate.NewGrid(gridLow, gridHigh, gridPoints, 1, 0)
		p.post = make([]float64, gridPoints)
		p.groups, p.groupOf = &estimate.Groups{}, map[string]int{}
	case "gamma":
	default:
		return nil, fmt.Errorf("revisit: unknown change-rate model %q (grid or gamma)", o.Optimal.Model)
	}
	p.prob = alloc.Problem{Budget: o.Budget, MinInterval: o.MinInterval.Seconds(), MaxInterval: o.MaxInterval.Seconds()}
	return p, nil
}

func (*optimal) Name() string { return "optimal" }

// setBudget changes the budget; the next visit re-plans. A zero budget is ignored: the
// policy cannot allocate nothing.
func (p *optimal) setBudget(b float64) {
	if !(b > 0) {
		return
	}
	p.mu.Lock()
	p.o.Budget, p.prob.Budget = b, b
	p.solved, p.cut = false, 0
	p.mu.Unlock()
}

// setCrawlRate records the crawl's fetch rate (see ask).
func (p *optimal) setCrawlRate(perSecond float64) {
	p.mu.Lock()
	p.crawlRate = perSecond
	p.mu.Unlock()
}

// setPending records how many admitted pages are still to be fetched for the first time.
// The plan counts them (up to maxPhantoms) as pages of the prior's rate, so the budget
// they will need is not promised to the pages known now: early in a crawl it goes to
// discovery, which the frontier serves when no revisit is due. A never-fetched page is
// stale, so fetching it is worth more than revisiting a page that probably has not changed.
//
// Such a plan holds only until discovery ends (horizon seconds from now, about): a page
// scheduled while it holds is visited again by then at the latest, so that no page keeps
// the long interval, or the "never", of a plan made for a budget discovery was sharing.
func (p *optimal) setPending(n int, horizon float64) {
	p.mu.Lock()
	p.pending = n
	if n > 0 {
		p.pendingHorizon = horizon
	}
	p.mu.Unlock()
}

// maxPhantoms bounds the pending pages a plan counts, relative to the pages known (and so
// the time a re-plan takes): the pages known keep at least a fifth of the budget.
func maxPhantoms(known int) int { return 4*known + 1000 }

// The grid model's rates: from once in 30 years to ten times a second, 50 points (4.9 per
// decade, neighbours 1.6 times apart).
const (
	gridLow    = 1e-9
	gridHigh   = 10
	gridPoints = 50
	// gridSpread is the starting prior's spread, in decades, around one change per uniform
	// interval.
	gridSpread = 1.5
)

func (p *optimal) Visit(key Key, o Observation) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock() // replan releases mu while it solves and holds it again on return
	pg := p.pages[key]
	if o.Status == Gone {
		if pg != nil {
			p.remove(key, pg)
		}
		return time.Time{}
	}
	if pg == nil {
		pg = &optPage{idx: len(p.list), host: p.hostIndex(o.Host), group: p.groupFor(o.Features)}
		p.pages[key] = pg
		p.list = append(p.list, pg)
		p.startPrior()
	}
	pg.epoch = p.epoch
	pg.weight = o.Weight
	if pg.weight <= 0 {
		pg.weight = 1
	}
	if o.Status == Failed {
		if pg.interval > 0 {
			return after(o.At, pg.interval)
		}
	} else {
		p.learn(pg, o)
		p.sinceReplan++
		p.noteLateness(pg, o)
	}
	if p.replanDue() && !p.replanning {
		if p.background && len(p.sol.Intervals) > 0 {
			p.replanInBackground() // this visit is scheduled from the current plan
		} else {
			p.replan()
			if pg.idx < 0 {
				return time.Time{} // found gone by a concurrent visit meanwhile
			}
		}
	}
	p.setInterval(pg, p.sol.Interval(p.prob, p.item(pg)))
	next := pg.interval
	if probe := p.probe(pg); probe > 0 && probe < next {
		pg.probes++
		next = probe
	}
	if p.discovering() {
		// The plan set budget aside for pages still to be discovered: look again once they
		// are.
		next = min(next, max(p.pendingHorizon, p.prob.MinInterval))
	}
	return p.ask(pg, o.At, next)
}

// Lateness. The plan's intervals are from fetch to fetch, but a crawler fetches a page
// some time after it is due: the pacer's next slot, the other pages due before it. A page
// asked for every 36 s and fetched 4 s late is visited every 40 s, a tenth less often
// than planned, and the budget the plan counted on is not spent (issue 13's live runs:
// 1.8 revisits a second of a 1.9 budget; the simulator, whose crawler takes the next page
// whenever a slot comes, cannot show it). So each page is asked for the crawl's average
// lateness before its interval ends, never below the shortest interval, when the crawl
// fetches faster than the revisit budget (setCrawlRate): there the lateness is a queue
// that drains at the crawl's rate, and asking earlier brings the revisits up to their
// budget, which stays below it. Where the revisits have the whole rate (the simulator),
// lateness is a backlog that asking earlier would only grow; while pages wait for their
// first fetch, it is revisits yielding to discovery (a live run that asked early then
// was at 0.88 of the oracle in its first 3 minutes, against 0.93-0.98). That holds for
// as long as the crawl says pages wait (setPending), however little budget the plan
// holds for them: with the last 5 of 205 URLs pending for two minutes, a policy that
// noted lateness and asked early then found its revisits later and later (the crawler
// serves a host's due revisits before its new URLs, so asking early left the last new
// URLs waiting and the revisits late by 40 s), fetched pages twice as often as planned
// while the crawl held half the budget for discovery, and left a backlog that took
// until minute 8 to drain, or, once discovery ended, a minute with almost nothing due.
const lateWeight = 1.0 / 64 // of a revisit's lateness in the running average

// noteLateness folds how late (or early: a negative lateness) pg's fetch came after the
// time its last visit asked for into the running average. Callers hold mu.
func (p *optimal) noteLateness(pg *optPage, o Observation) {
	if pg.due == 0 || o.First {
		return
	}
	late := float64(o.At.UnixNano()-pg.due) / 1e9
	pg.due = 0
	if p.pending > 0 {
		return // revisits yielding to discovery (see ask)
	}
	if math.Abs(late) > pg.interval {
		return // not the visit that was asked for (a restore, a page found again)
	}
	p.lateness += lateWeight * (late - p.lateness)
}

// ask returns when pg is to be fetched next for an interval of next seconds from at:
// early by the crawl's lateness, and remembers it. Callers hold mu.
func (p *optimal) ask(pg *optPage, at time.Time, next float64) time.Time {
	// While pages wait for their first fetch, revisits are late because they yield to
	// discovery (they keep their share of the budget, no more): then nothing is asked
	// early.
	if next > 0 && !math.IsInf(next, 1) && p.lateness > 0 && p.crawlRate > p.prob.Budget && p.pending == 0 {
		next = max(next-p.lateness, p.prob.MinInterval, next/2)
	}
	t := after(at, next)
	pg.due = 0
	if !t.IsZero() {
		pg.due = t.UnixNano()
	}
	return t
}

// heldForDiscovery says the plan set more than a tenth of the budget aside for pages still
// to be discovered (the tolerance the re-plans allow a plan's spending to drift by): its
// intervals are then made for a budget discovery shares, and hold only until discovery
// ends (setPending). A plan that set aside less is as good as one made without them: with
// a handful of URLs pending for minutes (the last links of a crawl, slow or failing hosts)
// capping every interval at their horizon would fetch pages the plan gives up on over
// and over (issue 13's live runs: pages that never change fetched every 15 s for two
// minutes while 5 of 205 URLs waited). Callers hold mu.
func (p *optimal) heldForDiscovery() bool {
	return p.plannedPending > 0 && p.held > 0.1*p.prob.Budget
}

// discovering says pages wait for their first fetch under a plan that holds budget for
// them (heldForDiscovery). Callers hold mu.
func (p *optimal) discovering() bool { return p.pending > 0 && p.heldForDiscovery() }

// Probing. A visit that finds a page changed says little about how fast it changes once
// the interval is much longer than the page's mean time between changes: a page changing
// every 5 seconds and one changing every minute both look changed after every 100-second
// interval. Yet the plan treats them oppositely: the second is worth visiting often, the
// first cannot be kept fresh and is best given up (the allocation's cut-off). A posterior
// split across that cut-off gets a compromise interval that serves neither. So when it is,
// the page's next visit comes early, after the interval whose outcome (changed or not)
// tells the two sides apart best (the most mutual information), at most maxProbes times
// per page.
const (
	maxProbes = 2
	// minProbeInfo is the least information, in bits, about the page's side of the
	// cut-off that a probe must be expected to give.
	minProbeInfo = 0.15
)

// probe returns an early interval for pg's next visit, or 0 for none. It reads pg's
// posterior from p.post, which item(pg) has just filled. Callers hold mu.
func (p *optimal) probe(pg *optPage) float64 {
	if p.opt.NoProbe || p.grid == nil || pg.probes >= maxProbes || !p.fitted || pg.hist.Changes() == 0 {
		return 0
	}
	if p.discovering() {
		return 0 // while pages wait for their first fetch, each is surely stale: discovery first
	}
	cut := p.cutoff()
	if math.IsInf(cut, 1) {
		return 0
	}
	var fast float64
	for i, r := range p.grid.Rates {
		if r >= cut {
			fast += p.post[i]
		}
	}
	if fast < 0.1 || fast > 0.9 {
		return 0
	}
	best, bestInfo := 0.0, minProbeInfo
	for k := -3; k <= 2; k++ {
		tau := math.Ldexp(1/cut, k)
		if tau < p.prob.MinInterval || tau > pg.interval/2 {
			continue
		}
		var a, b float64 // P(changed after tau, side): fast side, slow side
		for i, r := range p.grid.Rates {
			c := -math.Expm1(-r*tau) * p.post[i]
			if r >= cut {
				a += c
			} else {
				b += c
			}
		}
		info := entropy(a+b) - fast*entropy(a/fast) - (1-fast)*entropy(b/(1-fast))
		if info > bestInfo {
			best, bestInfo = tau, info
		}
	}
	return best
}

// entropy is the binary entropy of q in bits.
func entropy(q float64) float64 {
	if q <= 0 || q >= 1 {
		return 0
	}
	return -(q*math.Log2(q) + (1-q)*math.Log2(1-q))
}

// cutoff is the lowest grid rate the current plan would give up on (no visits) if it
// were known exactly, +Inf when it gives up on none; cached until the plan or budget
// changes. Callers hold mu.
func (p *optimal) cutoff() float64 {
	if p.cut > 0 {
		return p.cut
	}
	p.cut = math.Inf(1)
	rates := p.grid.Rates
	dropped := func(i int) bool {
		it := alloc.Item{Rate: estimate.Gamma{Shape: rates[i], Rate: 1}, Known: true, Weight: 1, Host: -1}
		return math.IsInf(p.sol.Interval(p.prob, it), 1)
	}
	if !dropped(len(rates) - 1) {
		return p.cut
	}
	lo, hi := 0, len(rates)-1 // dropped(hi); find the first dropped
	for lo < hi {
		mid := (lo + hi) / 2
		if dropped(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	p.cut = rates[lo]
	return p.cut
}

// learn folds an OK or NotModified observation into the page's evidence.
func (p *optimal) learn(pg *optPage, o Observation) {
	prevVisit := pg.last
	g := gap(&pg.last, o)
	now := o.At.UnixNano()
	lm := int64(0)
	if !o.LastModified.IsZero() && !p.opt.IgnoreLastModified {
		lm = o.LastModified.UnixNano()
		if lm > now {
			lm = 0 // a clock in the future is no evidence
		}
	}
	if !g.informative {
		// A first visit: a Last-Modified time is the page's age since its last change. Seen
		// at a moment unrelated to its changes, a Poisson page's age is exponential with its
		// rate (Brewington & Cybenko estimate rates this way): likelihood λ·e^(−λ·age). Using
		// only "unchanged for age" (e^(−λ·age)) drops one change per page and underestimated
		// slow pages' rates by a quarter (98.2% of the oracle against 100.0% in simulation).
		// A page created shortly before its first visit has a creation time, not a change,
		// for Last-Modified and looks faster than it is until its unchanged time adds up.
		if o.First && lm > 0 && prevVisit == 0 {
			pg.ev.ChangedAt(float64(now-lm) / 1e9)
			pg.hist.ChangedAt(float64(now-lm) / 1e9)
		}
		pg.lastMod = max(pg.lastMod, lm)
		return
	}
	// Last-Modified is used while it agrees with the content: it must move exactly when the
	// text changed (servers that stamp every response with the current time, or change it
	// when only an ignored fragment such as a date changed, lose the trust). An HTTP date
	// has whole seconds, so a change in the second of the last visit, after it, carries a
	// Last-Modified up to a second before that visit: no disagreement.
	lmMoved := lm > 0 && pg.lastMod > 0 && lm != pg.lastMod
	lmAfter := lm > 0 && lm+int64(time.Second) > prevVisit
	if lm > 0 && pg.lastMod > 0 {
		if lmMoved == g.changed && (!g.changed || lmAfter) {
			pg.trustLM = min(pg.trustLM+1, 3)
		} else {
			pg.trustLM = -1 << 20 // one disagreement is enough: the header is not about the text
		}
	}
	switch {
	case !g.changed:
		pg.ev.Unchanged(g.seconds)
		pg.hist.Unchanged(g.seconds)
	case pg.trustLM > 0 && lmAfter:
		// When the page last changed is known: the exact, conjugate update (unchanged since,
		// within the interval).
		since := min(float64(now-lm)/1e9, g.seconds)
		pg.ev.ChangedAt(since)
		pg.hist.ChangedAt(since)
	case p.grid != nil:
		pg.hist.Changed(g.seconds)
	default:
		pg.ev.Changed(g.seconds, p.prior)
	}
	if lm > 0 {
		pg.lastMod = lm
	}
}

// item is the page as an allocation item under the current prior.
func (p *optimal) item(pg *optPage) alloc.Item {
	it := alloc.Item{Weight: pg.weight, Host: pg.host}
	if p.grid == nil {
		it.Rate = pg.ev.Posterior(p.prior)
		return it
	}
	g := pg.group
	if !p.fitted {
		g = -1 // group priors are learned with the crawl's; until then they are its start
	}
	p.groups.Posterior(g, p.grid, &pg.hist, p.post)
	return discreteItem(p.grid, p.post, it)
}

// maxGroups bounds the feature groups (each holds a prior of gridPoints weights, copied
// at every re-plan): a crawl of many sites has many sections, and pages of sections seen
// after the bound start from their coarser group's prior, or the crawl's.
const maxGroups = 4096

// groupFor is the feature group of a page first seen with features f (−1: none): the
// finest of f's groups, made (under the coarser ones) when new. Callers hold mu.
func (p *optimal) groupFor(f *Features) int {
	if f == nil || p.groups == nil || p.opt.NoFeaturePrior {
		return -1
	}
	g := -1
	for _, key := range f.GroupKeys() {
		next, ok := p.groupOf[key]
		if !ok {
			if p.groups.Len() >= maxGroups {
				break // the finest group there is
			}
			next = p.groups.Add(g, p.grid)
			p.groupOf[key] = next
		}
		g = next
	}
	return g
}

// discreteItem fills it with the grid posterior post, without the rates it rules out
// (they would cost time in every evaluation of the allocation).
func discreteItem(g *estimate.Grid, post []float64, it alloc.Item) alloc.Item {
	for i, w := range post {
		if w >= 1e-7 {
			it.Rates = append(it.Rates, g.Rates[i])
			it.Probs = append(it.Probs, w)
		}
	}
	return it
}

func (p *optimal) hostIndex(h string) int {
	if p.o.HostCap <= 0 {
		return -1
	}
	i, ok := p.hosts[h]
	if !ok {
		i = len(p.hosts)
		p.hosts[h] = i
		p.prob.HostCaps = append(p.prob.HostCaps, p.o.HostCap)
	}
	return i
}

// setInterval records a page's new interval and keeps the planned total up to date.
func (p *optimal) setInterval(pg *optPage, iv float64) {
	p.planned += rateOf(iv) - rateOf(pg.interval)
	pg.interval = iv
}

func rateOf(interval float64) float64 {
	if interval > 0 {
		return 1 / interval // +Inf intervals (pages given up) give 0
	}
	return 0
}

func (p *optimal) remove(key Key, pg *optPage) {
	p.planned -= rateOf(pg.interval)
	last := p.list[len(p.list)-1]
	p.list[pg.idx] = last
	last.idx = pg.idx
	p.list = p.list[:len(p.list)-1]
	pg.idx = -1
	delete(p.pages, key)
}

// replanDue says the allocation should be solved again: never solved, the population
// grew by a tenth or halved since, or enough visits changed enough posteriors.
func (p *optimal) replanDue() bool {
	if p.holdReplan {
		return !p.solved
	}
	n := len(p.list)
	every := p.opt.ReplanEvery
	if every <= 0 {
		every = max(16, 2*n)
	}
	// Growth matters more than shrinkage: a plan made for fewer pages promises each more
	// visits than the budget can pay once the new pages arrive, and the overdue revisits
	// then crowd out discovery.
	grown := n >= p.plannedPages+max(16, p.plannedPages/10)
	// Rescheduling pages one at a time with an old multiplier drifts: pages found changed
	// ask for more visits, and the plan can overspend (or underspend by a tenth) before the
	// next scheduled re-plan.
	drift := p.planned > 1.1*p.prob.Budget || p.planned < 0.9*p.sol.Used
	// A plan that set budget aside for pages still to be discovered is made again as soon
	// as discovery ends, however few they were: it under-spends on the pages known.
	phantoms := min(p.pending, maxPhantoms(n))
	pendingMoved := abs(phantoms-p.plannedPending) >= max(16, p.plannedPending/10) ||
		phantoms == 0 && p.heldForDiscovery()
	return !p.solved || grown || drift || pendingMoved || 2*n <= p.plannedPages || p.sinceReplan >= every
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// startPrior sets the prior used until empirical Bayes has enough evidence: the configured
// one, or one change per uniform interval (pages over budget). Callers hold mu.
func (p *optimal) startPrior() {
	if p.fitted {
		return
	}
	if p.grid != nil {
		startGrid(p.grid, len(p.list), p.o.Budget)
		return
	}
	p.prior = startGamma(p.opt, len(p.list), p.o.Budget)
}

// startGrid sets the grid model's starting prior for a crawl of pages pages.
func startGrid(g *estimate.Grid, pages int, budget float64) {
	uniform := float64(max(pages, 1)) / budget
	g.SetLogNormal(1/uniform, gridSpread)
}

// startGamma is the gamma model's starting prior for a crawl of pages pages.
func startGamma(opt OptimalOptions, pages int, budget float64) estimate.Gamma {
	if opt.Prior.Valid() {
		return opt.Prior
	}
	uniform := float64(max(pages, 1)) / budget
	return estimate.Gamma{Shape: defaultShape, Rate: defaultShape * uniform}
}

// minPriorPages is how many pages must have been revisited before the prior is estimated
// from them.
const minPriorPages = 20

// replanInput is what a re-plan needs, copied under mu so that it can be solved without.
type replanInput struct {
	opt         OptimalOptions
	prob        alloc.Problem
	pages       []*optPage          // the pages planned, in item order
	items       []alloc.Item        // their weights and hosts; the solve adds the rates
	hists       []estimate.History  // grid model: the pages' histories
	evs         []estimate.Evidence // gamma model: the pages' evidence
	warm        alloc.Solution      // the pages' last intervals and the last multiplier
	grid        *estimate.Grid      // a copy of the grid prior (nil: gamma model)
	groups      *estimate.Groups    // a copy of the group priors (grid model)
	group       []int               // the pages' groups, in item order
	prior       estimate.Gamma
	fitted      bool
	phantoms    int    // pending pages planned for, after the pages' items
	epoch       uint64 // pages visited after the snapshot carry this epoch
	sinceReplan int    // visits counted when the snapshot was taken
}

// replanOutput is a solved plan and the prior it was solved under.
type replanOutput struct {
	sol    alloc.Solution
	held   float64 // fetches per second planned for the pending pages
	grid   *estimate.Grid
	groups *estimate.Groups
	prior  estimate.Gamma
	fitted bool
}

// replan re-estimates the prior (unless fixed) and solves the allocation. Callers hold mu;
// replan releases it while it solves (see optimal) and holds it again when it returns.
func (p *optimal) replan() {
	in := p.startReplan()
	p.mu.Unlock()
	var out replanOutput
	var err error
	func() {
		defer p.mu.Lock()
		out, err = in.solve()
	}()
	p.endReplan(in, out, err)
}

// replanInBackground starts a re-plan that solves and installs itself in its own
// goroutine. Callers hold mu.
func (p *optimal) replanInBackground() {
	in := p.startReplan()
	go func() {
		out, err := in.solve()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.endReplan(in, out, err)
	}()
}

// startReplan snapshots the policy for a re-plan and marks one in progress. Callers hold mu.
func (p *optimal) startReplan() *replanInput {
	in := p.snapshot()
	p.replanning = true
	p.replanned = make(chan struct{})
	p.epoch++
	in.epoch = p.epoch
	return in
}

// endReplan installs a solved plan and ends the re-plan in progress. Callers hold mu.
func (p *optimal) endReplan(in *replanInput, out replanOutput, err error) {
	p.replanning = false
	close(p.replanned)
	if err != nil {
		return // only an invalid problem fails, which newOptimal ruled out
	}
	p.install(in, out)
}

// waitReplan waits until no re-plan is in progress (for tests).
func (p *optimal) waitReplan() {
	p.mu.Lock()
	running, done := p.replanning, p.replanned
	p.mu.Unlock()
	if running {
		<-done
	}
}

// snapshot copies what a re-plan needs. Callers hold mu.
func (p *optimal) snapshot() *replanInput {
	n := len(p.list)
	in := &replanInput{
		opt: p.opt, prob: p.prob, pages: slices.Clone(p.list), items: make([]alloc.Item, n),
		warm:   alloc.Solution{Intervals: make([]float64, n), Mu: p.sol.Mu},
		prior:  p.prior,
		fitted: p.fitted, sinceReplan: p.sinceReplan,
		phantoms: min(p.pending, maxPhantoms(n)),
	}
	in.prob.HostCaps = slices.Clone(p.prob.HostCaps)
	for i, pg := range p.list {
		in.items[i] = alloc.Item{Weight: pg.weight, Host: pg.host}
		in.warm.Intervals[i] = pg.interval
	}
	if p.grid != nil {
		in.grid = p.grid.Clone()
		in.groups = p.groups.Clone()
		in.group = make([]int, n)
		hs := make([]*estimate.History, n)
		for i, pg := range p.list {
			hs[i] = &pg.hist
			in.group[i] = pg.group
		}
		in.hists = estimate.CopyHistories(hs)
	} else {
		in.evs = make([]estimate.Evidence, n)
		for i, pg := range p.list {
			in.evs[i] = pg.ev
		}
	}
	return in
}

// solve fits the prior and solves the allocation from the snapshot alone.
func (in *replanInput) solve() (replanOutput, error) {
	out := replanOutput{grid: in.grid, groups: in.groups, prior: in.prior, fitted: in.fitted}
	n := len(in.items)
	if in.grid == nil {
		if !in.opt.FixedPrior {
			// Empirical Bayes: the prior from every revisited page's evidence.
			evs := make([]estimate.Evidence, 0, n)
			for _, ev := range in.evs {
				if ev.Rate > 0 {
					evs = append(evs, ev)
				}
			}
			if len(evs) >= minPriorPages {
				if g, ok := estimate.FitPrior(evs, minPriorShape, maxPriorShape); ok {
					out.prior, out.fitted = g, true
				}
			}
		}
		if !out.fitted {
			out.prior = startGamma(in.opt, n, in.prob.Budget)
		}
		for i := range in.items {
			in.items[i].Rate = in.evs[i].Posterior(out.prior)
		}
	} else {
		if !out.fitted {
			startGrid(out.grid, n, in.prob.Budget)
		}
		hs := make([]*estimate.History, n)
		revisited := 0
		for i := range in.hists {
			hs[i] = &in.hists[i]
			if !hs[i].Empty() {
				revisited++
			}
		}
		logL := out.grid.Likelihoods(hs)
		if !in.opt.FixedPrior && revisited >= minPriorPages {
			// Expectation maximization from the last prior: a few rounds per re-plan
			// converge over the crawl; the first fit takes more. One pseudo-page keeps every
			// rate possible.
			rounds := 3
			if !out.fitted {
				rounds = 50
			}
			if !out.fitted {
				out.groups.CopyFrom(&estimate.Groups{}, out.grid) // groups start from the crawl's start
			}
			out.fitted = estimate.FitGroups(out.grid, out.groups, logL, hs, in.group, rounds, 1) || out.fitted
		}
		post := make([]float64, gridPoints)
		for i := range in.items {
			g := in.group[i]
			if !out.fitted {
				g = -1
			}
			out.groups.PosteriorFrom(g, out.grid, logL[i*gridPoints:(i+1)*gridPoints], post)
			in.items[i] = discreteItem(out.grid, post, in.items[i])
		}
	}
	items, warm := in.items, &in.warm
	if in.phantoms > 0 {
		// Pages still to be fetched: the prior is all that is known of them.
		var ph alloc.Item
		if in.grid == nil {
			ph = alloc.Item{Rate: out.prior, Weight: 1, Host: -1}
		} else {
			ph = discreteItem(out.grid, out.grid.Weights, alloc.Item{Weight: 1, Host: -1})
		}
		items = slices.Grow(slices.Clip(items), in.phantoms)
		for range in.phantoms {
			items = append(items, ph)
		}
		warm = nil
	}
	sol, err := alloc.Solve(in.prob, items, warm)
	if err != nil {
		return out, err
	}
	if in.phantoms > 0 {
		// The plan promises the known pages what they get; the rest is left to discovery.
		for _, iv := range sol.Intervals[n:] {
			out.held += rateOf(iv)
		}
		sol.Intervals = sol.Intervals[:n]
		sol.Used, sol.Expected = 0, 0
		for _, iv := range sol.Intervals {
			sol.Used += rateOf(iv)
		}
	}
	out.sol = sol
	return out, nil
}

// install makes a solved plan the policy's. The pages visited while it was solved (and
// pages new since) have evidence it did not see: they are rescheduled from the new prior
// and multipliers, as their visit would have been after the re-plan. Callers hold mu.
func (p *optimal) install(in *replanInput, out replanOutput) {
	p.sol, p.cut = out.sol, 0
	if p.grid != nil {
		p.grid = out.grid
		p.groups.CopyFrom(out.groups, p.grid)
	}
	p.prior, p.fitted = out.prior, out.fitted
	for i, pg := range in.pages {
		if pg.idx >= 0 {
			pg.interval = out.sol.Intervals[i]
		}
	}
	p.planned = 0
	for _, pg := range p.list {
		if pg.epoch == in.epoch {
			pg.interval = p.sol.Interval(p.prob, p.item(pg))
		}
		p.planned += rateOf(pg.interval)
	}
	// A budget changed meanwhile asks for another plan.
	p.solved = p.prob.Budget == in.prob.Budget
	p.plannedPages, p.plannedPending, p.held = len(in.pages), in.phantoms, out.held
	p.sinceReplan -= in.sinceReplan
}
