package testweb

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// pageRequests prepares one GET per reachable URL of w (handlers do not
// modify requests, so they can be served again and again).
func pageRequests(w *Web) []*http.Request {
	var reqs []*http.Request
	for _, u := range w.Reachable() {
		reqs = append(reqs, httptest.NewRequest(http.MethodGet, u, nil))
	}
	return reqs
}

// BenchmarkServeHTTP measures the handler alone on the Bench web: lookup,
// rendering, logging.
func BenchmarkServeHTTP(b *testing.B) {
	w := New(Bench(1000))
	reqs := pageRequests(w)
	var next, bytes atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		rw := &discardWriter{}
		for pb.Next() {
			rw.h, rw.status = http.Header{}, 0
			w.ServeHTTP(rw, reqs[int(next.Add(1))%len(reqs)])
			bytes.Add(int64(rw.n))
			rw.n = 0
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "req/s")
	b.SetBytes(bytes.Load() / int64(b.N))
}

// BenchmarkLoopback measures whole HTTP exchanges over loopback the way a
// polite crawler makes them: each worker takes a host, fetches its pages one
// after another on one keep-alive connection, then takes the next host.
func BenchmarkLoopback(b *testing.B) {
	w := New(Bench(1000))
	addr, err := w.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	c := client(addr)
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var todo []*resource
		for pb.Next() {
			if len(todo) == 0 {
				todo = w.sites[int(next.Add(1))%len(w.sites)].pages
			}
			resp, err := c.Get(todo[0].url)
			todo = todo[1:]
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "req/s")
}

func BenchmarkNew(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  Config
	}{{"default", Config{Seed: 1}}, {"bench1000", Bench(1000)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				New(bc.cfg)
			}
		})
	}
}

// BenchmarkCheck measures the checks a crawl test runs at its end, on the
// log of one reference crawl of the default web.
func BenchmarkCheck(b *testing.B) {
	w := New(fast(Config{Seed: 1}))
	newRefCrawler(w, refTimeout).run(w.Seeds())
	b.Run("CheckFetches", func(b *testing.B) {
		for b.Loop() {
			w.CheckFetches()
		}
	})
	b.Run("CheckPoliteness", func(b *testing.B) {
		for b.Loop() {
			w.CheckPoliteness(0, 1)
		}
	})
}
