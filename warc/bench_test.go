package warc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// BenchmarkWriteCapture measures the whole WriteCapture path (digests,
// compression, the write to the OS) for HTML-like payloads; MB/s counts
// payload bytes. Run with:
//
//	go test ./warc -run '^$' -bench WriteCapture -benchtime 2000x
func BenchmarkWriteCapture(b *testing.B) {
	for _, size := range []int{20 << 10, 100 << 10} {
		for _, plain := range []bool{false, true} {
			name := fmt.Sprintf("payload=%dKB/gzip=%v", size>>10, !plain)
			b.Run(name, func(b *testing.B) {
				o := testOptions(b.TempDir(), plain)
				o.MaxFileSize = 256 << 20
				w := mustWriter(b, o)
				defer w.Close()
				captures := make([]Capture, 16)
				for i := range captures {
					captures[i] = testCapture(i, size)
				}
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := w.WriteCapture(captures[i%len(captures)]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "captures/s")
			})
		}
	}
}

// BenchmarkWriteCaptureParallel shows how captures from concurrent fetchers
// compress in parallel (only the write itself is serialized).
//
//	go test ./warc -run '^$' -bench WriteCaptureParallel -benchtime 4000x
func BenchmarkWriteCaptureParallel(b *testing.B) {
	o := testOptions(b.TempDir(), false)
	o.MaxFileSize = 256 << 20
	w := mustWriter(b, o)
	defer w.Close()
	c := testCapture(1, 20<<10)
	b.SetBytes(20 << 10)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := w.WriteCapture(c); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "captures/s")
}

// BenchmarkGzipLevel is the measurement behind gzipLevel: compression speed
// and size of a 20 KB HTML-like capture at each candidate level.
//
//	go test ./warc -run '^$' -bench GzipLevel
func BenchmarkGzipLevel(b *testing.B) {
	payload := htmlPayload(3, 20<<10)
	for _, level := range []int{gzip.BestSpeed, 3, gzip.DefaultCompression} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			zw, _ := gzip.NewWriterLevel(io.Discard, level)
			var out bytes.Buffer
			b.SetBytes(int64(len(payload)))
			for i := 0; i < b.N; i++ {
				out.Reset()
				zw.Reset(&out)
				zw.Write(payload)
				zw.Close()
			}
			b.ReportMetric(float64(out.Len())/float64(len(payload))*100, "%size")
		})
	}
}

// BenchmarkReader measures reading back (decompressing and parsing) a file
// of 20 KB captures; MB/s counts the file's bytes on disk.
//
//	go test ./warc -run '^$' -bench Reader
func BenchmarkReader(b *testing.B) {
	for _, plain := range []bool{false, true} {
		b.Run(fmt.Sprintf("gzip=%v", !plain), func(b *testing.B) {
			dir := b.TempDir()
			o := testOptions(dir, plain)
			w := mustWriter(b, o)
			for i := range 200 {
				if _, err := w.WriteCapture(testCapture(i, 20<<10)); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
			data, err := os.ReadFile(warcFiles(b, dir)[0])
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			records := 0
			for i := 0; i < b.N; i++ {
				r, _ := NewReader(bytes.NewReader(data))
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					records++
				}
			}
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
