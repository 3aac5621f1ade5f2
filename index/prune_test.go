package index

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/sonda-search/sonda/internal/synthcorpus"
	"github.com/sonda-search/sonda/query"
)

// TestPrunedEqualsExhaustive: an OR query pruned by MaxScore (prune.go) keeps the same
// best documents, with the same scores in the same order, and the same total, as scoring
// every match, on an index of several segments with deleted documents; and the pruning
// does skip most matches, so the comparison shows something.
func TestPrunedEqualsExhaustive(t *testing.T) {
	// With the postings read from zap, and from the postings cache (postingscache.go:
	// its bitmaps, dense and sparse, find the AND's candidates and count the matches).
	for _, cache := range []int64{-1, 1 << 30} {
		t.Run(fmt.Sprintf("postings cache %d", cache), func(t *testing.T) { prunedEqualsExhaustive(t, cache) })
	}
}

func prunedEqualsExhaustive(t *testing.T, cache int64) {
	ix := openTest(t, Options{CacheEntries: -1, PostingsCache: cache})
	c := synthcorpus.New(1)
	const n = 1200
	var gone []string
	for i := 0; i < n; i += 300 {
		docs := make([]Doc, 0, 300)
		for j := i; j < i+300; j++ {
			docs = append(docs, synthDoc(c, j))
			if j%37 == 0 {
				gone = append(gone, docs[len(docs)-1].ID)
			}
		}
		if err := ix.Put(ctx, docs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	// Questions and heavy OR queries from a search log, and searches of two to six
	// words as typed (not function words).
	var queries []string
	for _, q := range synthcorpus.New(3).Log(300, 300) {
		if q.Kind != synthcorpus.KindShort && len(queries) < 12 {
			queries = append(queries, q.Text)
		}
	}
	// Words that stand together in pages: every such query has pages with all its words.
	for k := 1; k < 12; k += 2 {
		var long []string
		for _, w := range strings.Fields(synthDoc(synthcorpus.New(1), k*97).Body) {
			if len(w) > 3 {
				long = append(long, w)
			}
		}
		queries = append(queries, strings.Join(long[k:k+2], " "))
	}
	typed := synthcorpus.New(4)
	for i := range 12 {
		words := make([]string, 2+i%5)
		for j := range words {
			words[j] = typed.Word()
		}
		queries = append(queries, strings.Join(words, " "))
	}

	// The collector, asked for the best 10 (no facets, no feedback): the most pruning.
	r := DefaultRanking()
	r.Feedback = 0
	v := ix.localView()
	sctx := context.WithValue(ctx, search.BM25StatsKey, v.bleve)
	var matches, returned, conjunctions uint64
	pruned := 0
	for _, text := range queries {
		// With AND, the collector visits only the documents the postings bitmaps say
		// have every word: the same matches as leapfrogging the postings. The facets
		// count the matches the bitmaps give (matchBits: the candidates', or found anew
		// when leapfrogging): as many as leapfrogging finds.
		nd, err := query.Parse(text, query.Options{Implicit: query.And})
		if err != nil {
			t.Fatal(err)
		}
		q := translate(nd, r, v.langs, v.bs).q
		all, err := ix.collect(sctx, q, collectOptions{n: 1000, exhaustive: true, facets: true})
		if err != nil {
			t.Fatal(err)
		}
		some, err := ix.collect(sctx, q, collectOptions{n: 1000, facets: true})
		if err != nil {
			t.Fatal(err)
		}
		if some.total != all.total || !reflect.DeepEqual(some.hits, all.hits) {
			t.Fatalf("%q with AND: %d matches from the bitmaps %v\nleapfrogging %d %v", text, some.total, some.hits, all.total, all.hits)
		}
		if uint64(some.facetOver) != all.total || uint64(all.facetOver) != all.total {
			t.Fatalf("%q with AND: facets over %d (candidates) and %d (bitmaps anew) of %d matches", text, some.facetOver, all.facetOver, all.total)
		}
		conjunctions += all.total

		if nd, err = query.Parse(text, query.Options{Implicit: query.Or}); err != nil {
			t.Fatal(err)
		}
		q = translate(nd, r, v.langs, v.bs).q
		for _, keep := range []int{1, 10, 100} {
			all, err := ix.collect(sctx, q, collectOptions{n: keep, exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			some, err := ix.collect(sctx, q, collectOptions{n: keep})
			if err != nil {
				t.Fatal(err)
			}
			if all.returned != all.total {
				t.Fatalf("%q: the exhaustive search returned %d of %d matches", text, all.returned, all.total)
			}
			if some.total != all.total || !reflect.DeepEqual(some.hits, all.hits) {
				t.Fatalf("%q, best %d: pruned %d matches %v\nexhaustive %d %v", text, keep, some.total, some.hits, all.total, all.hits)
			}
			matches += all.total
			returned += some.returned
			if some.returned < some.total {
				pruned++
			}
		}
	}
	if pruned < len(queries)/3 || returned > matches*9/10 {
		t.Fatalf("pruning skipped matches in %d of %d searches, returning %d of %d matches: too little to tell", pruned, 3*len(queries), returned, matches)
	}
	if conjunctions < 20 {
		t.Fatalf("%d documents have every word of a query: too few to tell", conjunctions)
	}
	t.Logf("pruned %d of %d searches; %d of %d matches scored; %d matches with AND", pruned, 3*len(queries), returned, matches, conjunctions)

	// End to end, as the API asks: pages, facets over the best 1,000 (the index has fewer,
	// so the facets' depth is lowered to make it prune), feedback, the implicit AND
	// relaxed to OR.
	ix.opts.MaxResults = 200
	for _, text := range queries {
		for _, req := range []Request{
			{Query: text, Facets: true},
			{Query: text, Facets: true, Operator: "or", Page: 3, PerPage: 20},
		} {
			ix.exhaustive.Store(true)
			want, err := ix.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			ix.exhaustive.Store(false)
			got, err := ix.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want.Took, got.Took = 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v:\npruned     %s\nexhaustive %s", req, summary(got), summary(want))
			}
		}
	}
}

func summary(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total %d, pages %d, facets over %d %v:", r.Total, r.Pages, r.FacetsOver, r.Facets)
	for _, h := range r.Hits {
		fmt.Fprintf(&b, " %s %v", h.ID, h.Score)
	}
	return b.String()
}

// TestPruneOnIndex reports what pruning saves on an existing index (SONDA_BENCH_INDEX,
// e.g. the load test's 100,000 pages: SONDA_BENCH_DIR/index), for the load test's query
// log asked with OR: the CPU time of collecting the best K with and without pruning
// (pruning wherever it can, beyond pruneKeep and pruneWords), and the share of matches
// scored.
//
//	SONDA_BENCH=prune SONDA_BENCH_INDEX=/tmp/sonda-load/index go test -run TestPruneOnIndex -v ./index
func TestPruneOnIndex(t *testing.T) {
	dir := os.Getenv("SONDA_BENCH_INDEX")
	if os.Getenv("SONDA_BENCH") != "prune" || dir == "" {
		t.Skip("a benchmark: set SONDA_BENCH=prune and SONDA_BENCH_INDEX")
	}
	ix, err := Open(dir, Options{ReadOnly: true, CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	defer func(k, w int) { pruneKeep, pruneWords = k, w }(pruneKeep, pruneWords)
	pruneKeep, pruneWords = math.MaxInt, math.MaxInt // measure where it does not pay too
	r := ix.Ranking()
	v := ix.localView()
	sctx := context.WithValue(ctx, search.BM25StatsKey, v.bleve)
	log := synthcorpus.New(1).Log(200000, 100000)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, keep := range []int{1000, 200, 10} {
		cpu := map[bool]map[string]time.Duration{true: {}, false: {}}
		var matches, returned uint64
		for _, q := range log[:600] {
			nd, err := query.Parse(q.Text, query.Options{Implicit: query.Or})
			if err != nil || nd == nil {
				continue
			}
			tq := translate(nd, r, v.langs, v.bs).q
			for _, exhaustive := range []bool{true, false} {
				c0 := threadCPU()
				res, err := ix.collect(sctx, tq, collectOptions{n: keep, exhaustive: exhaustive})
				if err != nil {
					t.Fatal(err)
				}
				cpu[exhaustive][q.Kind] += threadCPU() - c0
				if !exhaustive {
					matches += res.total
					returned += res.returned
				}
			}
		}
		t.Logf("best %d: scored %d of %d matches (%.0f %%)", keep, returned, matches, 100*float64(returned)/float64(matches))
		for _, kind := range []string{synthcorpus.KindShort, synthcorpus.KindQuestion, synthcorpus.KindHeavy} {
			t.Logf("  %-8s CPU exhaustive %v, pruned %v", kind, cpu[true][kind].Round(time.Millisecond), cpu[false][kind].Round(time.Millisecond))
		}
	}
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
