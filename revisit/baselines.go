package revisit

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// visitGap is what every policy first works out from an observation: whether it teaches
// anything about change, and the time since the previous content visit.
type visitGap struct {
	informative bool    // OK or NotModified after an earlier content visit
	seconds     float64 // since that visit
	changed     bool
}

// gap updates *last (the time of the previous content visit, Unix nanoseconds; 0 before
// the first) and returns what the observation says.
func gap(last *int64, o Observation) visitGap {
	if o.Status != OK && o.Status != NotModified {
		return visitGap{}
	}
	now := o.At.UnixNano()
	g := visitGap{}
	if *last != 0 && !o.First && now > *last {
		g = visitGap{informative: true, seconds: float64(now-*last) / 1e9, changed: o.Status == OK && o.Changed}
	}
	if now > *last {
		*last = now
	}
	return g
}

// uniform visits every page at the same interval.
type uniform struct {
	o     Options
	mu    sync.Mutex
	pages map[Key]struct{}
}

func newUniform(o Options) *uniform { return &uniform{o: o, pages: map[Key]struct{}{}} }

func (*uniform) Name() string { return "uniform" }

func (u *uniform) setBudget(b float64) {
	u.mu.Lock()
	u.o.Budget = b
	u.mu.Unlock()
}

// interval is the budget divided evenly over the pages (or the configured interval).
// Callers hold mu.
func (u *uniform) interval() float64 {
	if u.o.Budget > 0 {
		return u.o.bounded(float64(len(u.pages)) / u.o.Budget)
	}
	return u.o.bounded(u.o.Interval.Seconds())
}

func (u *uniform) Visit(key Key, o Observation) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if o.Status == Gone {
		delete(u.pages, key)
		return time.Time{}
	}
	u.pages[key] = struct{}{}
	return after(o.At, u.interval())
}

// proportional is seed 002's policy: each page has rateUpdate = clamp(changes, 1, 10) /
// clamp(units since its previous visit, 1, 10) and is visited in proportion to it.
type proportional struct {
	o     Options
	mu    sync.Mutex
	pages map[Key]*propPage
	sum   float64 // Σ rate over pages
}

type propPage struct {
	last    int64
	changes int
	rate    float64
}

func newProportional(o Options) *proportional {
	return &proportional{o: o, pages: map[Key]*propPage{}}
}

func (*proportional) Name() string { return "proportional" }

func (p *proportional) setBudget(b float64) {
	p.mu.Lock()
	p.o.Budget = b
	p.mu.Unlock()
}

// RateUpdate is seed 002's formula (Quadro 18): clamp(changes, 1, 10)/clamp(days, 1, 10),
// where days is the time since the page's previous update in the policy's unit. The
// thesis writes the difference the wrong way round (it is negative); its absolute value is
// meant, as the worked example shows: 2 changes and 3 days give 0.67.
func RateUpdate(changes int, days float64) float64 {
	return clampF(float64(changes), 1, 10) / clampF(math.Abs(days), 1, 10)
}

func clampF(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

func (p *proportional) Visit(key Key, o Observation) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	pg := p.pages[key]
	if o.Status == Gone {
		if pg != nil {
			p.sum -= pg.rate
			delete(p.pages, key)
		}
		return time.Time{}
	}
	if pg == nil {
		// New pages all start with the same frequency (rateUpdate of 0 changes, clamped).
		pg = &propPage{rate: RateUpdate(0, 0)}
		p.pages[key] = pg
		p.sum += pg.rate
	}
	if g := gap(&pg.last, o); g.informative {
		if g.changed {
			pg.changes++
		}
		r := RateUpdate(pg.changes, g.seconds/p.o.Unit.Seconds())
		p.sum += r - pg.rate
		pg.rate = r
	}
	var interval float64
	if p.o.Budget > 0 {
		interval = p.sum / (p.o.Budget * pg.rate)
	} else {
		interval = p.o.Unit.Seconds() / pg.rate
	}
	return after(o.At, p.o.bounded(interval))
}

