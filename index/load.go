package index

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// How an index bounds the cost of searches under load: at most Options.MaxSearches run at
// once and the others queue for a turn (a cached answer needs none), and each search
// collects matches for at most Options.Budget. Without the first, 32 clients on two cores
// share them 32 ways and every search takes 16 times as long; without the second, one
// query of dozens of common words holds a core for seconds.

// ErrBusy is returned by Search when no turn came within Options.QueueWait: the server is
// overloaded (an API answers 503 with Retry-After).
var ErrBusy = errors.New("index: too many searches at once")

// takeTurn waits for one of the index's search turns, at most Options.QueueWait; release
// gives it back.
func (ix *Index) takeTurn(ctx context.Context) (release func(), err error) {
	select {
	case ix.turns <- struct{}{}:
		return func() { <-ix.turns }, nil
	default:
	}
	wait := time.NewTimer(ix.opts.QueueWait)
	defer wait.Stop()
	select {
	case ix.turns <- struct{}{}:
		return func() { <-ix.turns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-wait.C:
		return nil, fmt.Errorf("%w: %d are running and none finished within %s; try again in a moment", ErrBusy, cap(ix.turns), ix.opts.QueueWait)
	}
}

// budget is the time a search may spend collecting matches; the collectors of one search
// (relaxed queries run two) share it.
type budget struct {
	until time.Time
	hit   atomic.Bool
}

type budgetKey struct{}

// over reports whether the budget is spent, remembering it; a nil budget never is.
func (b *budget) over() bool {
	if b == nil {
		return false
	}
	if b.hit.Load() || time.Now().After(b.until) {
		b.hit.Store(true)
		return true
	}
	return false
}

// spent reports whether a collector stopped at the budget.
func (b *budget) spent() bool { return b != nil && b.hit.Load() }
