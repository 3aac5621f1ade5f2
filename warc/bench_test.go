package warc

import (
	"bytes"
	"fmt"
	"github.com/sonda-search/sonda/internal/procstat"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

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
				captures := make([]Capture, 16)
				for i := range captures {
					captures[i] = testCapture(i, size)
				}
				b.SetBytes(int64(size))
				b.ResetTimer()
				cpu := procstat.SelfCPU()
				for i := 0; i < b.N; i++ {
					if _, err := w.WriteCapture(captures[i%len(captures)]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer() // Close's fsync is not part of a capture's cost
				reportRates(b, procstat.SelfCPU()-cpu, "captures")
				w.Close()
			})
		}
	}
}

// reportRates reports operations per second of wall time and per second of
// CPU time: on a loaded machine the second is the one to trust, and their
// ratio shows how much of the wall time went to waiting (or, above 1, to
// parallelism).
func reportRates(b *testing.B, cpu time.Duration, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), unit+"/cpu-s")
	}
}

// BenchmarkWriteCaptureParallel shows how captures from concurrent fetchers
// compress in parallel (only the write itself is serialized). goroutines=256 is a
// crawl's fetch workers on two cores: heap-MiB, the Go heap in use at the end before
// a collection, counts the encoders and gzip states the waiting captures held.
//
//	go test ./warc -run '^$' -bench WriteCaptureParallel -benchtime 4000x
func BenchmarkWriteCaptureParallel(b *testing.B) {
	for _, perProc := range []int{1, 128} {
		b.Run(fmt.Sprintf("goroutines=%d", perProc*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			o := testOptions(b.TempDir(), false)
			o.MaxFileSize = 256 << 20
			w := mustWriter(b, o)
			c := testCapture(1, 20<<10)
			b.SetBytes(20 << 10)
			runtime.GC()
			runtime.GC() // empty the pools
			cpu := procstat.SelfCPU()
			b.SetParallelism(perProc)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := w.WriteCapture(c); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			reportRates(b, procstat.SelfCPU()-cpu, "captures")
			w.Close()
		})
	}
}

// BenchmarkGzipLevel is the measurement behind gzipLevel: compression speed
// and size of 20 KB HTML-like payloads at each candidate level. It cycles
// through 16 payloads: compressing one payload over and over runs from warm
// caches and flatters every level.
//
//	go test ./warc -run '^$' -bench GzipLevel
func BenchmarkGzipLevel(b *testing.B) {
	payloads := make([][]byte, 16)
	for i := range payloads {
		payloads[i] = htmlPayload(uint64(i), 20<<10)
	}
	for _, level := range []int{gzip.BestSpeed, 3, gzip.DefaultCompression} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			zw, _ := gzip.NewWriterLevel(io.Discard, level)
			var out bytes.Buffer
			in, compressed := 0, 0
			b.SetBytes(20 << 10)
			cpu := procstat.SelfCPU()
			for i := 0; i < b.N; i++ {
				p := payloads[i%len(payloads)]
				out.Reset()
				zw.Reset(&out)
				zw.Write(p)
				zw.Close()
				in += len(p)
				compressed += out.Len()
			}
			b.StopTimer()
			b.ReportMetric(float64(in)/(procstat.SelfCPU()-cpu).Seconds()/1e6, "MB/cpu-s")
			b.ReportMetric(float64(compressed)/float64(in)*100, "%size")
		})
	}
}

// BenchmarkReader measures reading back (decompressing and parsing) a file
// of 20 KB captures; MB/s counts uncompressed WARC bytes.
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
			size := int64(len(data))
			if !plain {
				zr, _ := gzip.NewReader(bytes.NewReader(data))
				size, _ = io.Copy(io.Discard, zr)
			}
			b.SetBytes(size)
			b.ResetTimer()
			cpu := procstat.SelfCPU()
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
			b.StopTimer()
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(records)/(procstat.SelfCPU()-cpu).Seconds(), "records/cpu-s")
		})
	}
}