// AdaptiveOptions are the parameters of Nutch's AdaptiveFetchSchedule; zero fields take
// the defaults the issue names (those of nutch-default.xml where it differs from the class's
// fallbacks): inc 0.4, dec 0.2, sync delta on at rate 0.3, interval between 1 minute and
// 365 days.
type AdaptiveOptions struct {
	Inc, Dec float64
	NoSync   bool // do not synchronize with the last modification
	SyncRate float64
	Min, Max time.Duration
	Start    time.Duration // first interval (default: the uniform interval)
}

func (a AdaptiveOptions) withDefaults() AdaptiveOptions {
	if a.Inc == 0 {
		a.Inc = 0.4
	}
	if a.Dec == 0 {
		a.Dec = 0.2
	}
	if a.SyncRate == 0 {
		a.SyncRate = 0.3
	}
	if a.Min == 0 {
		a.Min = time.Minute
	}
	if a.Max == 0 {
		a.Max = 365 * 24 * time.Hour
	}
	return a
}

// adaptive is Nutch's AdaptiveFetchSchedule: it knows nothing of a budget; it shortens a
// page's interval by Dec after a change and lengthens it by Inc otherwise.
type adaptive struct {
	o     Options
	a     AdaptiveOptions
	mu    sync.Mutex
	pages map[Key]*adaptivePage
}

type adaptivePage struct {
	last     int64
	interval float64 // seconds
	modified int64   // Unix ns of the last known modification
}

func newAdaptive(o Options) (*adaptive, error) {
	a := o.Adaptive.withDefaults()
	if a.Inc < 0 || a.Dec < 0 || a.Dec >= 1 || a.SyncRate < 0 || a.SyncRate > 1 || a.Max < a.Min {
		return nil, fmt.Errorf("revisit: adaptive schedule: inc %v, dec %v (below 1), sync rate %v (0..1), min %v ≤ max %v are needed",
			a.Inc, a.Dec, a.SyncRate, a.Min, a.Max)
	}
	return &adaptive{o: o, a: a, pages: map[Key]*adaptivePage{}}, nil
}

func (*adaptive) Name() string { return "adaptive" }

// setBudget only changes new pages' first interval: the schedule itself ignores budgets.
func (ad *adaptive) setBudget(b float64) {
	ad.mu.Lock()
	ad.o.Budget = b
	ad.mu.Unlock()
}

func (ad *adaptive) Visit(key Key, o Observation) time.Time {
	ad.mu.Lock()
	defer ad.mu.Unlock()
	pg := ad.pages[key]
	if o.Status == Gone {
		delete(ad.pages, key)
		return time.Time{}
	}
	fetch := o.At.UnixNano()
	if pg == nil {
		start := ad.a.Start.Seconds()
		if start <= 0 {
			start = ad.startInterval()
		}
		pg = &adaptivePage{interval: start, modified: fetch}
		ad.pages[key] = pg
	}
	if o.Status == Failed {
		return after(o.At, pg.interval)
	}
	g := gap(&pg.last, o)
	if !o.LastModified.IsZero() && o.LastModified.UnixNano() <= fetch {
		pg.modified = o.LastModified.UnixNano()
	}
	if g.informative {
		if g.changed {
			pg.interval *= 1 - ad.a.Dec
			pg.modified = fetch
		} else {
			pg.interval *= 1 + ad.a.Inc
		}
	}
	ref := fetch
	if !ad.a.NoSync {
		// Synchronize with the time of change: an interval never shorter than the time the
		// page has gone unmodified, and the next fetch pulled back by a share of it.
		delta := float64(fetch-pg.modified) / 1e9
		if delta > pg.interval {
			pg.interval = delta
		}
		ref = fetch - int64(delta*ad.a.SyncRate*1e9)
	}
	pg.interval = clampF(pg.interval, ad.a.Min.Seconds(), ad.a.Max.Seconds())
	pg.interval = ad.o.bounded(pg.interval)
	return after(time.Unix(0, ref), pg.interval)
}

// startInterval is the uniform interval: the budget over the pages known, or the
// configured interval. Callers hold mu.
func (ad *adaptive) startInterval() float64 {
	if ad.o.Budget > 0 {
		return float64(len(ad.pages)+1) / ad.o.Budget
	}
	return ad.o.Interval.Seconds()
}
