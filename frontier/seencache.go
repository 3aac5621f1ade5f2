package frontier

import "sync"

// seenCache remembers recently confirmed members of the seen set, so the links a crawl
// meets again and again (navigation, footers) cost a map lookup instead of a Pebble read.
// It is bounded: two generations of at most size/2 keys each; when the current one fills,
// it becomes the previous one and the oldest generation is dropped. Membership is only ever
// added, never retracted, so a hit is always true; a miss just means "ask Pebble".
type seenCache struct {
	mu        sync.Mutex
	half      int
	cur, prev map[[16]byte]struct{}
}

func newSeenCache(size int) *seenCache {
	if size < 2 {
		return nil
	}
	return &seenCache{half: size / 2, cur: make(map[[16]byte]struct{}, size/2)}
}

func (c *seenCache) has(k [16]byte) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[k]; ok {
		return true
	}
	_, ok := c.prev[k]
	return ok
}

func (c *seenCache) add(k [16]byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) >= c.half {
		c.prev, c.cur = c.cur, make(map[[16]byte]struct{}, c.half)
	}
	c.cur[k] = struct{}{}
}
