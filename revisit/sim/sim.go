package sim

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/revisit/alloc"
	"github.com/sonda-search/sonda/revisit/estimate"
)

// Config is one simulation.
type Config struct {
	// Budget is the visits per day every policy may make (the same for all).
	Budget float64
	// Policies are the revisit policies to compare (revisit.PolicyNames) plus "oracle".
	Policies []string
	// Samples is the number of points of the freshness-over-time series (default 100).
	Samples int
	// InitialAccuracy is the accuracy of the change-class policies' initial classifier,
	// simulated as a noisy oracle: the true class with this probability, another class at
	// random otherwise (default 0.7436, the J48 tree of seed 004's Table 10; 0.25 is its
	// random classifier for four classes).
	InitialAccuracy float64
	// Seed drives the simulated classifier's noise and the policies' tie-breaking.
	Seed uint64
	// CountFrom is the day from which Result.PageVisits counts.
	CountFrom float64
	// Options are passed to every policy (Budget is set from Budget above).
	Options revisit.Options
	// Unit is the length of one unit of the trace's time, in which Budget, CountFrom and
	// the trace's days are counted (default 24 h). The policies see wall-clock times, and
	// the optimal policy's rate grid is in changes per second (from once in 30 years to
	// ten a second), so a trace of a live crawl, whose pages change within seconds, must
	// be run in seconds: run in days its pages that never change fall below the grid's
	// slowest rate and look only a few times slower than pages changing every few
	// minutes, and what Last-Modified says of them is lost.
	Unit time.Duration
	// Slots, when positive, is the crawler's fetch rate (visits per unit), of which the
	// policies may spend Budget, and makes the crawler fetch a page only once it is due,
	// as sonda's frontier does: at each slot it takes the most overdue page if one is due
	// and lets the slot pass otherwise. The policies are told the crawl's rate
	// (revisit.SetCrawlRate). With Budget at 95 % of Slots, a crawl's revisit share,
	// pages are fetched some time after they are due, as in a live crawl, which the
	// default crawler (0: work-conserving, a fetch at every slot of Budget, taking the
	// next page due even before its time) cannot show: issue 13's live runs spent 1.8
	// revisits a second of a 1.9 budget.
	Slots float64
}

// Result is one policy's score.
type Result struct {
	Policy      string
	Freshness   float64 // time-averaged share of pages whose copy is up to date
	Age         float64 // time-averaged age in days (time since the first unseen change)
	ChangeShare float64 // visits that found the page changed / visits (seed 004's "change rate")
	Visits      int
	PageVisits  []int // revisits of each page of the trace from Config.CountFrom on
	// Lateness is how long after its due time a page was fetched, on average over the
	// visits from Config.CountFrom on (in the trace's units; negative when the
	// work-conserving crawler fetched pages before their time), and Early how many of
	// those visits came before it.
	Lateness float64
	Early    int
	// OfOracle is Freshness divided by the oracle's (0 when the oracle was not run).
	OfOracle float64
	// Series is the freshness averaged over each of Samples equal slices of the horizon.
	Series []float64
	// Elapsed is the wall time the policy took.
	Elapsed time.Duration
}

// Oracle is the name of the policy that knows every page's true rate.
const Oracle = "oracle"

// epoch is day 0 of a simulation, for the policies, which work in wall-clock time.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// clock converts the trace's time (in units of its length, Config.Unit) to the wall-clock
// times the policies see, and back.
type clock time.Duration

func (c clock) day(t time.Time) float64 { return float64(t.Sub(epoch)) / float64(c) }

// at is the wall-clock time of trace time d, bounded to what a time.Time can hold around
// the epoch (a page that never changes can have a last change ages before it).
func (c clock) at(d float64) time.Time {
	ns := d * float64(c)
	return epoch.Add(time.Duration(math.Max(math.Min(ns, math.MaxInt64/2), math.MinInt64/2)))
}

func (c clock) seconds() float64 { return time.Duration(c).Seconds() }

