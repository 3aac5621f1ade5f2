package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The interfaces below are what the web layer consumes. They are deliberately small and
// defined here, by the consumer, so that package web depends on no storage package: the
// command that serves (cmd/sonda, through web/local) adapts the index, the link graph and the
// crawler to them, and tests use fakes.

// Searcher runs ranked searches.
type Searcher interface {
	// Search answers one page of results. A malformed query is reported as a *QueryError,
	// which the API turns into a 400 with the parser's message.
	Search(ctx context.Context, req SearchRequest) (*SearchResult, error)
}

// Documents returns stored documents by ID.
type Documents interface {
	Document(ctx context.Context, id string) (Document, bool, error)
}

// Relations returns the link neighbourhood of a URL: who links to it, and what it links
// to, at most limit of each.
type Relations interface {
	Relations(ctx context.Context, url string, limit int) (in, out []Edge, err error)
}

// StatsSource reports what the data directory holds.
type StatsSource interface {
	Stats(ctx context.Context) (Stats, error)
}

// TermAnalyzer turns text into index terms (case and accent folding, stemming), so the
// document view highlights "crawling" for the query "crawler" exactly when the index
// would have matched it. Without one, words are compared after case and accent folding.
type TermAnalyzer interface {
	Terms(lang, s string) []string
}

// CrawlControl starts, stops and reports an in-process crawl.
type CrawlControl interface {
	// Start begins a crawl; ErrCrawlRunning when one is running.
	Start(ctx context.Context, req CrawlRequest) error
	// Stop ends the running crawl cleanly and waits for it (or for ctx); stopping when
	// nothing runs is not an error.
	Stop(ctx context.Context) error
	// AddSeeds adds start URLs. A running crawl takes them at once; otherwise the next
	// crawl starts from them (with the seeds given before).
	AddSeeds(ctx context.Context, seeds []string) error
	// Seeds lists the seeds the crawl was given and those waiting for the next start.
	Seeds(ctx context.Context) ([]string, error)
	// Status is a snapshot of the crawl for the dashboard.
	Status() CrawlStatus
	// Gatherer is the running crawl's Prometheus registry (nil when none runs).
	Gatherer() prometheus.Gatherer
}

// Workers lists a cluster's volunteer workers for the dashboard (sonda serve --nats).
type Workers interface {
	Workers(ctx context.Context) ([]Worker, error)
}

// Worker is one volunteer worker as the cluster's nodes saw it.
type Worker struct {
	Name, State, Reason            string
	Tasks, Reissued, Checked, Lies int64
	Failed                         int64
	PagesPerSecond, Reputation     float64
}

// Cluster reads a cluster's membership for the dashboard (sonda serve --nats).
type Cluster interface {
	ClusterStatus(ctx context.Context) (ClusterView, error)
}

// ClusterView is a cluster as its NATS server holds it: the nodes and the partitions of
// hosts each serves.
type ClusterView struct {
	Name       string
	Partitions int    // the cluster's partition count
	Unassigned int    // partitions no live node serves right now (moving, or no node)
	Routing    uint64 // routed URLs waiting for their owner
	Members    []ClusterMember
}

// ClusterMember is one node as its last heartbeat described it.
type ClusterMember struct {
	Node                  string
	Partitions            []int
	Queued, Outbox, Pages int64
	InFlight              int
	Errors, FailOvers     int64
	PagesPerSecond        float64
	Idle                  bool
}

// ErrUnavailable marks a backend error that is nobody's fault in the request: the API
// answers 503 with its message (a cluster with no node serving searches yet).
var ErrUnavailable = errors.New("unavailable")

// ErrBusy marks a backend error that says the server has more requests than it can take
// now: the API answers 503 with Retry-After and its message (the index's search turns,
// index.ErrBusy).
var ErrBusy = errors.New("busy")

// ErrCrawlRunning is returned by CrawlControl.Start when a crawl is already running.
var ErrCrawlRunning = errors.New("a crawl is already running; stop it first")

// SearchRequest asks for one page of results.
type SearchRequest struct {
	Query   string
	Page    int    // 1-based
	PerPage int    // results per page
	Kind    string // only documents of this kind ("" for all)
	Facets  bool   // compute facet counts
}

// SearchResult is one page of results.
type SearchResult struct {
	Total  uint64
	Took   time.Duration
	Hits   []Hit
	Facets map[string][]FacetCount // by facet name: site, type, lang, date...
	Query  string                  // the query as the engine understood it
	// Relaxed says fewer documents had every word than fill the page: the AllWords that
	// have them all come first, then documents with only some of them.
	Relaxed  bool
	AllWords uint64
	// Shards is how many nodes of a cluster were asked (0: one index), Missing those that
	// did not answer in time: the results are then the others' only.
	Shards  int
	Missing []string
	// Partial says the search stopped at its time budget: the hits are the best of the
	// matches it had seen and Total is a lower bound.
	Partial bool
}

