package revisit

import (
	"fmt"
	"sync"
	"time"

	"github.com/sonda-search/sonda/revisit/estimate"
)

// ClassOptions configure seed 004's change-class policies. Zero fields take the
// dissertation's values.
type ClassOptions struct {
	// Periods are the classes' change periods, most frequent first (default 1, 3, 30 and
	// 96 days: the k = 4 cluster means of §5.5.1). A page of class k is visited every
	// Periods[k] (scaled to the budget when there is one).
	Periods []time.Duration
	// Windows are the visits a page spends in class k before the heuristic re-judges it
	// (default 3, 2, 2, 1: Table 18).
	Windows []int
	// Upper and Lower are the heuristic's thresholds on the share of visits in a window
	// that found a change: above Upper the page moves one class up, below Lower one down
	// (default 0.8 and 0.2: the pseudo-code's LIMIAR_SUPERIOR and LIMIAR_INFERIOR).
	Upper, Lower float64
	// Initial assigns a new page its class (the dissertation's J48 tree). nil puts new
	// pages in class 0: the heuristic corrects a page that is too high after one window
	// but needs many to lift one that is too low, so high recall on dynamic pages is the
	// error profile to want (§3.6 of the digest).
	Initial InitialClassifier
	// Confidence is the prior probability the Bayesian variant gives the initial class
	// (default 0.7; the rest is spread evenly over the other classes).
	Confidence float64
}

// InitialClassifier predicts a new page's change class from its first observation.
type InitialClassifier interface {
	Class(key Key, o Observation) int
}

// DefaultClassPeriods are seed 004's class periods.
var DefaultClassPeriods = []time.Duration{24 * time.Hour, 3 * 24 * time.Hour, 30 * 24 * time.Hour, 96 * 24 * time.Hour}

func (c ClassOptions) withDefaults() (ClassOptions, error) {
	if len(c.Periods) == 0 {
		c.Periods = DefaultClassPeriods
	}
	if len(c.Windows) == 0 {
		c.Windows = []int{3, 2, 2, 1}
	}
	if c.Upper == 0 {
		c.Upper = 0.8
	}
	if c.Lower == 0 {
		c.Lower = 0.2
	}
	if c.Confidence == 0 {
		c.Confidence = 0.7
	}
	if len(c.Windows) != len(c.Periods) {
		return c, fmt.Errorf("revisit: %d class periods but %d windows: give one window per class", len(c.Periods), len(c.Windows))
	}
	for k, p := range c.Periods {
		if p <= 0 || k > 0 && p < c.Periods[k-1] {
			return c, fmt.Errorf("revisit: class periods must be positive and ascending (most frequent class first): %v", c.Periods)
		}
		if c.Windows[k] < 1 {
			return c, fmt.Errorf("revisit: class %d window must be at least one visit (got %d)", k, c.Windows[k])
		}
	}
	if !(c.Lower < c.Upper) || c.Lower < 0 || c.Upper > 1 {
		return c, fmt.Errorf("revisit: class thresholds need 0 ≤ lower < upper ≤ 1 (got %v, %v)", c.Lower, c.Upper)
	}
	if c.Confidence <= 0 || c.Confidence > 1 {
		return c, fmt.Errorf("revisit: class confidence must be in (0, 1] (got %v)", c.Confidence)
	}
	return c, nil
}

// classes is seed 004's change-class policy: heuristic or Bayesian reclassification.
type classes struct {
	name    string
	o       Options
	c       ClassOptions
	bayes   bool
	periods []float64 // seconds
	mu      sync.Mutex
	pages   map[Key]*classPage
	count   []int // pages per class
}

type classPage struct {
	last      int64
	class     int
	visits    int // in the current window
	changes   int
	posterior []float64 // classes-bayes
}

func newClasses(name string, o Options) (*classes, error) {
	c, err := o.Classes.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &classes{name: name, o: o, c: c, bayes: name == "classes-bayes", pages: map[Key]*classPage{}, count: make([]int, len(c.Periods))}
	for _, d := range c.Periods {
		p.periods = append(p.periods, d.Seconds())
	}
	return p, nil
}

func (p *classes) Name() string { return p.name }

func (p *classes) setBudget(b float64) {
	p.mu.Lock()
	p.o.Budget = b
	p.mu.Unlock()
}

// Heuristic is the dissertation's history classifier (Fig. 11): after a window of visits in
// class k, a share of changed visits above upper moves the page to k−1 (more frequent),
// below lower to k+1, if that class exists. It returns the new class.
func Heuristic(class, classes, visits, changes int, upper, lower float64) int {
	if visits <= 0 {
		return class
	}
	ratio := float64(changes) / float64(visits)
	switch {
	case ratio > upper && class > 0:
		return class - 1
	case ratio < lower && class < classes-1:
		return class + 1
	}
	return class
}

func (p *classes) Visit(key Key, o Observation) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	pg := p.pages[key]
	if o.Status == Gone {
		if pg != nil {
			p.count[pg.class]--
			delete(p.pages, key)
		}
		return time.Time{}
	}
	if pg == nil {
		pg = &classPage{}
		if p.c.Initial != nil {
			pg.class = min(max(p.c.Initial.Class(key, o), 0), len(p.periods)-1)
		}
		if p.bayes {
			pg.posterior = make([]float64, len(p.periods))
			rest := (1 - p.c.Confidence) / float64(max(len(p.periods)-1, 1))
			for k := range pg.posterior {
				pg.posterior[k] = rest
			}
			pg.posterior[pg.class] = p.c.Confidence
			if len(p.periods) == 1 {
				pg.posterior[0] = 1
			}
		}
		p.pages[key] = pg
		p.count[pg.class]++
	}
	if g := gap(&pg.last, o); g.informative {
		old := pg.class
		if p.bayes {
			estimate.ClassPosterior(pg.posterior, p.periods, g.seconds, g.changed)
			best := 0
			for k, v := range pg.posterior {
				if v > pg.posterior[best] {
					best = k
				}
			}
			pg.class = best
		} else {
			pg.visits++
			if g.changed {
				pg.changes++
			}
			if pg.visits >= p.c.Windows[pg.class] {
				pg.class = Heuristic(pg.class, len(p.periods), pg.visits, pg.changes, p.c.Upper, p.c.Lower)
				pg.visits, pg.changes = 0, 0
			}
		}
		if pg.class != old {
			p.count[old]--
			p.count[pg.class]++
		}
	}
	return after(o.At, p.o.bounded(p.periods[pg.class]*p.scale()))
}

// scale stretches every class period by one factor so that the planned visits,
// Σ_k pages_k/period_k, equal the budget: the dissertation's per-class daily quotas
// (pages in the class over its period) scaled to a global daily budget. Callers hold mu.
func (p *classes) scale() float64 {
	if p.o.Budget <= 0 {
		return 1
	}
	var demand float64
	for k, n := range p.count {
		demand += float64(n) / p.periods[k]
	}
	if demand <= 0 {
		return 1
	}
	return demand / p.o.Budget
}
