// Package liveeval measures revisit policies live: the real crawler (frontier, fetcher,
// politeness, change detection, conditional requests, the fetch budget) crawls test webs
// whose pages change in real time (package changeweb), once per policy, side by side, at
// the same fetch budget and on the same change history, and freshness is computed from
// the test webs' own logs. Beside sonda's policies it runs an oracle that is given every
// page's true change rate (revisit.Oracle), so a policy is judged by the fraction of the
// attainable freshness it reaches on this web, and it runs the simulator on the same rates
// for the figure a perfect crawler would reach.
//
// sonda eval revisit is its command line.
package liveeval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/revisit/changeweb"
	"github.com/sonda-search/sonda/revisit/sim"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// Oracle is the policy name of the oracle.
const Oracle = "oracle"

// NoFeatures is the policy name of the default policy without its feature prior (every
// new page starts from the crawl's prior, whatever it looks like): the ablation that
// shows what the prior from page features adds.
const NoFeatures = "optimal-nofeatures"

// Window is a span of the crawl, from its start.
type Window struct{ From, To time.Duration }

func (w Window) String() string { return fmt.Sprintf("%v–%v", w.From, w.To) }

// Config is one evaluation.
type Config struct {
	Mixture []changeweb.Component // the pages' change rates
	// Kinds make the pages' URLs and text follow their rates (nil: all pages look alike).
	Kinds    *changeweb.Kinds
	Hosts    int           // hosts of the test web
	Pages    int           // changing pages in all (spread over the hosts)
	Budget   float64       // requests per second, shared by discovery and revisits
	Duration time.Duration // of each crawl
	// Politeness is the delay between two requests to one host (0: none); the crawl's
	// per-host cap on revisits follows from it as in a user's crawl.
	Politeness time.Duration
	// Policies to run: revisit.PolicyNames, "oracle" and "optimal-nofeatures".
	Policies []string
	// Revisit is the revisit section every crawl starts from (the defaults when zero:
	// config.Default().Revisit); Policy is set per run.
	Revisit *config.Revisit
	Windows []Window      // freshness is reported over each
	Step    time.Duration // of the freshness-over-time series (default Duration/60)
	Seed    uint64
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any) `json:"-"`
}

// Run is one policy's crawl.
type Run struct {
	Policy    string
	Freshness float64   // over the whole crawl
	Windows   []float64 // over Config.Windows
	// Components are, for each of Config.Windows, the freshness and fetches of each
	// mixture component's pages (live crawls only): where the fetches went.
	Components [][]changeweb.ComponentReport `json:",omitempty"`
	Series     []float64                     // over consecutive Steps
	Requests   float64                       // requests per second achieved (pages and robots.txt)
	Fetches    int                           // responses of the changing pages
	Changed    float64                       // share of those that found a change
	Reason     string                        // why the crawl ended
	// Discovered is when every changing page had been fetched once, from the crawl's
	// start (live crawls only; 0: some page never was): until then the budget is shared
	// with discovery, and a page found late is stale all the while.
	Discovered time.Duration `json:",omitempty"`
}

// Result is an evaluation.
type Result struct {
	Config Config
	Runs   []Run
	// Sim is the simulator's figure for the same rates and budget (every page known from
	// the start, fetched only once due, revisits planned for the crawl's share of the
	// budget: sim.Config.Slots), by policy, over the same windows.
	Sim []Run
}

// Evaluate runs every policy's crawl at once and scores them.
func Evaluate(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	if cfg.Step <= 0 {
		cfg.Step = max(time.Second, cfg.Duration/60)
	}
	runs := make([]*liveRun, len(cfg.Policies))
	for i, name := range cfg.Policies {
		r, err := newLiveRun(cfg, name)
		if err != nil {
			for _, r := range runs[:i] {
				r.close()
			}
			return Result{}, err
		}
		runs[i] = r
	}
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	start := time.Now()
	for _, r := range runs {
		r.set.Start(start)
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.crawl(ctx)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg}
	var errs []error
	for _, r := range runs {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("%s crawl: %w", r.policy, r.err))
			continue
		}
		res.Runs = append(res.Runs, r.score(cfg, start))
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	s, err := simulate(cfg)
	if err != nil {
		return res, err
	}
	res.Sim = s
	return res, nil
}

