package testweb

import (
	"time"

	"github.com/sonda-search/sonda/config"
)

// CrawlConfig adapts cfg to crawl w while it serves: its seeds, the dial mapping that sends
// *.test to it, loopback allowed, every .test host followed, and timeouts and retry delays
// short enough for a quick run. Politeness stays on: the test web checks it. `sonda demo`
// and the tests that crawl a test web use it; it lives here, with the web, so that the
// crawler does not depend on its test fixture.
func (w *Web) CrawlConfig(cfg config.Config) config.Config {
	cfg.Crawl.Seeds = w.Seeds()
	cfg.Scope.Follow = "any"
	cfg.Scope.AllowDomains = []string{"test"}
	cfg.Scope.MaxDepth = 0
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.Resolve = []string{w.Resolve()}
	// Short enough for a quick run, long enough that an ordinary page on a loaded machine
	// never times out (a retried page would be fetched twice); test webs make their slow
	// pages slower than this (Config.SlowDelay).
	cfg.Fetch.FirstByteTimeout = 2 * time.Second
	cfg.Fetch.BodyTimeout = 3 * time.Second
	cfg.Politeness.RetryDelay = 100 * time.Millisecond
	cfg.Robots.RetryDelay = 100 * time.Millisecond
	cfg.Robots.MaxFailures = 2
	return cfg
}
