package linkgraph

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
)

// RankSummary describes a PageRank run.
type RankSummary struct {
	At           time.Time     `json:"at"`
	Took         time.Duration `json:"took"`
	Nodes        int           `json:"nodes"` // URLs with an in-link or an out-link
	Edges        int64         `json:"edges"`
	Iterations   int           `json:"iterations"`
	Delta        float64       `json:"delta"` // L1 change of the last iteration
	Converged    bool          `json:"converged"`
	Damping      float64       `json:"damping"`
	MaxRank      float64       `json:"max_rank"`
	MeanInDegree float64       `json:"mean_in_degree"` // Edges / Nodes
	FromDisk     bool          `json:"from_disk"`      // edges were streamed from disk each iteration
	// Cluster names the cluster over whose whole graph the ranks were computed, when a
	// cluster node stored them (SetRanks, package cluster); empty for this graph's own runs.
	Cluster string `json:"cluster,omitempty"`
}

// rankGraph is the graph as PageRank sees it: nodes by dense index, and either the edges in
// memory (compressed sparse rows) or a way to stream them from a snapshot.
type rankGraph struct {
	nodes   []Key    // sorted
	outdeg  []uint32 // per node
	offsets []uint32 // CSR: edges of node i are targets[offsets[i]:offsets[i+1]]
	targets []uint32
	snap    *pebble.Snapshot
	edges   int64
}

func (rg *rankGraph) index(k Key) (int, bool) {
	i := sort.Search(len(rg.nodes), func(i int) bool { return bytes.Compare(rg.nodes[i][:], k[:]) >= 0 })
	return i, i < len(rg.nodes) && rg.nodes[i] == k
}

// scanEdges calls fn(src, dst) for every edge in the snapshot, in source order.
func (rg *rankGraph) scanEdges(ctx context.Context, fn func(src, dst int)) error {
	lo := []byte{prefix, subOut}
	it, err := rg.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return err
	}
	defer it.Close()
	src := 0
	var sk, dk Key
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n++; n%(1<<16) == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		key := it.Key()
		if len(key) != 2+2*keyLen {
			return fmt.Errorf("linkgraph: corrupt out-edge key of %d bytes", len(key))
		}
		copy(sk[:], key[2:])
		copy(dk[:], key[2+keyLen:])
		for src < len(rg.nodes) && bytes.Compare(rg.nodes[src][:], sk[:]) < 0 {
			src++
		}
		d, ok := rg.index(dk)
		if src >= len(rg.nodes) || rg.nodes[src] != sk || !ok {
			return fmt.Errorf("linkgraph: edge %x→%x has no node (counts and edges disagree; rebuild the graph)", sk, dk)
		}
		fn(src, d)
	}
	return it.Error()
}