func (cfg Config) check() error {
	switch {
	case len(cfg.Mixture) == 0:
		return errors.New("liveeval: no mixture")
	case cfg.Hosts <= 0 || cfg.Pages < cfg.Hosts:
		return fmt.Errorf("liveeval: want at least one host and a page per host (got %d hosts, %d pages)", cfg.Hosts, cfg.Pages)
	case !(cfg.Budget > 0) || math.IsInf(cfg.Budget, 0):
		return fmt.Errorf("liveeval: the budget must be a positive number of requests per second (got %v)", cfg.Budget)
	case cfg.Duration <= 0:
		return errors.New("liveeval: the duration must be positive")
	case len(cfg.Policies) == 0:
		return errors.New("liveeval: no policies")
	}
	for _, w := range cfg.Windows {
		if w.From < 0 || w.To <= w.From || w.To > cfg.Duration {
			return fmt.Errorf("liveeval: window %v is not within the %v crawl", w, cfg.Duration)
		}
	}
	for _, p := range cfg.Policies {
		if p == Oracle || p == NoFeatures || p == "none" {
			continue
		}
		if _, err := revisit.New(p, revisit.Options{Budget: 1}); err != nil {
			return err
		}
	}
	return nil
}

type liveRun struct {
	policy string
	set    *changeweb.Set
	web    *testweb.Web
	cfg    config.Config
	data   string
	sum    crawl.Summary
	err    error
}

func newLiveRun(ec Config, policy string) (*liveRun, error) {
	per := ec.Pages / ec.Hosts
	set := changeweb.New(changeweb.Config{PagesPerHost: per, Mixture: ec.Mixture, Seed: ec.Seed, Kinds: ec.Kinds})
	web := testweb.New(testweb.Config{Seed: int64(ec.Seed) + 1, Hosts: ec.Hosts, PagesPerHost: 1, Disable: testweb.AllFeatures, Extra: set.Extra})
	if _, err := web.Start(); err != nil {
		return nil, err
	}
	data, err := os.MkdirTemp("", "sonda-eval-revisit-")
	if err != nil {
		web.Close()
		return nil, err
	}
	cfg := web.CrawlConfig(config.Default())
	cfg.Data = data
	cfg.Log.Level = "error"
	cfg.WARC.Enabled = false
	cfg.Crawl.Duration = ec.Duration
	cfg.Crawl.Budget = config.Rate(ec.Budget)
	cfg.Politeness.MinDelay = ec.Politeness
	if ec.Politeness == 0 {
		cfg.Politeness.DelayFactor = 0
	}
	if ec.Revisit != nil {
		cfg.Revisit = *ec.Revisit
	}
	cfg.Revisit.Policy = policy
	switch policy {
	case Oracle:
		cfg.Revisit.Policy = "uniform" // validated as a named policy; the oracle replaces it
	case NoFeatures:
		cfg.Revisit.Policy = revisit.DefaultPolicy
	}
	return &liveRun{policy: policy, set: set, web: web, cfg: cfg, data: data}, nil
}

func (r *liveRun) close() {
	r.web.Close()
	os.RemoveAll(r.data)
}

func (r *liveRun) crawl(ctx context.Context) {
	var p *revisit.CrawlPolicy
	var err error
	switch r.policy {
	case Oracle:
		p, err = revisit.FromConfigWith(r.cfg, Oracle, r.oracle)
	case NoFeatures:
		p, err = revisit.FromConfigWith(r.cfg, NoFeatures, func(o revisit.Options) (revisit.Policy, error) {
			o.Optimal.NoFeaturePrior = true
			return revisit.NewForCrawl(revisit.DefaultPolicy, o)
		})
	default:
		p, err = revisit.FromConfig(r.cfg)
	}
	if err != nil {
		r.err = err
		return
	}
	var opts []crawl.Option
	if p != nil {
		opts = append(opts, crawl.WithRevisitPolicy(p))
	}
	c, err := crawl.New(r.cfg, opts...)
	if err != nil {
		r.err = err
		return
	}
	defer c.Close()
	r.sum, r.err = c.Run(ctx, nil, nil)
}

// oracle builds the oracle for this run's pages from the test web's true rates.
func (r *liveRun) oracle(o revisit.Options) (revisit.Policy, error) {
	norm := urlnorm.New(urlnorm.DefaultOptions())
	var pages []revisit.OraclePage
	for _, s := range r.set.URLs() {
		u, err := norm.Parse(s)
		if err != nil {
			return nil, err
		}
		pages = append(pages, revisit.OraclePage{Key: revisit.Key(u.Key()), Host: u.HostKey(), Rate: r.set.Rate(s)})
	}
	return revisit.NewOracle(pages, o)
}

