// Package crawl owns the crawl loop: it wires the frontier, robots.txt, the fetcher, the
// WARC writer, the parser, analyzers and the store into workers that take URLs from the
// frontier, fetch them politely, record what happened and queue what they discovered.
//
// A Crawler works on one data directory:
//
//	DATA/state/        Pebble: frontier, seen set, page records, visit history (package store)
//	DATA/warc/         WARC 1.1 captures of every request and response (package warc)
//	DATA/status.json   a snapshot of the crawl's progress, rewritten every few seconds
//
// Politeness is enforced in two places that never disagree: the frontier serves a host at
// most politeness.per-host URLs at a time and never before the host's rest time, and the
// worker sets that rest time after each request to the largest of robots.txt crawl-delay,
// politeness.min-delay and delay-factor times the response time (Mercator's rule), or the
// server's Retry-After. robots.txt is fetched before a host's first page, through the same
// politeness gate, and refetched after its cache time.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/scope"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/warc"
)

// Crawler runs crawls on one data directory. Create it with New, run it with Run, and
// Close it when done.
type Crawler struct {
	cfg      config.Config
	log      *slog.Logger
	db       *store.DB
	frontier *frontier.Frontier
	fetcher  *fetch.Fetcher
	pages    PageFetcher  // nil: pages are fetched by fetcher
	large    *largeBodies // fetch.large-body-memory; nil: no bound
	norm     *urlnorm.Normalizer
	scope    atomic.Pointer[scope.Scope]
	router   Router // cluster mode: discovered URLs go to their owner
	gate     Gate   // cluster mode: may this node fetch from a host now
	variants scope.VariantCounter
	robots   *robotsCache
	warc     *warc.Writer

	// freeSpace measures the data directory's file system (a variable for tests).
	freeSpace func(dir string) (uint64, error)
	// storageErr is the first failure to store what was fetched (see failStorage).
	storageErr atomic.Pointer[error]
	scorer     LinkScorer
	revisit    RevisitPolicy
	analyze    []Analyzer
	sinks      []Sink
	journals   []JournaledSink        // the sinks that keep a durable queue (Journal)
	backlogs   []Backlogger           // the sinks that work behind the crawl
	pacer      *pacer                 // crawl.budget; nil when unlimited
	paces      hostPaces              // what politeness allows each host, with a budget
	textNorm   fingerprint.Normalizer // change detection (revisit.ignore)
	md5Print   bool                   // revisit.fingerprint: md5
	filters    []LinkFilter
	requests   []RequestPolicy
	robotsLs   []RobotsListener
	overrides  []RevisitOverride
	policy     robots.Policy
	stats      *stats
	metrics    *metrics
	rs         renderState     // render.mode: the browser, its gate's cache and pacing
	resolve    []fetch.Mapping // fetch.resolve, which the render gate trusts

	// Fetch workers running, and of them those waiting for a due host (or crawl.budget):
	// the render governor's sign that fetching waits for politeness, not for CPU.
	workersRunning, workersWaiting atomic.Int64

	dupMu sync.Mutex // serializes duplicate lookup+registration (see store.CheckDuplicates)

	sharedDB bool // the database came from WithStore: its owner closes it

	clock func() time.Time
}

// Option adjusts a Crawler at construction (extension points for other packages).
type Option func(*Crawler)

// WithLinkScorer replaces the link strategy chosen by crawl.link-strategy.
func WithLinkScorer(s LinkScorer) Option { return func(c *Crawler) { c.scorer = s } }

// WithRevisitPolicy sets when fetched pages are fetched again (default: never).
func WithRevisitPolicy(p RevisitPolicy) Option { return func(c *Crawler) { c.revisit = p } }

// WithAnalyzers adds analyzers, run in order on every fetched document.
func WithAnalyzers(a ...Analyzer) Option {
	return func(c *Crawler) { c.analyze = append(c.analyze, a...) }
}

// WithSinks adds sinks, given every committed document in order.
func WithSinks(s ...Sink) Option { return func(c *Crawler) { c.sinks = append(c.sinks, s...) } }

// WithLinkFilters adds admission rules every discovered link must pass (after scope).
func WithLinkFilters(f ...LinkFilter) Option {
	return func(c *Crawler) { c.filters = append(c.filters, f...) }
}

