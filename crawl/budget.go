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
// budget that discovery and revisits share. Workers take turns: the worker whose turn it
// is waits for the next slot, then asks the frontier for a URL, so the URL is chosen when
// its slot comes (a revisit due by then is taken first, as the frontier prefers due
// revisits); the turn passes on when it has one. A slot is spent only by a fetch: while
// the frontier has nothing ready (every host resting for politeness), the next worker
// does not reserve slots behind it, and the fetch starts the moment a URL is ready.
//
// An earlier pacer let every worker reserve a slot before asking for work. With 64
// workers at 2/s that put reservations 32 s ahead; a slot that came while the frontier
// had nothing ready was lost, and the worker that then found work queued behind all the
// others' reservations: a 4-host crawl that politeness allowed 4/s made 1.1/s, with ~25 s
// silences (issue 13). It adds to politeness and never replaces it: hosts still rest
// between requests.
type pacer struct {
	interval time.Duration
	turn     chan struct{} // held by the worker whose turn it is
	next     time.Time     // the next free slot; read and written by the turn's holder
}

func newPacer(perSecond float64) *pacer {
	if perSecond <= 0 {
		return nil
	}
	return &pacer{interval: time.Duration(float64(time.Second) / perSecond), turn: make(chan struct{}, 1)}
}

// acquire waits for the caller's turn and then for the next slot. Every acquire that
// returns nil must be followed by release.
func (p *pacer) acquire(ctx context.Context) error {
	if p == nil {
		return ctx.Err()
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	d := time.Until(p.next)
	if d <= 0 {
		if err := ctx.Err(); err != nil {
			<-p.turn
			return err
		}
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		<-p.turn
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// release ends the caller's turn. fetching says it got a URL and spends the slot: the
// next slot is an interval after the later of the slot and now. A slot not spent is not
// banked either: the next worker's slot is its own.
func (p *pacer) release(fetching bool) {
	if p == nil {
		return
	}
	if fetching {
		if now := time.Now(); now.After(p.next) {
			p.next = now
		}
		p.next = p.next.Add(p.interval)
	}
	<-p.turn
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

// hostPaces keeps, per host fetched recently, the request rate politeness allows it (its
// connections over its rest plus the response time), so that a budget politeness does not
// allow can be explained (budgetNote) instead of silently not spent.
type hostPaces struct {
	mu    sync.Mutex
	hosts map[string]hostPace
}

type hostPace struct {
	perSec     float64
	crawlDelay bool // robots.txt's Crawl-delay set the rest
	at         time.Time
}

// paceWindow is how long a host counts as active after its last response.
const paceWindow = time.Minute

func (hp *hostPaces) record(host string, pace hostPace) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	if hp.hosts == nil {
		hp.hosts = map[string]hostPace{}
	}
	hp.hosts[host] = pace
}

// achievable sums the rates of the hosts active in the last paceWindow (forgetting the
// others, so memory follows the active hosts) and says what limits them.
func (hp *hostPaces) achievable(now time.Time) (perSec float64, hosts, crawlDelayed int) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	for h, p := range hp.hosts {
		if now.Sub(p.at) > paceWindow {
			delete(hp.hosts, h)
			continue
		}
		perSec += p.perSec
		hosts++
		if p.crawlDelay {
			crawlDelayed++
		}
	}
	return perSec, hosts, crawlDelayed
}

// budgetNote explains a budget the crawl cannot spend: "" while the fetch rate is near the
// budget or politeness would allow it; otherwise, e.g., "budget 2/s, achievable 0.8/s: 4
// hosts × Crawl-delay".
func budgetNote(budget, rate, achievable float64, hosts, crawlDelayed int, minDelay time.Duration) string {
	if budget <= 0 || hosts == 0 || rate >= 0.9*budget || achievable >= 0.95*budget {
		return ""
	}
	why := fmt.Sprintf("%d hosts × politeness.min-delay %v (or delay-factor × response time)", hosts, minDelay)
	if 2*crawlDelayed >= hosts {
		why = fmt.Sprintf("%d hosts × Crawl-delay (robots.txt)", hosts)
	}
	return fmt.Sprintf("budget %s, achievable %.2g/s: %s", config.Rate(budget), achievable, why)
}
