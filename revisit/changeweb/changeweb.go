// Package changeweb adds pages that change in real time to the synthetic test web (package
// testweb, through Config.Extra and Page.Handler): each page's text changes as a Poisson
// process with its own rate (seconds to minutes), every change and every response is
// logged, and Freshness computes, from those logs alone, how fresh a crawler's copies were
// over a period — the ground truth for incremental crawling.
//
// Pages also carry what makes change detection hard in practice: a "generated at" time,
// a view counter and a session id that differ on every response without the page having
// changed, site navigation and a side box whose entries differ on every response too,
// and (on a share of pages) ETag and Last-Modified validators that answer conditional
// requests with 304.
//
// Two Sets built from equal Configs and started at the same instant change at the same
// moments, so two crawlers can be compared on one change history.
package changeweb

import (
	"context"
	"fmt"
	"hash/fnv"
	"html"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// Component is a class of pages: Poisson changes with mean interval MeanInterval (0:
// the pages never change), making up Share of the pages.
type Component struct {
	MeanInterval time.Duration
	Share        float64
}

// Config describes the changing pages.
type Config struct {
	// PagesPerHost is how many changing pages each host gets (default 10).
	PagesPerHost int
	// Mixture gives the pages' change rates (default: seed 004's shape, 1 : 3.1 : 31.8 :
	// 96.9 scaled to 5 s : 15.5 s : 159 s : 485 s, with shares 11/9/11/69 %).
	Mixture []Component
	// Validators is the share of pages that send ETag and Last-Modified and answer
	// conditional requests with 304 (default DefaultValidators; negative: none).
	Validators float64
	// Seed drives the rates, the change times and the text.
	Seed uint64
	// Kinds, when set, make pages look like what they are, as on real sites: a page's URL
	// section and content follow its change rate (a news story changes often, an about
	// page rarely), with noise. Without it every page looks alike (/live/page-N.html).
	Kinds *Kinds
}

// Kinds say how a page's look follows its change rate. The kinds, from the most often
// changing to the least, are KindNames: a page of kind news lives under /news/, and news
// and blog pages show the date they were last updated in their text. Which kind goes with
// which mixture component is Mapping's; each page then keeps that kind with probability
// Fidelity and otherwise gets one at random, and (independently, with the same
// probability) shows a date when the kind it would have by its rate shows one: two noisy
// signals, as a URL and a page's content are.
type Kinds struct {
	// Mapping is "natural" (the fastest components are news, then blog, docs, about),
	// "shuffled" (a permutation of that chosen by the Seed, never the natural one: for
	// measuring a prior on a feature→rate mapping it was not tuned on) or "random" (kinds
	// unrelated to rates, whatever Fidelity says).
	Mapping string
	// Fidelity is the share of pages whose kind follows their rate (0 defaults to 0.8;
	// seed 004's tree put 93 % of the daily pages in the daily class).
	Fidelity float64
}

// KindNames are the page kinds, from the most often changing to the least.
var KindNames = []string{"news", "blog", "docs", "about"}

// ParseKinds reads the --page-kinds flag: none, natural, shuffled or random, optionally
// followed by :FIDELITY (natural:0.8).
func ParseKinds(s string) (*Kinds, error) {
	name, fid, hasFid := strings.Cut(strings.TrimSpace(s), ":")
	k := &Kinds{Mapping: name}
	switch name {
	case "none", "":
		if hasFid {
			return nil, fmt.Errorf("changeweb: page kinds %q: none takes no fidelity", s)
		}
		return nil, nil
	case "natural", "shuffled", "random":
	default:
		return nil, fmt.Errorf("changeweb: page kinds %q: want none, natural, shuffled or random, optionally with :FIDELITY (natural:0.8)", s)
	}
	if hasFid {
		f, err := strconv.ParseFloat(fid, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return nil, fmt.Errorf("changeweb: page kinds %q: the fidelity must be a number in (0, 1]", s)
		}
		k.Fidelity = f
	}
	return k, nil
}

// KindOf is the kind the mapping gives mixture component c's pages before noise ("" for
// the random mapping, which gives none).
func (k *Kinds) KindOf(mix []Component, c int, seed uint64) string {
	if k.Mapping == "random" {
		return ""
	}
	return KindNames[k.kindOf(mix, c, seed)]
}

// Kept is the share of pages that keep their component's kind: Fidelity with its default,
// 0 for the random mapping.
func (k *Kinds) Kept() float64 {
	switch {
	case k.Mapping == "random":
		return 0
	case k.Fidelity == 0:
		return 0.8
	}
	return k.Fidelity
}

// kindOf maps mixture component c to a kind index under the mapping (without noise).
func (k *Kinds) kindOf(mix []Component, c int, seed uint64) int {
	// The component's rank by rate, fastest first, never last.
	rank := 0
	for j, o := range mix {
		if j != c && faster(o, mix[c]) {
			rank++
		}
	}
	kind := rank * len(KindNames) / len(mix)
	if k.Mapping == "shuffled" {
		kind = (kind + 1 + int(seed%uint64(len(KindNames)-1))) % len(KindNames)
	}
	return kind
}

func faster(a, b Component) bool {
	switch {
	case a.MeanInterval == 0:
		return false
	case b.MeanInterval == 0:
		return true
	}
	return a.MeanInterval < b.MeanInterval
}

// draw picks a page's kind from its component: the mapping's with probability fidelity.
func (k *Kinds) draw(rng *rand.Rand, mix []Component, c int, seed uint64) int {
	if rng.Float64() >= k.Kept() {
		return rng.IntN(len(KindNames))
	}
	return k.kindOf(mix, c, seed)
}

// DefaultValidators is the share of pages that send validators by default.
const DefaultValidators = 0.5

// DefaultMixture is seed 004's class shape, 1 day scaled to 5 seconds.
var DefaultMixture = []Component{
	{5 * time.Second, 0.11}, {15500 * time.Millisecond, 0.09}, {159 * time.Second, 0.11}, {485 * time.Second, 0.69},
}

// Set is the changing pages of one test web.
type Set struct {
	cfg   Config
	mu    sync.Mutex
	start time.Time
	pages map[string]*page // by URL
	order []*page
}

type page struct {
	url        string
	rate       float64 // changes per second
	comp       int     // index of its component in the mixture
	validators bool
	kind       int           // index in KindNames (with Config.Kinds)
	dated      bool          // the text shows when the page was last updated
	rng        *rand.Rand    // draws change times, in order
	before     time.Duration // the page's last change before Start was this long before it
	changes    []time.Time   // change times generated so far (up to horizon)
	horizon    time.Time     // changes are known up to here
	served     []Serve
}

// Serve is one response of a changing page: when, which version, which status.
type Serve struct {
	At      time.Time
	Version int
	Status  int
}

// New makes the changing pages for cfg. Add them to a test web with
// testweb.Config{Extra: set.Extra}, then call Start when the crawl begins.
func New(cfg Config) *Set {
	if cfg.PagesPerHost <= 0 {
		cfg.PagesPerHost = 10
	}
	if len(cfg.Mixture) == 0 {
		cfg.Mixture = DefaultMixture
	}
	if cfg.Validators == 0 {
		cfg.Validators = DefaultValidators
	}
	return &Set{cfg: cfg, pages: map[string]*page{}}
}

// Extra is a testweb.Config.Extra function: it adds cfg.PagesPerHost changing pages to
// every host, linked from the host's home page.
func (s *Set) Extra(host string, _ *rand.Rand) []testweb.Page {
	hostHash := hashString(host)
	rng := rand.New(rand.NewPCG(s.cfg.Seed, hostHash))
	var total float64
	for _, c := range s.cfg.Mixture {
		total += c.Share
	}
	var out []testweb.Page
	for i := 0; i < s.cfg.PagesPerHost; i++ {
		// Pick the component by the page's position in a stratified draw, so small webs
		// keep the mixture's shape.
		x := (float64(i) + rng.Float64()) / float64(s.cfg.PagesPerHost) * total
		ci := len(s.cfg.Mixture) - 1
		for j, c := range s.cfg.Mixture {
			if x < c.Share {
				ci = j
				break
			}
			x -= c.Share
		}
		comp := s.cfg.Mixture[ci]
		path := fmt.Sprintf("/live/page-%d.html", i)
		title := fmt.Sprintf("Live page %d of %s", i, host)
		p := &page{
			comp:       ci,
			validators: rng.Float64() < s.cfg.Validators,
			rng:        rand.New(rand.NewPCG(s.cfg.Seed^0xc4a7, hostHash+uint64(i))),
		}
		if k := s.cfg.Kinds; k != nil {
			krng := rand.New(rand.NewPCG(s.cfg.Seed^0x6b1d, hostHash+uint64(i)))
			p.kind = k.draw(krng, s.cfg.Mixture, ci, s.cfg.Seed)
			p.dated = k.draw(krng, s.cfg.Mixture, ci, s.cfg.Seed) <= 1 // news and blog show dates
			name := KindNames[p.kind]
			path = fmt.Sprintf("/%s/%s-%d.html", name, name, i)
			title = fmt.Sprintf("%s%s %d of %s", strings.ToUpper(name[:1]), name[1:], i, host)
		}
		p.url = "http://" + host + path
		// The page existed before the crawl: its last change came a random while (its
		// age, exponential with its rate) before Start, as on the web a crawler finds; a
		// page that never changes is a year old.
		p.before = neverAge
		if comp.MeanInterval > 0 {
			p.rate = 1 / comp.MeanInterval.Seconds()
			p.before = time.Duration(rng.ExpFloat64() / p.rate * float64(time.Second))
		} else {
			rng.ExpFloat64() // the same draws as a changing page: the other pages keep theirs
		}
		s.mu.Lock()
		s.pages[p.url] = p
		s.order = append(s.order, p)
		s.mu.Unlock()
		out = append(out, testweb.Page{Path: path, Title: title, Handler: s.handler(p)})
	}
	return out
}

// Start sets the moment changes begin (the same for every page). Calling it again
// restarts the change history. Pages answer with version 0 before Start.
func (s *Set) Start(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = at
	for _, p := range s.order {
		p.changes, p.served, p.horizon = nil, nil, at
	}
}

// neverAge is the age of a page that never changes.
const neverAge = 365 * 24 * time.Hour

// advance generates p's change times up to t. Callers hold s.mu.
func (s *Set) advance(p *page, t time.Time) {
	if s.start.IsZero() || p.rate == 0 {
		return
	}
	for p.horizon.Before(t) {
		gap := time.Duration(p.rng.ExpFloat64() / p.rate * float64(time.Second))
		p.horizon = p.horizon.Add(gap)
		p.changes = append(p.changes, p.horizon)
	}
}

// version is the number of changes up to t. Callers hold s.mu and have advanced p to t.
func (p *page) version(t time.Time) int {
	return sort.Search(len(p.changes), func(i int) bool { return p.changes[i].After(t) })
}

func (s *Set) handler(p *page) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		now := time.Now()
		s.mu.Lock()
		s.advance(p, now)
		v := p.version(now)
		lastChange := s.start.Add(-p.before)
		if v > 0 {
			lastChange = p.changes[v-1]
		}
		status := http.StatusOK
		etag := `"v` + strconv.Itoa(v) + `"`
		if p.validators && !s.start.IsZero() {
			rw.Header().Set("ETag", etag)
			rw.Header().Set("Last-Modified", lastChange.UTC().Format(http.TimeFormat))
			if inm := r.Header.Get("If-None-Match"); inm != "" {
				if inm == etag {
					status = http.StatusNotModified
				}
			} else if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !lastChange.Truncate(time.Second).After(ims) {
				status = http.StatusNotModified
			}
		}
		if r.Method != http.MethodHead {
			p.served = append(p.served, Serve{At: now, Version: v, Status: status})
		}
		s.mu.Unlock()
		if status == http.StatusNotModified {
			rw.WriteHeader(status)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Header().Set("Cache-Control", "no-cache")
		rw.Write(render(p, v, now, lastChange))
	})
}