// WithRequestPolicies adds policies that adjust each request before it is made.
func WithRequestPolicies(p ...RequestPolicy) Option {
	return func(c *Crawler) { c.requests = append(c.requests, p...) }
}

// WithRevisitOverrides adds schedules that take some URLs away from the RevisitPolicy
// (feeds and sitemaps). They compose with any policy, whatever the order of the options.
func WithRevisitOverrides(o ...RevisitOverride) Option {
	return func(c *Crawler) { c.overrides = append(c.overrides, o...) }
}

// WithRobotsListeners adds listeners told of every robots.txt fetched (sitemap discovery).
func WithRobotsListeners(l ...RobotsListener) Option {
	return func(c *Crawler) { c.robotsLs = append(c.robotsLs, l...) }
}

// WithStore makes the crawler use db, already open on cfg.Data's state directory, instead of
// opening it: a process that keeps the database open between crawls (`sonda serve`, which
// reads the link graph while a crawl writes it) runs crawls this way, since Pebble allows one
// opener. Close leaves db open; its owner closes it after the crawler.
func WithStore(db *store.DB) Option { return func(c *Crawler) { c.db, c.sharedDB = db, true } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *Crawler) { c.log = l } }

// StateDir is where a data directory keeps its Pebble database.
func StateDir(data string) string { return filepath.Join(data, "state") }

// WARCDir is where a data directory keeps its WARC files.
func WARCDir(data string) string { return filepath.Join(data, "warc") }

// StatusFile is the progress snapshot a running crawl rewrites (see Status).
func StatusFile(data string) string { return filepath.Join(data, "status.json") }

// New opens (or creates) the crawl in cfg.Data and prepares its components.
func New(cfg config.Config, opts ...Option) (*Crawler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Crawler{cfg: cfg, stats: newStats(), clock: time.Now, policy: RobotsPolicy(cfg), freeSpace: freeSpace}
	c.log = slog.New(slog.DiscardHandler)
	for _, o := range opts {
		o(c)
	}
	for _, s := range c.sinks {
		if j, ok := s.(JournaledSink); ok {
			c.journals = append(c.journals, j)
		}
		if b, ok := s.(Backlogger); ok {
			c.backlogs = append(c.backlogs, b)
		}
	}
	if c.scorer == nil {
		s, err := NewLinkStrategy(cfg.Crawl.LinkStrategy)
		if err != nil {
			return nil, err
		}
		c.scorer = s
	}
	c.pacer = newPacer(cfg.Crawl.Budget.PerSecond())
	var err error
	if c.textNorm, c.md5Print, err = ChangeNormalizer(cfg); err != nil {
		return nil, err
	}
	fo, err := FetchOptions(cfg)
	if err != nil {
		return nil, err
	}
	if c.fetcher, err = fetch.New(fo); err != nil {
		return nil, err
	}
	c.resolve = fo.Resolve
	c.large = newLargeBodies(int64(cfg.Fetch.LargeBodyMemory))
	c.norm = urlnorm.New(NormalizerOptions(cfg))
	if c.db == nil {
		if c.db, err = store.Open(StateDir(cfg.Data), store.Options{Logger: c.log}); err != nil {
			return nil, err
		}
	}
	ok := false
	defer func() {
		if !ok {
			c.closeParts()
		}
	}()
	fopts := frontier.Options{PerHost: cfg.Politeness.PerHost, MaxPerHost: cfg.Scope.MaxPagesPerHost, Endless: c.router != nil}
	if c.revisit == nil {
		// Without revisits the crawl is meant to end; hosts that only wait for retries
		// must not hold it (with revisits it runs until crawl.duration anyway).
		fopts.EndWhenParked = cfg.Crawl.EndWhenWaiting
	} else {
		// While new URLs wait, due revisits get revisit.share of each host's fetches, as
		// they get that share of the budget; 0: only what discovery leaves.
		fopts.RevisitShare = cfg.Revisit.Share
		if fopts.RevisitShare == 0 {
			fopts.RevisitShare = -1
		}
	}
	c.frontier, err = frontier.Open(c.db.Pebble(), fopts)
	if err != nil {
		return nil, err
	}
	c.variants = newVariantCounter(c.db.Pebble())
	c.robots = newRobotsCache(c.db.Pebble(), cfg.Robots.Agent, 10000)
	if cfg.WARC.Enabled {
		dir := WARCDir(cfg.Data)
		if fixed, err := warc.Recover(dir); err != nil {
			return nil, fmt.Errorf("crawl: recover WARC files: %w", err)
		} else if len(fixed) > 0 {
			level := slog.LevelInfo
			if strings.Contains(strings.Join(fixed, "\n"), warc.DamagedSuffix) {
				level = slog.LevelWarn // damage, not just a kill: the operator should look
			}
			c.log.Log(context.Background(), level, "recovered WARC files left open by an interrupted crawl", "files", fixed)
		}
		c.warc, err = warc.NewWriter(warc.WriterOptions{
			Dir: dir, MaxFileSize: int64(cfg.WARC.MaxFileSize),
			Software: "sonda/" + Version, Description: "sonda crawl of " + cfg.Data,
		})
		if err != nil {
			return nil, err
		}
	}
	if err := c.startRendering(); err != nil {
		return nil, err
	}
	c.metrics = newMetrics(c)
	ok = true
	return c, nil
}

