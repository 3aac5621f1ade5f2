//go:build unix

package crawl

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/render"
	"github.com/sonda-search/sonda/testweb"
)

// cpuTime is the CPU time (user + system) of this process and of its children that have
// exited: a crawl's browser is one once the crawler is closed.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
}

// BenchmarkRenderModes crawls two script webs with each render mode: "static" (20 hosts
// of 50 server-built pages, half of them with an analytics script: 1,000 pages) and
// "mixed" (10 such hosts of 20 pages, plus the SPA with 20 articles, the data portal with
// 10 datasets, the hostile and the thin sites). It reports the crawl's pages/s (over Run:
// always starts the browser before it, auto at its first script-built page), CPU seconds
// of crawler, test server and browser together (start-up included), pages fetched and
// pages rendered.
//
//	go test -run XXX -bench RenderModes -benchtime 1x ./crawl
func BenchmarkRenderModes(b *testing.B) {
	if _, err := render.FindChromium(); err != nil {
		b.Skip(err)
	}
	for _, web := range []string{"static", "mixed"} {
		for _, mode := range []string{"never", "auto", "always"} {
			if web == "static" && mode == "always" {
				continue
			}
			b.Run(web+"/"+mode, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					w := &testweb.ScriptWeb{Articles: 20, Datasets: 10, StaticHosts: 10, StaticPages: 20}
					if web == "static" {
						w.StaticHosts, w.StaticPages = 20, 50
					}
					if _, err := w.Start(); err != nil {
						b.Fatal(err)
					}
					cfg := scriptWebConfig(b, w, mode)
					cfg.Render.Idle = 500 * time.Millisecond // the default: what a crawl gets
					cfg.Crawl.Concurrency = 8
					cfg.Log.Level = "error"
					if web == "static" {
						cfg.Crawl.Seeds = nil
						for h := 0; h < w.StaticHosts; h++ {
							cfg.Crawl.Seeds = append(cfg.Crawl.Seeds, fmt.Sprintf("http://www.static%d.test/", h))
						}
					}
					cpu := cpuTime()
					c, err := New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					sum, err := c.Run(ctx, nil, nil)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					if err := c.Close(); err != nil {
						b.Fatal(err)
					}
					w.Close()
					if web == "mixed" {
						b.ReportMetric(staticRate(w), "static-pages/s")
					}
					b.ReportMetric(sum.PagesPerSecond(), "pages/s")
					b.ReportMetric((cpuTime() - cpu).Seconds(), "CPU-s")
					b.ReportMetric(float64(sum.Pages), "pages")
					b.ReportMetric(float64(sum.Render.Renders), "renders")
				}
			})
		}
	}
}

// staticRate is the throughput of a script web's static half: its hosts' requests per
// second, from the first of them to the last, counted at the server. It is what the
// issue's "throughput on the static half" means on a mixed web, where the crawl's own
// pages/s is dominated by the SPA host's renders.
func staticRate(w *testweb.ScriptWeb) float64 {
	var first, last time.Time
	n := 0
	for h := 0; h < w.StaticHosts; h++ {
		for _, at := range w.Times(fmt.Sprintf("www.static%d.test", h)) {
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
			n++
		}
	}
	if n < 2 {
		return 0
	}
	return float64(n-1) / last.Sub(first).Seconds()
}
