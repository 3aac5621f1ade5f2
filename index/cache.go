package index

import (
	"container/list"
	"sync"
	"time"
)

// resultCache is a least-recently-used cache of search results. An entry is valid only for
// the index generation and link-rank version it was computed at, so any write to the index
// and any new PageRank run invalidate every entry without a sweep: stale entries fail the
// check and age out. Seed 002 measured its repeated queries answered 100× faster from
// MySQL's query cache; this is that cache, made safe against serving stale results.
type resultCache struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element
	order   *list.List // front: most recently used
}

type cacheEntry struct {
	key     string
	version cacheVersion
	result  *Result
	expires time.Time // zero: valid as long as its version
}

// partialLifetime is how long a result cut by its time budget (Result.Partial) is served
// from the cache: long enough that a burst of the same heavy query costs one budget, short
// enough that a result cut while the machine was busy does not outlive the rush.
const partialLifetime = 30 * time.Second

type cacheVersion struct {
	gen  uint64
	rank int64
}

func newResultCache(max int) *resultCache {
	if max <= 0 {
		return nil
	}
	return &resultCache{max: max, entries: map[string]*list.Element{}, order: list.New()}
}

func (c *resultCache) get(key string, v cacheVersion) (*Result, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if e.version != v || !e.expires.IsZero() && time.Now().After(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.result, true
}

func (c *resultCache) put(key string, v cacheVersion, r *Result) {
	if c == nil {
		return
	}
	e := &cacheEntry{key: key, version: v, result: r}
	if r.Partial {
		e.expires = time.Now().Add(partialLifetime)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
}

func (c *resultCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
