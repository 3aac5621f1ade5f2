package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/web"
)

// historySize is how many one-second samples the dashboard's charts get: three minutes.
const historySize = 180

// Runner runs crawls in this process on a database it does not own (web.CrawlControl).
// One crawl at a time; each crawl is a crawl.Crawler made with crawl.WithStore, so the
// database (and what else reads it, such as the link graph) stays open between crawls.
type Runner struct {
	cfg     config.Config
	db      *store.DB
	log     *slog.Logger
	options func(*config.Config, *store.DB) ([]crawl.Option, error)
	onTick  func(crawl.Progress)
	after   func(context.Context) error
	norm    *urlnorm.Normalizer

	mu      sync.Mutex
	cur     *session // nil when no crawl runs
	pending []string // seeds added while idle, for the next start
	last    web.CrawlStatus
	lastSum *crawl.Summary
	lastErr error
	history []web.Sample
	done    chan struct{} // closed when the current crawl ends (nil before the first)

	// crawlerMu guards the current crawler's life against /metrics gathering: Gather holds
	// it for reading, closing a crawler for writing.
	crawlerMu sync.RWMutex
	crawler   *crawl.Crawler
}

// session is one started crawl; adding seeds restarts its crawler and keeps the session.
type session struct {
	cancel    context.CancelFunc
	started   time.Time
	counts    *recordCounts
	progress  crawl.Progress
	base      int64    // pages fetched by the session's earlier crawlers
	restart   []string // seeds to restart with (AddSeeds while running)
	stopping  bool
	finishing bool // the crawler is done; AfterCrawl runs
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Options returns the options of each new crawler: the sinks that index and record
	// links, analyzers, a link strategy. It gets the crawl's own copy of the configuration,
	// which it may adjust (a link strategy that bounds concurrency), and the database. The
	// runner adds the store, its own dashboard sink and the logger.
	Options func(cfg *config.Config, db *store.DB) ([]crawl.Option, error)
	Logger  *slog.Logger
	// Progress, when set, also receives the crawler's progress every second (a terminal's
	// progress line).
	Progress func(crawl.Progress)
	// AfterCrawl, when set, runs when a crawl has ended and its crawler is closed, before
	// the status says so: flushing index batches, ranking the link graph.
	AfterCrawl func(ctx context.Context) error
}

// NewRunner prepares crawl control over db, the open database of cfg.Data.
func NewRunner(cfg config.Config, db *store.DB, o RunnerOptions) *Runner {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Options == nil {
		o.Options = func(*config.Config, *store.DB) ([]crawl.Option, error) { return nil, nil }
	}
	r := &Runner{cfg: cfg, db: db, log: o.Logger, options: o.Options, onTick: o.Progress, after: o.AfterCrawl, norm: urlnorm.New(crawl.NormalizerOptions(cfg))}
	r.last = statusFromFile(cfg.Data)
	return r
}

// statusFromFile is the dashboard's view of the last crawl recorded in the data directory
// (by this or another process), or "idle" when there is none.
func statusFromFile(data string) web.CrawlStatus {
	st, err := crawl.ReadStatus(data)
	if err != nil {
		return web.CrawlStatus{State: "idle"}
	}
	state := st.State
	if state == "running" {
		state = "interrupted (the crawl that wrote status.json is gone; start resumes it)"
	}
	return web.CrawlStatus{State: state, Started: st.Started, Updated: st.Updated, Pages: st.Pages,
		Queued: st.Queued, Hosts: st.Hosts, Bytes: st.Bytes, Errors: st.Errors, PagesPerSecond: 0}
}

// checkSeeds normalizes seeds, naming the first that is not a crawlable URL.
func (r *Runner) checkSeeds(seeds []string) ([]string, error) {
	out := make([]string, 0, len(seeds))
	for _, s := range seeds {
		u, err := r.norm.Parse(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("seed %q: %v", s, err)
		}
		out = append(out, u.String())
	}
	return out, nil
}

// Start begins a crawl with the seeds given before, the pending ones and req.Seeds.
func (r *Runner) Start(_ context.Context, req web.CrawlRequest) error {
	seeds, err := r.checkSeeds(req.Seeds)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		return web.ErrCrawlRunning
	}
	seeds = append(append([]string{}, r.pending...), seeds...)
	if len(seeds) == 0 && len(r.cfg.Crawl.Seeds) == 0 {
		stored, err := crawl.StoredSeeds(r.db)
		if err != nil {
			return err
		}
		if len(stored) == 0 {
			return errors.New("nothing to crawl: give seeds (in the start request, with add seeds, or crawl.seeds in sonda.yaml)")
		}
	}
	cfg := r.cfg
	if req.MaxPages > 0 {
		cfg.Crawl.MaxPages = req.MaxPages
	}
	if req.Duration > 0 {
		cfg.Crawl.Duration = req.Duration
	}
	s := &session{started: time.Now(), counts: newRecordCounts()}
	c, err := r.newCrawler(cfg, s)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	r.cur, r.pending, r.history, r.lastSum, r.lastErr = s, nil, nil, nil, nil
	r.done = make(chan struct{})
	r.last = web.CrawlStatus{State: "running", Started: s.started}
	go r.run(ctx, cfg, s, c, seeds, r.done)
	return nil
}

