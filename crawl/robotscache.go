package crawl

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/robots"
)

// robotsCache keeps each origin's robots.txt entry: a bounded set in memory, all of them
// in the store (prefix 'r'), so a resumed crawl does not refetch robots.txt files it still
// trusts. It also makes sure only one fetch of an origin's robots.txt runs at a time.
type robotsCache struct {
	db    *pebble.DB
	agent string
	limit int
	// since is when the current run started: an unreachable entry from before it is stale
	// whatever its retry time, so a resumed crawl asks again at once for the robots.txt
	// files that made the last run end with hosts waiting.
	since time.Time

	mu       sync.Mutex
	slots    map[string]*list.Element // origin → *robotsSlot in lru
	lru      *list.List               // front: most recently used
	fetching map[string]chan struct{} // origins whose robots.txt is being fetched
}

type robotsSlot struct {
	origin string
	entry  *robots.Entry
	group  robots.Group // entry's group for our agent, computed once
}

func newRobotsCache(db *pebble.DB, agent string, limit int) *robotsCache {
	return &robotsCache{db: db, agent: agent, limit: limit, slots: map[string]*list.Element{}, lru: list.New(), fetching: map[string]chan struct{}{}}
}

func robotsKey(origin string) []byte { return append([]byte{'r'}, origin...) }

// lookup returns the origin's current entry. When there is none (or it expired) and nobody
// is fetching it, fetch is true: the caller must fetch robots.txt and call store (or
// abandon). When another goroutine is fetching it, wait is a channel closed when it is done.
func (c *robotsCache) lookup(origin string, now time.Time) (slot *robotsSlot, fetch bool, wait <-chan struct{}, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.slots[origin]; ok {
		s := el.Value.(*robotsSlot)
		if !c.stale(s.entry, now) {
			c.lru.MoveToFront(el)
			return s, false, nil, nil
		}
	} else if s, err := c.load(origin); err != nil {
		return nil, false, nil, err
	} else if s != nil && !c.stale(s.entry, now) {
		c.remember(s)
		return s, false, nil, nil
	}
	if ch, ok := c.fetching[origin]; ok {
		return nil, false, ch, nil
	}
	c.fetching[origin] = make(chan struct{})
	return nil, true, nil, nil
}

// stale reports whether e must be fetched again. Callers hold c.mu.
func (c *robotsCache) stale(e *robots.Entry, now time.Time) bool {
	return e.Expired(now) || e.Outcome == robots.Unreachable && e.FetchedAt.Before(c.since)
}

// startRun marks the start of a run (see since).
func (c *robotsCache) startRun(t time.Time) {
	c.mu.Lock()
	c.since = t
	c.mu.Unlock()
}

// previous returns the last entry known for origin, expired or not (its failure count
// matters to robots.FromFetch).
func (c *robotsCache) previous(origin string) (*robots.Entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.slots[origin]; ok {
		return el.Value.(*robotsSlot).entry, nil
	}
	s, err := c.load(origin)
	if s == nil || err != nil {
		return nil, err
	}
	return s.entry, nil
}

// load reads origin's entry from the store; nil when there is none. Callers hold c.mu.
func (c *robotsCache) load(origin string) (*robotsSlot, error) {
	v, closer, err := c.db.Get(robotsKey(origin))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("crawl: read robots.txt entry of %s: %w", origin, err)
	}
	defer closer.Close()
	e := new(robots.Entry)
	if err := e.UnmarshalBinary(v); err != nil {
		return nil, nil // an unreadable entry is as good as none: fetch again
	}
	return &robotsSlot{origin: origin, entry: e, group: e.Rules().Group(c.agent)}, nil
}

// remember puts s in the memory cache, evicting the least recently used. Callers hold c.mu.
func (c *robotsCache) remember(s *robotsSlot) {
	if el, ok := c.slots[s.origin]; ok {
		el.Value = s
		c.lru.MoveToFront(el)
		return
	}
	c.slots[s.origin] = c.lru.PushFront(s)
	for c.lru.Len() > c.limit {
		old := c.lru.Remove(c.lru.Back()).(*robotsSlot)
		delete(c.slots, old.origin)
	}
}

// store records a freshly fetched entry and wakes the goroutines waiting for it.
func (c *robotsCache) store(origin string, e *robots.Entry) (*robotsSlot, error) {
	b, err := e.MarshalBinary()
	if err != nil {
		c.abandon(origin)
		return nil, fmt.Errorf("crawl: encode robots.txt entry of %s: %w", origin, err)
	}
	// Losing this write in a crash only costs one more robots.txt fetch.
	if err := c.db.Set(robotsKey(origin), b, pebble.NoSync); err != nil {
		c.abandon(origin)
		return nil, fmt.Errorf("crawl: store robots.txt entry of %s: %w", origin, err)
	}
	s := &robotsSlot{origin: origin, entry: e, group: e.Rules().Group(c.agent)}
	c.mu.Lock()
	c.remember(s)
	c.release(origin)
	c.mu.Unlock()
	return s, nil
}

// abandon ends a fetch that produced no entry (the crawl is stopping).
func (c *robotsCache) abandon(origin string) {
	c.mu.Lock()
	c.release(origin)
	c.mu.Unlock()
}

func (c *robotsCache) release(origin string) {
	if ch, ok := c.fetching[origin]; ok {
		close(ch)
		delete(c.fetching, origin)
	}
}
