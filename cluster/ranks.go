package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/urlnorm"
)

// Ranks across the cluster. PageRank is a property of the whole web graph, and each node
// holds only a share of it: its pages' out-links and the links routed to its partitions.
// Its own PageRank over that share would rank its pages unlike one machine holding every
// page. So one node, the leader (the live member with the lowest id among those that
// rank), computes PageRank over the whole cluster's graph and publishes each partition's
// ranks; every node stores, in its link graph, the ranks of the partitions whose links it
// records (those it fetched pages in), with the whole graph's summary (its URL count and
// mean in-degree turn ranks and in-link counts into priors). A cluster then ranks as one
// index over all its pages does, to the last bit: the leader's graph is one machine's.
//
// The whole graph is in the state stream already: every page's links, one compacting
// subject per page (links.go). The leader reads the last message of each into a
// linkgraph.Ranker (on disk, in the node's data directory), ranks
// it, and publishes run R's ranks of partition p as chunks on subjects
// ranks.<R>.<p>.<chunk> of the ranks stream, then the run's record (its id, chunk counts,
// summary and the last links message it read) in the ranks bucket, with compare-and-set:
// of two nodes that both thought they led, one publishes, the other drops its chunks.
// Chunks of runs before the previous one are purged.
//
// Cost and bounds: the leader's memory is what PageRank over the whole graph costs one
// machine (linkgraph.Ranker: about 200 bytes per URL at the peak, plus 4 per edge up to
// 256 MiB, beyond which the edges are read from disk at each iteration; the links
// themselves wait on disk): 10 million URLs take about 2 GB. Past that, the ranks would
// need a power iteration distributed over the nodes, each iteration sending every
// cross-partition edge's share over NATS. A node's memory while it stores ranks is 24
// bytes per URL of its partitions (one run's chunks of them in flight). A run reads every
// page's links once (about 0.1 ms of CPU per page on the leader, NATS server included):
// the leader runs it every search.pagerank-interval when links changed, and at once when
// the cluster finished (Options.ExitWhenDone), before any node leaves.

// RankStore is where a node stores the ranks the leader computed (a *linkgraph.Graph).
type RankStore interface {
	SetRanks(s linkgraph.RankSummary, keys []linkgraph.Key, ranks []float64) error
}

// rankRun is the record of a published run of PageRank over the whole cluster.
type rankRun struct {
	ID      string                `json:"id"`
	Prev    string                `json:"prev,omitempty"` // the run it replaced
	Upto    uint64                `json:"upto"`           // the state stream's last links message it read
	Chunks  []int                 `json:"chunks"`         // per partition
	Summary linkgraph.RankSummary `json:"summary"`
}

// rankChunk is how many ranks one message carries (24 bytes each: key, float64).
const rankChunk = 16 << 10

// ReceiveRanks makes the node take part in the cluster's ranking: it stores in g the
// ranks of the partitions whose links it records (ReceiveInLinks), and, when it leads,
// computes them every interval when links changed, in a scratch directory under dir.
// The node's own PageRank must be off (app.Options.RanksFromElsewhere). Call it before
// Run.
func (n *Node) ReceiveRanks(g RankStore, dir string, every time.Duration) {
	n.rankStore, n.rankDir, n.rankEvery = g, dir, every
}

// openRanks opens the ranks bucket and stream.
func (n *Node) openRanks(ctx context.Context) error {
	var err error
	if n.rankKV, err = openKV(ctx, n.js, jetstream.KeyValueConfig{Bucket: n.names.ranks(), History: 1,
		Description: "sonda cluster " + n.names.cluster + ": the last PageRank run over the whole cluster"}); err != nil {
		return err
	}
	if n.rankStream, err = n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.names.ranks(), Subjects: []string{n.names.prefix() + "ranks.>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage,
		Description: "sonda cluster " + n.names.cluster + ": PageRank over the whole cluster, by run and partition",
	}); err != nil {
		return jsError("create stream "+n.names.ranks(), err)
	}
	return nil
}

// watchRanks keeps the last published run in view.
func (n *Node) watchRanks(ctx context.Context) {
	n.watch(ctx, n.rankKV, func(e jetstream.KeyValueEntry) {
		if e.Key() != "run" || e.Operation() != jetstream.KeyValuePut {
			return
		}
		var r rankRun
		if json.Unmarshal(e.Value(), &r) == nil {
			n.setRun(&r)
		}
	})
}

// setRun records r as the last run seen, unless a later one is known.
func (n *Node) setRun(r *rankRun) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lastRun == nil || r.Upto >= n.lastRun.Upto {
		n.lastRun = r
	}
}

func (n *Node) currentRun() *rankRun {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastRun
}

