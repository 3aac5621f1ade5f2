package revisit

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func key(i int) Key {
	var k Key
	binary.BigEndian.PutUint64(k[:], uint64(i))
	return k
}

func mustNew(t *testing.T, name string, o Options) Policy {
	t.Helper()
	p, err := New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewErrors(t *testing.T) {
	if _, err := New("sometimes", Options{}); err == nil || !strings.Contains(err.Error(), "optimal") {
		t.Errorf("unknown policy: %v (the error should list the choices)", err)
	}
	if _, err := New("optimal", Options{}); err == nil || !strings.Contains(err.Error(), "--budget") {
		t.Errorf("optimal without a budget: %v (the error should say how to set one)", err)
	}
	if _, err := New("uniform", Options{Budget: -1}); err == nil {
		t.Error("negative budget accepted")
	}
	if _, err := New("uniform", Options{MinInterval: time.Hour, MaxInterval: time.Minute}); err == nil {
		t.Error("crossed bounds accepted")
	}
	if _, err := New("classes", Options{Classes: ClassOptions{Periods: []time.Duration{day, 3 * day}}}); err == nil {
		t.Error("two periods with the default four windows accepted")
	}
	if _, err := New("classes", Options{Classes: ClassOptions{Periods: []time.Duration{3 * day, day}, Windows: []int{1, 1}}}); err == nil {
		t.Error("descending periods accepted")
	}
	if _, err := New("adaptive", Options{Adaptive: AdaptiveOptions{Dec: 1.5}}); err == nil {
		t.Error("adaptive dec ≥ 1 accepted")
	}
	for _, name := range PolicyNames {
		o := Options{Budget: 1}
		p := mustNew(t, name, o)
		if p.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, p.Name())
		}
	}
}

func TestNone(t *testing.T) {
	if got := (None{}).Visit(key(1), Observation{At: t0}); !got.IsZero() {
		t.Errorf("none scheduled a revisit at %v", got)
	}
}

// TestUniform: with a budget, N pages are each visited every N/budget; without, every
// Interval; a page that is gone leaves the count.
func TestUniform(t *testing.T) {
	p := mustNew(t, "uniform", Options{Budget: 0.5})
	var next time.Time
	for i := 0; i < 10; i++ {
		next = p.Visit(key(i), Observation{At: t0, First: true})
	}
	if want := t0.Add(20 * time.Second); !next.Equal(want) {
		t.Errorf("10 pages at 0.5/s: next %v, want %v", next, want)
	}
	if got := p.Visit(key(3), Observation{At: t0, Status: Gone}); !got.IsZero() {
		t.Error("a gone page was rescheduled")
	}
	if got := p.Visit(key(4), Observation{At: t0}); !got.Equal(t0.Add(18 * time.Second)) {
		t.Errorf("after one page left: %v, want 18s", got.Sub(t0))
	}
	fixed := mustNew(t, "uniform", Options{Interval: time.Hour, MinInterval: 2 * time.Hour})
	if got := fixed.Visit(key(1), Observation{At: t0}); !got.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("fixed interval with a 2h minimum: %v", got.Sub(t0))
	}
}

// TestRateUpdateSeed002 is seed 002's worked example (Quadro 19): 2 changes over 3 days give
// rateUpdate 2/3 (the thesis prints it truncated as 0.6), and the clamps keep it in
// [0.1, 10].
func TestRateUpdateSeed002(t *testing.T) {
	tests := []struct {
		changes int
		days    float64
		want    float64
	}{
		{2, 3, 2.0 / 3}, {2, -3, 2.0 / 3}, {0, 0, 1}, {50, 0.5, 10}, {1, 100, 0.1}, {10, 10, 1},
	}
	for _, tt := range tests {
		if got := RateUpdate(tt.changes, tt.days); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("RateUpdate(%d, %v) = %v, want %v", tt.changes, tt.days, got, tt.want)
		}
	}
}

