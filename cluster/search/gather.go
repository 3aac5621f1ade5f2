package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/query"
)

// GathererOptions tune a Gatherer. The zero value is usable.
type GathererOptions struct {
	// Cluster is the cluster's name ("": DefaultCluster).
	Cluster string
	// Timeout is how long a phase waits for a node (default 2 s): a node slower than that
	// is left out of the answer, which names it.
	Timeout time.Duration
	// Ranking is how results are ranked (the zero Ranking: index.DefaultRanking). Every
	// node ranks with it, whatever its own configuration.
	Ranking index.Ranking
	// Operator is what juxtaposed words mean: "and" (default) or "or".
	Operator string
	// MaxResults is the deepest result served (default 1000).
	MaxResults int
}

// Gatherer searches every live node of a cluster and merges their answers.
type Gatherer struct {
	nc      *nats.Conn
	members func(context.Context) ([]string, error)
	o       GathererOptions
	op      query.Operator
	// langs is the collection's analyzer languages as the last search found them: the
	// statistics phase looks words up in them, and runs again when they changed.
	langs atomic.Pointer[[]string]
}

// NewGatherer returns a Gatherer that asks the nodes members lists (the cluster's live
// members; a static list in tests).
func NewGatherer(nc *nats.Conn, members func(context.Context) ([]string, error), o GathererOptions) (*Gatherer, error) {
	if o.Cluster == "" {
		o.Cluster = DefaultCluster
	}
	if err := checkToken("cluster name", o.Cluster); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.MaxResults <= 0 {
		o.MaxResults = 1000
	}
	op := query.And
	if o.Operator != "" {
		var err error
		if op, err = query.ParseOperator(o.Operator); err != nil {
			return nil, fmt.Errorf("cluster search: operator: %w", err)
		}
	}
	if o.Ranking == (index.Ranking{}) {
		o.Ranking = index.DefaultRanking()
	}
	return &Gatherer{nc: nc, members: members, o: o, op: op}, nil
}

// Search answers one page of results over the whole cluster. A malformed query is a
// *index.QueryError; nodes that do not answer are named in the result's Missing.
func (g *Gatherer) Search(ctx context.Context, req index.Request) (*index.Result, error) {
	start := time.Now()
	req = req.Normalized()
	op := g.op
	if req.Operator != "" {
		o, err := query.ParseOperator(req.Operator)
		if err != nil {
			return nil, &index.QueryError{Pos: 0, Msg: err.Error()}
		}
		op = o
	}
	ranking := g.o.Ranking
	if req.Ranking != nil {
		ranking = *req.Ranking
	}
	n, err := query.Parse(req.Query, query.Options{Implicit: op})
	if err != nil {
		return nil, err // a *query.Error for a malformed query
	}
	empty := &index.Result{Page: req.Page, PerPage: req.PerPage, Hits: []index.Hit{}}
	if n == nil {
		empty.Took = time.Since(start)
		return empty, nil
	}
	nodes, err := g.members(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster search: list the cluster's members: %w", err)
	}
	nodes = slices.Clone(nodes)
	sort.Strings(nodes)
	missing := map[string]string{}
	sr := index.ShardRequest{Query: req.Query, Operator: op.String(), Kind: req.Kind, Ranking: ranking,
		Need: req.Page * req.PerPage, Facets: req.Facets, Depth: g.o.MaxResults, Now: start}

	// Phase 1: statistics, in the collection's languages (again when they turn out to
	// have changed since the last search).
	var global *index.CollectionStats
	var live []string
	for attempt := 0; ; attempt++ {
		if l := g.langs.Load(); l != nil {
			sr.Langs = *l
		}
		stats := make([]reply, len(nodes))
		errs := g.scatter(ctx, nodes, phaseStats, func(int) request { return request{Req: sr} }, stats)
		global, live = &index.CollectionStats{}, nil
		for i, node := range nodes {
			if errs[i] != nil {
				missing[node] = errs[i].Error()
				continue
			}
			global.Add(stats[i].Stats)
			live = append(live, node)
		}
		if qe := queryError(stats, errs); qe != nil {
			return nil, qe
		}
		langs := global.Languages()
		if len(live) == 0 || slices.Equal(langs, sr.Langs) || attempt == 1 {
			g.langs.Store(&langs)
			sr.Langs = langs
			break
		}
		g.langs.Store(&langs)
		clear(missing)
	}
	sr.Links = global.Links
	res, err := g.query(ctx, req, 0, sr, ranking, global, live, missing)
	if err != nil {
		return nil, err
	}
	if res.Result.Total < index.FillBelow && res.Relaxable && op == query.And {
		// Fewer than index.FillBelow documents have every word: after them come those with
		// some of them, ranked as one index ranks them (index.Search), and the result says so.
		need := req.Page * req.PerPage
		allSR := sr
		allSR.Need = max(need, index.FillBelow)
		all, err := g.query(ctx, req, allSR.Need, allSR, ranking, global, live, missing)
		if err != nil {
			return nil, err
		}
		or := sr
		or.Operator, or.Need = query.Or.String(), need+len(all.Result.Hits)
		some, err := g.query(ctx, req, or.Need, or, ranking, global, live, missing)
		if err != nil {
			return nil, err
		}
		if some.Result.Total > res.Result.Total {
			res, sr = index.FillGathered(req, g.o.MaxResults, all, some), or
		}
	}
	g.fetch(ctx, sr, res, live, missing)
	out := res.Result
	out.Shards = len(nodes)
	for node := range missing {
		out.Missing = append(out.Missing, node)
	}
	sort.Strings(out.Missing)
	out.Took = time.Since(start)
	return out, nil
}