// rankLoop computes the ranks when this node leads, and stores those of its partitions.
func (n *Node) rankLoop(ctx context.Context) {
	n.every(ctx, n.tick(), func() { n.rankStep(ctx, false) })
}

// rankStep publishes a new run when this node leads and the links changed since the last
// (at once when final, otherwise every rankEvery), then stores the last run's ranks of
// this node's partitions if it has not yet.
func (n *Node) rankStep(ctx context.Context, final bool) {
	n.rankMu.Lock()
	defer n.rankMu.Unlock()
	if n.leads() {
		run := n.currentRun()
		// search.pagerank-interval 0: ranks at the end of a crawl only, as on one machine.
		if final || n.rankEvery > 0 && (run == nil || time.Since(n.rankedAt) >= n.rankEvery) {
			err := n.migrateEdges(ctx) // links of an earlier format would be missed
			var upto uint64
			if err == nil {
				upto, err = n.lastEdges(ctx)
			}
			if err == nil && upto > 0 && (run == nil || upto > run.Upto) {
				n.rankedAt = time.Now()
				if err := n.publishRanks(ctx, upto); err != nil && ctx.Err() == nil {
					n.log.Warn("computing PageRank over the cluster failed; retrying", "error", err)
					n.rankedAt = time.Time{}
				}
			}
		}
	}
	if err := n.storeRanks(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("storing the cluster's PageRank failed; retrying", "error", err)
	}
}

// leads says this node computes the cluster's ranks: the live member with the lowest id
// of those that rank.
func (n *Node) leads() bool {
	if n.rankStore == nil {
		return false
	}
	live := n.live()
	if _, ok := live[n.opts.NodeID]; !ok {
		return false
	}
	for id, m := range live {
		if m.Ranks && id < n.opts.NodeID {
			return false
		}
	}
	return true
}

// lastEdges is the sequence of the last links message in the state stream (0: none).
func (n *Node) lastEdges(ctx context.Context) (uint64, error) {
	m, err := n.state.GetLastMsgForSubject(ctx, n.names.allEdges())
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return m.Sequence, nil
}