// Hit is one result.
type Hit struct {
	ID, Kind, URL, Title string
	// Snippet is HTML: escaped text with <mark> around matched terms. The web layer
	// sanitizes it again (see SafeSnippet) rather than trusting it.
	Snippet string
	Score   float64
	Fetched time.Time
	Host    string
	InLinks int
	Fields  map[string]any // kind-specific fields (authors, published, bbox...)
}

// FacetCount is one value of a facet and how many results have it.
type FacetCount struct {
	Value string
	Count int
	// Filter is the query clause that restricts results to this value (site:example.org);
	// the UI adds it to the query when the facet is chosen. Empty: not selectable.
	Filter string
}

// Document is a stored document as the document view shows it.
type Document struct {
	ID, Kind, URL, Title, Body, Headings, Description, Host, Lang, ContentType string
	Fetched                                                                    time.Time
	Relevance                                                                  float64 // 0..1; negative when no topic is set
	Relevant                                                                   bool
	Topics                                                                     []string
	InLinks                                                                    int
	Anchors                                                                    []string // anchor text of links to the document
	Fields                                                                     map[string]any
}

// Edge is one link of a URL's neighbourhood: the page at the other end and the link's
// anchor text.
type Edge struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor"`
}

// Stats summarizes a data directory.
type Stats struct {
	Documents uint64            `json:"documents"`       // documents in the index
	Kinds     map[string]uint64 `json:"kinds,omitempty"` // documents by kind
	Pages     uint64            `json:"pages,omitempty"` // page records in the store, when the backend counts them
	Links     uint64            `json:"links"`           // edges in the link graph
	Extra     map[string]any    `json:"extra,omitempty"` // backend-specific figures
}

// QueryError is a malformed query: the API answers 400 with Msg and the position.
type QueryError struct {
	Pos int    // byte offset in the query where the problem is
	Msg string // what is wrong and how to fix it
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("query error at position %d: %s", e.Pos, e.Msg)
}

// CrawlRequest starts a crawl.
type CrawlRequest struct {
	Seeds    []string      `json:"seeds,omitempty"`     // added to the stored seeds
	MaxPages int64         `json:"max_pages,omitempty"` // 0: the configuration's
	Duration time.Duration `json:"-"`                   // 0: the configuration's
}

// CrawlStatus is a snapshot of the crawl for the dashboard and /api/crawl/status.
type CrawlStatus struct {
	// State is "idle" (no crawl since the server started and none recorded), "running",
	// "stopping", "finishing" (the crawler is done; what it fetched is being indexed),
	// "finished: REASON" or "failed: ERROR".
	State          string           `json:"state"`
	Started        time.Time        `json:"started,omitzero"`
	Updated        time.Time        `json:"updated,omitzero"`
	Pages          int64            `json:"pages"`            // page fetches in this crawl
	PagesPerSecond float64          `json:"pages_per_second"` // over the last second
	Queued         int64            `json:"queued"`
	InFlight       int              `json:"in_flight"`
	Hosts          int              `json:"hosts"` // hosts with queued or in-flight URLs
	Bytes          int64            `json:"bytes"`
	Errors         map[string]int64 `json:"errors"`    // records with an error, by kind
	TopHosts       []HostCount      `json:"top_hosts"` // hosts with the most records, most first
	// Judged counts pages given a topic relevance; Relevant those judged relevant.
	// HarvestRate is Relevant/Judged, null when no topic is set.
	Judged      int64    `json:"judged"`
	Relevant    int64    `json:"relevant"`
	HarvestRate *float64 `json:"harvest_rate"`
	History     []Sample `json:"history,omitzero"` // one sample a second, oldest first
	// IndexBacklog is how far the search index is behind the crawl (it indexes behind it,
	// search.index-mode async); nil when the crawl does not feed an index.
	IndexBacklog *IndexBacklog `json:"index_backlog,omitempty"`
}

// IndexBacklog is how far the search index is behind the crawl.
type IndexBacklog struct {
	Documents  int     `json:"documents"`   // pages committed, not yet persisted in the index
	LagSeconds float64 `json:"lag_seconds"` // how long the oldest of them has waited
}

// HostCount is a host and its number of records.
type HostCount struct {
	Host  string `json:"host"`
	Count int64  `json:"count"`
}

// Sample is the crawl at one moment, for the dashboard's charts.
type Sample struct {
	At             time.Time `json:"at"`
	Pages          int64     `json:"pages"`
	PagesPerSecond float64   `json:"pages_per_second"`
	Queued         int64     `json:"queued"`
	Errors         int64     `json:"errors"`
	HarvestRate    *float64  `json:"harvest_rate"`
}
