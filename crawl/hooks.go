package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/render"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// Document is one fetched URL on its way through the crawl: what was fetched, what the
// parser made of it, and the record that will be stored. Analyzers read it and add to
// Record; link scorers and revisit policies read it.
type Document struct {
	URL    urlnorm.URL
	Item   frontier.Item // the queue entry: depth, parent, attempts, visits
	Fetch  *fetch.Result // nil when nothing was fetched (robots disallowed)
	Page   *parse.Page   // nil unless the response was HTML
	Text   string        // visible text ("" when none)
	Record *store.Page   // the record being built
	Prev   *store.Page   // the previous record of this URL, nil on a first visit

	// Discovered holds URLs an analyzer found outside the page's links (feed items, sitemap
	// entries, feeds named in the head): they are queued like the page's links, one hop
	// deeper, through scope and the link filters, unless the page says nofollow.
	Discovered []string

	// Results holds analyzers' typed results by analyzer name (the news analyzer's article),
	// for the sinks that index or stream them.
	Results map[string]any

	// Rendered is the browser's render of the page when it was rendered (render.mode):
	// Fetch then holds the rendered DOM as its body (Body and UTF8; everything else as
	// fetched), Page and Text come from it, and Raw is the response as the server sent it.
	Rendered *render.Result
	Raw      *fetch.Result

	renderedOnly map[string]bool // links only the rendered DOM has

	hopQueued bool                       // a redirect target was queued: the redirect chain goes on
	writes    []func(store.Writer) error // analyzers' records, committed with the page record
}

// CommitWith adds write to the batch that stores this document's record: an analyzer's own
// record (under its own key prefix) is then stored together with the page record and the
// queue change, or not at all, so a crash can never keep one without the other.
func (d *Document) CommitWith(write func(w store.Writer) error) {
	d.writes = append(d.writes, write)
}

// Commit applies the writes added with CommitWith to w, in order. The crawler calls it
// inside the batch that completes the document; tools that run analyzers outside a crawl
// (tests, re-extraction of stored pages) call it with a batch of their own.
func (d *Document) Commit(w store.Writer) error {
	for _, write := range d.writes {
		if err := write(w); err != nil {
			return err
		}
	}
	return nil
}

// Link is a discovered URL the crawler is about to queue.
type Link struct {
	URL   urlnorm.URL
	Depth int
	// Source is the document the link was found on, and Index its position in
	// Source.Page.Links; Source is nil for seeds and Index is -1 for links that are not
	// in the page's link list (redirect targets, meta refresh).
	Source *Document
	Index  int
	// Rendered marks a link found only in the DOM a browser built (render.mode), not in
	// the page's raw HTML.
	Rendered bool
}

// LinkScorer gives a discovered link its priority: higher is fetched sooner (within its
// host, and across hosts that may be served). It is how focused crawling plugs in.
type LinkScorer interface {
	Score(l Link) float64
}

// RevisitPolicy decides when a fetched URL is fetched again; the zero time means never.
// It is how incremental crawling plugs in.
type RevisitPolicy interface {
	NextVisit(d *Document, now time.Time) time.Time
}

// DiscoveryAware is implemented by revisit policies that plan for the URLs the crawl has
// admitted but not fetched yet: before each NextVisit the crawler tells them how many of
// its frontier's queued URLs were never fetched (frontier.Stats.New), so a plan made early
// in a crawl leaves the budget those pages will need to discovery instead of spending it
// all on revisiting the few pages fetched so far.
type DiscoveryAware interface {
	Undiscovered(urls int64)
}

// FreshnessReporter is implemented by revisit policies that know the freshness their plan
// expects: the weighted share of the pages they keep that are up to date at a random
// moment, 0..1; ok is false while there is no plan yet. The crawl shows it in its progress
// line, status.json and the sonda_expected_freshness metric.
type FreshnessReporter interface {
	ExpectedFreshness() (freshness float64, ok bool)
}

// RevisitOverride gives some URLs their own revisit schedule ahead of the RevisitPolicy:
// the news vertical reads feeds and sitemaps on theirs while the policy keeps ordinary
// pages. ok false leaves the document to the policy (or to the next override).
type RevisitOverride interface {
	Revisit(d *Document, now time.Time) (next time.Time, ok bool)
}

// Analyzer examines a fetched document and adds typed fields to its record (relevance,
// article, dataset...). An error is recorded on the document and does not stop the crawl.
type Analyzer interface {
	Name() string
	Analyze(ctx context.Context, d *Document) error
}

