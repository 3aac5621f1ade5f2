package crawl

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/render"
)

// stats are the crawl's running totals: they feed the progress line, status.json, the
// summary and (through collectors) the Prometheus metrics.
type stats struct {
	started time.Time

	pages       atomic.Int64 // page fetches completed (any outcome with a request)
	robotsFetch atomic.Int64
	attempts    atomic.Int64 // requests tried, robots.txt and pages
	responses   atomic.Int64 // requests that got an HTTP response
	bytes       atomic.Int64 // body bytes received
	errors      atomic.Int64 // records with an error
	disallowed  atomic.Int64 // URLs robots.txt forbade (not fetched)
	linksFound  atomic.Int64
	linksQueued atomic.Int64
	judged      atomic.Int64 // pages given a relevance verdict (a topic is set)
	relevant    atomic.Int64 // judged pages found relevant

	mu       sync.Mutex
	byError  map[string]int64 // error kind → count
	byStatus map[string]int64 // "2xx", "3xx", ... → count
	byRule   map[string]int64 // scope rule → links rejected
}

func newStats() *stats {
	return &stats{started: time.Now(), byError: map[string]int64{}, byStatus: map[string]int64{}, byRule: map[string]int64{}}
}

func (s *stats) countError(kind string) {
	s.errors.Add(1)
	s.mu.Lock()
	s.byError[kind]++
	s.mu.Unlock()
}

// countAttempt counts a request and whether a server answered it.
func (s *stats) countAttempt(res *fetch.Result) {
	s.attempts.Add(1)
	if res.Status != 0 {
		s.responses.Add(1)
	}
}

func (s *stats) countStatus(status int) {
	class := "none"
	if status >= 100 && status < 600 {
		class = string(rune('0'+status/100)) + "xx"
	}
	s.mu.Lock()
	s.byStatus[class]++
	s.mu.Unlock()
}

func (s *stats) countRejected(rule string) {
	s.mu.Lock()
	s.byRule[rule]++
	s.mu.Unlock()
}

func copyCounts(mu *sync.Mutex, m map[string]int64) map[string]int64 {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// topCounts returns the n largest entries as "name=count", largest first.
func topCounts(m map[string]int64, n int) []string {
	type kv struct {
		k string
		v int64
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].k+"="+strconv.FormatInt(all[i].v, 10))
	}
	return out
}

// metrics exposes the crawl to Prometheus.
type metrics struct {
	reg           *prometheus.Registry
	fetchSeconds  prometheus.Histogram
	renderSeconds prometheus.Histogram // nil when render.mode is never
}