func TestProportional(t *testing.T) {
	p := mustNew(t, "proportional", Options{Budget: 2.0 / 86400}) // two visits a day
	a, b := key(1), key(2)
	p.Visit(a, Observation{At: t0, First: true})
	p.Visit(b, Observation{At: t0, First: true})
	// a changed after 3 days twice; b never changed over 5 days.
	p.Visit(a, Observation{At: t0.Add(3 * day), Changed: true})
	nextA := p.Visit(a, Observation{At: t0.Add(6 * day), Changed: true}) // rate 2/3
	nextB := p.Visit(b, Observation{At: t0.Add(5 * day)})                // rate 1/5
	ia, ib := nextA.Sub(t0.Add(6*day)), nextB.Sub(t0.Add(5*day))
	// Each page's frequency is its share of the rates known at its visit times the budget:
	// a at 2/3 of (2/3 + 1) (b not yet re-rated), b at 1/5 of (2/3 + 1/5).
	fa, fb := float64(day)/float64(ia), float64(day)/float64(ib)
	if math.Abs(fa-2*(2.0/3)/(2.0/3+1)) > 1e-9 || math.Abs(fb-2*(1.0/5)/(2.0/3+1.0/5)) > 1e-9 {
		t.Errorf("frequencies %.4f and %.4f a day, want 0.8 and 0.4615", fa, fb)
	}
	noBudget := mustNew(t, "proportional", Options{})
	noBudget.Visit(a, Observation{At: t0, First: true})
	if got := noBudget.Visit(a, Observation{At: t0.Add(2 * day), Changed: true}); !got.Equal(t0.Add(4 * day)) {
		t.Errorf("rate 1/2 without a budget: next after %v, want 2 days", got.Sub(t0.Add(2*day)))
	}
}

type fixedClass int

func (f fixedClass) Class(Key, Observation) int { return int(f) }

// TestHeuristicMigrationSeed004 replays seed 004's worked examples of the heuristic
// (windows 3/2/2/1, thresholds 0.8/0.2, periods 1/3/30/96 days):
//   - a page that changes every day but starts in class 3 reaches class 0 after 96 days in
//     class 3 (window 1), 60 in class 2 (window 2 × 30 days) and 6 in class 1 (2 × 3): day
//     162. The dissertation counts 96 + 30 + 6 = 132, taking one 30-day visit for class 2;
//     with its own window of 2 that is 60 days.
//   - a page that never changes, wrongly placed in class 0, leaves it after 3 days.
func TestHeuristicMigrationSeed004(t *testing.T) {
	p := mustNew(t, "classes", Options{Classes: ClassOptions{Initial: fixedClass(3)}})
	now := t0
	next := p.Visit(key(1), Observation{At: now, First: true})
	for next.Sub(now) != day {
		now = next
		next = p.Visit(key(1), Observation{At: now, Changed: true})
		if now.Sub(t0) > 400*day {
			t.Fatal("never reached class 0")
		}
	}
	if got := now.Sub(t0); got != 162*day {
		t.Errorf("a daily page starting in class 3 reached class 0 on day %v, want 162", got.Hours()/24)
	}
	static := mustNew(t, "classes", Options{Classes: ClassOptions{Initial: fixedClass(0)}})
	now = t0
	next = static.Visit(key(2), Observation{At: now, First: true})
	for i := 0; i < 3; i++ {
		now = next
		next = static.Visit(key(2), Observation{At: now})
	}
	if now.Sub(t0) != 3*day || next.Sub(now) != 3*day {
		t.Errorf("static page: on day %v its interval is %v, want class 1 (3 days) after day 3", now.Sub(t0).Hours()/24, next.Sub(now))
	}
	// A class-1 page is re-judged after its window: 2 visits × 3 days = 6 days.
	mid := mustNew(t, "classes", Options{Classes: ClassOptions{Initial: fixedClass(1)}})
	now = t0
	next = mid.Visit(key(3), Observation{At: now, First: true})
	for i := 0; i < 2; i++ {
		now = next
		next = mid.Visit(key(3), Observation{At: now, Changed: true})
	}
	if now.Sub(t0) != 6*day || next.Sub(now) != day {
		t.Errorf("class-1 page changing at every visit: moved on day %v to interval %v, want day 6 and 1 day", now.Sub(t0).Hours()/24, next.Sub(now))
	}
}

func TestHeuristic(t *testing.T) {
	tests := []struct{ class, visits, changes, want int }{
		{2, 2, 2, 1}, {2, 2, 1, 2}, {2, 2, 0, 3}, {0, 3, 3, 0}, {3, 1, 0, 3}, {1, 0, 0, 1},
	}
	for _, tt := range tests {
		if got := Heuristic(tt.class, 4, tt.visits, tt.changes, 0.8, 0.2); got != tt.want {
			t.Errorf("Heuristic(class %d, %d/%d changed) = %d, want %d", tt.class, tt.changes, tt.visits, got, tt.want)
		}
	}
}

