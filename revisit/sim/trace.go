// Package sim owns sonda's freshness simulator: pages whose changes follow Poisson
// processes (or a recorded change history), a fetch budget, and every revisit policy run on
// the same change trace, scored by the time-averaged freshness and age of the copy, the
// share of visits that found a change (seed 004's metric) and the fraction of the oracle's
// freshness each reaches. The oracle is Cho & Garcia-Molina's optimal allocation computed
// with the true rates: the best any policy can do under the Poisson model.
//
// Time is in days throughout, budgets in visits per day.
package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Component is one class of a rate mixture: pages whose changes are Poisson with mean
// interval MeanInterval days, making up Share of the pages.
type Component struct {
	MeanInterval float64
	Share        float64
}

// Mixture is a distribution of change rates over pages.
type Mixture []Component

// DefaultMixture is shaped like seed 004's Brazilian web: the k = 4 clusters of mean
// interval 1, 3.1, 31.8 and 96.9 days, rounded from 6,085 / 5,148 / 6,259 / 38,844 of
// 56,466 pages to 11 / 9 / 11 / 69 %.
var DefaultMixture = Mixture{{1, 0.11}, {3.1, 0.09}, {31.8, 0.11}, {96.9, 0.69}}

// ParseMixture reads "interval:share,interval:share,...", e.g. "1:0.11,3.1:0.09"; shares
// are normalized to sum to one.
func ParseMixture(s string) (Mixture, error) {
	var m Mixture
	var total float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, ok := strings.Cut(part, ":")
		iv, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		sh, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if !ok || err1 != nil || err2 != nil || !(iv > 0) || !(sh > 0) || math.IsInf(iv, 0) || math.IsInf(sh, 0) {
			return nil, fmt.Errorf("sim: mixture component %q: want MEAN_INTERVAL_DAYS:SHARE with both positive, e.g. 3.1:0.09", part)
		}
		m = append(m, Component{iv, sh})
		total += sh
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("sim: empty mixture: give components like 1:0.11,96.9:0.69")
	}
	for i := range m {
		m[i].Share /= total
	}
	return m, nil
}

func (m Mixture) String() string {
	parts := make([]string, len(m))
	for i, c := range m {
		parts[i] = fmt.Sprintf("%g:%g", c.MeanInterval, c.Share)
	}
	return strings.Join(parts, ",")
}

// Page is one page of a trace.
type Page struct {
	Born    float64   // first day the page exists (and is first fetched)
	Changes []float64 // change times in (Born, Horizon], ascending
	// LastChange is when the page last changed before Born (−Inf: unknown); it is what a
	// Last-Modified header says at the first visit.
	LastChange float64
	// Rate is the true change rate per day (Poisson traces) or the maximum-likelihood rate
	// of a recorded history: what the oracle is given.
	Rate float64
	// LastModified says the page's server reports Last-Modified.
	LastModified bool
	// Section is the site section the page's URL is in (revisit.Features.Section), seen
	// at its first visit; "" gives the policy no features.
	Section string
}

// Trace is the change history of a set of pages over [0, Horizon] days.
type Trace struct {
	Pages   []Page
	Horizon float64
}

// Generate draws a Poisson trace: pages rates from the mixture (each component's pages
// share its rate), change times over the horizon, and for a share lmShare of pages a
// Last-Modified header. The same seed gives the same trace.
func Generate(pages int, horizon float64, mix Mixture, lmShare float64, seed uint64) Trace {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	tr := Trace{Horizon: horizon, Pages: make([]Page, pages)}
	// Component sizes by largest remainder, so small simulations keep the mixture's shape.
	counts := make([]int, len(mix))
	assigned := 0
	type rem struct {
		i int
		r float64
	}
	var rems []rem
	for i, c := range mix {
		x := c.Share * float64(pages)
		counts[i] = int(x)
		assigned += counts[i]
		rems = append(rems, rem{i, x - float64(counts[i])})
	}
	sort.Slice(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; assigned < pages; k++ {
		counts[rems[k%len(rems)].i]++
		assigned++
	}
	classes := make([]int, 0, pages)
	for i, n := range counts {
		for j := 0; j < n; j++ {
			classes = append(classes, i)
		}
	}
	rng.Shuffle(len(classes), func(a, b int) { classes[a], classes[b] = classes[b], classes[a] })
	for i := range tr.Pages {
		rate := 1 / mix[classes[i]].MeanInterval
		p := Page{Rate: rate, LastChange: -rng.ExpFloat64() / rate, LastModified: rng.Float64() < lmShare}
		for t := rng.ExpFloat64() / rate; t <= horizon; t += rng.ExpFloat64() / rate {
			p.Changes = append(p.Changes, t)
		}
		tr.Pages[i] = p
	}
	return tr
}

// Kinds gives every page a section name that says something about its change rate, as a
// URL's section does on real sites: with probability fidelity the name of its own
// component (sections[k] for mixture component k, the components as Generate drew them,
// told apart by rate), otherwise one of sections at random. mix must be the mixture the
// trace was generated from. Fidelity 0 makes sections unrelated to rates.
func (tr Trace) Kinds(mix Mixture, sections []string, fidelity float64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x4b1d))
	for i := range tr.Pages {
		p := &tr.Pages[i]
		k := 0
		for c := range mix {
			if math.Abs(1/mix[c].MeanInterval-p.Rate) < math.Abs(1/mix[k].MeanInterval-p.Rate) {
				k = c
			}
		}
		if rng.Float64() >= fidelity {
			k = rng.IntN(len(mix))
		}
		p.Section = sections[k%len(sections)]
	}
}

