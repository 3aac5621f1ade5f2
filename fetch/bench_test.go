package fetch

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// benchPage is a 20 KB HTML page with some non-ASCII text.
var benchPage = func() []byte {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Página</title></head><body>`)
	for b.Len() < 20000-200 {
		b.WriteString(`<p>Notícias sobre ciência e tecnologia: <a href="/artigo">leia mais</a>.</p>` + "\n")
	}
	b.WriteString("</body></html>")
	return b.Bytes()
}()

func benchmarkFetch(b *testing.B, coding string) {
	wire := benchPage
	header := []string{"Content-Type", "text/html"}
	if coding != "" {
		wire = compress(b, coding, benchPage)
		header = append(header, "Content-Encoding", coding)
	}
	srv := serveStatic(b, wire, header...)
	f := newFetcher(b, Options{AcceptTypes: []string{"text/html"}})
	req := Request{URL: srv.URL + "/page"}
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res := f.Fetch(context.Background(), req)
		if res.Err != nil || len(res.UTF8) != len(benchPage) {
			b.Fatalf("err %v, %d bytes", res.Err, len(res.UTF8))
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fetches/s")
}

// BenchmarkFetch measures a whole Fetch of a 20 KB page over a loopback
// keep-alive connection, server included.
func BenchmarkFetch(b *testing.B) {
	b.Run("identity", func(b *testing.B) { benchmarkFetch(b, "") })
	b.Run("gzip", func(b *testing.B) { benchmarkFetch(b, "gzip") })
	b.Run("br", func(b *testing.B) { benchmarkFetch(b, "br") })
}

// BenchmarkFetchParallel is the crawler's shape: many concurrent fetches
// sharing one Fetcher.
func BenchmarkFetchParallel(b *testing.B) {
	srv := serveStatic(b, benchPage, "Content-Type", "text/html")
	f := newFetcher(b, Options{})
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := f.Fetch(context.Background(), Request{URL: srv.URL}); res.Err != nil {
				b.Error(res.Err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fetches/s")
}

func BenchmarkReadBodyGzip(b *testing.B) {
	wire := compress(b, "gzip", benchPage)
	lim := bodyLimits{maxBytes: DefaultMaxBodyBytes, maxRatio: DefaultMaxDecompressionRatio}
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	for b.Loop() {
		o := readBody(bytes.NewReader(wire), []string{"gzip"}, int64(len(wire)), lim, nil)
		if o.err != nil {
			b.Fatal(o.err)
		}
	}
}

func BenchmarkToUTF8(b *testing.B) {
	latin := latin1(strings.ToValidUTF8(string(benchPage), ""))
	for _, tt := range []struct {
		name    string
		body    []byte
		charset string
	}{
		{"utf-8", benchPage, "utf-8"},
		{"windows-1252", latin, "windows-1252"},
		{"undeclared-meta", benchPage, ""},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.body)))
			b.ReportAllocs()
			for b.Loop() {
				toUTF8(tt.body, "text/html", tt.charset)
			}
		})
	}
}

// BenchmarkReadBodyUnknownLength reads a 10 MiB body sent without a Content-Length
// (chunked), in the 32 KiB reads a network connection gives, as the crawler reads the
// largest pages it keeps: B/op is what one such page costs the collector.
func BenchmarkReadBodyUnknownLength(b *testing.B) {
	body := bytes.Repeat([]byte("reactor fuel rods and steam turbines "), (10<<20)/37)
	lim := bodyLimits{maxBytes: DefaultMaxBodyBytes, maxRatio: DefaultMaxDecompressionRatio}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		o := readBody(struct{ io.Reader }{bytes.NewReader(body)}, nil, -1, lim, nil)
		if o.err != nil || len(o.body) != len(body) {
			b.Fatal(o.err, len(o.body))
		}
	}
}