// words is the vocabulary of the pages' text.
var words = strings.Fields(`river water basin rain flood drought reservoir dam gauge station level
flow season storm report bulletin forecast region valley coast harbour bridge road farm crop
harvest market price school clinic council budget plan survey census map border trail forest`)

// render writes version v of p: fixed text, one paragraph that is version v's, and the site
// chrome and fragments that change on every response without the page changing.
func render(p *page, v int, now, lastChange time.Time) []byte {
	rng := rand.New(rand.NewPCG(uint64(len(p.url))*7919+hashString(p.url), uint64(v)))
	para := func(r *rand.Rand, n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	fixed := rand.New(rand.NewPCG(hashString(p.url), 1))
	site := rand.New(rand.NewPCG(uint64(now.UnixNano()), 2)) // the rest of the site, which moves on
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title></head><body>\n", html.EscapeString(p.url))
	fmt.Fprintf(&b, "<header><nav>Home · Trending: %s</nav></header>\n", para(site, 3))
	if p.dated {
		fmt.Fprintf(&b, "<p class=\"dateline\">Updated %s</p>\n", lastChange.UTC().Format("2 January 2006, 15:04"))
	}
	fmt.Fprintf(&b, "<p>%s.</p>\n", para(fixed, 40))
	fmt.Fprintf(&b, "<p>Latest: %s.</p>\n", para(rng, 30))
	fmt.Fprintf(&b, "<aside><p>Elsewhere on the site: %s.</p></aside>\n", para(site, 8))
	fmt.Fprintf(&b, "<footer><p>Page generated at %s · %s views · session %016x%08x</p></footer>\n",
		now.UTC().Format("15:04:05"), formatThousands(1000+int(now.UnixNano()/1e6%1000000)), uint64(now.UnixNano()), uint32(now.Nanosecond()))
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func formatThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Change is one logged change of a page.
type Change struct {
	URL string
	At  time.Time
}

// Changes lists every change of every page up to t, in time order: the test web's own
// change log.
func (s *Set) Changes(t time.Time) []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Change
	for _, p := range s.order {
		s.advance(p, t)
		for _, c := range p.changes {
			if !c.After(t) {
				out = append(out, Change{URL: p.url, At: c})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

// AllFetched is when the last changing page was first fetched: from then on every page has
// a copy, and freshness measures revisiting rather than discovery. ok is false while some
// page has never been fetched.
func (s *Set) AllFetched() (at time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.order {
		if len(p.served) == 0 {
			return time.Time{}, false
		}
		if p.served[0].At.After(at) {
			at = p.served[0].At
		}
	}
	return at, true
}

// Tally counts a crawler's progress on the changing pages, from the response log: tests
// bound a crawl by what it has done rather than by wall-clock time, which a busy machine
// stretches.
type Tally struct {
	Responses   int // responses of changing pages (200 and 304)
	Fetched     int // pages fetched at least once
	Revisited   int // pages fetched at least twice
	Bodies      int // responses with a body (200) after a page's first
	NotModified int // 304 answers
}

// Tally returns the progress since a moment: only responses from then on count (a page's
// first response after since is its first fetch), so a second crawl of the same web,
// started after since, is counted alone.
func (s *Set) Tally(since time.Time) Tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t Tally
	for _, p := range s.order {
		n := 0
		for _, sv := range p.served {
			if sv.At.Before(since) {
				continue
			}
			switch {
			case sv.Status == http.StatusNotModified:
				t.NotModified++
			case n > 0 && sv.Status == http.StatusOK:
				t.Bodies++
			}
			n++
		}
		t.Responses += n
		if n > 0 {
			t.Fetched++
		}
		if n > 1 {
			t.Revisited++
		}
	}
	return t
}

// Await returns when done(s.Tally(since)) holds, with true, or when ctx ends, with false.
func (s *Set) Await(ctx context.Context, since time.Time, done func(Tally) bool) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !done(s.Tally(since)) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// URLs lists the changing pages.
func (s *Set) URLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.order))
	for i, p := range s.order {
		out[i] = p.url
	}
	return out
}

// Rate is a page's change rate per second (0 for a URL that is not a changing page, or a
// page that never changes).
func (s *Set) Rate(url string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pages[url]; p != nil {
		return p.rate
	}
	return 0
}

// Mixture is the set's rate mixture (its default when the Config gave none).
func (s *Set) Mixture() []Component { return s.cfg.Mixture }

// Has says url is one of the set's pages (changing or not).
func (s *Set) Has(url string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pages[url] != nil
}

// ParseMixture reads a mixture written "INTERVAL:SHARE,...", intervals as Go durations
// or "never", e.g. "5s:0.25,1m:0.25,10m:0.25,never:0.25"; shares need not sum to one.
func ParseMixture(s string) ([]Component, error) {
	var m []Component
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, ok := strings.Cut(part, ":")
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		var iv time.Duration
		var err error
		if a != "never" {
			iv, err = time.ParseDuration(a)
			if err == nil && iv <= 0 {
				err = fmt.Errorf("not positive")
			}
		}
		sh, err2 := strconv.ParseFloat(b, 64)
		if !ok || err != nil || err2 != nil || !(sh > 0) || math.IsInf(sh, 0) {
			return nil, fmt.Errorf("changeweb: mixture component %q: want MEAN_INTERVAL:SHARE, the interval a duration (5s, 10m) or never and the share positive, e.g. 1m:0.25", part)
		}
		m = append(m, Component{MeanInterval: iv, Share: sh})
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("changeweb: empty mixture: give components like 5s:0.25,1m:0.25,10m:0.25,never:0.25")
	}
	return m, nil
}

