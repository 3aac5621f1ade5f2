package news

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/robots"
)

// HostPacer keeps the results-page providers as polite as the crawl, which they bypass (their
// requests do not go through the frontier, whose per-host clock paces the crawl): one request
// at a time per host, and between two the rest the crawler gives a host after a request
// (crawl.HostDelay: politeness.min-delay, delay-factor × response time, the robots.txt
// Crawl-delay), or longer when a 429 or 503 asked for a pause with Retry-After
// (crawl.RetryAfterHold). The rules and settings are the crawl's; only the clock is here.
//
// Share one HostPacer among every provider of a process (MonitorOptionsFromConfig does), so
// topics added at the same time take turns at a search site instead of asking it at once.
type HostPacer struct {
	politeness config.Politeness

	mu    sync.Mutex
	hosts map[string]*hostTurn // by lower-case host[:port]; as many as search sites asked
}

// hostTurn is one host's place in line. token holds a single value: whoever takes it may
// send the host a request, and puts it back when the response is in.
type hostTurn struct {
	token chan struct{}
	next  time.Time // earliest start of the next request; read and set only by the token's holder
}

// NewHostPacer paces requests under the politeness settings p (the configuration's
// politeness section).
func NewHostPacer(p config.Politeness) *HostPacer {
	return &HostPacer{politeness: p, hosts: map[string]*hostTurn{}}
}

// SharedPacer is the process's pacer for the politeness settings p: every caller with the
// same settings gets the same one, so the Monitors of one process (`sonda serve` has one for
// the web layer and one in each crawl it runs) take turns at a search site. Providers built
// without a Pacer use the one for the default settings.
func SharedPacer(p config.Politeness) *HostPacer {
	sharedPacers.Lock()
	defer sharedPacers.Unlock()
	hp := sharedPacers.byPoliteness[p]
	if hp == nil {
		hp = NewHostPacer(p)
		sharedPacers.byPoliteness[p] = hp
	}
	return hp
}

var sharedPacers = struct {
	sync.Mutex
	byPoliteness map[config.Politeness]*HostPacer
}{byPoliteness: map[config.Politeness]*HostPacer{}}

func defaultPacer() *HostPacer { return SharedPacer(config.Default().Politeness) }

func (hp *HostPacer) turnOf(host string) *hostTurn {
	host = strings.ToLower(host)
	hp.mu.Lock()
	defer hp.mu.Unlock()
	t := hp.hosts[host]
	if t == nil {
		t = &hostTurn{token: make(chan struct{}, 1)}
		t.token <- struct{}{}
		hp.hosts[host] = t
	}
	return t
}

// fetch sends req to host when its turn comes and returns the response; afterwards the host
// rests as the crawler would let it, given group, the robots.txt rules for our agent (zero
// before they are known; pass rulesOf for the robots.txt request itself, whose response
// sets them). An error means ctx ended, or would end, before the turn came: nothing was sent.
func (hp *HostPacer) fetch(ctx context.Context, f *fetch.Fetcher, host string, req fetch.Request, group func(*fetch.Result) robots.Group) (*fetch.Result, error) {
	t := hp.turnOf(host)
	select {
	case <-t.token:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a turn at %s: %w", host, ctx.Err())
	}
	if err := sleep(ctx, time.Until(t.next), host); err != nil {
		t.token <- struct{}{}
		return nil, err
	}
	res := f.Fetch(ctx, req)
	rest := max(crawl.HostDelay(hp.politeness, group(res), res), crawl.RetryAfterHold(hp.politeness, res))
	t.next = time.Now().Add(rest)
	t.token <- struct{}{}
	return res, nil
}

// retryWait is the crawler's wait before retrying a request that failed with res after
// attempts earlier retries; ok is false when the crawler would not retry it.
func (hp *HostPacer) retryWait(attempts int, res *fetch.Result) (time.Duration, bool) {
	if !crawl.Retryable(res) {
		return 0, false
	}
	return crawl.RetryWait(hp.politeness, attempts, res)
}

// sleep waits d unless ctx ends first; it gives up at once when ctx's deadline comes before
// d is over, saying how long host asked to be left alone.
func sleep(ctx context.Context, d time.Duration, host string) error {
	if d <= 0 {
		return ctx.Err()
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return fmt.Errorf("%s must rest %s more (politeness), past this request's deadline: %w", host, d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting %s for %s (politeness): %w", d.Round(time.Millisecond), host, ctx.Err())
	}
}
