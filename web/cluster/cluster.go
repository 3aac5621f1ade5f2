// Package cluster is the web layer's backend over a sonda cluster (`sonda serve --nats`):
// searches go to every node through the scatter-gather Gatherer of package cluster/search
// and come back as the ranking one index over all the nodes' pages would give; an answer
// some nodes missed says which. It sits beside web/local, the backend over one data
// directory, and shares its conversions. Cached documents, link relations and crawl control
// belong to the nodes and are not served here.
package cluster

import (
	"context"
	"errors"
	"fmt"

	sondacluster "github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/web"
	"github.com/sonda-search/sonda/web/local"
)

// Searcher is what the backend asks of a gatherer (*search.Gatherer).
type Searcher interface {
	Search(ctx context.Context, req index.Request) (*index.Result, error)
}

// Backend adapts a gatherer to web.Searcher.
type Backend struct{ g Searcher }

// New returns the backend over g.
func New(g Searcher) *Backend { return &Backend{g: g} }

// Search implements web.Searcher.
func (b *Backend) Search(ctx context.Context, req web.SearchRequest) (*web.SearchResult, error) {
	res, err := b.g.Search(ctx, index.Request{Query: req.Query, Page: req.Page, PerPage: req.PerPage, Kind: req.Kind, Facets: req.Facets})
	if err != nil {
		if errors.Is(err, search.ErrNoNodes) {
			return nil, fmt.Errorf("%w: %w", err, web.ErrUnavailable)
		}
		return nil, local.SearchError(err)
	}
	return local.SearchResult(res), nil
}

// WebOptions are the options for web.New; the caller adds the token.
func (b *Backend) WebOptions() web.Options { return web.Options{Searcher: b} }

// StatusReader reads a cluster's status (sondacluster.ReadStatus).
type StatusReader func(ctx context.Context) (sondacluster.Status, error)

// ClusterStatus implements web.Cluster.
func (r StatusReader) ClusterStatus(ctx context.Context) (web.ClusterView, error) {
	st, err := r(ctx)
	if err != nil {
		return web.ClusterView{}, err
	}
	v := web.ClusterView{Name: st.Cluster, Partitions: st.Partitions, Unassigned: st.Unassigned, Routing: st.Routing}
	for _, m := range st.Members {
		v.Members = append(v.Members, web.ClusterMember{Node: m.Node, Partitions: m.Partitions, Queued: m.Queued, Outbox: m.Outbox,
			Pages: m.Pages, InFlight: m.InFlight, Errors: m.Errors, FailOvers: m.FailOvers, PagesPerSecond: m.PagesPerSec, Idle: m.Idle})
	}
	return v, nil
}

// WorkerLister lists a cluster's volunteer workers (sondacluster.ListWorkers).
type WorkerLister func(ctx context.Context) ([]sondacluster.WorkerView, error)

// Workers implements web.Workers.
func (l WorkerLister) Workers(ctx context.Context) ([]web.Worker, error) {
	ws, err := l(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]web.Worker, len(ws))
	for i, w := range ws {
		out[i] = web.Worker{Name: w.Name, State: w.State, Reason: w.Reason, Tasks: w.Tasks, Reissued: w.Reissued,
			Checked: w.Checked, Failed: w.Failed, Lies: w.Lies, PagesPerSecond: w.PagesPerSec, Reputation: w.Reputation}
	}
	return out, nil
}
