package linkgraph

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
)

// A Ranker computes PageRank over a graph it is handed page by page, in a database of its
// own that it deletes when closed: a cluster's leader ranks so the whole cluster's graph,
// of which each node holds only a share (package cluster). It keeps only what PageRank
// reads (the out-edges by key, and which URLs have in-links), none of a Graph's anchors,
// in-edges or counts, and gives each URL a tag (a cluster partition) by which the ranks
// are read back, one tag at a time.
//
// Its ranks equal those of a Graph holding the same links (SetLinks of every page; Add
// keeps and drops links as SetLinks does) to the last bit: the nodes, their order and the
// edges PageRank iterates over are the same, and so is the arithmetic.
//
// Memory: what ComputePageRank needs for the same graph: its arrays take about 40 bytes
// per URL plus 4 per edge up to Options.MemoryBudget (beyond it the edges are read from
// disk at each iteration); with the key lists they are built from and the garbage
// collector's slack the heap peaks about 200 bytes per URL higher (85 MiB for 411,000
// URLs and 351,000 edges, Pebble's memtables included). Disk: about 50 bytes per edge,
// while the Ranker is open.
//
// Key space of its database, besides the Graph's 'l o', 'l c' and 'l m':
//
//	l t <key>               the URL's tag: uvarint
//	l T <tag u32> <key>     the URL's rank, by tag: float64 bits
type Ranker struct {
	dir string
	db  *store.DB
	g   *Graph
	b   *pebble.Batch
}

const (
	subTag    = 't'
	subByTag  = 'T'
	batchSize = 4 << 20
)

// NewRanker opens a Ranker on an empty database in dir (whatever dir held is deleted).
func NewRanker(dir string, opts Options) (*Ranker, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("linkgraph: ranker: %w", err)
	}
	db, err := store.Open(dir, store.Options{SyncInterval: -1, MemTableSize: 8 << 20, CacheSize: 16 << 20})
	if err != nil {
		return nil, fmt.Errorf("linkgraph: ranker: %w", err)
	}
	g, err := Open(db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Ranker{dir: dir, db: db, g: g, b: db.Pebble().NewBatch()}, nil
}

// Add records the links of the page at src (a canonical URL, tagged srcTag) to targets
// tagged dstTag. A page's links may come in several calls (one per tag of their targets);
// links to one target count once, whatever their anchors, as in a Graph.
func (r *Ranker) Add(src string, srcTag uint32, links []Link, dstTag uint32) error {
	if len(src) > maxURLSize {
		return nil // SetLinks refuses such a page: it has no links in a Graph either
	}
	sk := KeyOf(src)
	added := false
	for _, l := range links {
		if l.URL == "" || l.URL == src || len(l.URL) > maxURLSize {
			continue
		}
		dk := KeyOf(l.URL)
		if err := r.b.Set(edgeKey(subOut, sk, dk), nil, nil); err != nil {
			return err
		}
		if err := r.b.Set(nodeKey(subCount, dk), nil, nil); err != nil { // PageRank reads the key only
			return err
		}
		if err := r.b.Set(nodeKey(subTag, dk), binary.AppendUvarint(nil, uint64(dstTag)), nil); err != nil {
			return err
		}
		added = true
	}
	if added {
		if err := r.b.Set(nodeKey(subTag, sk), binary.AppendUvarint(nil, uint64(srcTag)), nil); err != nil {
			return err
		}
	}
	if r.b.Len() >= batchSize {
		return r.flush()
	}
	return nil
}

func (r *Ranker) flush() error {
	if r.b.Count() == 0 {
		return nil
	}
	if err := r.b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("linkgraph: ranker: %w", err)
	}
	r.b.Reset()
	return nil
}

// Rank computes PageRank over what was added and files the ranks by tag (Ranks).
func (r *Ranker) Rank(ctx context.Context) (RankSummary, error) {
	if err := r.flush(); err != nil {
		return RankSummary{}, err
	}
	start := time.Now()
	s, nodes, ranks, err := r.g.pageRank(ctx, start)
	if err != nil {
		return RankSummary{}, err
	}
	// The tags are in key order, as the nodes.
	db := r.db.Pebble()
	lo := []byte{prefix, subTag}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return RankSummary{}, err
	}
	defer it.Close()
	i := 0
	var v [8]byte
	for it.First(); it.Valid() && i < len(nodes); it.Next() {
		var k Key
		copy(k[:], it.Key()[2:])
		if k != nodes[i] {
			return RankSummary{}, fmt.Errorf("linkgraph: ranker: URL %x has a tag and no place in the graph", k)
		}
		tag, n := binary.Uvarint(it.Value())
		if n <= 0 {
			return RankSummary{}, fmt.Errorf("linkgraph: ranker: corrupt tag of %x", k)
		}
		key := make([]byte, 0, 2+4+keyLen)
		key = append(key, prefix, subByTag)
		key = binary.BigEndian.AppendUint32(key, uint32(tag))
		key = append(key, k[:]...)
		binary.BigEndian.PutUint64(v[:], math.Float64bits(ranks[i]))
		if err := r.b.Set(key, v[:], nil); err != nil {
			return RankSummary{}, err
		}
		if r.b.Len() >= batchSize {
			if err := r.flush(); err != nil {
				return RankSummary{}, err
			}
		}
		i++
	}
	if err := it.Error(); err != nil {
		return RankSummary{}, err
	}
	if i != len(nodes) {
		return RankSummary{}, fmt.Errorf("linkgraph: ranker: %d of %d URLs have a tag", i, len(nodes))
	}
	if err := r.flush(); err != nil {
		return RankSummary{}, err
	}
	s.Took = time.Since(start)
	return s, nil
}

// Ranks calls fn with the rank of every URL tagged tag, in key order (after Rank).
func (r *Ranker) Ranks(tag uint32, fn func(k Key, rank float64) error) error {
	lo := binary.BigEndian.AppendUint32([]byte{prefix, subByTag}, tag)
	it, err := r.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var k Key
		copy(k[:], it.Key()[len(lo):])
		if err := fn(k, math.Float64frombits(binary.BigEndian.Uint64(it.Value()))); err != nil {
			return err
		}
	}
	return it.Error()
}

// Close closes the Ranker and deletes its database.
func (r *Ranker) Close() error {
	r.b.Close()
	r.g.Close()
	err := r.db.Close()
	if rerr := os.RemoveAll(r.dir); err == nil {
		err = rerr
	}
	return err
}