// query is phase 2 over the live nodes: their best hits, gathered. A node that fails
// joins missing.
func (g *Gatherer) query(ctx context.Context, req index.Request, first int, sr index.ShardRequest, r index.Ranking, global *index.CollectionStats, live []string, missing map[string]string) (*index.Gathered, error) {
	replies := make([]reply, len(live))
	errs := g.scatter(ctx, live, phaseQuery, func(int) request { return request{Req: sr, Global: global} }, replies)
	parts := make([]*index.ShardHits, len(live))
	for i, node := range live {
		if errs[i] != nil {
			missing[node] = errs[i].Error()
			continue
		}
		if err := replies[i].Hits.Validate(); err != nil {
			missing[node] = fmt.Sprintf("query: malformed answer: %v", err)
			continue
		}
		parts[i] = replies[i].Hits
	}
	// Pseudo-relevance feedback. Its errors are the nodes': fs names them in missing.
	fs := &feedbackShards{g: g, sr: sr, global: global, live: live, missing: missing}
	_ = index.GatherFeedback(ctx, r, g.o.MaxResults, global, parts, fs)
	if first > 0 {
		return index.GatherFirst(req, first, r, g.o.MaxResults, global, parts, sr.Now)
	}
	return index.Gather(req, r, g.o.MaxResults, global, parts, sr.Now)
}

// fetch is phase 3: the page's documents from the nodes that hold them. A node that fails
// leaves its results with their ID and score only, and joins missing.
func (g *Gatherer) fetch(ctx context.Context, sr index.ShardRequest, res *index.Gathered, live []string, missing map[string]string) {
	ids := make([][]string, len(live))
	at := make([][]int, len(live)) // where each node's documents go on the page
	var asked []string
	var from []int
	for i, shard := range res.Shards {
		if len(ids[shard]) == 0 {
			asked, from = append(asked, live[shard]), append(from, shard)
		}
		ids[shard] = append(ids[shard], res.Result.Hits[i].ID)
		at[shard] = append(at[shard], i)
	}
	if len(asked) == 0 {
		return
	}
	replies := make([]reply, len(asked))
	errs := g.scatter(ctx, asked, phaseFetch, func(i int) request { return request{Req: sr, IDs: ids[from[i]]} }, replies)
	for i, node := range asked {
		docs := replies[i].Docs
		if errs[i] == nil && len(docs) != len(ids[from[i]]) {
			errs[i] = fmt.Errorf("fetch: %d documents for %d IDs", len(docs), len(ids[from[i]]))
		}
		if errs[i] != nil {
			missing[node] = errs[i].Error()
			continue
		}
		for j, pos := range at[from[i]] {
			h := &res.Result.Hits[pos]
			d := docs[j]
			d.Score = h.Score
			*h = d
		}
	}
}