// TestClassesBudget: with a budget the class periods stretch by one factor so the planned
// visits equal it.
func TestClassesBudget(t *testing.T) {
	p := mustNew(t, "classes", Options{Budget: 1.0 / 86400, Classes: ClassOptions{Initial: fixedClass(0)}})
	var last time.Time
	for i := 0; i < 4; i++ {
		last = p.Visit(key(i), Observation{At: t0, First: true})
	}
	// Four class-0 pages (1 day each) want 4 visits a day; the budget is 1: every 4 days.
	if got := last.Sub(t0); got != 4*day {
		t.Errorf("interval %v, want 4 days", got)
	}
}

func TestClassesBayes(t *testing.T) {
	p := mustNew(t, "classes-bayes", Options{Classes: ClassOptions{Initial: fixedClass(3)}})
	now := t0
	next := p.Visit(key(1), Observation{At: now, First: true})
	// The Bayesian variant can jump: one change seen after 96 days barely separates the
	// classes, but a change at every visit soon puts the page in class 0.
	for i := 0; i < 10; i++ {
		now = next
		next = p.Visit(key(1), Observation{At: now, Changed: true})
	}
	if next.Sub(now) != day {
		t.Errorf("after 10 changed visits: interval %v, want 1 day (class 0)", next.Sub(now))
	}
}

// TestAdaptive follows Nutch's AdaptiveFetchSchedule: ×1.4 after an unchanged visit, ×0.8
// after a change, never shorter than the time since the last modification (sync delta),
// and the next fetch pulled back by 0.3 of that time.
func TestAdaptive(t *testing.T) {
	p := mustNew(t, "adaptive", Options{Interval: 10 * day})
	now := t0
	next := p.Visit(key(1), Observation{At: now, First: true})
	if next.Sub(now) != 10*day {
		t.Fatalf("first interval %v, want 10 days", next.Sub(now))
	}
	now = now.Add(10 * day) // unchanged: 14 days, but the page is unmodified for 10 days:
	next = p.Visit(key(1), Observation{At: now})
	// interval max(14, 10) = 14 days from now − 0.3 × 10 days.
	if want := now.Add(14*day - 3*day); !next.Equal(want) {
		t.Errorf("after an unchanged visit: next %v, want %v", next.Sub(now), want.Sub(now))
	}
	now = now.Add(11 * day)
	next = p.Visit(key(1), Observation{At: now, Changed: true})
	if want := now.Add(time.Duration(0.8 * float64(14*day))); !next.Equal(want) {
		t.Errorf("after a change: next %v, want %v", next.Sub(now), want.Sub(now))
	}
	// Bounds: many changes drive the interval down to the minimum (1 minute).
	for i := 0; i < 100; i++ {
		now = next
		next = p.Visit(key(1), Observation{At: now, Changed: true})
	}
	if next.Sub(now) != time.Minute {
		t.Errorf("interval after 100 changes: %v, want the 1m minimum", next.Sub(now))
	}
	if got := p.Visit(key(1), Observation{At: now, Status: Failed}); got.Sub(now) != time.Minute {
		t.Errorf("a failed visit changed the plan: %v", got.Sub(now))
	}
}

// TestOptimalAllocates: pages observed to change often get shorter intervals than pages
// observed not to, the planned visits add up to the budget, and Last-Modified times that
// agree with the content are used (they narrow the posterior).
func TestOptimalAllocates(t *testing.T) {
	budget := 50.0 / 86400 // 50 visits a day
	p := mustNew(t, "optimal", Options{Budget: budget}).(*optimal)
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []float64{0.05, 0.2, 1, 0.01} // changes per day, by page group
	const pages = 100
	next := make([]time.Time, pages)
	last := make([]time.Time, pages)
	for i := 0; i < pages; i++ {
		next[i] = p.Visit(key(i), Observation{At: t0, First: true})
		last[i] = t0
	}
	now := t0
	for step := 0; step < 20000; step++ {
		i := 0
		for j := range next {
			if !next[j].IsZero() && (next[i].IsZero() || next[j].Before(next[i])) {
				i = j
			}
		}
		now = next[i]
		days := now.Sub(last[i]).Hours() / 24
		changed := rng.Float64() < -math.Expm1(-rates[i%4]*days)
		next[i] = p.Visit(key(i), Observation{At: now, Changed: changed})
		last[i] = now
	}
	interval := func(g int) float64 {
		var s float64
		for i := g; i < pages; i += 4 {
			s += p.list[p.pages[key(i)].idx].interval
		}
		return s / (pages / 4) / 86400
	}
	if !(interval(3) > interval(0) && interval(0) > interval(1)) {
		t.Errorf("mean intervals (days) for rates %v: %.2f %.2f %.2f %.2f; want slower-changing pages visited less often (the fastest may be given up)",
			rates, interval(0), interval(1), interval(2), interval(3))
	}
	var used float64
	for _, pg := range p.list {
		used += 1 / pg.interval
	}
	if math.Abs(used/budget-1) > 0.1 {
		t.Errorf("planned %.2f visits a day, budget %.2f", used*86400, budget*86400)
	}
	if !p.fitted {
		t.Error("the prior was never estimated from the pages (empirical Bayes)")
	}
	if got := p.Visit(key(0), Observation{At: now, Status: Gone}); !got.IsZero() || len(p.list) != pages-1 {
		t.Errorf("gone page: next %v, %d pages left", got, len(p.list))
	}
}

