package cluster

import "sync"

// forwarded remembers the keys of URLs this node recently routed and JetStream
// acknowledged, so that the links a site repeats on every page (menus, footers) are sent
// to their owner once, not once per page. It holds at most 2×half keys (two generations,
// the older dropped when the newer fills): memory stays bounded however large the crawl.
type forwarded struct {
	mu       sync.Mutex
	half     int
	cur, old map[[16]byte]struct{}
}

func newForwarded(half int) *forwarded {
	return &forwarded{half: half, cur: make(map[[16]byte]struct{}, half)}
}

func (f *forwarded) has(k [16]byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.cur[k]; ok {
		return true
	}
	_, ok := f.old[k]
	return ok
}

func (f *forwarded) add(k [16]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cur) >= f.half {
		f.old, f.cur = f.cur, make(map[[16]byte]struct{}, f.half)
	}
	f.cur[k] = struct{}{}
}
