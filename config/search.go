package config

import (
	"fmt"
	"time"
)

// Search configures the search index, the link graph's ranking and the search itself
// (packages index and linkgraph read it).
type Search struct {
	Index            bool          `yaml:"index"`
	IndexMode        string        `yaml:"index-mode"`
	Operator         string        `yaml:"operator"`
	MaxResults       int           `yaml:"max-results"`
	Cache            int           `yaml:"cache"`
	FacetCache       ByteSize      `yaml:"facet-cache"`
	ForwardCache     ByteSize      `yaml:"forward-cache"`
	PostingsCache    ByteSize      `yaml:"postings-cache"`
	TimeBudget       time.Duration `yaml:"time-budget"`
	MaxSearches      int           `yaml:"max-searches"`
	QueueWait        time.Duration `yaml:"queue-wait"`
	BatchSize        int           `yaml:"batch-size"`
	BatchDelay       time.Duration `yaml:"batch-delay"`
	PageRankInterval time.Duration `yaml:"pagerank-interval"`
	Ranking          Ranking       `yaml:"ranking"`
}

// SearchMemoryLimit is the Go memory limit of a process that answers searches from an
// index (sonda serve over a data directory, sonda node): memory-limit plus the bounds of
// the search's long-lived caches (search.facet-cache, forward-cache and postings-cache).
// Those caches are Go heap, filled once and kept while their index segments live; counted
// inside memory-limit, which is meant for transient memory (a crawl's bodies, a search's
// garbage), they leave the collector no room, and it runs all the time instead of the
// caches saving CPU. 0 when memory-limit is 0 (no limit).
func (c Config) SearchMemoryLimit() ByteSize {
	if c.MemoryLimit == 0 {
		return 0
	}
	return c.MemoryLimit + c.Search.FacetCache + c.Search.ForwardCache + c.Search.PostingsCache
}

// How a crawl feeds the search index (search.index-mode; `--index off` is search.index
// false).
const (
	// IndexAsync: the crawl commits a page and moves on; the index catches up in batches
	// behind it, from a durable queue.
	IndexAsync = "async"
	// IndexSync: the crawl waits until each page is searchable (read-your-writes).
	IndexSync = "sync"
)

// SetIndex applies a --index flag value: off, async or sync.
func (s *Search) SetIndex(mode string) error {
	switch mode {
	case "off":
		s.Index = false
	case IndexAsync, IndexSync:
		s.Index, s.IndexMode = true, mode
	default:
		return fmt.Errorf("%q is not off, async or sync", mode)
	}
	return nil
}

// Ranking are the weights of the search ranking (see package index's Ranking).
type Ranking struct {
	Title       float64 `yaml:"title"`
	Body        float64 `yaml:"body"`
	Headings    float64 `yaml:"headings"`
	Description float64 `yaml:"description"`
	Anchors     float64 `yaml:"anchors"`
	Extra       float64 `yaml:"extra"`
	URL         float64 `yaml:"url"`
	K1          float64 `yaml:"k1"`
	B           float64 `yaml:"b"`
	Proximity   float64 `yaml:"proximity"`
	Feedback    float64 `yaml:"feedback"`
	Link        float64 `yaml:"link"`
	Relevance   float64 `yaml:"relevance"`
	LinkSignal  string  `yaml:"link-signal"`
	Window      int     `yaml:"window"`
}

func (c *Config) validateSearch(errs *[]string) {
	s := c.Search
	add := func(format string, args ...any) { *errs = append(*errs, fmt.Sprintf(format, args...)) }
	switch s.Operator {
	case "and", "or":
	default:
		add("search.operator: %q is not and or or", s.Operator)
	}
	if s.MaxResults < 10 {
		add("search.max-results: must be at least 10 (got %d)", s.MaxResults)
	}
	if s.TimeBudget < 0 {
		add("search.time-budget: must not be negative (0: no limit)")
	}
	if s.MaxSearches < 0 {
		add("search.max-searches: must not be negative (0: two per CPU)")
	}
	if s.QueueWait < 0 {
		add("search.queue-wait: must not be negative")
	}
	switch s.IndexMode {
	case IndexAsync, IndexSync:
	default:
		add("search.index-mode: %q is not async or sync", s.IndexMode)
	}
	if s.BatchSize < 1 {
		add("search.batch-size: must be at least 1 (got %d)", s.BatchSize)
	}
	if s.BatchDelay <= 0 {
		add("search.batch-delay: must be positive")
	}
	if s.PageRankInterval < 0 {
		add("search.pagerank-interval: must not be negative")
	}
	r := s.Ranking
	for _, w := range []struct {
		name string
		v    float64
	}{{"title", r.Title}, {"body", r.Body}, {"headings", r.Headings}, {"description", r.Description}, {"anchors", r.Anchors},
		{"extra", r.Extra}, {"url", r.URL}, {"b", r.B}, {"proximity", r.Proximity}, {"feedback", r.Feedback}, {"link", r.Link}, {"relevance", r.Relevance}} {
		if w.v < 0 {
			add("search.ranking.%s: must not be negative (0 turns it off)", w.name)
		}
	}
	if r.K1 <= 0 {
		add("search.ranking.k1: must be positive (BM25's usual range is 0.5 to 2)")
	}
	if r.B > 1 {
		add("search.ranking.b: must be at most 1")
	}
	if r.Feedback >= 1 {
		add("search.ranking.feedback: must be below 1 (it is the feedback's share of the query; 0 turns it off)")
	}
	if r.Link+r.Relevance > 1 {
		add("search.ranking.link + search.ranking.relevance: must not exceed 1")
	}
	switch r.LinkSignal {
	case "pagerank", "inlinks":
	default:
		add("search.ranking.link-signal: %q is not pagerank or inlinks", r.LinkSignal)
	}
	if r.Window < 1 {
		add("search.ranking.window: must be at least 1")
	}
}
