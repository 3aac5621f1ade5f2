package crawl

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/internal/procstat"
	"github.com/sonda-search/sonda/testweb"
)

// BenchmarkCrawl measures end-to-end crawl throughput on the loopback test web with
// politeness off (no delay, one connection per host) and WARC and store writes on. The web
// runs in the same process, so the 2 cores are shared between server and crawler.
//
//	go test -run XXX -bench Crawl -benchtime 1x ./crawl
//
// SONDA_BENCH_HOSTS (default 1000) and SONDA_BENCH_PAGES (pages per host, default 20)
// size the web.
func BenchmarkCrawl(b *testing.B) {
	hosts, pages := envInt("SONDA_BENCH_HOSTS", 1000), envInt("SONDA_BENCH_PAGES", 20)
	for i := 0; i < b.N; i++ {
		wcfg := testweb.Bench(hosts)
		wcfg.PagesPerHost = pages
		web := startWeb(b, wcfg)
		cfg := testConfig(b, web)
		cfg.Politeness.MinDelay = 0
		cfg.Politeness.DelayFactor = 0
		cfg.Crawl.Concurrency = 256
		cfg.Log.Level = "error"
		sum := benchCrawl(b, cfg)
		runtime.GC()
		b.ReportMetric(sum.PagesPerSecond(), "pages/s")
		b.ReportMetric(float64(sum.Pages), "pages")
		b.ReportMetric(float64(procstat.PeakRSS())/(1<<20), "peak-RSS-MiB")
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchCrawl runs a crawl of cfg to its end.
func benchCrawl(b *testing.B, cfg config.Config, opts ...Option) Summary {
	c, err := New(cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return sum
}