func (r *Runner) newCrawler(cfg config.Config, s *session) (*crawl.Crawler, error) {
	extra, err := r.options(&cfg, r.db)
	if err != nil {
		return nil, err
	}
	opts := append([]crawl.Option{crawl.WithLogger(r.log), crawl.WithStore(r.db)}, extra...)
	opts = append(opts, crawl.WithSinks(s.counts))
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	r.crawlerMu.Lock()
	r.crawler = c
	r.crawlerMu.Unlock()
	return c, nil
}

func (r *Runner) closeCrawler(c *crawl.Crawler) error {
	r.crawlerMu.Lock()
	defer r.crawlerMu.Unlock()
	if r.crawler == c {
		r.crawler = nil
	}
	return c.Close()
}

// run drives one session: a crawl, and a new crawler each time seeds are added.
func (r *Runner) run(ctx context.Context, cfg config.Config, s *session, c *crawl.Crawler, seeds []string, done chan struct{}) {
	defer close(done)
	for {
		sum, err := c.Run(ctx, seeds, func(p crawl.Progress) { r.sample(s, p) })
		if cerr := r.closeCrawler(c); err == nil {
			err = cerr
		}
		r.mu.Lock()
		if restart := s.restart; err == nil && restart != nil && !s.stopping {
			// AddSeeds interrupted the crawl to give it new seeds: go on with a new crawler
			// (the frontier is on disk; pages that were in flight are fetched again).
			s.restart, s.base, s.progress = nil, s.base+sum.Pages, crawl.Progress{}
			ctx, s.cancel = context.WithCancel(context.Background())
			c, err = r.newCrawler(cfg, s)
			if err == nil {
				seeds = restart
				r.mu.Unlock()
				continue
			}
		}
		s.cancel()
		if r.after != nil {
			s.finishing = true
			r.mu.Unlock() // the hook may take long (PageRank); Status must not wait for it
			if aerr := r.after(context.Background()); aerr != nil {
				r.log.Error("after the crawl", "error", aerr)
				if err == nil {
					err = aerr
				}
			}
			r.mu.Lock()
		}
		st := r.statusLocked(s)
		st.InFlight, st.PagesPerSecond = 0, 0
		switch {
		case err != nil:
			st.State = "failed: " + err.Error()
			r.log.Error("crawl failed", "error", err)
		case s.stopping || sum.Reason == "interrupted":
			st.State = "finished: stopped"
		default:
			st.State = "finished: " + sum.Reason
		}
		st.Pages, st.Bytes = s.base+sum.Pages, sum.Bytes
		st.Queued, st.Hosts = sum.Frontier.Queued, sum.Frontier.Hosts
		st.Updated = time.Now().UTC()
		r.last, r.lastSum, r.lastErr, r.cur = st, &sum, err, nil
		r.mu.Unlock()
		return
	}
}

// sample records the crawler's progress, once a second.
func (r *Runner) sample(s *session, p crawl.Progress) {
	if r.onTick != nil {
		r.onTick(p)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.progress = p
	st := r.statusLocked(s)
	r.history = append(r.history, web.Sample{At: st.Updated, Pages: st.Pages, PagesPerSecond: st.PagesPerSecond,
		Queued: st.Queued, Errors: s.counts.errorTotal(), HarvestRate: st.HarvestRate})
	if len(r.history) > historySize {
		r.history = append(r.history[:0], r.history[len(r.history)-historySize:]...)
	}
}

// statusLocked builds the status of a running session; r.mu is held.
func (r *Runner) statusLocked(s *session) web.CrawlStatus {
	p := s.progress
	st := web.CrawlStatus{State: "running", Started: s.started, Updated: time.Now().UTC(), Pages: s.base + p.Pages,
		PagesPerSecond: p.PagesPerSec, Queued: p.Queued, InFlight: p.InFlight, Hosts: p.Hosts, Bytes: p.Bytes}
	switch {
	case s.finishing:
		st.State = "finishing"
	case s.stopping:
		st.State = "stopping"
	}
	s.counts.fill(&st)
	if b, ok := p.Backlogs["index"]; ok {
		st.IndexBacklog = &web.IndexBacklog{Documents: b.Documents, LagSeconds: b.Lag.Seconds()}
	}
	return st
}

// Status implements web.CrawlControl.
func (r *Runner) Status() web.CrawlStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.last
	if r.cur != nil {
		st = r.statusLocked(r.cur)
	}
	st.History = append([]web.Sample(nil), r.history...)
	return st
}