// Discover spreads the pages' first visits evenly over [0, over) days in a random order,
// as a crawl discovers them, instead of all at day 0: their changes before then are
// history (LastChange) rather than changes the crawl misses.
func (tr Trace) Discover(over float64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xd15c))
	order := rng.Perm(len(tr.Pages))
	for rank, i := range order {
		p := &tr.Pages[i]
		p.Born = over * float64(rank) / float64(len(tr.Pages))
		k := 0
		for k < len(p.Changes) && p.Changes[k] <= p.Born {
			p.LastChange = p.Changes[k]
			k++
		}
		p.Changes = p.Changes[k:]
	}
}

// WriteMonitoring writes what a monitor visiting every page every interval days would have
// recorded, in the recorded-trace format (see ReadTrace): the input `sonda train revisit`
// and seed 004's 100-day study use.
func (tr Trace) WriteMonitoring(w io.Writer, interval float64) error {
	bw := bufio.NewWriter(w)
	for i, p := range tr.Pages {
		fmt.Fprintf(bw, "page%d %g", i, p.Born)
		k := 0
		for t := p.Born + interval; t <= tr.Horizon+1e-9; t += interval {
			changed := 0
			for k < len(p.Changes) && p.Changes[k] <= t {
				changed = 1
				k++
			}
			fmt.Fprintf(bw, " %g %d", interval, changed)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Recorded is one page of a recorded trace: its id, the day of its first visit, and the
// visits after it.
type Recorded struct {
	ID     string
	First  float64
	Visits []RecordedVisit
}

// RecordedVisit is one visit of a recorded trace.
type RecordedVisit struct {
	Since   float64 // days since the previous visit
	Changed bool
}

// ReadRecorded parses a recorded trace: one line per URL, "id first-offset" followed by
// pairs "days-since-previous-visit changed(0/1)", separated by spaces, tabs or commas.
// Blank lines and lines starting with # are skipped. Errors name the line.
func ReadRecorded(r io.Reader) ([]Recorded, error) {
	var out []Recorded
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		if len(f) < 2 || len(f)%2 != 0 {
			return nil, fmt.Errorf("sim: trace line %d: want \"id first-offset\" and then pairs of days and 0/1, got %d fields", line, len(f))
		}
		first, err := strconv.ParseFloat(f[1], 64)
		if err != nil || first < 0 || math.IsInf(first, 0) {
			return nil, fmt.Errorf("sim: trace line %d: first offset %q is not a non-negative number of days", line, f[1])
		}
		rec := Recorded{ID: f[0], First: first}
		for k := 2; k < len(f); k += 2 {
			d, err := strconv.ParseFloat(f[k], 64)
			if err != nil || !(d > 0) || math.IsInf(d, 0) {
				return nil, fmt.Errorf("sim: trace line %d, pair %d: days since the previous visit %q must be a positive number", line, k/2, f[k])
			}
			var changed bool
			switch f[k+1] {
			case "0":
			case "1":
				changed = true
			default:
				return nil, fmt.Errorf("sim: trace line %d, pair %d: changed flag %q must be 0 or 1", line, k/2, f[k+1])
			}
			rec.Visits = append(rec.Visits, RecordedVisit{Since: d, Changed: changed})
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sim: read trace: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sim: the trace has no pages")
	}
	return out, nil
}

// FromRecorded turns a recorded history into a trace to replay. A recording only says
// whether a page changed between two visits, so each detected change is placed at a
// uniformly random moment of its interval (seeded), the page is born at its first visit,
// and the horizon is the last visit of any page. The oracle's rate is the page's
// maximum-likelihood rate over its whole record, bounded to one change per shortest
// interval when every visit found a change.
func FromRecorded(recs []Recorded, seed uint64) Trace {
	rng := rand.New(rand.NewPCG(seed, 0x7ace))
	tr := Trace{}
	for _, r := range recs {
		p := Page{Born: r.First, LastChange: math.Inf(-1)}
		t := r.First
		var intervals []interval
		shortest := math.Inf(1)
		for _, v := range r.Visits {
			if v.Changed {
				p.Changes = append(p.Changes, t+rng.Float64()*v.Since)
			}
			intervals = append(intervals, interval{v.Since, v.Changed})
			shortest = math.Min(shortest, v.Since)
			t += v.Since
		}
		p.Rate = mleRate(intervals, shortest)
		tr.Horizon = math.Max(tr.Horizon, t)
		tr.Pages = append(tr.Pages, p)
	}
	return tr
}