// Version is sonda's version, reported by `sonda --version` and in WARC files. Release
// builds set it with -ldflags "-X github.com/sonda-search/sonda/crawl.Version=v1.2.3".
var Version = "0.1.0-dev"

// Registry exposes the crawl's Prometheus metrics.
func (c *Crawler) Registry() http.Handler { return promHandler(c.metrics.reg) }

// Gatherer gives the crawl's Prometheus metrics to a server that merges them with its own.
func (c *Crawler) Gatherer() prometheus.Gatherer { return c.metrics.reg }

func (c *Crawler) closeParts() error {
	errs := []error{c.rs.close()}
	if c.frontier != nil {
		c.frontier.Close()
	}
	if c.fetcher != nil {
		errs = append(errs, c.fetcher.Close())
	}
	if c.warc != nil {
		errs = append(errs, c.warc.Close())
	}
	if c.db != nil && !c.sharedDB {
		errs = append(errs, c.db.Close())
	}
	return errors.Join(errs...)
}

// Close flushes and closes the WARC writer and the database.
func (c *Crawler) Close() error { return c.closeParts() }

// Summary describes a finished Run.
type Summary struct {
	Reason      string // why it stopped: "frontier empty", "max-pages", "duration", "interrupted"
	Elapsed     time.Duration
	Pages       int64            // page fetches
	RobotsTxt   int64            // robots.txt fetches
	Bytes       int64            // body bytes received
	Errors      map[string]int64 // records with an error, by kind
	Statuses    map[string]int64 // responses by status class
	Rejected    map[string]int64 // discovered links left out, by scope rule
	LinksFound  int64
	LinksQueued int64
	Disallowed  int64
	Judged      int64 // pages given a relevance verdict (a topic is set)
	Relevant    int64 // judged pages found relevant: the harvest is Relevant / Judged
	Frontier    frontier.Stats
	Freshness   *float64 // the freshness the revisit plan expects (see FreshnessReporter), or nil
	Render      RenderSummary
	// Waiting are the hosts that wait for a retry (robots.txt unreachable, server errors,
	// timeouts) with nothing else to do: when the crawl ended because only they were left
	// (Reason "only waiting hosts left"), running it again retries them.
	Waiting []frontier.ParkedHost
	// Backlogs are how far the sinks that work behind the crawl (Backlogger) are, by name.
	Backlogs map[string]Backlog
	// BudgetNote says why crawl.budget is not spent, when politeness does not allow it
	// (e.g. "budget 2/s, achievable 0.8/s: 4 hosts × Crawl-delay"); "" otherwise.
	BudgetNote string
}

// PagesPerSecond is the fetch rate over the run.
func (s Summary) PagesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Pages) / s.Elapsed.Seconds()
}

