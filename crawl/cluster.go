package crawl

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/scope"
	"github.com/sonda-search/sonda/store"
)

// Cluster mode. A crawler node of a cluster (package cluster) runs this same crawl loop on
// the hosts it owns; the loop stays unaware of the cluster through the two interfaces
// below, which the cluster fills. Without them a crawl is a single-node crawl.

// Router takes over where URLs go once they are found: to the node that owns their host.
// With a Router the crawler queues nothing in its own frontier; its frontier is filled by
// whoever admits the routed URLs (in a cluster, the owner, which may be this node).
type Router interface {
	// Route is called inside the batch that completes a lease, so what it records commits
	// atomically with the page: out.Discovered are the URLs found on the page (already
	// judged by scope and the link filters); the rest of out says what became of the
	// leased URL (done, retried, revisited) and how long its host rests.
	Route(b *pebble.Batch, done frontier.Item, out frontier.Outcome) error
	// Add routes URLs found outside a page: seeds and sitemaps listed in robots.txt.
	// Run calls it once when it starts, with the seeds (possibly none), before any lease.
	Add(items []frontier.Item) error
}

// Gate says whether this process may fetch from a host now. In a cluster only the host's
// owner may, and a node that lost its membership (paused, cut off) must stop before
// another node takes its hosts over, so the crawler asks right before every request.
type Gate interface {
	// Enter is asked when a leased URL starts being processed; false hands the lease
	// back. When it returns true, Leave is called with the same item once the lease has
	// ended, and the lease's Route (if any) comes in between: the gate may tie what the
	// lease writes to the ownership it entered under.
	Enter(it frontier.Item) bool
	Leave(it frontier.Item)
	// Valid is asked right before each request to host (robots.txt and page).
	Valid(host string) bool
	// Fence is Valid for one request: when the request may start, it returns a context
	// derived from ctx that ends when this process's right to fetch from host runs out, so
	// that a request in flight (or one whose process stalled between the check and the
	// send) ends before another process may fetch from the host.
	Fence(ctx context.Context, host string) (context.Context, context.CancelFunc, bool)
}

// PageFetcher fetches pages (robots.txt stays with the crawler's own fetcher) in place of
// the crawler's fetcher. A cluster with volunteer workers hands the request to a worker and
// checks what comes back (package cluster/volunteer); the crawler still decided that the
// URL may be fetched now (scope, robots.txt, politeness) and parses what it gets itself.
// rest is how long the host must rest between two requests: a PageFetcher that makes more
// than one (a reissue to another worker, a trusted check) waits that long between them.
type PageFetcher interface {
	FetchPage(ctx context.Context, it frontier.Item, req fetch.Request, rest time.Duration) *fetch.Result
}

// WithPageFetcher fetches pages through f (cluster mode with volunteer workers).
func WithPageFetcher(f PageFetcher) Option { return func(c *Crawler) { c.pages = f } }

// WithRouter routes discovered URLs through r instead of the local frontier (cluster mode).
// The frontier then never reports itself drained: URLs may arrive at any time, and the
// crawl runs until it is stopped (ctx, max-pages, duration).
func WithRouter(r Router) Option { return func(c *Crawler) { c.router = r } }

// WithGate makes every request wait for g's permission (cluster mode).
func WithGate(g Gate) Option { return func(c *Crawler) { c.gate = g } }

// Frontier gives a cluster node the crawl's frontier, to admit the URLs routed to it and
// to hand hosts over (Purge, Restore).
func (c *Crawler) Frontier() *frontier.Frontier { return c.frontier }

// SetSeeds recompiles the scope with seeds (URLs), for seeds given on another node of a
// cluster after this one started: scope.follow rules are relative to the seeds.
func (c *Crawler) SetSeeds(seeds []string) error {
	all, err := c.allSeeds(seeds)
	if err != nil {
		return err
	}
	s, err := scope.Compile(ScopeRules(c.cfg), all)
	if err != nil {
		return err
	}
	c.scope.Store(s)
	return nil
}

// gateRetry is how long a lease the gate refused waits before it is offered again: the
// host is about to be handed over, or this node to regain its membership.
const gateRetry = 250 * time.Millisecond

// hostRest is when a host may be asked again after an outcome (the frontier's own rule).
func hostRest(now time.Time, o frontier.Outcome) time.Time {
	rest := now.Add(o.Delay)
	if o.NotBefore.After(rest) {
		rest = o.NotBefore
	}
	return rest
}

// HostRest is when the host of a completed lease may be asked again, by the rule the
// frontier applies: the later of now+Delay and NotBefore. A Router sends it with the host
// when the host moves to another node.
func HostRest(now time.Time, o frontier.Outcome) time.Time { return hostRest(now, o) }

// Store is the crawl's database; a cluster node keeps its outbox there, so that links are
// committed with the page they were found on.
func (c *Crawler) Store() *store.DB { return c.db }

// Counts are the crawl's running totals: page fetches and records with an error.
func (c *Crawler) Counts() (pages, errs int64) { return c.stats.pages.Load(), c.stats.errors.Load() }
