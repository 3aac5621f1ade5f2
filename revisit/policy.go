// Package revisit owns incremental crawling: when a page the crawler has fetched is fetched
// again. It turns what each visit showed (changed or not, Last-Modified, the page's
// features) into a next visit time, under a fetch budget shared by every page.
//
// The policies, selectable by name (Names, New):
//
//   - none: never revisit (a one-off crawl).
//   - uniform: every page at the same interval: the budget divided evenly, or a fixed
//     interval without a budget.
//   - proportional: seed 002's rateUpdate = clamp(changes, 1, 10)/clamp(days since the last
//     visit, 1, 10); pages are visited in proportion to it.
//   - classes: seed 004's change classes (periods 1, 3, 30 and 96 days by default, found by
//     k-means over the Cho–Garcia-Molina estimator), an initial class from a classifier over
//     page features, and the heuristic that moves a page one class up or down after a window
//     of visits (windows 3/2/2/1, thresholds 0.8/0.2). classes-bayes reclassifies with the
//     Bayesian class posterior instead.
//   - adaptive: Nutch's AdaptiveFetchSchedule (interval ×(1 − 0.2) after a change, ×(1 + 0.4)
//     otherwise, bounded, synchronized with the last modification), a widely deployed
//     baseline.
//   - optimal: sonda's default. A posterior over each page's Poisson change rate from its
//     exact likelihood (package estimate: changed or not at each visit, Last-Modified when
//     it agrees with the content), under a prior of any shape re-estimated from the whole
//     crawl (empirical Bayes), and the budget allocated to maximize the expected
//     time-averaged freshness of the collection (package alloc, after Cho &
//     Garcia-Molina), optionally weighted by page importance and bounded per host. A new
//     page starts from the prior of the pages that look like it (its URL section, then
//     its section and cheap content signals: seed 004's cold start, with the feature→rate
//     mapping learned from this crawl's revisits, estimate.Groups), and a page whose
//     visits cannot tell whether it is too fast to follow is probed with an early visit.
//
// A Policy sees only observations (Observation), so the same code drives the real crawler
// (through CrawlPolicy, a crawl.RevisitPolicy) and the simulator (package revisit/sim).
// Policies keep their per-page state in memory; CrawlPolicy rebuilds it from the visit
// history in the store when a crawl resumes.
package revisit

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Key identifies a page (the crawler's URL key).
type Key = [16]byte

// Status is what kind of answer a visit got.
type Status uint8

const (
	// OK: the page's content was read and compared with the previous visit's.
	OK Status = iota
	// NotModified: a conditional request answered 304; the page has not changed.
	NotModified
	// Failed: no usable answer this time (server error, timeout); the page keeps its plan.
	Failed
	// Gone: the page no longer exists or is not a page to revisit (404, 410, a redirect,
	// a body that was not downloaded); it is dropped from the plan.
	Gone
)

// Observation is what one visit of a page showed.
type Observation struct {
	At     time.Time
	Status Status
	// Changed says the content differs from the previous visit's (OK only). It is false
	// on a first visit, which has nothing to compare with.
	Changed bool
	// First says there was no earlier content to compare with.
	First bool
	// LastModified is the server's Last-Modified time; zero when absent or unparseable.
	LastModified time.Time
	// Weight is the page's importance (relevance, link rank); 0 means 1.
	Weight float64
	// Host is the page's host key, for per-host limits.
	Host string
	// Features describe the page for an initial classifier (nil: unknown).
	Features *Features
}

// Policy decides when pages are visited again.
type Policy interface {
	// Name is the policy's selectable name.
	Name() string
	// Visit records an observation of page key and returns when to visit it next (the
	// zero time: never). Calls for one key come in time order; implementations are safe
	// for concurrent use.
	Visit(key Key, o Observation) time.Time
}

// Options configure the policies. Times are durations; rates are per second.
type Options struct {
	// Budget is the revisit fetches per second the policy plans for (0: no budget; uniform
	// then uses Interval, classes and proportional use their periods as given; optimal
	// needs a budget).
	Budget float64
	// Interval is the uniform interval without a budget, and the adaptive policy's
	// starting interval without one (default 24h).
	Interval time.Duration
	// MinInterval and MaxInterval bound every interval (0: no bound). With MaxInterval 0 the
	// optimal policy may give up a page that changes faster than the budget can follow.
	MinInterval, MaxInterval time.Duration
	// HostCap is the most revisits per second one host may get (optimal; 0: no cap).
	HostCap float64
	// Unit is proportional's "day": the unit its clamps of 1 to 10 apply to (default 24h).
	Unit time.Duration
	// Classes configure the change-class policies.
	Classes ClassOptions
	// Adaptive configures Nutch's adaptive schedule.
	Adaptive AdaptiveOptions
	// Optimal configures the budget-optimal policy.
	Optimal OptimalOptions
}

// DefaultPolicy is the policy a crawl with a budget and no policy given uses.
const DefaultPolicy = "optimal"

// PolicyNames are the selectable policies, sonda's recommended one last.
var PolicyNames = []string{"none", "uniform", "proportional", "classes", "classes-bayes", "adaptive", "optimal"}

// Names lists the selectable policy names, sorted.
func Names() []string {
	n := append([]string{}, PolicyNames...)
	sort.Strings(n)
	return n
}

// New makes the named policy.
func New(name string, o Options) (Policy, error) {
	if o.Interval <= 0 {
		o.Interval = 24 * time.Hour
	}
	if o.Unit <= 0 {
		o.Unit = 24 * time.Hour
	}
	if o.Budget < 0 || math.IsNaN(o.Budget) || math.IsInf(o.Budget, 0) {
		return nil, fmt.Errorf("revisit: the budget must be a non-negative number of fetches per second (got %v)", o.Budget)
	}
	if o.MaxInterval > 0 && o.MaxInterval < o.MinInterval {
		return nil, fmt.Errorf("revisit: max-interval (%v) is shorter than min-interval (%v)", o.MaxInterval, o.MinInterval)
	}
	switch name {
	case "none":
		return None{}, nil
	case "uniform":
		return newUniform(o), nil
	case "proportional":
		return newProportional(o), nil
	case "classes", "classes-bayes":
		return newClasses(name, o)
	case "adaptive":
		return newAdaptive(o)
	case "optimal":
		return newOptimal(o)
	}
	return nil, fmt.Errorf("revisit: unknown policy %q (choose one of %s)", name, strings.Join(PolicyNames, ", "))
}

// budgeted is implemented by policies whose plan depends on the budget; the crawler
// adapter changes it as discovery takes more or less of the crawl's requests.
type budgeted interface {
	setBudget(perSecond float64)
}

// paced is implemented by policies that ask for pages early by how late the crawler
// fetches them; perSecond is the crawl's fetch rate, which revisits share with discovery.
// Asking early keeps revisits at their budget only while that is below the crawl's rate;
// at it, lateness is a queue that asking earlier would lengthen.
type paced interface {
	setCrawlRate(perSecond float64)
}

// SetCrawlRate tells p the rate (per second) the crawler fetches at, which its revisits
// share, if p asks for pages early by how late they are fetched (the optimal policy);
// other policies ignore it. A crawl's policy adapter (CrawlPolicy) does this itself; a
// simulated crawler that fetches pages only when due does it by hand.
func SetCrawlRate(p Policy, perSecond float64) {
	if pp, ok := p.(paced); ok {
		pp.setCrawlRate(perSecond)
	}
}

// pendingAware is implemented by policies that plan for pages the crawl has admitted but
// not fetched yet (see crawl.DiscoveryAware); horizon is about when (seconds from now)
// they will all have been fetched at the current rate of first visits.
type pendingAware interface {
	setPending(pages int, horizon float64)
}

// None never revisits.
type None struct{}

// Name implements Policy.
func (None) Name() string { return "none" }

// Visit implements Policy.
func (None) Visit(Key, Observation) time.Time { return time.Time{} }

// maxHorizon is the longest interval a policy schedules; longer means never (it also keeps
// time arithmetic far from overflow).
const maxHorizon = 100 * 365 * 24 * time.Hour

// after is t plus an interval in seconds, or the zero time (never) for intervals that are
// infinite or beyond maxHorizon.
func after(t time.Time, seconds float64) time.Time {
	if !(seconds < maxHorizon.Seconds()) {
		return time.Time{}
	}
	return t.Add(time.Duration(math.Max(seconds, 0) * float64(time.Second)))
}

// bounded clamps an interval in seconds to the options' bounds.
func (o Options) bounded(seconds float64) float64 {
	if o.MinInterval > 0 {
		seconds = math.Max(seconds, o.MinInterval.Seconds())
	}
	if o.MaxInterval > 0 {
		seconds = math.Min(seconds, o.MaxInterval.Seconds())
	}
	return seconds
}
