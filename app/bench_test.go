package app

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/focus"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
)

// BenchmarkLanguageShare measures what language detection, which every crawl without a
// topic runs (focus.Language), costs against the crawl's own CPU: a crawl of the loopback
// test web through the default assembly, with the search index off and on, then the
// analyzer alone on every page of it (replayed from the store and the WARC files).
//
//	go test -run XXX -bench LanguageShare -benchtime 1x ./app
//
// The test web is served by the same process, so the crawl CPU includes the server's: the
// share is a lower bound of the share of sonda's own CPU, which is why the bare crawl
// (index off) is measured too.
func BenchmarkLanguageShare(b *testing.B) {
	for b.Loop() {
		wcfg := testweb.Bench(200)
		wcfg.PagesPerHost = 20
		web := startWeb(b, wcfg)
		var data string
		for _, indexed := range []bool{false, true} {
			cfg := testConfig(b, web)
			cfg.Politeness.DelayFactor = 0
			cfg.Crawl.Concurrency = 64
			cfg.Log.Level = "error"
			cfg.Search.Index = indexed
			before := cpuTime()
			pages := benchCrawl(b, cfg)
			perPage := float64((cpuTime() - before).Nanoseconds()) / float64(pages)
			name := "crawl-index-off-cpu-µs/page"
			if indexed {
				name = "crawl-index-on-cpu-µs/page"
			}
			b.ReportMetric(perPage/1e3, name)
			data = cfg.Data
		}
		db, err := store.Open(crawl.StateDir(data), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ts := &timedAnalyzer{a: focus.Language{}}
		if _, err := index.Replay(context.Background(), db, crawl.WARCDir(data), []crawl.Sink{ts}, index.ReplayOptions{}); err != nil {
			b.Fatal(err)
		}
		db.Close()
		b.ReportMetric(float64(ts.ns.Load())/float64(ts.n.Load())/1e3, "language-µs/page")
		b.ReportMetric(float64(ts.n.Load()), "pages")
	}
}

func benchCrawl(b *testing.B, cfg config.Config) int64 {
	in, err := Open(cfg, Options{Crawl: true})
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	opts, err := in.CrawlOptions(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := c.Run(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	if err := in.Close(); err != nil { // the index's last batch and PageRank count too
		b.Fatal(err)
	}
	return sum.Pages
}

// timedAnalyzer is a sink that runs an analyzer on every page with text and times it.
type timedAnalyzer struct {
	a     crawl.Analyzer
	n, ns atomic.Int64
}

func (t *timedAnalyzer) Name() string { return "timed-" + t.a.Name() }

func (t *timedAnalyzer) Consume(ctx context.Context, d *crawl.Document) error {
	if d.Text == "" {
		return nil
	}
	start := time.Now()
	err := t.a.Analyze(ctx, d)
	t.ns.Add(int64(time.Since(start)))
	t.n.Add(1)
	return err
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