func (r *liveRun) score(ec Config, start time.Time) Run {
	end := start.Add(ec.Duration)
	whole := r.set.Freshness(start, end)
	run := Run{Policy: r.policy, Freshness: whole.Freshness, Fetches: whole.Fetches, Changed: whole.Changed, Reason: r.sum.Reason}
	if at, ok := r.set.AllFetched(); ok {
		run.Discovered = max(at.Sub(start), time.Millisecond)
	}
	if s := r.sum.Elapsed.Seconds(); s > 0 {
		run.Requests = float64(r.sum.Pages+r.sum.RobotsTxt) / s
	}
	for _, w := range ec.Windows {
		rep := r.set.Freshness(start.Add(w.From), start.Add(w.To))
		run.Windows = append(run.Windows, rep.Freshness)
		run.Components = append(run.Components, rep.Components)
	}
	for t := time.Duration(0); t < ec.Duration; t += ec.Step {
		run.Series = append(run.Series, r.set.Freshness(start.Add(t), start.Add(min(t+ec.Step, ec.Duration))).Freshness)
	}
	return run
}

// simulate runs the simulator on the evaluation's rates, in seconds: pages that never
// change get a rate of once in ten thousand crawls' time, the same share of pages as on
// the test web sends Last-Modified, and the crawler fetches at the live budget, due pages
// only, while the policies plan for the share of it a crawl's revisits get once discovery
// is over (revisit.Headroom): every page is known from the start, and pages come late
// when many are due at once, as in the live crawls.
func simulate(ec Config) ([]Run, error) {
	horizon := ec.Duration.Seconds()
	var mix sim.Mixture
	for _, c := range ec.Mixture {
		iv := c.MeanInterval.Seconds()
		if iv <= 0 {
			iv = 1e4 * horizon
		}
		mix = append(mix, sim.Component{MeanInterval: iv, Share: c.Share})
	}
	var total float64
	for _, c := range mix {
		total += c.Share
	}
	for i := range mix {
		mix[i].Share /= total
	}
	per := ec.Pages / ec.Hosts
	tr := sim.Generate(per*ec.Hosts, horizon, mix, changeweb.DefaultValidators, ec.Seed)
	if k := ec.Kinds; k != nil {
		// The URL sections only (the simulator's pages have no text): the kind each
		// component's pages get, kept with the fidelity the test web's pages have.
		sections := make([]string, len(ec.Mixture))
		for c := range ec.Mixture {
			if sections[c] = k.KindOf(ec.Mixture, c, ec.Seed); sections[c] == "" { // random
				sections[c] = changeweb.KindNames[c%len(changeweb.KindNames)]
			}
		}
		tr.Kinds(mix, sections, k.Kept(), ec.Seed)
	}
	var names []string
	noFeatures := false
	for _, p := range ec.Policies {
		switch p {
		case "none":
		case NoFeatures:
			noFeatures = true
		default:
			names = append(names, p)
		}
	}
	samples := int(math.Ceil(ec.Duration.Seconds() / ec.Step.Seconds()))
	opts := revisit.Options{}
	if ec.Revisit != nil {
		opts.MinInterval, opts.MaxInterval = ec.Revisit.MinInterval, ec.Revisit.MaxInterval
	}
	sc := sim.Config{Budget: revisit.Headroom * ec.Budget, Slots: ec.Budget, Policies: names, Samples: samples, Seed: ec.Seed, Options: opts, Unit: time.Second}
	res, err := sim.Run(sc, tr)
	if err != nil {
		return nil, fmt.Errorf("liveeval: simulation: %w", err)
	}
	if noFeatures {
		opts.Optimal.NoFeaturePrior = true
		sc.Policies, sc.Options = []string{revisit.DefaultPolicy}, opts
		nf, err := sim.Run(sc, tr)
		if err != nil {
			return nil, fmt.Errorf("liveeval: simulation: %w", err)
		}
		nf[0].Policy = NoFeatures
		res = append(res, nf[0])
	}
	out := make([]Run, len(res))
	for i, r := range res {
		out[i] = Run{Policy: r.Policy, Freshness: r.Freshness, Series: r.Series, Fetches: r.Visits, Changed: r.ChangeShare}
		for _, w := range ec.Windows {
			out[i].Windows = append(out[i].Windows, seriesMean(r.Series, horizon, w.From.Seconds(), w.To.Seconds()))
		}
	}
	return out, nil
}

// seriesMean is the mean of a series of equal slices of [0, horizon] over [a, b).
func seriesMean(s []float64, horizon, a, b float64) float64 {
	width := horizon / float64(len(s))
	var sum, n float64
	for k, f := range s {
		mid := (float64(k) + 0.5) * width
		if mid >= a && mid < b {
			sum += f
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}
