package crawl

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// largeBodies bounds the memory of the large bodies (over fetch.LargeBody) a crawl
// holds at once, from the moment one grows past that size until its page is processed
// (fetch.large-body-memory). Each takes the most it may grow to, at once and only once,
// so a body that holds memory never waits for more: no two pages can wait on each
// other. Small bodies never wait; with the default 10 MiB max-body and 256 workers a
// crawl's bodies could otherwise take 2.5 GiB.
type largeBodies struct {
	sem        *semaphore.Weighted
	capacity   int64
	held, peak atomic.Int64 // bytes admitted now, and at most so far
}

// newLargeBodies returns nil (no bound) for capacity ≤ 0.
func newLargeBodies(capacity int64) *largeBodies {
	if capacity <= 0 {
		return nil
	}
	return &largeBodies{sem: semaphore.NewWeighted(capacity), capacity: capacity}
}

// admission is one page's claim: admit is its fetch.Request.Admit, and release gives
// back what admit took (call it once the page's body is no longer held).
func (l *largeBodies) admission() (admit func(context.Context, int64) error, release func()) {
	if l == nil {
		return nil, func() {}
	}
	var held int64
	admit = func(ctx context.Context, maxBytes int64) error {
		n := min(maxBytes, l.capacity) // a body larger than the whole bound has it alone
		if err := l.sem.Acquire(ctx, n); err != nil {
			return err
		}
		held = n
		now := l.held.Add(n)
		for p := l.peak.Load(); now > p && !l.peak.CompareAndSwap(p, now); p = l.peak.Load() {
		}
		return nil
	}
	release = func() {
		if held > 0 {
			l.held.Add(-held)
			l.sem.Release(held)
			held = 0
		}
	}
	return admit, release
}
