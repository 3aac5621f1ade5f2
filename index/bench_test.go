package index

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/internal/procstat"
	"github.com/sonda-search/sonda/internal/synthcorpus"
	"github.com/sonda-search/sonda/testweb"
)

// synthDoc is page i of c as an index document.
func synthDoc(c *synthcorpus.Corpus, i int) Doc {
	p := c.Page(i)
	return Doc{ID: p.URL, URL: p.URL, Host: p.Host, Lang: "en", ContentType: "text/html",
		Title: p.Title, Body: p.Body, Headings: p.Headings, Fetched: p.Fetched, Relevance: -1}
}

// benchQueries makes the query mix: single words, two- and three-word conjunctions,
// phrases taken from documents, and boolean queries with OR, exclusion and groups. Query
// words are drawn from the same Zipf distribution (skipping function words), so some are
// very common and most are rare, as in query logs.
func benchQueries(c *synthcorpus.Corpus, docs func(i int) Doc, n int) map[string][]string {
	word := c.Word
	qs := map[string][]string{}
	for i := 0; i < n; i++ {
		qs["term"] = append(qs["term"], word())
		qs["and"] = append(qs["and"], word()+" "+word())
		qs["and3"] = append(qs["and3"], word()+" "+word()+" "+word())
		body := strings.Fields(docs(c.Intn(1000)).Body)
		at := c.Intn(max(1, len(body)-3))
		qs["phrase"] = append(qs["phrase"], `"`+strings.Join(body[at:min(len(body), at+2+c.Intn(2))], " ")+`"`)
		qs["boolean"] = append(qs["boolean"], fmt.Sprintf("%s OR %s", word(), word()), fmt.Sprintf("%s -%s", word(), word()),
			fmt.Sprintf("(%s OR %s) %s", word(), word(), word()))
	}
	return qs
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
}

// BenchmarkIndex100k indexes 100,000 synthetic documents into an on-disk index and
// measures indexing throughput and query latency (p50, p99) for a mix of term, phrase and
// boolean queries, result pages with snippets, the result cache off. Run it with
//
//	go test -run XXX -bench Index100k -benchtime 1x ./index
//
// SONDA_BENCH_DOCS changes the number of documents. SONDA_BENCH_INDEX=DIR keeps the index
// in DIR and, when DIR already holds the same number of documents, reuses it and measures
// only the queries (the corpus is generated again, so the queries are the same): the
// latencies can then be measured again at a quiet moment without indexing for minutes.
func BenchmarkIndex100k(b *testing.B) {
	n := 100000
	if s := os.Getenv("SONDA_BENCH_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for b.Loop() {
		dir := os.Getenv("SONDA_BENCH_INDEX")
		if dir == "" {
			dir = filepath.Join(b.TempDir(), "index")
		}
		ix, err := Open(dir, Options{CacheEntries: -1})
		if err != nil {
			b.Fatal(err)
		}
		reuse := ix.Stats().Documents == int64(n)
		if !reuse && ix.Stats().Documents != 0 {
			b.Fatalf("%s holds %d documents, not %d: remove it or point SONDA_BENCH_INDEX elsewhere", dir, ix.Stats().Documents, n)
		}
		c := synthcorpus.New(1)
		docs := make([]Doc, 0, 1000)
		var sample []Doc
		start := time.Now()
		for i := 0; i < n; i++ {
			d := synthDoc(c, i)
			if len(sample) < 1000 {
				sample = append(sample, d)
			}
			if reuse {
				continue
			}
			docs = append(docs, d)
			if len(docs) == cap(docs) || i == n-1 {
				if err := ix.Put(context.Background(), docs...); err != nil {
					b.Fatal(err)
				}
				docs = docs[:0]
			}
		}
		took := time.Since(start)
		if !reuse {
			b.ReportMetric(float64(n)/took.Seconds(), "docs/s")
		}
		qs := benchQueries(c, func(i int) Doc { return sample[i] }, 200)
		var all []time.Duration
		var lines []string
		kinds := []string{"term", "and", "and3", "phrase", "boolean"}
		for _, facets := range []bool{false, true} {
			for _, kind := range kinds {
				var lat []time.Duration
				for _, q := range qs[kind] {
					t0 := time.Now()
					if _, err := ix.Search(context.Background(), Request{Query: q, Facets: facets}); err != nil {
						b.Fatalf("%q: %v", q, err)
					}
					lat = append(lat, time.Since(t0))
				}
				if !facets {
					all = append(all, lat...)
				}
				label := kind
				if facets {
					label += "+facets"
				}
				lines = append(lines, fmt.Sprintf("%-15s %4d queries  p50 %6.2f ms  p99 %6.2f ms", label, len(lat), ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99))))
			}
		}
		b.ReportMetric(ms(percentile(all, 0.5)), "p50-ms")
		b.ReportMetric(ms(percentile(all, 0.99)), "p99-ms")
		s := ix.Stats()
		// The summary first: go test shows only the first lines of a benchmark's log.
		indexed := fmt.Sprintf("%d documents indexed in %s (%.0f docs/s)", n, took.Round(time.Second), float64(n)/took.Seconds())
		if reuse {
			indexed = fmt.Sprintf("%d documents, indexed before (%s)", n, dir)
		}
		b.Logf("%s, index %.0f MiB; queries without facets: p50 %.2f ms, p99 %.2f ms\n%s",
			indexed, float64(s.DiskBytes)/(1<<20), ms(percentile(all, 0.5)), ms(percentile(all, 0.99)), strings.Join(lines, "\n"))
		ix.Close()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkIngestProse indexes pages of real prose the way the crawl's index sink does
