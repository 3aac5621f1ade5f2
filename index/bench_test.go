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
	"testing"
	"time"
)

// synthCorpus generates documents whose words follow Zipf's law over a 60,000-word
// vocabulary (s = 1.07, close to English), with English function words as the most
// frequent ones, and whose body lengths are log-normal around 300 words (web pages' text
// lengths are roughly log-normal). The words are made of syllables, so stemming and
// folding see word-like strings. It is deterministic for a seed.
type synthCorpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

var functionWords = strings.Fields(`the of and to in a is that for it as was with be by on not he this are
or his from at which but have an they you were her she there been one all we their has would when if so no
will more can about out up`)

func newSynthCorpus(seed int64) *synthCorpus {
	rng := rand.New(rand.NewSource(seed))
	syll := strings.Fields("ka lo mi ren tu sa vel or an ti mo ra de li nu ber can sol gar pen to est ri da mar")
	seen := map[string]bool{}
	vocab := append([]string{}, functionWords...)
	for _, w := range vocab {
		seen[w] = true
	}
	for len(vocab) < 60000 {
		n := 2 + rng.Intn(3)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(syll[rng.Intn(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &synthCorpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 1, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *synthCorpus) words(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.vocab[c.zipf.Uint64()])
	}
	return b.String()
}

func (c *synthCorpus) doc(i int) Doc {
	body := int(math.Exp(c.rng.NormFloat64()*0.7 + math.Log(300)))
	host := fmt.Sprintf("www.site%04d.test", c.rng.Intn(2000))
	url := "http://" + host + "/" + strings.ReplaceAll(c.words(2), " ", "-") + "/" + strconv.Itoa(i) + ".html"
	return Doc{
		ID: url, URL: url, Host: host, Lang: "en", ContentType: "text/html",
		Title: c.words(3 + c.rng.Intn(6)), Body: c.words(max(20, body)), Headings: c.words(c.rng.Intn(8)),
		Fetched: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.rng.Intn(365*24)) * time.Hour), Relevance: -1,
	}
}

// benchQueries makes the query mix: single words, two- and three-word conjunctions,
// phrases taken from documents, and boolean queries with OR, exclusion and groups. Query
// words are drawn from the same Zipf distribution (skipping function words), so some are
// very common and most are rare, as in query logs.
func benchQueries(c *synthCorpus, docs func(i int) Doc, n int) map[string][]string {
	word := func() string {
		for {
			if w := c.vocab[c.zipf.Uint64()]; len(w) > 3 {
				return w
			}
		}
	}
	qs := map[string][]string{}
	for i := 0; i < n; i++ {
		qs["term"] = append(qs["term"], word())
		qs["and"] = append(qs["and"], word()+" "+word())
		qs["and3"] = append(qs["and3"], word()+" "+word()+" "+word())
		body := strings.Fields(docs(c.rng.Intn(1000)).Body)
		at := c.rng.Intn(max(1, len(body)-3))
		qs["phrase"] = append(qs["phrase"], `"`+strings.Join(body[at:min(len(body), at+2+c.rng.Intn(2))], " ")+`"`)
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
		c := newSynthCorpus(1)
		docs := make([]Doc, 0, 1000)
		var sample []Doc
		start := time.Now()
		for i := 0; i < n; i++ {
			d := c.doc(i)
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