// FormatMixture writes m as ParseMixture reads it.
func FormatMixture(m []Component) string {
	parts := make([]string, len(m))
	for i, c := range m {
		iv := "never"
		if c.MeanInterval > 0 {
			iv = c.MeanInterval.String()
		}
		parts[i] = fmt.Sprintf("%s:%g", iv, c.Share)
	}
	return strings.Join(parts, ",")
}

// Report is the freshness of a crawler's copies over a period, from the logs.
type Report struct {
	Freshness float64 // time-averaged share of pages whose latest response had the current version
	Age       time.Duration
	Fetches   int     // responses (200 and 304) of changing pages in the period
	Changed   float64 // share of those fetches that found a newer version than the one before
	NotMod    int     // 304 answers
	Changes   int     // changes in the period
	// Components break the period down by mixture component (in the Config's order): where
	// a crawler's fetches went, against where the freshness was to be had.
	Components []ComponentReport
}

// ComponentReport is one mixture component's part of a Report.
type ComponentReport struct {
	MeanInterval time.Duration // the component's (0: its pages never change)
	Pages        int
	Freshness    float64 // time-averaged over the component's pages
	Fetches      int     // responses of its pages in the period
	// Validated is how many of those fetches were of pages that send Last-Modified and
	// ETag.
	Validated int
}

