package frontier

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
)

// Hand-over of hosts between crawler nodes. A cluster node holds in its frontier only the
// hosts it owns; when a share of hosts moves to another node, Purge forgets their queues,
// and the node that takes them rebuilds them with Restore from the cluster's own record.

// Purge deletes the queued URLs of every host match accepts, with their scheduled fetches,
// and forgets the hosts' scheduling state. Hosts with a URL in flight are left alone and
// counted in busy: the caller retries once their leases ended. The seen set, the hosts'
// fetch counts and their rest times are kept.
func (f *Frontier) Purge(match func(host string) bool) (purged int64, busy int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, 0, f.err
	}
	b := f.db.NewBatch()
	defer b.Close()
	var gone []*hostState
	for name, h := range f.hosts {
		if !match(name) {
			continue
		}
		if h.inflight() > 0 {
			busy++
			continue
		}
		for _, q := range []byte{queueNew, queueRevisit} {
			p := queuePrefix(q, name)
			if err := b.DeleteRange(p, store.PrefixEnd(p), nil); err != nil {
				return 0, 0, err
			}
		}
		purged += h.newCount + h.revCount
		f.queuedNew -= h.newCount
		h.newCount, h.revCount = 0, 0
		if err := b.Set(hostKey(name), h.marshal(), nil); err != nil {
			return 0, 0, err
		}
		gone = append(gone, h)
	}
	if len(gone) == 0 {
		return 0, busy, nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		f.err = fmt.Errorf("frontier: commit: %w", err)
		return 0, 0, f.err
	}
	for _, h := range gone {
		f.unschedule(h)
		delete(f.hosts, h.name)
	}
	f.queued -= purged
	f.broadcast()
	return purged, busy, nil
}

// Rests returns the hosts matching match that must still rest (their next request is not
// due yet) and until when, for a host's next crawler (Restore).
func (f *Frontier) Rests(match func(host string) bool) map[string]time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := unixNano(f.opts.Clock())
	out := map[string]time.Time{}
	for name, h := range f.hosts {
		if h.nextFetch > now && match(name) {
			out[name] = time.Unix(0, h.nextFetch)
		}
	}
	return out
}

// Restore queues items without consulting the seen set (they come from an authoritative
// record of what a share of hosts had queued), marks seen as seen, and makes each host of
// rest wait until its time: the rest a host was given by the node that crawled it before.
// Items must not already be queued here (Purge their hosts first). Restored URLs do not
// count toward Options.MaxPerHost again.
func (f *Frontier) Restore(items []Item, seen [][16]byte, rest map[string]time.Time) error {
	b := f.db.NewBatch()
	defer b.Close()
	if err := f.restore(b, items, seen, rest); err != nil {
		return err
	}
	return f.durable()
}

func (f *Frontier) restore(b *pebble.Batch, items []Item, seen [][16]byte, rest map[string]time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	now := f.opts.Clock()
	touched := map[*hostState]bool{}
	mark := func(k [16]byte) error {
		if f.recent.Has(k) {
			return nil
		}
		f.recent.Add(k)
		f.seen++
		return b.Set(seenKey(k), nil, nil)
	}
	for _, k := range seen {
		if err := mark(k); err != nil {
			return err
		}
	}
	for i := range items {
		it := items[i]
		h, err := f.host(it.Host)
		if err != nil {
			return err
		}
		if err := mark(it.Key); err != nil {
			return err
		}
		if it.Discovered.IsZero() {
			it.Discovered = now
		}
		if !it.Due.IsZero() {
			if err := f.enqueueScheduled(b, h, &it); err != nil {
				return err
			}
		} else {
			if err := f.enqueueNew(b, h, &it); err != nil {
				return err
			}
		}
		touched[h] = true
	}
	for name, t := range rest {
		h, err := f.host(name)
		if err != nil {
			return err
		}
		if ns := unixNano(t); ns > h.nextFetch {
			h.nextFetch = ns
		}
		touched[h] = true
	}
	if err := f.writeState(b, touched); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		f.err = fmt.Errorf("frontier: commit: %w", err)
		return f.err
	}
	for h := range touched {
		f.schedule(h, now.UnixNano())
	}
	f.broadcast()
	return nil
}

// Unseen returns the items whose URL is not in the seen set, each URL once: what Add would
// admit (MaxPerHost aside), and the check to admit them with (AddUnseen). A cluster node
// records those before admitting them.
func (f *Frontier) Unseen(items []Item) ([]Item, SeenCheck, error) {
	c := SeenCheck{mark: f.recent.mark(), ok: true}
	out := items[:0:0]
	batch := make(map[[16]byte]bool, len(items))
	for _, it := range items {
		if batch[it.Key] {
			continue
		}
		batch[it.Key] = true
		seen, err := f.isSeen(it.Key)
		if err != nil {
			return nil, SeenCheck{}, fmt.Errorf("frontier: seen-set lookup: %w", err)
		}
		if !seen {
			out = append(out, it)
		}
	}
	return out, c, nil
}

// SeenCheck is when Unseen looked its items up in the seen set (the seen cache's mark
// before the lookups). The zero SeenCheck trusts nothing.
type SeenCheck struct {
	mark uint64
	ok   bool
}

// AddUnseen is AddRecorded for items Unseen found unseen with c: it does not look them up
// in the seen set again. A URL admitted since (by a page, a restore, another admission) is
// in the seen cache, and as long as the cache holds everything added since c's lookups
// (RecentKeys.covers) a miss there proves the item still unseen; otherwise each item is
// read again, as AddRecorded would.
func (f *Frontier) AddUnseen(items []Item, c SeenCheck) (Admission, error) {
	b := f.db.NewBatch()
	defer b.Close()
	return f.add(b, items, seenCheck{mark: c.mark, clean: c.ok})
}

// Seen reports whether the URL with key k was ever admitted here (or restored as seen).
// A cluster node asks before routing a link: what its seen set holds, the cluster's record
// holds too, so the link's owner has it already.
func (f *Frontier) Seen(k [16]byte) (bool, error) { return f.isSeen(k) }
