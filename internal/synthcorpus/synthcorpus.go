// Package synthcorpus generates a deterministic English-like collection of web pages and
// a search log over it, for the benchmarks and load tests that need a large index
// (package index's BenchmarkIndex100k, sonda serve's search load test). Words follow
// Zipf's law over a 60,000-word vocabulary (s = 1.07, close to English) with English
// function words as the most frequent; body lengths are log-normal around 300 words (web
// pages' text lengths roughly are). Words are made of syllables, so stemming and folding
// see word-like strings. Nothing in it is tuned to sonda's ranking.
package synthcorpus

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"time"
)

// Corpus generates pages and queries; it is deterministic for a seed and not safe for
// concurrent use.
type Corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

// FunctionWords are the most frequent words of the vocabulary, in order.
var FunctionWords = strings.Fields(`the of and to in a is that for it as was with be by on not he this are
or his from at which but have an they you were her she there been one all we their has would when if so no
will more can about out up`)

// New makes a corpus for seed.
func New(seed int64) *Corpus {
	rng := rand.New(rand.NewSource(seed))
	syll := strings.Fields("ka lo mi ren tu sa vel or an ti mo ra de li nu ber can sol gar pen to est ri da mar")
	seen := map[string]bool{}
	vocab := append([]string{}, FunctionWords...)
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
	return &Corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 1, uint64(len(vocab)-1)), vocab: vocab}
}

// Words returns n words drawn from the vocabulary's distribution, space-separated.
func (c *Corpus) Words(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.vocab[c.zipf.Uint64()])
	}
	return b.String()
}

// Word returns one word that is not a function word (as a searcher would type).
func (c *Corpus) Word() string {
	for {
		if w := c.vocab[c.zipf.Uint64()]; len(w) > 3 {
			return w
		}
	}
}

// Intn is the corpus's own random source, for callers that must stay deterministic.
func (c *Corpus) Intn(n int) int { return c.rng.Intn(n) }

// Page is a generated web page.
type Page struct {
	URL, Host             string
	Title, Body, Headings string
	Fetched               time.Time
}

// Page returns the i-th page (pages must be asked for in order for a run to be repeated).
func (c *Corpus) Page(i int) Page {
	body := int(math.Exp(c.rng.NormFloat64()*0.7 + math.Log(300)))
	host := fmt.Sprintf("www.site%04d.test", c.rng.Intn(2000))
	url := "http://" + host + "/" + strings.ReplaceAll(c.Words(2), " ", "-") + "/" + strconv.Itoa(i) + ".html"
	return Page{
		URL: url, Host: host,
		Title: c.Words(3 + c.rng.Intn(6)), Body: c.Words(max(20, body)), Headings: c.Words(c.rng.Intn(8)),
		Fetched: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.rng.Intn(365*24)) * time.Hour),
	}
}

// Query is one search of a log.
type Query struct {
	Text string
	Kind string // KindShort, KindQuestion or KindHeavy
}

// Kinds of queries in a Log.
const (
	// KindShort: one to three words, most searches.
	KindShort = "short"
	// KindQuestion: a question typed as a sentence, 6 to 12 words with function words
	// among them (with implicit AND, few pages have every word: the search relaxes).
	KindQuestion = "question"
	// KindHeavy: 30 to 63 words joined by OR, most of them common: the query that reads
	// the largest part of the index.
	KindHeavy = "heavy"
)

var questionWords = strings.Fields("how what why where when which who")

// Log returns n searches in the proportions and with the repetition of a search log:
// distinct queries (70 % short, 28 % questions, 2 % heavy) are drawn with a Zipf law over
// their popularity, so a few are asked again and again and most once or a few times.
func (c *Corpus) Log(n, distinct int) []Query {
	pool := make([]Query, distinct)
	for i := range pool {
		switch p := c.rng.Intn(100); {
		case p < 70:
			words := make([]string, 1+c.rng.Intn(3))
			for j := range words {
				words[j] = c.Word()
			}
			pool[i] = Query{strings.Join(words, " "), KindShort}
		case p < 98:
			pool[i] = Query{questionWords[c.rng.Intn(len(questionWords))] + " " + c.Words(5+c.rng.Intn(7)), KindQuestion}
		default:
			words := strings.Fields(c.Words(30 + c.rng.Intn(34)))
			pool[i] = Query{strings.Join(words, " OR "), KindHeavy}
		}
	}
	pop := rand.NewZipf(c.rng, 1.01, 1000, uint64(distinct-1))
	out := make([]Query, n)
	for i := range out {
		out[i] = pool[pop.Uint64()]
	}
	return out
}
