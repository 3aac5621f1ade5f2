package index

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/internal/synthcorpus"
)

// TestSearchCPUOnIndex measures what a search costs in CPU inside the process, without
// HTTP: the load test's query log (cmd/sonda TestSearchUnderLoad) searched as the API asks
// (a page of 10 with facets, feedback on, no result cache, no time budget) on an existing
// index (SONDA_BENCH_INDEX, e.g. the load test's SONDA_BENCH_DIR/index). It reports the
// thread CPU per search by kind of query and the process CPU per search (GC included), and
// a fingerprint of every result (IDs and scores, hits and totals): a change meant to keep
// rankings must keep it. SONDA_BENCH_QUERIES sets how many queries of the log (default
// 1,500, after 300 to warm up), SONDA_BENCH_PROFILE=FILE writes a CPU profile:
//
//	SONDA_BENCH=searchcpu SONDA_BENCH_INDEX=/tmp/sonda-load/index go test -run TestSearchCPUOnIndex -v ./index
func TestSearchCPUOnIndex(t *testing.T) {
	dir := os.Getenv("SONDA_BENCH_INDEX")
	if os.Getenv("SONDA_BENCH") != "searchcpu" || dir == "" {
		t.Skip("a benchmark: set SONDA_BENCH=searchcpu and SONDA_BENCH_INDEX")
	}
	n := 1500
	if v, err := strconv.Atoi(os.Getenv("SONDA_BENCH_QUERIES")); err == nil && v > 0 {
		n = v
	}
	ix, err := Open(dir, Options{ReadOnly: true, CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	log := synthcorpus.New(1).Log(200000, 100000)
	const warm = 300
	if warm+n > len(log) {
		t.Fatalf("SONDA_BENCH_QUERIES=%d: the log has %d queries", n, len(log)-warm)
	}
	search := func(q synthcorpus.Query) *Result {
		res, err := ix.Search(context.Background(), Request{Query: q.Text, Facets: true})
		if err != nil {
			t.Fatalf("%q: %v", q.Text, err)
		}
		return res
	}
	for _, q := range log[:warm] {
		search(q)
	}
	if f := os.Getenv("SONDA_BENCH_PROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := map[string]time.Duration{}
	count := map[string]int{}
	print := fnv.New64a()
	p0, t0 := processCPU(), threadCPU()
	for _, q := range log[warm : warm+n] {
		c0 := threadCPU()
		res := search(q)
		cpu[q.Kind] += threadCPU() - c0
		count[q.Kind]++
		fmt.Fprintf(print, "%d %d\n", res.Total, res.AllWords)
		for _, h := range res.Hits {
			fmt.Fprintf(print, "%s %x\n", h.ID, math.Float64bits(h.Score))
		}
	}
	thread, process := threadCPU()-t0, processCPU()-p0
	t.Logf("%d searches: thread CPU %.2f ms per search, process CPU %.2f ms per search (GC included); results fingerprint %x",
		n, ms(thread)/float64(n), ms(process)/float64(n), print.Sum64())
	for _, kind := range []string{synthcorpus.KindShort, synthcorpus.KindQuestion, synthcorpus.KindHeavy} {
		if count[kind] > 0 {
			t.Logf("  %-8s %4d searches, thread CPU %.2f ms per search", kind, count[kind], ms(cpu[kind])/float64(count[kind]))
		}
	}
}

// processCPU is the CPU time the process has used, all threads.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
