package render

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/fetch"
)

// cachingGate answers each URL from the network once and from memory after: the
// renderer's cost is measured, not the test server's.
type cachingGate struct {
	f     *fetch.Fetcher
	mu    sync.Mutex
	known map[string]*fetch.Result
}

func (g *cachingGate) Fetch(ctx context.Context, r Request) (*fetch.Result, error) {
	g.mu.Lock()
	res := g.known[r.URL]
	g.mu.Unlock()
	if res != nil {
		return res, nil
	}
	res = g.f.Fetch(ctx, fetch.Request{URL: r.URL, AnyType: true})
	g.mu.Lock()
	g.known[r.URL] = res
	g.mu.Unlock()
	return res, nil
}

// BenchmarkRenderPool renders the SPA's article pages (a script, a JSON API call, the
// DOM built from it) with 1, 2 and 4 tabs, as many at once as there are tabs. It reports
// rendered pages/s, the browser's memory per tab after the run (PSS of all its
// processes / tabs), and the time of one render.
func BenchmarkRenderPool(b *testing.B) {
	for _, tabs := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("tabs=%d", tabs), func(b *testing.B) {
			w, f := scriptWeb(b)
			path, err := FindChromium()
			if err != nil {
				b.Skip(err)
			}
			r, err := New(Options{ExecPath: path, Tabs: tabs}) // default time limits: what a crawl gets
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			urls := w.ArticleURLs()
			pages := make([]*fetch.Result, len(urls))
			for i, u := range urls {
				pages[i] = get(b, f, u)
			}
			g := &cachingGate{f: f, known: map[string]*fetch.Result{}}
			// Warm up every tab once: the pool opens tabs on demand.
			var wg sync.WaitGroup
			for i := 0; i < tabs; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := r.Render(context.Background(), Page{Response: pages[i%len(pages)], Gate: g}); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
			var next atomic.Int64
			var busy atomic.Int64 // summed render time
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < tabs; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						res, err := r.Render(context.Background(), Page{Response: pages[int(n)%len(pages)], Gate: g})
						if err != nil {
							b.Error(err)
							return
						}
						busy.Add(int64(res.Duration))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(time.Duration(busy.Load()/int64(b.N)).Milliseconds()), "ms/render")
			b.ReportMetric(float64(treeRSS(r.BrowserPID()))/float64(tabs)/(1<<20), "MiB/tab")
		})
	}
}