func (c *Crawler) summary(reason string) Summary {
	s := c.stats
	sum := Summary{
		Reason: reason, Elapsed: time.Since(s.started), Pages: s.pages.Load(), RobotsTxt: s.robotsFetch.Load(),
		Bytes: s.bytes.Load(), Errors: copyCounts(&s.mu, s.byError), Statuses: copyCounts(&s.mu, s.byStatus),
		Rejected: copyCounts(&s.mu, s.byRule), LinksFound: s.linksFound.Load(), LinksQueued: s.linksQueued.Load(),
		Disallowed: s.disallowed.Load(), Judged: s.judged.Load(), Relevant: s.relevant.Load(), Frontier: c.frontier.Stats(),
		Freshness: c.expectedFreshness(), Render: c.rs.summary(), Waiting: c.frontier.Parked(),
		Backlogs: c.sinkBacklogs(),
	}
	sum.BudgetNote = c.budgetNote(float64(sum.Pages+sum.RobotsTxt) / max(sum.Elapsed.Seconds(), 1e-9))
	return sum
}

// ErrNothingFetched is returned by Run, with the summary, when the crawl tried requests and
// not one was answered: every seed's host failed to resolve, refused connections, is a
// private address sonda may not reach, or timed out. The error says what each host did.
var ErrNothingFetched = errors.New("crawl: no request got an answer")

// sinkBacklogs asks the sinks that work behind the crawl how far behind they are; nil
// when there are none.
func (c *Crawler) sinkBacklogs() map[string]Backlog {
	if len(c.backlogs) == 0 {
		return nil
	}
	m := make(map[string]Backlog, len(c.backlogs))
	for _, b := range c.backlogs {
		m[b.Name()] = b.Backlog()
	}
	return m
}

// Run crawls until the frontier is empty (when no revisit policy keeps it going),
// crawl.max-pages fetches were made, crawl.duration passed, or ctx is canceled. Seeds
// (cfg.Crawl.Seeds plus extra) are admitted first; seeds crawled before are not refetched.
// progress, when not nil, receives a snapshot every interval.
func (c *Crawler) Run(ctx context.Context, extraSeeds []string, progress func(Progress)) (Summary, error) {
	c.stats.started = time.Now() // the counters themselves are cumulative, as metrics must be
	c.robots.startRun(c.clock())
	attempts0, responses0 := c.stats.attempts.Load(), c.stats.responses.Load()
	seeds, err := c.allSeeds(append(append([]string{}, c.cfg.Crawl.Seeds...), extraSeeds...))
	if err != nil {
		return Summary{}, err
	}
	sc, err := scope.Compile(ScopeRules(c.cfg), seeds)
	if err != nil {
		return Summary{}, err
	}
	c.scope.Store(sc)
	if err := c.admitSeeds(seeds); err != nil {
		return Summary{}, err
	}
	if r, ok := c.revisit.(HistoryRestorer); ok {
		if err := r.Restore(c.db); err != nil {
			return Summary{}, fmt.Errorf("crawl: revisit policy: %w", err)
		}
	}
	if len(seeds) == 0 && c.router == nil {
		return Summary{}, errors.New("crawl: nothing to crawl: give seeds (crawl.seeds in sonda.yaml, or --seed URL)")
	}
	if err := c.checkSpace(); err != nil {
		return Summary{}, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if d := c.cfg.Crawl.Duration; d > 0 {
		var stopTimer context.CancelFunc
		runCtx, stopTimer = context.WithTimeoutCause(runCtx, d, errDuration)
		defer stopTimer()
	}
	// Fetches in flight when the crawl is interrupted get crawl.stop-grace to finish and
	// be recorded: thrown away, they would be fetched again by the resumed crawl.
	work, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	stopGrace := context.AfterFunc(ctx, func() {
		if g := c.cfg.Crawl.StopGrace; g > 0 {
			c.log.Info("stopping: fetches in flight may finish first (crawl.stop-grace); interrupt again to stop at once", "grace", g)
			time.AfterFunc(g, abort)
		} else {
			abort()
		}
	})
	defer stopGrace()
	var budget atomic.Int64 // fetches started; max-pages stops new ones
	var wg sync.WaitGroup
	errs := make(chan error, c.cfg.Crawl.Concurrency)
	for i := 0; i < c.cfg.Crawl.Concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.worker(runCtx, work, &budget, cancel); err != nil {
				errs <- err
				cancel(err)
			}
		}()
	}
	stopReport := c.reportLoop(runCtx, progress)
	waitSpace := c.watchSpace(runCtx, cancel)
	stopGovernor := c.rs.govern()
	wg.Wait()
	// Workers end when nothing is left to lease (pages still rendering hold theirs) or
	// when the crawl stops; pages handed to renders are finished before the summary.
	renderErr := c.rs.wait()
	stopGovernor()
	cancel(nil) // ends watchSpace when the frontier emptied
	waitSpace()
	stopReport()

	reason := "frontier empty"
	switch cause := context.Cause(runCtx); {
	case ctx.Err() != nil:
		reason = "interrupted"
	case errors.Is(cause, errMaxPages):
		reason = "max-pages"
	case errors.Is(cause, errDuration):
		reason = "duration"
	case c.storageFailed() != nil:
		reason = "storage failure"
	case errors.Is(cause, errWaiting):
		reason = "only waiting hosts left"
	}
	sum := c.summary(reason)
	c.writeStatus(statusFinished(reason), sum)
	close(errs)
	if err := c.storageFailed(); err != nil {
		return sum, err
	}
	for err := range errs {
		return sum, err
	}
	if renderErr != nil {
		return sum, renderErr
	}
	if ctx.Err() == nil && c.stats.attempts.Load() > attempts0 && c.stats.responses.Load() == responses0 {
		return sum, nothingFetched(sum)
	}
	return sum, nil
}