func newMetrics(c *Crawler) *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &metrics{reg: reg}
	m.fetchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "sonda_fetch_duration_seconds", Help: "Duration of page fetches, from connect to last body byte.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})
	reg.MustRegister(m.fetchSeconds)
	s := c.stats
	counter := func(name, help string, v *atomic.Int64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v.Load()) }))
	}
	counter("sonda_pages_fetched_total", "Page fetches completed, whatever their outcome.", &s.pages)
	counter("sonda_robots_fetches_total", "robots.txt fetches.", &s.robotsFetch)
	counter("sonda_body_bytes_total", "Response body bytes received.", &s.bytes)
	counter("sonda_robots_disallowed_total", "URLs not fetched because robots.txt disallows them.", &s.disallowed)
	counter("sonda_links_found_total", "Links found on fetched pages.", &s.linksFound)
	counter("sonda_links_queued_total", "Discovered URLs admitted to the frontier.", &s.linksQueued)
	counter("sonda_pages_judged_total", "Fetched pages given a topic relevance verdict.", &s.judged)
	counter("sonda_pages_relevant_total", "Fetched pages found relevant to a topic (harvest = relevant / judged).", &s.relevant)
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	gauge("sonda_frontier_queued", "URLs waiting in the frontier.", func() float64 { return float64(c.frontier.Stats().Queued) })
	gauge("sonda_frontier_hosts", "Hosts with queued or in-flight URLs.", func() float64 { return float64(c.frontier.Stats().Hosts) })
	gauge("sonda_frontier_in_flight", "URLs being fetched.", func() float64 { return float64(c.frontier.Stats().InFlight) })
	if _, ok := c.revisit.(FreshnessReporter); ok {
		gauge("sonda_expected_freshness", "Share of revisited pages the revisit plan expects to be up to date (0..1; NaN before the first plan).", func() float64 {
			if f := c.expectedFreshness(); f != nil {
				return *f
			}
			return math.NaN()
		})
	}
	if c.rs.r != nil {
		rs := &c.rs
		st := func(f func(render.Stats) int64) func() float64 {
			return func() float64 { return float64(f(rs.r.Stats())) }
		}
		reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sonda_render_pages_total", Help: "Pages rendered in the browser."}, st(func(s render.Stats) int64 { return s.Renders })),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sonda_render_failures_total", Help: "Renders that failed (the page was read from its raw HTML)."}, st(func(s render.Stats) int64 { return s.Failures })),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sonda_render_browser_restarts_total", Help: "Browser processes started after the first (crash or memory bound)."}, st(func(s render.Stats) int64 { return s.Restarts })),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sonda_render_browser_memory_bytes", Help: "Resident memory of the browser's processes, last measured."}, st(func(s render.Stats) int64 { return s.Memory })),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sonda_render_subrequests_total", Help: "Requests of rendered pages answered by the gate (network or cache)."}, func() float64 { return float64(rs.subrequests.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sonda_render_cache_hits_total", Help: "Requests of rendered pages answered from the per-crawl cache."}, func() float64 { return float64(rs.cacheHits.Load()) }),
		)
		m.renderSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sonda_render_duration_seconds", Help: "Duration of page renders, from navigation to the DOM read.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		})
		reg.MustRegister(m.renderSeconds)
	}
	if len(c.backlogs) > 0 {
		reg.MustRegister(&backlogCollector{c: c})
	}
	reg.MustRegister(&labeledCounts{s: s, field: func(s *stats) map[string]int64 { return s.byError },
		desc: prometheus.NewDesc("sonda_fetch_errors_total", "Fetches recorded with an error, by kind.", []string{"kind"}, nil)})
	reg.MustRegister(&labeledCounts{s: s, field: func(s *stats) map[string]int64 { return s.byStatus },
		desc: prometheus.NewDesc("sonda_responses_total", "HTTP responses by status class.", []string{"class"}, nil)})
	reg.MustRegister(&labeledCounts{s: s, field: func(s *stats) map[string]int64 { return s.byRule },
		desc: prometheus.NewDesc("sonda_links_rejected_total", "Discovered links left out of the crawl, by scope rule.", []string{"rule"}, nil)})
	return m
}

// labeledCounts exports one of the stats maps as a labeled counter.
type labeledCounts struct {
	s     *stats
	field func(*stats) map[string]int64
	desc  *prometheus.Desc
}

func (l *labeledCounts) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }
func (l *labeledCounts) Collect(ch chan<- prometheus.Metric) {
	for k, v := range copyCounts(&l.s.mu, l.field(l.s)) {
		ch <- prometheus.MustNewConstMetric(l.desc, prometheus.CounterValue, float64(v), k)
	}
}

var (
	backlogDocsDesc = prometheus.NewDesc("sonda_sink_backlog_documents",
		"Committed documents a sink that works behind the crawl (the search index) has not finished.", []string{"sink"}, nil)
	backlogLagDesc = prometheus.NewDesc("sonda_sink_lag_seconds",
		"Age of the oldest document a sink that works behind the crawl has not finished.", []string{"sink"}, nil)
)

// backlogCollector reports the sinks' backlogs (Backlogger).
type backlogCollector struct{ c *Crawler }

func (b *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogDocsDesc
	ch <- backlogLagDesc
}
func (b *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	for name, bl := range b.c.sinkBacklogs() {
		ch <- prometheus.MustNewConstMetric(backlogDocsDesc, prometheus.GaugeValue, float64(bl.Documents), name)
		ch <- prometheus.MustNewConstMetric(backlogLagDesc, prometheus.GaugeValue, bl.Lag.Seconds(), name)
	}
}
