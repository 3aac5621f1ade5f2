package revisit

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sonda-search/sonda/revisit/alloc"
	"github.com/sonda-search/sonda/revisit/estimate"
)

// OraclePage is a page whose true change rate the oracle is given.
type OraclePage struct {
	Key  Key
	Host string  // the page's host key, for the per-host cap
	Rate float64 // changes per second; 0: never changes
}

// Oracle is the evaluation's upper reference, not a policy a crawl can use: it is given
// every page's true change rate and visits each at the interval that maximizes the
// collection's time-averaged freshness under the budget (the allocation the optimal
// policy makes from estimated rates, here from the truth). Pages it was not given never
// change for it and are not revisited. Live evaluations (sonda eval revisit) run it beside
// the real policies at the same fetch rate, so "fraction of the oracle" is measured on the
// same web, not taken from a simulation.
type Oracle struct {
	o     Options
	pages []OraclePage
	index map[Key]int
	prob  alloc.Problem
	items []alloc.Item

	mu        sync.Mutex
	intervals []float64 // seconds; +Inf: never
}

// NewOracle solves the allocation for pages under o's budget, interval bounds and per-host
// cap.
func NewOracle(pages []OraclePage, o Options) (*Oracle, error) {
	if !(o.Budget > 0) {
		return nil, fmt.Errorf("revisit: the oracle allocates a fetch budget: set one (got %v)", o.Budget)
	}
	or := &Oracle{o: o, pages: pages, index: make(map[Key]int, len(pages))}
	or.prob = alloc.Problem{Budget: o.Budget, MinInterval: o.MinInterval.Seconds(), MaxInterval: o.MaxInterval.Seconds()}
	hosts := map[string]int{}
	for i, p := range pages {
		if _, dup := or.index[p.Key]; dup {
			return nil, fmt.Errorf("revisit: oracle page %d repeats a key", i)
		}
		or.index[p.Key] = i
		host := -1
		if o.HostCap > 0 {
			h, ok := hosts[p.Host]
			if !ok {
				h = len(hosts)
				hosts[p.Host] = h
				or.prob.HostCaps = append(or.prob.HostCaps, o.HostCap)
			}
			host = h
		}
		// A known rate of 0 is a page that never changes: the allocation gives it no visits.
		or.items = append(or.items, alloc.Item{Rate: estimate.Gamma{Shape: p.Rate, Rate: 1}, Known: true, Weight: 1, Host: host})
	}
	if err := or.solve(); err != nil {
		return nil, err
	}
	return or, nil
}

// solve allocates or.prob.Budget. Callers hold mu, or own or alone: visits wait for a
// re-solve, which takes milliseconds for the few thousand pages of an evaluation.
func (or *Oracle) solve() error {
	sol, err := alloc.Solve(or.prob, or.items, nil)
	if err != nil {
		return fmt.Errorf("revisit: oracle allocation: %w", err)
	}
	or.intervals = sol.Intervals
	return nil
}

// Name implements Policy.
func (*Oracle) Name() string { return "oracle" }

// setBudget re-solves for a new budget (the crawl adapter moves it as discovery ends).
func (or *Oracle) setBudget(b float64) {
	if !(b > 0) {
		return
	}
	or.mu.Lock()
	defer or.mu.Unlock()
	or.prob.Budget = b
	_ = or.solve() // the problem was valid with another positive budget
}

// Visit implements Policy.
func (or *Oracle) Visit(key Key, o Observation) time.Time {
	i, ok := or.index[key]
	if !ok || o.Status == Gone {
		return time.Time{}
	}
	or.mu.Lock()
	iv := or.intervals[i]
	or.mu.Unlock()
	if math.IsInf(iv, 1) {
		return time.Time{}
	}
	return after(o.At, iv)
}

var _ budgeted = (*Oracle)(nil)
