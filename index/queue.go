package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
)

// queuePrefix is the index's key prefix in the crawl database (see package store): the
// durable queue of documents the crawl committed that the index has not yet persisted.
const queuePrefix = 'i'

// Queue is the index's durable queue in the crawl database. The crawl adds an entry for a
// page in the batch that commits the page's record (Sink.Journal), so a page the store
// keeps is either in the index or in the queue; the index sink removes the entries of a
// batch once that batch is persisted (fsynced) in the index. After a crash the entries
// left are the pages to index again (app catches them up when it opens the directory);
// indexing is by document ID, so indexing a page twice leaves one document.
//
// An entry is queuePrefix, a big-endian sequence number, and the page's URL as value.
type Queue struct {
	db   *pebble.DB
	next atomic.Uint64 // the last sequence number given out
	mu   sync.Mutex    // serializes Remove
	len  atomic.Int64  // entries (as of Open, plus added, minus removed)
}

// OpenQueue opens the queue kept in db.
func OpenQueue(db *store.DB) (*Queue, error) {
	q := &Queue{db: db.Pebble()}
	it, err := q.db.NewIter(&pebble.IterOptions{LowerBound: []byte{queuePrefix}, UpperBound: []byte{queuePrefix + 1}})
	if err != nil {
		return nil, fmt.Errorf("index: open queue: %w", err)
	}
	defer it.Close()
	var n int64
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	if it.Last() {
		seq, ok := queueSeq(it.Key())
		if !ok {
			return nil, fmt.Errorf("index: queue key %q is malformed", it.Key())
		}
		q.next.Store(seq)
	}
	q.len.Store(n)
	return q, it.Error()
}

func queueKey(seq uint64) []byte {
	k := make([]byte, 9)
	k[0] = queuePrefix
	binary.BigEndian.PutUint64(k[1:], seq)
	return k
}

func queueSeq(k []byte) (uint64, bool) {
	if len(k) != 9 || k[0] != queuePrefix {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// Add writes an entry for url into w (the batch that commits the page) and returns its
// sequence number.
func (q *Queue) Add(w store.Writer, url string) (uint64, error) {
	seq := q.next.Add(1)
	if err := w.Set(queueKey(seq), []byte(url), nil); err != nil {
		return 0, fmt.Errorf("index: queue %s: %w", url, err)
	}
	q.len.Add(1)
	return seq, nil
}

// Len is the number of entries: pages committed and not yet persisted in the index.
func (q *Queue) Len() int { return int(q.len.Load()) }

// Entries calls fn with every entry, oldest first, until fn returns an error.
func (q *Queue) Entries(fn func(seq uint64, url string) error) error {
	it, err := q.db.NewIter(&pebble.IterOptions{LowerBound: []byte{queuePrefix}, UpperBound: []byte{queuePrefix + 1}})
	if err != nil {
		return fmt.Errorf("index: read queue: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		seq, ok := queueSeq(it.Key())
		if !ok {
			return fmt.Errorf("index: queue key %q is malformed", it.Key())
		}
		if err := fn(seq, string(it.Value())); err != nil {
			return err
		}
	}
	return it.Error()
}

// Remove deletes the entries seqs. Callers remove only entries whose documents are
// persisted in the index: Pebble's log is ordered, so the deletion never survives a crash
// that the entry's page record did not.
func (q *Queue) Remove(seqs []uint64) error {
	if len(seqs) == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.db.NewBatch()
	defer b.Close()
	for _, s := range seqs {
		if err := b.Delete(queueKey(s), nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		if errors.Is(err, pebble.ErrClosed) {
			return fmt.Errorf("index: remove queue entries: the database is closed")
		}
		return fmt.Errorf("index: remove queue entries: %w", err)
	}
	q.len.Add(-int64(len(seqs)))
	return nil
}