// (Put in batches of 256, Sync after every four) and reports the process CPU per document,
// scorch's merges included, and the peak RSS. Each page has ≥ 11 KB of paragraphs of the
// Dragnet main texts in the shared test data (as `sonda testweb --corpus` serves them), a
// title, headings and anchor text. Run it with
//
//	go test -run XXX -bench IngestProse -benchtime 1x ./index
//
// SONDA_BENCH_DOCS changes the number of documents (default 5,000), SONDA_BENCH_BATCH the
// batch size (default 256, the sink's).
func BenchmarkIngestProse(b *testing.B) {
	paras, err := testweb.LoadCorpus(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold"))
	if err != nil {
		b.Skip("no Dragnet corpus in the shared test data:", err)
	}
	n := 5000
	if s := os.Getenv("SONDA_BENCH_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rng := rand.New(rand.NewSource(1))
	page := func(i int) Doc { return prosePage(rng, paras, i, "en") }
	ctx := context.Background()
	for b.Loop() {
		ix, err := Open(filepath.Join(b.TempDir(), "index"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		peakHeap := procstat.SampleHeap(50 * time.Millisecond) // the RSS also counts mmapped segment files
		start, cpu0 := time.Now(), cpuTime()
		size := 256
		if s := os.Getenv("SONDA_BENCH_BATCH"); s != "" {
			size, _ = strconv.Atoi(s)
		}
		batch := make([]Doc, 0, size)
		for i := 0; i < n; i++ {
			if batch = append(batch, page(i)); len(batch) == cap(batch) || i == n-1 {
				if err := ix.Put(ctx, batch...); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
				if (i+1)%(4*cap(batch)) == 0 || i == n-1 {
					if err := ix.Sync(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		cpu, wall := cpuTime()-cpu0, time.Since(start)
		b.ReportMetric(float64(peakHeap())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(ms(cpu)/float64(n), "ms-CPU/doc")
		b.ReportMetric(float64(n)/wall.Seconds(), "docs/s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
	}
}

// prosePage is page i of a web of prose: a body of ≥ 11 KB of paragraphs of paras (the
// Dragnet main texts) from a random one on, a title, headings and anchor text from
// another, in language lang.
func prosePage(rng *rand.Rand, paras []string, i int, lang string) Doc {
	at := rng.Intn(len(paras))
	var body []string
	for size := 0; size < 11<<10; at = (at + 1) % len(paras) {
		body = append(body, paras[at])
		size += len(paras[at])
	}
	first := strings.Fields(paras[rng.Intn(len(paras))])
	host := fmt.Sprintf("www.site%03d.test", i%200)
	url := fmt.Sprintf("http://%s/page/%d", host, i)
	return Doc{ID: url, URL: url, Host: host, Lang: lang, ContentType: "text/html", Relevance: -1,
		Title: strings.Join(first[:min(8, len(first))], " "), Body: strings.Join(body, "\n"),
		Headings: strings.Join(first[:min(4, len(first))], " "), Anchors: []string{first[0], "read more", strings.Join(first[:min(3, len(first))], " ")},
		Fetched: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size in bytes (0 if unknown).
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10
}