// publishRanks ranks the whole graph (every links message up to upto at least) and
// publishes the run.
func (n *Node) publishRanks(ctx context.Context, upto uint64) error {
	var prev *rankRun
	var rev uint64
	switch e, err := n.rankKV.Get(ctx, "run"); {
	case errors.Is(err, jetstream.ErrKeyNotFound):
	case err != nil:
		return err
	default:
		rev = e.Revision()
		prev = &rankRun{}
		if err := json.Unmarshal(e.Value(), prev); err != nil {
			prev = nil
		}
	}
	r, err := linkgraph.NewRanker(filepath.Join(n.rankDir, "cluster-ranks.tmp"), linkgraph.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	read, err := n.readGraph(ctx, r)
	if err != nil {
		return err
	}
	sum, err := r.Rank(ctx)
	if err != nil {
		return err
	}
	run := &rankRun{ID: n.opts.NodeID + "-" + newIncarnation(), Upto: max(upto, read), Chunks: make([]int, n.nparts), Summary: sum}
	if prev != nil {
		run.Prev = prev.ID
	}
	var futures []jetstream.PubAckFuture
	for p := range n.nparts {
		buf := make([]byte, 0, 24*rankChunk)
		send := func() error {
			f, err := n.js.PublishAsync(n.names.rankChunk(run.ID, p, run.Chunks[p]), buf)
			if err != nil {
				return err
			}
			futures = append(futures, f)
			run.Chunks[p]++
			buf = make([]byte, 0, 24*rankChunk)
			return nil
		}
		err := r.Ranks(uint32(p), func(k linkgraph.Key, rank float64) error {
			buf = append(buf, k[:]...)
			buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(rank))
			if len(buf) == cap(buf) {
				return send()
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			err = send()
		}
		if err != nil {
			return err
		}
		if len(futures) >= 64 {
			if err := waitAcks(ctx, futures); err != nil {
				return err
			}
			futures = futures[:0]
		}
	}
	if err := waitAcks(ctx, futures); err != nil {
		return err
	}
	val, _ := json.Marshal(run)
	if rev == 0 {
		_, err = n.rankKV.Create(ctx, "run", val)
	} else {
		_, err = n.rankKV.Update(ctx, "run", val, rev)
	}
	if err != nil {
		_ = n.rankStream.Purge(ctx, jetstream.WithPurgeSubject(n.names.rankRun(run.ID)))
		return fmt.Errorf("another node published ranks meanwhile: %w", err)
	}
	n.setRun(run)
	n.log.Info("PageRank computed over the cluster", "urls", sum.Nodes, "links", sum.Edges, "iterations", sum.Iterations, "took", sum.Took)
	n.purgeRuns(ctx, run.ID, run.Prev)
	return nil
}

// readGraph adds to r the last links message of every page, and returns the sequence of
// the last one it read.
func (n *Node) readGraph(ctx context.Context, r *linkgraph.Ranker) (uint64, error) {
	cons, err := n.state.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{n.names.allEdges()}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return 0, err
	}
	it, err := cons.Messages()
	if err != nil {
		return 0, err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	var last uint64
	for {
		m, err := it.Next()
		if err != nil {
			return 0, err
		}
		meta, err := m.Metadata()
		if err != nil {
			return 0, err
		}
		last = max(last, meta.Sequence.Stream)
		if e, err := decodeEdges(m.Data()); err == nil {
			// The ranker tags each URL with its partition: the links go in by theirs.
			byPart := map[int][]linkgraph.Link{}
			for _, l := range e.Links {
				if h := urlnorm.HostOf(l.URL); h != "" {
					p := n.partitionOf(h)
					byPart[p] = append(byPart[p], linkgraph.Link{URL: l.URL})
				}
			}
			src := uint32(n.partitionOf(urlnorm.HostOf(e.Src)))
			for p, links := range byPart {
				if err := r.Add(e.Src, src, links, uint32(p)); err != nil {
					return 0, err
				}
			}
		}
		if meta.NumPending == 0 {
			return last, nil
		}
	}
}

// purgeRuns deletes the chunks of every run but keep.
func (n *Node) purgeRuns(ctx context.Context, keep ...string) {
	prefix := n.names.prefix() + "ranks."
	info, err := n.rankStream.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return
	}
	gone := map[string]bool{}
	for subj := range info.State.Subjects {
		id, _, _ := strings.Cut(strings.TrimPrefix(subj, prefix), ".")
		if !slices.Contains(keep, id) {
			gone[id] = true
		}
	}
	for id := range gone {
		_ = n.rankStream.Purge(ctx, jetstream.WithPurgeSubject(n.names.rankRun(id)))
	}
}

// storeRanks stores the last run's ranks of the partitions this node records links of, if
// it has not yet (a new run, or a partition it started following since).
func (n *Node) storeRanks(ctx context.Context) error {
	run := n.currentRun()
	if run == nil {
		return nil
	}
	n.mu.Lock()
	parts := make([]int, 0, len(n.follows))
	for p := range n.follows {
		parts = append(parts, p)
	}
	n.mu.Unlock()
	sort.Ints(parts)
	if run.ID == n.storedRun && slices.Equal(parts, n.storedParts) {
		return nil
	}
	type entry struct {
		k    linkgraph.Key
		rank float64
	}
	var all []entry
	for _, p := range parts {
		if p >= len(run.Chunks) {
			continue
		}
		for c := range run.Chunks[p] {
			m, err := n.rankStream.GetLastMsgForSubject(ctx, n.names.rankChunk(run.ID, p, c))
			if err != nil {
				return fmt.Errorf("run %s, partition %d: %w", run.ID, p, err)
			}
			for b := m.Data; len(b) >= 24; b = b[24:] {
				all = append(all, entry{k: linkgraph.Key(b[:16]), rank: math.Float64frombits(binary.BigEndian.Uint64(b[16:24]))})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return bytes.Compare(all[i].k[:], all[j].k[:]) < 0 })
	keys := make([]linkgraph.Key, len(all))
	ranks := make([]float64, len(all))
	for i, e := range all {
		keys[i], ranks[i] = e.k, e.rank
	}
	sum := run.Summary
	sum.Cluster = n.names.cluster // what is stored says where it came from (app.Rebuild keeps it)
	if err := n.rankStore.SetRanks(sum, keys, ranks); err != nil {
		return err
	}
	n.storedRun, n.storedParts = run.ID, parts
	n.rankedRuns.Add(1)
	return nil
}

// finalRanks, once the cluster is done, waits until the ranks of a run that read every
// link are stored here (computing them when this node leads), so that the nodes' indexes
// rank as one when they leave.
func (n *Node) finalRanks(ctx context.Context) {
	upto, err := n.lastEdges(ctx)
	if err != nil || upto == 0 {
		return
	}
	deadline := time.Now().Add(max(time.Minute, 10*n.ttl))
	for ctx.Err() == nil {
		n.rankStep(ctx, true)
		n.rankMu.Lock()
		stored := n.storedRun
		n.rankMu.Unlock()
		if run := n.currentRun(); run != nil && run.Upto >= upto && run.ID == stored {
			return
		}
		if time.Now().After(deadline) {
			n.log.Warn("the cluster's final PageRank did not arrive; this node's index keeps the last ranks it stored")
			return
		}
		sleep(ctx, 50*time.Millisecond)
	}
}
