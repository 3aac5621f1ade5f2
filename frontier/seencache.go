package frontier

import "sync"

// RecentKeys is a bounded set of recently added URL keys: two generations of at most
// size/2 keys each; when the current one fills, it becomes the previous one and the oldest
// generation is dropped, so memory stays bounded however large the crawl. Keys are only
// ever added, never retracted: a hit is always true, a miss means "not known recently".
//
// The frontier keeps one of recently confirmed members of the seen set, so the links a
// crawl meets again and again (navigation, footers) cost a map lookup instead of a Pebble
// read; package cluster keeps one of the URLs it has routed. A nil *RecentKeys holds
// nothing.
type RecentKeys struct {
	mu        sync.Mutex
	half      int
	cur, prev map[[16]byte]struct{}
	rotations uint64 // times cur became prev
}

// NewRecentKeys returns a set of at most size keys (nil, holding nothing, when size < 2).
func NewRecentKeys(size int) *RecentKeys {
	if size < 2 {
		return nil
	}
	return &RecentKeys{half: size / 2, cur: make(map[[16]byte]struct{}, size/2)}
}

// Has reports whether k was added recently.
func (c *RecentKeys) Has(k [16]byte) bool {
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

// Add adds k.
func (c *RecentKeys) Add(k [16]byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) >= c.half {
		c.prev, c.cur = c.cur, make(map[[16]byte]struct{}, c.half)
		c.rotations++
	}
	c.cur[k] = struct{}{}
}

// mark returns a token for covers.
func (c *RecentKeys) mark() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rotations
}

// covers reports whether every key added since mark returned m is still cached: at most
// one rotation happened, so those keys are in cur or prev. Then a miss is a definite
// "not added since", which lets the frontier trust a seen-set read made before m.
func (c *RecentKeys) covers(m uint64) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rotations <= m+1
}