// scatter sends one phase's request to every node at once and waits for each answer up
// to the timeout; errs[i] is why node i has no answer.
func (g *Gatherer) scatter(ctx context.Context, nodes []string, phase string, build func(i int) request, replies []reply) []error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := build(i)
			req.Budget = g.o.Timeout
			b, err := json.Marshal(req)
			if err != nil {
				errs[i] = fmt.Errorf("encode the %s request: %w", phase, err)
				return
			}
			rctx, cancel := context.WithTimeout(ctx, g.o.Timeout)
			defer cancel()
			m, err := g.nc.RequestWithContext(rctx, Subject(g.o.Cluster, node, phase), b)
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				errs[i] = fmt.Errorf("%s: no node answers (down or not serving searches)", phase)
				return
			case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
				errs[i] = fmt.Errorf("%s: no answer within %v", phase, g.o.Timeout)
				return
			case err != nil:
				errs[i] = fmt.Errorf("%s: %w", phase, err)
				return
			}
			if err := json.Unmarshal(m.Data, &replies[i]); err != nil {
				errs[i] = fmt.Errorf("%s: malformed answer: %w", phase, err)
				return
			}
			rep := replies[i]
			switch {
			case rep.Error != "":
				errs[i] = &nodeError{rep}
			case phase == phaseStats && rep.Stats == nil, phase == phaseQuery && rep.Hits == nil:
				errs[i] = fmt.Errorf("%s: empty answer", phase)
			}
		}()
	}
	wg.Wait()
	return errs
}

// nodeError is an error a node answered with.
type nodeError struct{ rep reply }

func (e *nodeError) Error() string { return e.rep.Error }

// queryError returns the malformed-query error the nodes answered with, if any: the query
// is the same for all, so it is the user's mistake, not the nodes'.
func queryError(replies []reply, errs []error) error {
	for _, err := range errs {
		var ne *nodeError
		if errors.As(err, &ne) && ne.rep.QueryError {
			return &index.QueryError{Pos: ne.rep.QueryPos, Msg: ne.rep.Error}
		}
	}
	return nil
}

// feedbackShards are the live nodes of one search as index.GatherFeedback asks them: shard
// i is live[i]. A node that fails a phase is named in missing.
type feedbackShards struct {
	g       *Gatherer
	sr      index.ShardRequest
	global  *index.CollectionStats
	live    []string
	mu      sync.Mutex // missing: GatherFeedback asks shards concurrently
	missing map[string]string
}

// ask sends one node a phase's request and returns its answer, or names the node in
// missing.
func (f *feedbackShards) ask(ctx context.Context, shard int, phase string, req request) (reply, error) {
	replies := make([]reply, 1)
	err := f.g.scatter(ctx, f.live[shard:shard+1], phase, func(int) request { return req }, replies)[0]
	if err != nil {
		f.fail(f.live[shard], err)
	}
	return replies[0], err
}

func (f *feedbackShards) fail(node string, err error) {
	f.mu.Lock()
	f.missing[node] = err.Error()
	f.mu.Unlock()
}

func (f *feedbackShards) FeedbackDocs(ctx context.Context, shard int, ids []string) ([]index.FeedbackDoc, error) {
	rep, err := f.ask(ctx, shard, phaseFeedbackDocs, request{Req: f.sr, IDs: ids})
	return rep.FeedbackDocs, err
}

func (f *feedbackShards) FeedbackScores(ctx context.Context, shard int, exp *index.FeedbackExpansion, ids []string) ([]float64, error) {
	rep, err := f.ask(ctx, shard, phaseFeedbackScores, request{Req: f.sr, Global: f.global, Expansion: exp, IDs: ids})
	return rep.Scores, err
}

// TermCounts adds up the counts of every live node; one that fails is left out (and
// named in missing), as it is from the statistics.
func (f *feedbackShards) TermCounts(ctx context.Context, terms []index.FieldTerm) ([]uint64, error) {
	replies := make([]reply, len(f.live))
	errs := f.g.scatter(ctx, f.live, phaseTermCounts, func(int) request { return request{Req: f.sr, Terms: terms} }, replies)
	sum := make([]uint64, len(terms))
	answered := 0
	for i, node := range f.live {
		if errs[i] == nil && len(replies[i].Counts) != len(terms) {
			errs[i] = fmt.Errorf("%s: %d counts for %d terms", phaseTermCounts, len(replies[i].Counts), len(terms))
		}
		if errs[i] != nil {
			f.fail(node, errs[i])
			continue
		}
		answered++
		for j, n := range replies[i].Counts {
			sum[j] += n
		}
	}
	if answered == 0 {
		return nil, errors.Join(errs...)
	}
	return sum, nil
}