// TestOptimalLastModified: a Last-Modified that moves exactly with the content is trusted
// and gives the exact conjugate update; one that moves without a content change is not.
func TestOptimalLastModified(t *testing.T) {
	p := mustNew(t, "optimal", Options{Budget: 1}).(*optimal)
	k := key(1)
	p.Visit(k, Observation{At: t0, First: true, LastModified: t0.Add(-10 * time.Hour)})
	pg := p.pages[k]
	if pg.ev.Shape != 1 || pg.ev.Rate != 36000 || pg.hist.Exact != 1 || pg.hist.Exposure != 36000 {
		t.Fatalf("first visit with a 10h-old Last-Modified: evidence %+v, history %+v; want an age of 10 h (λ·e^(−36000 λ))", pg.ev, pg.hist)
	}
	p.Visit(k, Observation{At: t0.Add(time.Hour), Changed: true, LastModified: t0.Add(30 * time.Minute)})
	if pg.trustLM <= 0 || pg.ev.Shape != 2 || pg.ev.Rate != 36000+1800 || pg.hist.Exact != 2 {
		t.Errorf("agreeing Last-Modified: trust %d, evidence %+v; want the exact update (shape 2, rate 37800)", pg.trustLM, pg.ev)
	}
	// The header moves but the text does not: distrust from now on.
	p.Visit(k, Observation{At: t0.Add(2 * time.Hour), LastModified: t0.Add(2 * time.Hour)})
	if pg.trustLM > 0 {
		t.Error("a Last-Modified that moved without a content change is still trusted")
	}
	before := pg.ev
	p.Visit(k, Observation{At: t0.Add(3 * time.Hour), Changed: true, LastModified: t0.Add(3 * time.Hour)})
	if pg.ev.Shape == before.Shape+1 && pg.ev.Rate == before.Rate {
		t.Error("an untrusted Last-Modified still gave the exact update")
	}
	fail := p.Visit(k, Observation{At: t0.Add(4 * time.Hour), Status: Failed})
	if fail.IsZero() {
		t.Error("a failed visit dropped the page")
	}
}

func TestAfterOverflow(t *testing.T) {
	if !after(t0, math.Inf(1)).IsZero() || !after(t0, 1e300).IsZero() || !after(t0, math.NaN()).IsZero() {
		t.Error("after() must give the zero time for unbounded intervals")
	}
	if got := after(t0, 1.5); got != t0.Add(1500*time.Millisecond) {
		t.Errorf("after(1.5s) = %v", got)
	}
}