// nothingFetched is ErrNothingFetched with what each waiting host ran into.
func nothingFetched(sum Summary) error {
	var why []string
	for _, w := range sum.Waiting {
		why = append(why, w.Host+": "+w.Reason)
	}
	if len(why) == 0 {
		for kind, n := range sum.Errors {
			why = append(why, fmt.Sprintf("%d %s", n, kind))
		}
		slices.Sort(why)
	}
	return fmt.Errorf("%w (%s)", ErrNothingFetched, strings.Join(why, "; "))
}

var (
	errMaxPages = errors.New("crawl.max-pages reached")
	errDuration = errors.New("crawl.duration reached")
	errWaiting  = errors.New("only hosts waiting for a retry are left")
)

func (c *Crawler) admitSeeds(seeds []urlnorm.URL) error {
	items := make([]frontier.Item, 0, len(seeds))
	for _, u := range seeds {
		items = append(items, frontier.Item{URL: u.String(), Key: u.Key(), Host: u.HostKey(), Priority: c.scorer.Score(Link{URL: u, Index: -1})})
	}
	if c.router != nil {
		return c.router.Add(items)
	}
	adm, err := c.frontier.Add(items)
	if err != nil {
		return err
	}
	if adm.Added > 0 {
		c.log.Info("seeds queued", "added", adm.Added, "already seen", adm.Seen)
	}
	return nil
}

// worker leases and processes URLs until the frontier is drained or leases ends.
//
// leases ends when no more URLs should be started (max-pages, duration, drained frontier,
// interruption); work ends only crawl.stop-grace after an interruption. So a URL already
// being fetched when the crawl stops is finished and recorded rather than thrown away and
// fetched again next run.
func (c *Crawler) worker(leases, work context.Context, budget *atomic.Int64, stop context.CancelCauseFunc) error {
	ctx := leases
	c.workersRunning.Add(1)
	defer c.workersRunning.Add(-1)
	for {
		c.workersWaiting.Add(1)
		if err := c.pacer.acquire(ctx); err != nil {
			c.workersWaiting.Add(-1)
			return nil
		}
		l, err := c.frontier.Next(ctx)
		c.workersWaiting.Add(-1)
		c.pacer.release(err == nil)
		switch {
		case errors.Is(err, frontier.ErrDrained):
			stop(nil)
			return nil
		case errors.Is(err, frontier.ErrParked):
			stop(errWaiting)
			return nil
		case ctx.Err() != nil || errors.Is(err, frontier.ErrClosed):
			if l != nil {
				_ = c.frontier.Release(l, time.Time{})
			}
			return nil
		case err != nil:
			return err
		}
		if err := c.process(work, l, budget, stop); err != nil {
			if work.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// origin is the scheme and authority of u: what a robots.txt file applies to.
func origin(u urlnorm.URL) string { return u.Scheme() + "://" + u.Host() }