// Stop implements web.CrawlControl: it cancels the crawl and waits until its crawler has
// committed what was in flight and closed.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	s, done := r.cur, r.done
	if s != nil {
		s.stopping = true
		s.cancel()
	}
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the crawl is still stopping: %w", ctx.Err())
	}
}

// Wait blocks until the current crawl (if any) ends and returns its summary and error.
func (r *Runner) Wait(ctx context.Context) (*crawl.Summary, error) {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSum, r.lastErr
}

// AddSeeds implements web.CrawlControl. A running crawl is restarted with them at once:
// its frontier is on disk, so nothing is lost but the fetches in flight, which are made
// again; an idle runner keeps them for the next start.
func (r *Runner) AddSeeds(_ context.Context, seeds []string) error {
	seeds, err := r.checkSeeds(seeds)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || r.cur.stopping || r.cur.finishing {
		r.pending = append(r.pending, seeds...)
		return nil
	}
	r.cur.restart = append(r.cur.restart, seeds...)
	r.cur.cancel()
	return nil
}

// Seeds implements web.CrawlControl: the stored seeds, then those waiting.
func (r *Runner) Seeds(context.Context) ([]string, error) {
	stored, err := crawl.StoredSeeds(r.db)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(append([]string{}, r.cfg.Crawl.Seeds...), stored...)
	out = append(out, r.pending...)
	if r.cur != nil {
		out = append(out, r.cur.restart...)
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, s := range out {
		if !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	return uniq, nil
}

// Gatherer implements web.CrawlControl: the running crawler's metrics, nil when idle.
func (r *Runner) Gatherer() prometheus.Gatherer {
	r.crawlerMu.RLock()
	defer r.crawlerMu.RUnlock()
	if r.crawler == nil {
		return nil
	}
	return crawlerGatherer{r}
}

// crawlerGatherer gathers from whichever crawler is current, and from none if the crawl
// ended between Gatherer and Gather (its frontier is closed by then).
type crawlerGatherer struct{ r *Runner }

func (g crawlerGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.r.crawlerMu.RLock()
	defer g.r.crawlerMu.RUnlock()
	if g.r.crawler == nil {
		return nil, nil
	}
	return g.r.crawler.Gatherer().Gather()
}

// Close stops a running crawl and waits for it.
func (r *Runner) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return r.Stop(ctx)
}

var _ web.CrawlControl = (*Runner)(nil)

// recordCounts is the runner's sink: it counts the records a crawl commits by error kind
// and by host, and the topic judgements, for the dashboard.
type recordCounts struct {
	mu       sync.Mutex
	errors   map[string]int64
	errTotal int64
	hosts    *topCounter
	judged   int64
	relevant int64
}

// topHosts is how many hosts the dashboard shows; hostCounters how many the top
// counter tracks to find them (see topCounter for the guarantee).
const (
	topHosts     = 10
	hostCounters = 256
)

func newRecordCounts() *recordCounts {
	return &recordCounts{errors: map[string]int64{}, hosts: newTopCounter(hostCounters)}
}

func (c *recordCounts) Name() string { return "dashboard" }

// Consume implements crawl.Sink.
func (c *recordCounts) Consume(_ context.Context, d *crawl.Document) error {
	rec := d.Record
	host := ""
	if !d.URL.IsZero() { // zero only for a queued URL that no longer parses
		host = d.URL.Host()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec.Error != "" {
		c.errors[rec.Error]++
		c.errTotal++
	}
	if host != "" {
		c.hosts.add(host)
	}
	if rec.Relevance != nil {
		c.judged++
		if rec.Relevant != nil && *rec.Relevant {
			c.relevant++
		}
	}
	return nil
}

func (c *recordCounts) errorTotal() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errTotal
}

// fill copies the counts into a status.
func (c *recordCounts) fill(st *web.CrawlStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st.Errors = make(map[string]int64, len(c.errors))
	for k, v := range c.errors {
		st.Errors[k] = v
	}
	st.TopHosts = st.TopHosts[:0]
	for _, e := range c.hosts.top(topHosts) {
		st.TopHosts = append(st.TopHosts, web.HostCount{Host: e.key, Count: e.count})
	}
	st.Judged, st.Relevant = c.judged, c.relevant
	if c.judged > 0 {
		h := float64(c.relevant) / float64(c.judged)
		st.HarvestRate = &h
	}
}
