package web

import (
	"net/http/httptest"
	"testing"
)

// The benchmarks measure the web layer's own cost per request (validation, sanitizing,
// templates, JSON) over a fake backend that answers instantly.

func benchmarkTarget(b *testing.B, target string) {
	f := newFixture(b)
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != 200 {
			b.Fatalf("%s: %d", target, rec.Code)
		}
	}
}

func BenchmarkResultsPage(b *testing.B) { benchmarkTarget(b, "/search?q=solar") }
func BenchmarkAPISearch(b *testing.B)   { benchmarkTarget(b, "/api/search?q=solar") }
func BenchmarkDocumentPage(b *testing.B) {
	benchmarkTarget(b, "/doc?id=doc03&q=solar+energy")
}
func BenchmarkCrawlStatus(b *testing.B) { benchmarkTarget(b, "/api/crawl/status") }
