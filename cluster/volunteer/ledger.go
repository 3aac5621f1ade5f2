package volunteer

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/store"
)

// The ledger is the provenance of a node's pages: which worker delivered the copy the node
// holds of a page, when the node took it unchecked. It lives in the node's Pebble database
// (store prefix 'c', cluster mode, next to the outbox), so that a node restarted since can
// still purge a worker quarantined later:
//
//	c w <owner> 0 <url key:16>   the page, by worker (what a quarantine purges): wirePage (JSON)
//	c u <url key:16>             the worker whose copy the node holds: its owner
//
// The owner is a worker's name, a zero byte and its public key: a name revoked and admitted
// again is another worker, whose pages are told apart from the first one's (records
// written before 2026-11-27 03:30 UTC have the name alone; they go with any quarantine of
// the name).
//
// A page has at most one record: a later copy replaces it (another worker's unchecked copy
// moves the record, the node's own copy, checked or fetched by itself, removes it). A
// worker's records go when its pages are purged (quarantine) or when it is revoked without
// having been quarantined. So the ledger holds at most one record per page the node holds,
// and only for pages whose current copy came unchecked from a worker still trusted.
var (
	prefixByWorker = []byte("cw")
	prefixByURL    = []byte("cu")
)

type ledger struct {
	db *pebble.DB
	mu sync.Mutex // a page's two records change together
}

// wirePage is what Node.Refetch needs of a page to queue it again.
type wirePage struct {
	URL        string    `json:"u"`
	Host       string    `json:"h"`
	Priority   float64   `json:"p,omitempty"`
	Depth      int       `json:"d,omitempty"`
	Parent     string    `json:"from,omitempty"`
	Visits     int       `json:"v,omitempty"`
	Discovered time.Time `json:"disc,omitzero"`
}

func workerPrefix(worker string) []byte {
	k := append(append([]byte(nil), prefixByWorker...), worker...)
	return append(k, 0)
}

func byWorkerKey(worker string, key [16]byte) []byte { return append(workerPrefix(worker), key[:]...) }

func byURLKey(key [16]byte) []byte { return append(append([]byte(nil), prefixByURL...), key[:]...) }

// holder is the worker whose copy of the page the node holds ("" if none).
func (l *ledger) holder(key [16]byte) (string, error) {
	v, closer, err := l.db.Get(byURLKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("volunteer: read a page's provenance: %w", err)
	}
	defer closer.Close()
	return string(v), nil
}

// accept records that the node took worker's copy of it unchecked.
func (l *ledger) accept(worker string, it frontier.Item) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, err := l.holder(it.Key)
	if err != nil {
		return err
	}
	v, _ := json.Marshal(wirePage{URL: it.URL, Host: it.Host, Priority: it.Priority, Depth: it.Depth, Parent: it.Parent,
		Visits: it.Visits, Discovered: it.Discovered})
	b := l.db.NewBatch()
	defer b.Close()
	if prev != "" && prev != worker {
		_ = b.Delete(byWorkerKey(prev, it.Key), nil)
	}
	_ = b.Set(byWorkerKey(worker, it.Key), v, nil)
	_ = b.Set(byURLKey(it.Key), []byte(worker), nil)
	// No fsync: a batch is in the OS's cache once committed, so it survives the process
	// being killed (the database's own sync bounds what a power failure loses).
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("volunteer: record a page's provenance: %w", err)
	}
	return nil
}

// forget records that the node's copy of the page is its own (checked, or fetched by the
// node): no worker's purge concerns it any more.
func (l *ledger) forget(key [16]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, err := l.holder(key)
	if err != nil || prev == "" {
		return err
	}
	b := l.db.NewBatch()
	defer b.Close()
	_ = b.Delete(byWorkerKey(prev, key), nil)
	_ = b.Delete(byURLKey(key), nil)
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("volunteer: forget a page's provenance: %w", err)
	}
	return nil
}

// pages returns up to limit of the pages the node holds from worker.
func (l *ledger) pages(worker string, limit int) ([]frontier.Item, error) {
	p := workerPrefix(worker)
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: store.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	var out []frontier.Item
	for it.First(); it.Valid() && len(out) < limit; it.Next() {
		var w wirePage
		if len(it.Key()) != len(p)+16 || json.Unmarshal(it.Value(), &w) != nil || w.URL == "" || w.Host == "" {
			continue // not a record this code wrote: left alone
		}
		item := frontier.Item{URL: w.URL, Host: w.Host, Priority: w.Priority, Depth: w.Depth, Parent: w.Parent,
			Visits: w.Visits, Discovered: w.Discovered}
		copy(item.Key[:], it.Key()[len(p):])
		out = append(out, item)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("volunteer: read a worker's pages: %w", err)
	}
	return out, nil
}

// drop removes worker's records of items (purged, or the worker revoked).
func (l *ledger) drop(worker string, items []frontier.Item) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.db.NewBatch()
	defer b.Close()
	for _, it := range items {
		_ = b.Delete(byWorkerKey(worker, it.Key), nil)
		if prev, err := l.holder(it.Key); err != nil {
			return err
		} else if prev == worker {
			_ = b.Delete(byURLKey(it.Key), nil)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("volunteer: drop a worker's pages: %w", err)
	}
	return nil
}
