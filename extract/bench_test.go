package extract

import (
	"os"
	"path/filepath"
	"testing"
)

// benchPages are the Readability test set's pages (../shared/testdata/readability).
func benchPages(b *testing.B) [][]byte {
	dir := filepath.Join("..", "..", "shared", "testdata", "readability")
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Skipf("test set %s not found (%v): the extraction benchmarks need it", dir, err)
	}
	var pages [][]byte
	for _, e := range entries {
		if body, err := os.ReadFile(filepath.Join(dir, e.Name(), "source.html")); err == nil {
			pages = append(pages, body)
		}
	}
	if len(pages) == 0 {
		b.Skip("no pages in the test set")
	}
	return pages
}

// BenchmarkExtract extracts the test set's pages one after another on one goroutine,
// in each mode; docs/s is the single-core rate.
func BenchmarkExtract(b *testing.B) {
	pages := benchPages(b)
	for _, o := range []Options{{}, {FastPath: true}, {NoFallback: true}, {Mode: ModeThesis}, {Mode: ModeTrafilatura}} {
		name := string(o.Mode)
		switch {
		case o.FastPath:
			name = "sonda-fast-path"
		case o.NoFallback:
			name = "sonda-no-fallback"
		case name == "":
			name = "sonda"
		}
		b.Run(name, func(b *testing.B) {
			ex, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			ex.Extract(pages[0], "") // warm up lazily compiled patterns
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			for b.Loop() {
				if _, err := ex.Extract(pages[n%len(pages)], ""); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
