package ireval

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/index"
)

// threadCPU is the CPU time of the calling OS thread: what a query costs, whatever else
// runs on the machine (wall time on a busy machine is mostly waiting for a core).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCranfieldQuestions asks the 225 Cranfield questions as the HTTP API does (the
// implicit AND, the first page of 10, facets) with the result cache off, with and without
// pseudo-relevance feedback, and reports the CPU time and wall time per question, p50 and
// p99. One iteration asks every question once.
//
//	go test -run XXX -bench CranfieldQuestions -benchtime 5x ./index/ireval
func BenchmarkCranfieldQuestions(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "shared", "testdata", "cranfield")
	c, err := LoadCranfield(dir)
	if err != nil {
		if _, serr := os.Stat(dir); serr != nil {
			b.Skipf("the Cranfield collection is not at %s", dir)
		}
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []struct {
		name     string
		feedback float64
	}{{"feedback", index.DefaultRanking().Feedback}, {"no-feedback", 0}} {
		b.Run(v.name, func(b *testing.B) {
			r := index.DefaultRanking()
			r.Feedback = v.feedback
			ix, err := index.Open(filepath.Join(b.TempDir(), "index"), index.Options{CacheEntries: -1, Ranking: r})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			if err := Load(ctx, ix, c); err != nil {
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu, wall []time.Duration
			b.ResetTimer()
			for range b.N {
				for _, q := range c.Queries {
					c0, w0 := threadCPU(), time.Now()
					if _, err := ix.Search(ctx, index.Request{Query: q.Text, Facets: true}); err != nil {
						b.Fatal(err)
					}
					cpu, wall = append(cpu, threadCPU()-c0), append(wall, time.Since(w0))
				}
			}
			b.StopTimer()
			slices.Sort(cpu)
			slices.Sort(wall)
			at := func(s []time.Duration, p float64) float64 {
				return float64(s[int(float64(len(s)-1)*p)].Microseconds()) / 1000
			}
			b.ReportMetric(at(cpu, 0.5), "cpu-p50-ms")
			b.ReportMetric(at(cpu, 0.99), "cpu-p99-ms")
			b.ReportMetric(at(wall, 0.5), "wall-p50-ms")
			b.ReportMetric(at(wall, 0.99), "wall-p99-ms")
		})
	}
}
