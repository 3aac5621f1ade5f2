package search_test

import (
	"context"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/index/ireval"
)

// BenchmarkScatterGather measures the latency of a search over Cranfield split by host
// over 4 indexes, each served on one embedded NATS server (loopback TCP): page 1 of
// Cranfield's queries as bags of words, every phase through NATS, with facets (as the web
// UI asks) and without. It reports the 50th and 99th percentiles, and those of one index
// over the whole collection answering the same queries in the same process (result caches
// off), as the baseline, and the process's CPU per search of each.
//
//	go test ./cluster/search -run '^$' -bench ScatterGather -benchtime 400x
func BenchmarkScatterGather(b *testing.B) {
	c := newSplitCluster(b, 4)
	g := c.gatherer(b, c.nodes, 10*time.Second)
	queries := cranfield(b).Queries
	for _, facets := range []bool{true, false} {
		name := "facets"
		if !facets {
			name = "no-facets"
		}
		b.Run(name, func(b *testing.B) { benchSearch(b, c, g, queries, facets) })
	}
}

func benchSearch(b *testing.B, c *splitCluster, g *search.Gatherer, queries []ireval.Query, facets bool) {
	ctx := context.Background()
	// CPU is the whole process's (the nodes, the NATS server and the gatherer run in it):
	// on a shared machine it says more than the latencies, which include waiting for a core.
	var cpu time.Duration
	run := func(search func(index.Request) (*index.Result, error)) []time.Duration {
		cpu0 := processCPU(b)
		defer func() { cpu = processCPU(b) - cpu0 }()
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			req := index.Request{Query: queries[i%len(queries)].Text, Operator: "or", Facets: facets}
			start := time.Now()
			res, err := search(req)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Missing) > 0 {
				b.Fatalf("shards missing: %v", res.Missing)
			}
			lat = append(lat, time.Since(start))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return lat
	}
	one := run(func(r index.Request) (*index.Result, error) { return c.one.Search(ctx, r) })
	oneCPU := cpu
	b.ResetTimer()
	split := run(func(r index.Request) (*index.Result, error) { return g.Search(ctx, r) })
	b.StopTimer()
	perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perOp(cpu), "cpu-ms/op")
	b.ReportMetric(perOp(oneCPU), "one-index-cpu-ms/op")
	pct := func(lat []time.Duration, p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(split, 0.50), "p50-ms")
	b.ReportMetric(pct(split, 0.99), "p99-ms")
	b.ReportMetric(pct(one, 0.50), "one-index-p50-ms")
	b.ReportMetric(pct(one, 0.99), "one-index-p99-ms")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