// Freshness computes how fresh the crawler's copies of the changing pages were over
// [from, to]: a page's copy is the version of its latest response, and it is fresh while
// that is the page's current version. A page not fetched yet counts as stale. Age is the
// time since the first change the copy missed, averaged the same way.
func (s *Set) Freshness(from, to time.Time) Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rep Report
	var fresh, age, exposure float64
	rep.Components = make([]ComponentReport, len(s.cfg.Mixture))
	for i, c := range s.cfg.Mixture {
		rep.Components[i].MeanInterval = c.MeanInterval
	}
	for _, p := range s.order {
		s.advance(p, to)
		span := to.Sub(from).Seconds()
		if span <= 0 {
			continue
		}
		exposure += span
		cr := &ComponentReport{} // a page of no component (a Set made by hand) counts in none
		if p.comp < len(rep.Components) {
			cr = &rep.Components[p.comp]
		}
		cr.Pages++
		pageFresh := fresh
		copyVer, copySince := -1, from // version held, and since when
		prevVer := -1
		for _, sv := range p.served {
			if sv.At.After(to) {
				break
			}
			if !sv.At.Before(from) {
				rep.Fetches++
				cr.Fetches++
				if p.validators {
					cr.Validated++
				}
				if sv.Status == http.StatusNotModified {
					rep.NotMod++
				}
				if prevVer >= 0 && sv.Version > prevVer {
					rep.Changed++
				}
				f, a := p.credit(copyVer, copySince, sv.At, from)
				fresh += f
				age += a
				copySince = sv.At
			}
			copyVer, prevVer = sv.Version, sv.Version
		}
		f, a := p.credit(copyVer, copySince, to, from)
		fresh += f
		age += a
		cr.Freshness += (fresh - pageFresh) / span // the page's share of the period, summed
		for _, c := range p.changes {
			if c.After(from) && !c.After(to) {
				rep.Changes++
			}
		}
	}
	if exposure > 0 {
		rep.Freshness = fresh / exposure
		rep.Age = time.Duration(age / exposure * float64(time.Second))
	}
	if rep.Fetches > 0 {
		rep.Changed /= float64(rep.Fetches)
	}
	for i := range rep.Components {
		if cr := &rep.Components[i]; cr.Pages > 0 {
			cr.Freshness /= float64(cr.Pages)
		}
	}
	return rep
}

// credit returns the fresh seconds and the age integral of holding version v over [a, b):
// fresh until the first change the copy misses (changes[v]), stale after it, with age
// counted from that change. v < 0 means nothing fetched yet: stale, age counted from
// from. Callers hold the lock and have advanced p past b.
func (p *page) credit(v int, a, b, from time.Time) (fresh, age float64) {
	switch {
	case !b.After(a):
		return 0, 0
	case v < 0:
		return 0, ageIntegral(from, a, b)
	case v >= len(p.changes):
		return b.Sub(a).Seconds(), 0
	}
	missed := p.changes[v]
	switch {
	case !missed.After(a):
		return 0, ageIntegral(missed, a, b)
	case !missed.Before(b):
		return b.Sub(a).Seconds(), 0
	}
	return missed.Sub(a).Seconds(), ageIntegral(missed, missed, b)
}

// ageIntegral is ∫ (s − c) ds over [a, b).
func ageIntegral(c, a, b time.Time) float64 {
	x, y := a.Sub(c).Seconds(), b.Sub(c).Seconds()
	return math.Max(0, (y*y-x*x)/2)
}