// RobotsListener hears of every robots.txt the crawl fetches. The URLs it returns (the
// file's Sitemap: lines, for the news vertical) are queued like seeds of that origin,
// through scope and the link filters.
type RobotsListener interface {
	RobotsFetched(origin string, r *robots.Robots) []string
}

// Sink receives every document after its record is committed: the index, a link graph, a
// cluster stream, a JSON-lines file. It runs on the worker that fetched the document, outside
// the frontier's lock; an error is logged and does not stop the crawl (a sink that must not
// lose documents rebuilds from the store). Documents whose fetch failed arrive too, so a
// sink can drop what no longer exists (404, 410, noindex).
type Sink interface {
	Name() string
	Consume(ctx context.Context, d *Document) error
}

// JournaledSink is a Sink that does its work behind the crawl (the search index indexes in
// the background) and keeps a durable queue of it. Journal is called inside the batch that
// commits the document, before Consume: what it writes to w is stored with the page record
// or not at all, so a crash between the commit and the sink's work loses nothing. It runs
// on the worker, inside the commit, and must be cheap.
type JournaledSink interface {
	Sink
	Journal(d *Document, w store.Writer) error
}

// Backlogger is a sink that works behind the crawl and can say how far behind it is: the
// crawl shows its backlog in the progress line, status.json and the metrics
// (sonda_sink_backlog_documents, sonda_sink_lag_seconds).
type Backlogger interface {
	Sink
	Backlog() Backlog
}

// Backlog is how far a sink is behind the crawl.
type Backlog struct {
	Documents int           `json:"documents"`   // committed documents the sink has not finished
	Lag       time.Duration `json:"lag_seconds"` // age of the oldest of them
}

// MarshalJSON writes the lag in seconds.
func (b Backlog) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"documents":%d,"lag_seconds":%.3f}`, b.Documents, b.Lag.Seconds()), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *Backlog) UnmarshalJSON(data []byte) error {
	var v struct {
		Documents int     `json:"documents"`
		Lag       float64 `json:"lag_seconds"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	b.Documents, b.Lag = v.Documents, time.Duration(v.Lag*float64(time.Second))
	return nil
}

// LinkFilter decides, after the scope rules, whether a discovered link is queued at all: a
// vertical's admission rule, such as the geo vertical's "download an archive only when the
// page gives geographic evidence". rule names the reason in the rejected-links counts.
type LinkFilter interface {
	Admit(l Link) (ok bool, rule string)
}

// RequestPolicy adjusts the request for one URL before it is fetched: a vertical that
// downloads resources other than pages (datasets) widens the accepted media types and the
// size cap for those URLs only. The request still goes through robots.txt and politeness.
type RequestPolicy interface {
	AdjustRequest(u urlnorm.URL, it frontier.Item, req *fetch.Request)
}

// BreadthFirst scores links by depth: shallower first, discovery order within a depth.
type BreadthFirst struct{}

// Score implements LinkScorer.
func (BreadthFirst) Score(l Link) float64 { return -float64(l.Depth) }

// linkStrategies are the LinkScorers selectable by name (crawl.link-strategy). Other
// packages register theirs with RegisterLinkStrategy.
var linkStrategies = map[string]func() LinkScorer{
	"bfs": func() LinkScorer { return BreadthFirst{} },
	// auto is the default: breadth-first, unless focused crawling is set up (a topic), in
	// which case the command that wires package focus gives its own scorer.
	"auto": func() LinkScorer { return BreadthFirst{} },
}

// RegisterLinkStrategy makes a LinkScorer selectable by name. It panics on a duplicate,
// which is a programming error.
func RegisterLinkStrategy(name string, make func() LinkScorer) {
	if _, dup := linkStrategies[name]; dup {
		panic("crawl: link strategy " + name + " registered twice")
	}
	linkStrategies[name] = make
}

// LinkStrategies lists the selectable strategy names.
func LinkStrategies() []string {
	names := make([]string, 0, len(linkStrategies))
	for n := range linkStrategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewLinkStrategy returns a new scorer of the strategy registered under name
// (crawl.link-strategy): what the crawler uses when no WithLinkScorer is given. Code that
// adds to the configured strategy (the geo vertical's producer boost) wraps what it returns.
func NewLinkStrategy(name string) (LinkScorer, error) {
	mk, ok := linkStrategies[name]
	if !ok {
		return nil, fmt.Errorf("crawl.link-strategy: unknown strategy %q (choose one of %s)", name, strings.Join(LinkStrategies(), ", "))
	}
	return mk(), nil
}