// Run simulates every policy of cfg on the same trace. Policies run concurrently, two at a
// time.
func Run(cfg Config, tr Trace) ([]Result, error) {
	if !(cfg.Budget > 0) {
		return nil, fmt.Errorf("sim: the budget must be a positive number of visits per day (got %v)", cfg.Budget)
	}
	if !(tr.Horizon > 0) || len(tr.Pages) == 0 {
		return nil, fmt.Errorf("sim: empty trace (%d pages over %v days)", len(tr.Pages), tr.Horizon)
	}
	if cfg.Samples <= 0 {
		cfg.Samples = 100
	}
	if cfg.InitialAccuracy == 0 {
		cfg.InitialAccuracy = 0.7436
	}
	if cfg.Unit <= 0 {
		cfg.Unit = 24 * time.Hour
	}
	if !(cfg.Slots >= 0) || cfg.Slots > 0 && cfg.Slots < cfg.Budget {
		return nil, fmt.Errorf("sim: the crawler's slots (%v visits a unit) must be 0 (work-conserving) or at least the budget (%v)", cfg.Slots, cfg.Budget)
	}
	results := make([]Result, len(cfg.Policies))
	errs := make([]error, len(cfg.Policies))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, name := range cfg.Policies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = runPolicy(cfg, tr, name)
		}()
	}
	wg.Wait()
	var oracle float64
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		if results[i].Policy == Oracle {
			oracle = results[i].Freshness
		}
	}
	if oracle > 0 {
		for i := range results {
			results[i].OfOracle = results[i].Freshness / oracle
		}
	}
	return results, nil
}

// pageState is one page's copy during a run.
type pageState struct {
	synced float64 // day of the last visit
	next   int     // index of the first change after synced
	due    float64
	slot   int // heap index; −1 when not scheduled
}

type dueHeap struct {
	pages []*pageState
	ids   []int
}

func (h *dueHeap) Len() int { return len(h.ids) }
func (h *dueHeap) Less(a, b int) bool {
	pa, pb := h.pages[h.ids[a]], h.pages[h.ids[b]]
	return pa.due < pb.due || pa.due == pb.due && h.ids[a] < h.ids[b]
}
func (h *dueHeap) Swap(a, b int) {
	h.ids[a], h.ids[b] = h.ids[b], h.ids[a]
	h.pages[h.ids[a]].slot = a
	h.pages[h.ids[b]].slot = b
}
func (h *dueHeap) Push(x any) {
	id := x.(int)
	h.pages[id].slot = len(h.ids)
	h.ids = append(h.ids, id)
}
func (h *dueHeap) Pop() any {
	id := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	h.pages[id].slot = -1
	return id
}

// accumulator integrates freshness and age over time, in total and per sample slice.
type accumulator struct {
	horizon, width float64
	fresh, age     []float64 // per slice: page-days fresh, page-days of age
	exposure       []float64 // per slice: page-days the pages existed
	totalFresh     float64
	totalAge       float64
	totalExposure  float64
}

func newAccumulator(horizon float64, samples int) *accumulator {
	return &accumulator{horizon: horizon, width: horizon / float64(samples),
		fresh: make([]float64, samples), age: make([]float64, samples), exposure: make([]float64, samples)}
}

// each calls fn for every slice overlapping [a, b) with the overlap [u, v).
func (ac *accumulator) each(a, b float64, fn func(k int, u, v float64)) {
	b = math.Min(b, ac.horizon)
	if !(b > a) {
		return
	}
	for k := int(a / ac.width); k < len(ac.fresh); k++ {
		lo, hi := float64(k)*ac.width, float64(k+1)*ac.width
		u, v := math.Max(a, lo), math.Min(b, hi)
		if v > u {
			fn(k, u, v)
		}
		if hi >= b {
			break
		}
	}
}

func (ac *accumulator) addExposure(a, b float64) {
	ac.each(a, b, func(k int, u, v float64) {
		ac.exposure[k] += v - u
		ac.totalExposure += v - u
	})
}

func (ac *accumulator) addFresh(a, b float64) {
	ac.each(a, b, func(k int, u, v float64) {
		ac.fresh[k] += v - u
		ac.totalFresh += v - u
	})
}

// addStale adds the age of a copy stale since c over [c, b): ∫ (s − c) ds per slice.
func (ac *accumulator) addStale(c, b float64) {
	ac.each(c, b, func(k int, u, v float64) {
		x := ((v-c)*(v-c) - (u-c)*(u-c)) / 2
		ac.age[k] += x
		ac.totalAge += x
	})
}