// loadRankGraph collects the nodes (every source of an out-edge and every target with an
// in-link count) and, when they fit the memory budget, the edges.
func (g *Graph) loadRankGraph(ctx context.Context, snap *pebble.Snapshot) (*rankGraph, error) {
	rg := &rankGraph{snap: snap}
	var srcs, dsts []Key
	collect := func(sub byte, fn func(key []byte)) error {
		lo := []byte{prefix, sub}
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
		if err != nil {
			return err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			fn(it.Key())
		}
		return it.Error()
	}
	err := collect(subOut, func(key []byte) {
		var k Key
		copy(k[:], key[2:])
		if n := len(srcs); n == 0 || srcs[n-1] != k {
			srcs = append(srcs, k)
		}
		rg.edges++
	})
	if err != nil {
		return nil, fmt.Errorf("linkgraph: read edges: %w", err)
	}
	if err := collect(subCount, func(key []byte) {
		var k Key
		copy(k[:], key[2:])
		dsts = append(dsts, k)
	}); err != nil {
		return nil, fmt.Errorf("linkgraph: read counts: %w", err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// Merge the two sorted lists.
	rg.nodes = make([]Key, 0, len(srcs)+len(dsts))
	i, j := 0, 0
	for i < len(srcs) || j < len(dsts) {
		switch {
		case j == len(dsts) || i < len(srcs) && bytes.Compare(srcs[i][:], dsts[j][:]) < 0:
			rg.nodes = append(rg.nodes, srcs[i])
			i++
		case i == len(srcs) || bytes.Compare(dsts[j][:], srcs[i][:]) < 0:
			rg.nodes = append(rg.nodes, dsts[j])
			j++
		default:
			rg.nodes = append(rg.nodes, srcs[i])
			i, j = i+1, j+1
		}
	}
	srcs, dsts = nil, nil
	rg.outdeg = make([]uint32, len(rg.nodes))
	inMemory := rg.edges*4 <= g.opts.MemoryBudget
	if inMemory {
		rg.offsets = make([]uint32, len(rg.nodes)+1)
		rg.targets = make([]uint32, 0, rg.edges)
	}
	err = rg.scanEdges(ctx, func(src, dst int) {
		rg.outdeg[src]++
		if inMemory {
			rg.targets = append(rg.targets, uint32(dst))
		}
	})
	if err != nil {
		return nil, err
	}
	if inMemory {
		var sum uint32
		for i, d := range rg.outdeg {
			rg.offsets[i] = sum
			sum += d
		}
		rg.offsets[len(rg.nodes)] = sum
	}
	return rg, nil
}

// ComputePageRank computes PageRank over the current graph by power iteration and stores
// every URL's rank. Updates go on while it runs (it reads a snapshot); a second call waits
// for the first.
//
// The model is the standard one: with probability Damping the surfer follows a random
// out-link of the current page, otherwise jumps to a page chosen uniformly; a page without
// out-links (a leaf, or a URL not fetched yet) sends its surfer to a uniformly chosen page.
// Ranks sum to 1.
func (g *Graph) ComputePageRank(ctx context.Context) (RankSummary, error) {
	g.rankMu.Lock()
	defer g.rankMu.Unlock()
	start := time.Now()
	g.changes.Store(0)
	s, nodes, ranks, err := g.pageRank(ctx, start)
	if err == nil {
		err = g.storeRanks(nodes, ranks)
	}
	if err != nil {
		g.changes.Add(1) // try again next time
		return RankSummary{}, err
	}
	s.Took = time.Since(start)
	if err := g.storeSummary(s); err != nil {
		return RankSummary{}, err
	}
	return s, nil
}

// pageRank runs PageRank over a snapshot of the graph: the nodes (sorted), their ranks and
// the run's summary (without Took).
func (g *Graph) pageRank(ctx context.Context, start time.Time) (RankSummary, []Key, []float64, error) {
	snap := g.db.NewSnapshot()
	defer snap.Close()
	rg, err := g.loadRankGraph(ctx, snap)
	if err != nil {
		return RankSummary{}, nil, nil, err
	}
	s := RankSummary{At: start.UTC(), Nodes: len(rg.nodes), Edges: rg.edges, Damping: g.opts.Damping, FromDisk: rg.targets == nil}
	if s.Nodes > 0 {
		s.MeanInDegree = float64(s.Edges) / float64(s.Nodes)
	}
	ranks, iters, delta, err := g.iterate(ctx, rg)
	if err != nil {
		return RankSummary{}, nil, nil, err
	}
	s.Iterations, s.Delta, s.Converged = iters, delta, delta < g.opts.Tolerance
	for _, r := range ranks {
		s.MaxRank = max(s.MaxRank, r)
	}
	return s, rg.nodes, ranks, nil
}

// storeSummary records s as the last PageRank run, on disk and for Signals.
func (g *Graph) storeSummary(s RankSummary) error {
	meta, _ := json.Marshal(s)
	if err := g.db.Set([]byte{prefix, subMeta}, meta, pebble.NoSync); err != nil {
		return fmt.Errorf("linkgraph: store PageRank summary: %w", err)
	}
	g.summary.Store(&s)
	return nil
}

// SetRanks stores ranks computed elsewhere in place of a PageRank run of this graph: the
// rank of keys[i] is ranks[i] (keys sorted, each once), every other URL's rank is
// dropped, and s is the run's summary (its Nodes and MeanInDegree turn ranks and in-link
// counts into priors; see Signals). A cluster node stores so the ranks its leader
// computed over the whole cluster's graph (package cluster): the node's own graph holds
// only its share of the links. A node that stores ranks so must not also compute them
// (ComputePageRank, StartRanking), or its own run replaces them.
func (g *Graph) SetRanks(s RankSummary, keys []Key, ranks []float64) error {
	if len(keys) != len(ranks) {
		return fmt.Errorf("linkgraph: %d ranks for %d keys", len(ranks), len(keys))
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1][:], keys[i][:]) >= 0 {
			return errors.New("linkgraph: SetRanks: keys are not sorted or not distinct")
		}
	}
	g.rankMu.Lock()
	defer g.rankMu.Unlock()
	if err := g.storeRanks(keys, ranks); err != nil {
		return err
	}
	return g.storeSummary(s)
}

