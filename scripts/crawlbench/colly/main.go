// Command colly-baseline crawls a loopback test web (sonda testweb) with Colly, tuned for
// throughput and storing nothing: the baseline sonda's crawl benchmark compares itself
// with (scripts/crawlbench/run.sh, docs/benchmarks.md). Like sonda's benchmark crawl it
// keeps one connection per host and follows every link on the web's hosts.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

func main() {
	resolve := flag.String("resolve", "", "dial `ADDR` for every host (the test web's listener)")
	parallel := flag.Int("parallel", 256, "requests in flight at once, across hosts")
	list := flag.Bool("list", false, "print every URL fetched")
	flag.Parse()
	seeds := flag.Args()
	if *resolve == "" || len(seeds) == 0 {
		fmt.Fprintln(os.Stderr, "usage: colly-baseline -resolve 127.0.0.1:PORT SEED...")
		os.Exit(2)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	c := colly.NewCollector(colly.Async(true), colly.URLFilters(testHosts), colly.IgnoreRobotsTxt())
	c.WithTransport(&http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, *resolve)
		},
		MaxConnsPerHost:     1, // one connection per host, as sonda's politeness keeps
		MaxIdleConnsPerHost: 1,
		MaxIdleConns:        4096,
		IdleConnTimeout:     30 * time.Second,
	})
	c.SetRequestTimeout(30 * time.Second)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: *parallel}); err != nil {
		panic(err)
	}
	var pages, bytes, failed atomic.Int64
	c.OnResponse(func(r *colly.Response) {
		pages.Add(1)
		bytes.Add(int64(len(r.Body)))
		if *list {
			fmt.Println(r.StatusCode, r.Request.URL)
		}
	})
	c.OnError(func(*colly.Response, error) { failed.Add(1) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	start := time.Now()
	for _, s := range seeds {
		if err := c.Visit(s); err != nil {
			fmt.Fprintln(os.Stderr, s, err)
		}
	}
	c.Wait()
	took := time.Since(start)
	fmt.Printf("colly: %d pages, %d failed, %.1f MiB in %.2fs: %.0f pages/s\n", pages.Load(), failed.Load(),
		float64(bytes.Load())/(1<<20), took.Seconds(), float64(pages.Load())/took.Seconds())
}

// testHosts limits the crawl to the test web's hosts (*.test).
var testHosts = regexp.MustCompile(`^https?://[^/]+\.test(:\d+)?(/|$)`)
