package frontier

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/internal/procstat"
	"github.com/sonda-search/sonda/store"
)

func diskFrontier(b testing.TB, opts Options) (*Frontier, *store.DB) {
	b.Helper()
	db, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	f, err := Open(db.Pebble(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return f, db
}

func benchItem(i int, hosts int) Item {
	return item(fmt.Sprintf("www.host%05d.test", i%hosts), fmt.Sprintf("/dir%d/page-%d.html?q=%d", i%97, i, i%13), float64(i%7))
}

// BenchmarkAdd measures admitting discovered URLs (seen-set lookup + enqueue), 20 per batch
// as from one fetched page, over 1,000 hosts.
func BenchmarkAdd(b *testing.B) {
	f, _ := diskFrontier(b, Options{NoSync: true})
	batch := make([]Item, 20)
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		for j := range batch {
			batch[j] = benchItem(i+j, 1000)
		}
		if _, err := f.Add(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkLeaseComplete measures the per-page frontier cost of a crawl: lease a URL,
// complete it with 10 discovered links (half new), with and without the durability sync.
func BenchmarkLeaseComplete(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			f, _ := diskFrontier(b, Options{NoSync: !sync, PerHost: 1 << 20})
			seed := make([]Item, 0, 10000)
			for i := 0; i < 10000; i++ {
				seed = append(seed, benchItem(i, 1000))
			}
			if _, err := f.Add(seed); err != nil {
				b.Fatal(err)
			}
			next := 10000
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := f.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				disc := make([]Item, 10)
				for j := range disc {
					if j%2 == 0 {
						disc[j] = benchItem(next, 1000)
						next++
					} else {
						disc[j] = benchItem(next-j*3, 1000) // already seen
					}
				}
				if _, err := f.Complete(l, Outcome{Fetched: true, Discovered: disc}, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

// BenchmarkQueued10M queues SONDA_FRONTIER_URLS URLs (default 10,000,000) over 10,000 hosts
// and reports the process RSS: it must stay flat as the frontier grows. Run it alone:
//
//	go test -run XXX -bench Queued10M -benchtime 1x ./frontier
func BenchmarkQueued10M(b *testing.B) {
	total := 10_000_000
	if s := os.Getenv("SONDA_FRONTIER_URLS"); s != "" {
		total, _ = strconv.Atoi(s)
	}
	f, db := diskFrontier(b, Options{NoSync: true})
	batch := make([]Item, 1000)
	start := time.Now()
	var checkpoints []string
	for i := 0; i < total; i += len(batch) {
		for j := range batch {
			batch[j] = benchItem(i+j, 10000)
		}
		if _, err := f.Add(batch); err != nil {
			b.Fatal(err)
		}
		if n := i + len(batch); n%(total/5) == 0 {
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m := db.Pebble().Metrics()
			checkpoints = append(checkpoints, fmt.Sprintf("%.1fM queued: RSS %d MiB (Go heap %d MiB, Pebble cache %d MiB, memtables %d MiB, %d tables)",
				float64(n)/1e6, procstat.RSS()>>20, ms.HeapInuse>>20, m.BlockCache.Size>>20, m.MemTable.Size>>20, m.Total().TablesCount))
		}
	}
	elapsed := time.Since(start)
	runtime.GC()
	s := f.Stats()
	if s.Queued != int64(total) {
		b.Fatalf("queued %d, want %d", s.Queued, total)
	}
	rss := procstat.RSS()
	b.ReportMetric(float64(rss>>20), "RSS-MiB")
	b.ReportMetric(float64(procstat.PeakRSS()>>20), "peak-RSS-MiB")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "adds/s")
	b.ReportMetric(float64(db.DiskUsage()>>20), "disk-MiB")
	for _, c := range checkpoints {
		b.Log(c)
	}
	// Leasing from the full frontier must still be quick.
	t0 := time.Now()
	for i := 0; i < 10000; i++ {
		l, err := f.Next(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Complete(l, Outcome{Fetched: true}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(10000/time.Since(t0).Seconds(), "leases/s")
}

// BenchmarkLeaseCompleteParallel is BenchmarkLeaseComplete with 64 concurrent workers, as in
// a crawl: the durability syncs of concurrent completions are shared.
func BenchmarkLeaseCompleteParallel(b *testing.B) {
	f, _ := diskFrontier(b, Options{PerHost: 1 << 20})
	seed := make([]Item, 0, 20000)
	for i := 0; i < 20000; i++ {
		seed = append(seed, benchItem(i, 1000))
	}
	if _, err := f.Add(seed); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	next.Store(1 << 30)
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			l, err := f.Next(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			disc := make([]Item, 5)
			for j := range disc {
				disc[j] = benchItem(int(next.Add(1)), 1000)
			}
			if _, err := f.Complete(l, Outcome{Fetched: true, Discovered: disc}, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}