// iterate runs the power iteration and returns the ranks, the iterations made and the last
// L1 change.
func (g *Graph) iterate(ctx context.Context, rg *rankGraph) ([]float64, int, float64, error) {
	n := len(rg.nodes)
	if n == 0 {
		return nil, 0, 0, nil
	}
	d := g.opts.Damping
	rank := make([]float64, n)
	next := make([]float64, n)
	for i := range rank {
		rank[i] = 1 / float64(n)
	}
	delta := math.Inf(1)
	iters := 0
	for iters < g.opts.MaxIterations && delta >= g.opts.Tolerance {
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, err
		}
		iters++
		dangling := 0.0
		for u, r := range rank {
			if rg.outdeg[u] == 0 {
				dangling += r
			}
		}
		clear(next)
		if rg.targets != nil {
			for u := 0; u < n; u++ {
				if rg.outdeg[u] == 0 {
					continue
				}
				share := rank[u] / float64(rg.outdeg[u])
				for _, v := range rg.targets[rg.offsets[u]:rg.offsets[u+1]] {
					next[v] += share
				}
			}
		} else if err := rg.scanEdges(ctx, func(u, v int) { next[v] += rank[u] / float64(rg.outdeg[u]) }); err != nil {
			return nil, 0, 0, err
		}
		base := (1-d)/float64(n) + d*dangling/float64(n)
		delta = 0
		for v := range next {
			next[v] = base + d*next[v]
			delta += math.Abs(next[v] - rank[v])
		}
		rank, next = next, rank
	}
	return rank, iters, delta, nil
}

// storeRanks writes every node's rank and deletes the ranks of URLs no longer in the graph.
// It writes in batches of bounded size: a reader may briefly see old and new ranks mixed,
// which changes no ranking by more than one run's difference.
func (g *Graph) storeRanks(nodes []Key, ranks []float64) error {
	const chunk = 1 << 16
	b := g.db.NewBatch()
	flush := func() error {
		if b.Count() == 0 {
			return nil
		}
		err := b.Commit(pebble.NoSync)
		b.Close()
		b = g.db.NewBatch()
		return err
	}
	defer func() { b.Close() }()
	var v [8]byte
	for i, k := range nodes {
		binary.BigEndian.PutUint64(v[:], math.Float64bits(ranks[i]))
		if err := b.Set(nodeKey(subRank, k), v[:], nil); err != nil {
			return err
		}
		if b.Count() >= chunk {
			if err := flush(); err != nil {
				return fmt.Errorf("linkgraph: store ranks: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("linkgraph: store ranks: %w", err)
	}
	// Stale ranks: URLs that left the graph since the last run.
	lo := []byte{prefix, subRank}
	it, err := g.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var k Key
		copy(k[:], it.Key()[2:])
		i := sort.Search(len(nodes), func(i int) bool { return bytes.Compare(nodes[i][:], k[:]) >= 0 })
		if i < len(nodes) && nodes[i] == k {
			continue
		}
		if err := b.Delete(it.Key(), nil); err != nil {
			return err
		}
		if b.Count() >= chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return flush()
}