func TestURLLevel(t *testing.T) {
	tests := []struct {
		path string
		want int
	}{{"", 1}, {"/", 1}, {"/~lab", 2}, {"/a/b.html", 2}, {"/a/b/", 3}, {"/a/b/c", 4}, {"/index.html", 1}}
	for _, tt := range tests {
		if got := URLLevel(tt.path); got != tt.want {
			t.Errorf("URLLevel(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
}

func TestURLSection(t *testing.T) {
	tests := []struct{ path, want string }{
		{"", ""}, {"/", ""}, {"/news/2026/11/story.html", "news"}, {"/News/", "news"},
		{"/about.html", "about"}, {"/page-12.html", "page-#"}, {"/2026/11/x", "#"}, {"/v2beta3/x", "v#beta#"},
		{"/" + strings.Repeat("a", 60) + "/x", strings.Repeat("a", 40)},
	}
	for _, tt := range tests {
		if got := URLSection(tt.path); got != tt.want {
			t.Errorf("URLSection(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestGroupKeys: a page's groups go from its section to its section with the other
// signals; pages that differ only in what the finer key buckets share both groups.
func TestGroupKeys(t *testing.T) {
	a := Features{Section: "news", Dates: 2, LastModified: 1, MaxAge: -1, URLLevel: 2}
	b := a
	b.Dates = 7 // 3 and more are one bucket
	c := a
	c.Dates = 7
	c.Section = "about"
	ka, kb, kc := a.GroupKeys(), b.GroupKeys(), c.GroupKeys()
	if len(ka) != 2 || ka[0] != "section news" || !strings.HasPrefix(ka[1], ka[0]+"|") {
		t.Fatalf("keys %q", ka)
	}
	if ka[0] != kb[0] || ka[1] == kb[1] {
		t.Errorf("2 and 7 dates: keys %q and %q, want one section and two detail groups", ka, kb)
	}
	b.Dates = 3
	if b.GroupKeys()[1] != kb[1] || kc[0] == kb[0] {
		t.Errorf("keys %q, %q, %q", b.GroupKeys(), kb, kc)
	}
}

func TestMaxAge(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{{"", -1}, {"public, max-age=99", 2}, {"no-store", 0}, {"max-age=x", -1}, {"s-maxage=\"9\"", 1}}
	for _, tt := range tests {
		if got := maxAge(tt.in); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("maxAge(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// BenchmarkOptimalVisit is the cost the optimal policy adds to each fetch, on a crawl of
// 100,000 pages (re-planning included, amortized).
func BenchmarkOptimalVisit(b *testing.B) { benchmarkOptimalVisit(b, false) }

// BenchmarkOptimalVisitFeatures is BenchmarkOptimalVisit with pages in 200 URL sections
// (400 feature groups): what the feature prior adds to each fetch.
func BenchmarkOptimalVisitFeatures(b *testing.B) { benchmarkOptimalVisit(b, true) }

func benchmarkOptimalVisit(b *testing.B, features bool) {
	p, err := New("optimal", Options{Budget: 10})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const pages = 100000
	for i := 0; i < pages; i++ {
		o := Observation{At: t0, First: true}
		if features {
			o.Features = &Features{Section: fmt.Sprintf("s%d", i%200), Dates: float64(i % 4), LastModified: float64(i % 2), MaxAge: -1, URLLevel: 2}
		}
		p.Visit(key(i), o)
	}
	b.ResetTimer()
	now := t0
	for i := 0; i < b.N; i++ {
		now = now.Add(100 * time.Millisecond)
		p.Visit(key(rng.IntN(pages)), Observation{At: now, Changed: rng.IntN(4) == 0})
	}
}

// TestOptimalWeights: pages that matter more (revisit.weight: relevance) get more of the
// budget than pages with the same history that matter less, and the crawl adapter takes
// the weight from the record's relevance only when asked to.
func TestOptimalWeights(t *testing.T) {
	p := mustNew(t, "optimal", Options{Budget: 40.0 / 86400})
	weight := func(i int) float64 { return 1 + 3*float64(i%2) } // odd pages weigh 4
	for i := 0; i < 40; i++ {
		p.Visit(key(i), Observation{At: t0, First: true, Weight: weight(i)})
	}
	next := map[int]float64{} // hours
	for round := 1; round <= 3; round++ {
		at := t0.Add(time.Duration(round) * day)
		for i := 0; i < 40; i++ {
			next[i] = math.Inf(1) // never
			if n := p.Visit(key(i), Observation{At: at, Changed: i%4 < 2, Weight: weight(i)}); !n.IsZero() {
				next[i] = n.Sub(at).Hours()
			}
		}
	}
	// Pages 0 and 1 (and 2 and 3) have the same history; 1 and 3 weigh four times more.
	// (A light page that changes at every visit may be given up: +Inf.)
	if !(next[1] < next[0]) || !(next[3] < next[2]) {
		t.Errorf("intervals in hours, light/heavy: changing %.1f/%.1f, unchanging %.1f/%.1f; want the heavier page visited more often", next[0], next[1], next[2], next[3])
	}

	u, err := urlnorm.New(urlnorm.Options{}).Parse("http://example.test/a")
	if err != nil {
		t.Fatal(err)
	}
	rel := 0.8
	d := &crawl.Document{URL: u, Record: &store.Page{Status: 200, Fingerprint: "f", FetchedAt: t0, Relevance: &rel}, Fetch: &fetch.Result{}}
	for _, tc := range []struct {
		relevance bool
		want      float64
	}{{true, 0.8}, {false, 0}} {
		cp, err := NewCrawlPolicy("optimal", Options{Budget: 1}, tc.relevance)
		if err != nil {
			t.Fatal(err)
		}
		if o := cp.Observe(d, t0); o.Weight != tc.want || o.Status != OK || !o.First {
			t.Errorf("relevance weighting %v: observation %+v, want weight %v", tc.relevance, o, tc.want)
		}
	}
}