// settle accounts for page p's copy from its last visit until t and returns whether the
// page changed in between (and the last change time, for Last-Modified).
func (ac *accumulator) settle(pg *Page, st *pageState, t float64) (changed bool, lastChange float64) {
	end := t
	if st.next < len(pg.Changes) && pg.Changes[st.next] <= t {
		c := pg.Changes[st.next]
		ac.addFresh(st.synced, c)
		ac.addStale(c, t)
		changed = true
		for st.next < len(pg.Changes) && pg.Changes[st.next] <= t {
			st.next++
		}
	} else {
		ac.addFresh(st.synced, end)
	}
	lastChange = pg.LastChange
	if st.next > 0 {
		lastChange = pg.Changes[st.next-1]
	}
	st.synced = t
	return changed, lastChange
}

func keyOf(i int) revisit.Key {
	var k revisit.Key
	binary.BigEndian.PutUint64(k[:8], uint64(i))
	return k
}

func runPolicy(cfg Config, tr Trace, name string) (Result, error) {
	start := time.Now()
	opts := cfg.Options
	clk := clock(cfg.Unit)
	opts.Budget = cfg.Budget / clk.seconds()
	var policy revisit.Policy
	var err error
	if name == Oracle {
		policy, err = newOracle(tr, cfg.Budget, clk)
	} else {
		if name == "classes" || name == "classes-bayes" {
			opts.Classes.Initial = newNoisyClassifier(tr, opts.Classes.Periods, cfg.InitialAccuracy, cfg.Seed, clk)
		}
		policy, err = revisit.New(name, opts)
	}
	if err != nil {
		return Result{}, fmt.Errorf("sim: policy %s: %w", name, err)
	}
	step := 1 / cfg.Budget
	if cfg.Slots > 0 {
		step = 1 / cfg.Slots
		revisit.SetCrawlRate(policy, cfg.Slots/clk.seconds())
	}
	n := len(tr.Pages)
	states := make([]pageState, n)
	h := &dueHeap{pages: make([]*pageState, n)}
	ac := newAccumulator(tr.Horizon, cfg.Samples)
	// Pages enter in the order they are born (all at day 0 for generated traces), each
	// fetched once on arrival (the initial crawl, outside the budget).
	order := make([]int, n)
	for i := range order {
		order[i] = i
		h.pages[i] = &states[i]
		states[i].slot = -1
		ac.addExposure(tr.Pages[i].Born, tr.Horizon)
	}
	sort.SliceStable(order, func(a, b int) bool { return tr.Pages[order[a]].Born < tr.Pages[order[b]].Born })
	schedule := func(i int, next time.Time) {
		st := &states[i]
		if next.IsZero() {
			if st.slot >= 0 {
				heap.Remove(h, st.slot)
			}
			return
		}
		st.due = clk.day(next)
		if st.slot >= 0 {
			heap.Fix(h, st.slot)
		} else {
			heap.Push(h, i)
		}
	}
	observe := func(i int, t float64, first, changed bool, lastChange float64) revisit.Observation {
		pg := &tr.Pages[i]
		o := revisit.Observation{At: clk.at(t), Status: revisit.OK, Changed: changed, First: first, Host: "sim"}
		if pg.LastModified && !math.IsInf(lastChange, -1) {
			// An HTTP date has whole seconds.
			o.LastModified = clk.at(lastChange).Truncate(time.Second)
		}
		if first && pg.Section != "" {
			o.Features = &revisit.Features{Section: pg.Section, MaxAge: -1}
		}
		return o
	}
	born := 0
	admit := func(until float64) {
		for born < n && tr.Pages[order[born]].Born <= until {
			i := order[born]
			pg := &tr.Pages[i]
			st := &states[i]
			st.synced = pg.Born
			schedule(i, policy.Visit(keyOf(i), observe(i, pg.Born, true, false, pg.LastChange)))
			born++
		}
	}
	admit(0)
	res := Result{Policy: policy.Name(), PageVisits: make([]int, n)}
	if name == Oracle {
		res.Policy = Oracle
	}
	var changedVisits, counted int
	for slot := 1; ; slot++ {
		t := float64(slot) * step
		if t > tr.Horizon {
			break
		}
		admit(t)
		if h.Len() == 0 {
			continue
		}
		// Work-conserving: the crawler fetches at its budget rate, taking the page that is
		// most overdue, or the next one due when none is. With slots, only a due page.
		if cfg.Slots > 0 && h.pages[h.ids[0]].due > t {
			continue
		}
		i := heap.Pop(h).(int)
		st := &states[i]
		if t >= cfg.CountFrom {
			res.PageVisits[i]++
			res.Lateness += t - st.due
			if t < st.due {
				res.Early++
			}
			counted++
		}
		changed, last := ac.settle(&tr.Pages[i], st, t)
		res.Visits++
		if changed {
			changedVisits++
		}
		schedule(i, policy.Visit(keyOf(i), observe(i, t, false, changed, last)))
	}
	admit(tr.Horizon)
	for i := range states {
		if tr.Pages[i].Born < tr.Horizon {
			ac.settle(&tr.Pages[i], &states[i], tr.Horizon)
		}
	}
	res.Freshness = ac.totalFresh / ac.totalExposure
	res.Age = ac.totalAge / ac.totalExposure
	if res.Visits > 0 {
		res.ChangeShare = float64(changedVisits) / float64(res.Visits)
	}
	if counted > 0 {
		res.Lateness /= float64(counted)
	}
	res.Series = make([]float64, len(ac.fresh))
	for k := range ac.fresh {
		if ac.exposure[k] > 0 {
			res.Series[k] = ac.fresh[k] / ac.exposure[k]
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// oracle visits every page at the freshness-optimal interval for its true rate.
type oracle struct {
	intervals []float64 // trace units; +Inf: never
	clk       clock
}

func newOracle(tr Trace, budget float64, clk clock) (*oracle, error) {
	items := make([]alloc.Item, len(tr.Pages))
	for i, p := range tr.Pages {
		items[i] = alloc.Item{Rate: estimate.Gamma{Shape: p.Rate, Rate: 1}, Known: true, Weight: 1, Host: -1}
	}
	sol, err := alloc.Solve(alloc.Problem{Budget: budget}, items, nil)
	if err != nil {
		return nil, err
	}
	return &oracle{intervals: sol.Intervals, clk: clk}, nil
}

func (*oracle) Name() string { return Oracle }

func (o *oracle) Visit(key revisit.Key, ob revisit.Observation) time.Time {
	i := int(binary.BigEndian.Uint64(key[:8]))
	iv := o.intervals[i]
	if math.IsInf(iv, 1) {
		return time.Time{}
	}
	return ob.At.Add(time.Duration(iv * float64(o.clk)))
}

// noisyClassifier simulates seed 004's initial classifier: the page's true class (the class
// whose period is nearest its true mean change interval, on a log scale) with probability
// accuracy, another class at random otherwise.
type noisyClassifier struct {
	classOf []int
}

func newNoisyClassifier(tr Trace, periods []time.Duration, accuracy float64, seed uint64, clk clock) *noisyClassifier {
	if len(periods) == 0 {
		periods = revisit.DefaultClassPeriods
	}
	rng := rand.New(rand.NewPCG(seed, 0xc1a55))
	nc := &noisyClassifier{classOf: make([]int, len(tr.Pages))}
	for i, p := range tr.Pages {
		best := 0
		mean := 1 / math.Max(p.Rate, 1e-12) // trace units
		units := func(d time.Duration) float64 { return float64(d) / float64(clk) }
		for k, d := range periods {
			if math.Abs(math.Log(units(d)/mean)) < math.Abs(math.Log(units(periods[best])/mean)) {
				best = k
			}
		}
		if rng.Float64() >= accuracy && len(periods) > 1 {
			other := rng.IntN(len(periods) - 1)
			if other >= best {
				other++
			}
			best = other
		}
		nc.classOf[i] = best
	}
	return nc
}

// Class implements revisit.InitialClassifier.
func (nc *noisyClassifier) Class(key revisit.Key, _ revisit.Observation) int {
	return nc.classOf[int(binary.BigEndian.Uint64(key[:8]))]
}

type interval struct {
	length  float64
	changed bool
}

// mleRate is the maximum-likelihood rate of a recorded history (estimate.MLE), bounded when
// every interval showed a change.
func mleRate(ivs []interval, shortest float64) float64 {
	conv := make([]estimate.Interval, len(ivs))
	for i, iv := range ivs {
		conv[i] = estimate.Interval{Length: iv.length, Changed: iv.changed}
	}
	r := estimate.MLE(conv)
	if math.IsInf(r, 1) {
		return estimate.ChoGarciaMolina(len(ivs), len(ivs)) / shortest
	}
	return r
}
