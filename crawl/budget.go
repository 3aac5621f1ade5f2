package crawl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/store"
)

// pacer spaces leases evenly at crawl.budget per second across all workers: the fetch
// budget that discovery and revisits share. Each worker reserves the next free slot before
// it asks the frontier for a URL, so the URL is chosen when its turn comes (a revisit due
// by then is taken first, as the frontier prefers due revisits) rather than long before.
// It adds to politeness and never replaces it: hosts still rest between requests.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time // the next free slot
}

func newPacer(perSecond float64) *pacer {
	if perSecond <= 0 {
		return nil
	}
	return &pacer{interval: time.Duration(float64(time.Second) / perSecond)}
}

// wait blocks until the caller's slot. A slot left unused while its worker waited for work
// is not banked: slots start again from now, so workers woken together do not burst.
func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	slot := p.next
	if slot.Before(now) {
		slot = now
	}
	p.next = slot.Add(p.interval)
	p.mu.Unlock()
	d := time.Until(slot)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ChangeNormalizer is the text normalization change detection uses: the volatile fragments
// of revisit.ignore masked (dates, counters...). md5 says revisit.fingerprint asks for seed
// 002/004's MD5 of the stripped text instead, which ignores nothing.
func ChangeNormalizer(cfg config.Config) (n fingerprint.Normalizer, md5 bool, err error) {
	if cfg.Revisit.Fingerprint == "md5" {
		return fingerprint.Normalizer{}, true, nil
	}
	v, err := fingerprint.NewVolatile(cfg.Revisit.Ignore...)
	if err != nil {
		return n, false, fmt.Errorf("revisit.ignore: %w", err)
	}
	return fingerprint.Normalizer{Volatile: v}, false, nil
}

// HistoryRestorer is implemented by revisit policies that keep per-URL state in memory:
// Run gives them the store before the first fetch, to rebuild that state from the visit
// history when a crawl resumes.
type HistoryRestorer interface {
	Restore(db *store.DB) error
}
