package text

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sonda-search/sonda/internal/shareddata"
)

// benchPage is about 6 KiB of English prose, the visible text of a typical article.
var benchPage = strings.Repeat("Nuclear power plants generate about ten percent of the world's electricity. "+
	"The reactors use uranium fuel, whose atomic nuclei split and release energy as heat; "+
	"turbines then turn that heat into electric power for homes and industry. ", 25)

var benchPagePT = strings.Repeat("As usinas nucleares geram cerca de dez por cento da eletricidade do mundo. "+
	"Os reatores usam combustível de urânio, cujos núcleos atômicos se dividem e liberam energia na forma de calor; "+
	"as turbinas transformam esse calor em energia elétrica para casas e indústrias. ", 25)

func benchTerms(b *testing.B, lang, page string) {
	a := NewAnalyzer(lang)
	a.Terms(page) // fill the memo, as a long-running crawl has
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	var buf []string
	for b.Loop() {
		buf = a.AppendTerms(buf[:0], page)
	}
}

func BenchmarkTermsEnglish(b *testing.B)    { benchTerms(b, "en", benchPage) }
func BenchmarkTermsPortuguese(b *testing.B) { benchTerms(b, "pt", benchPagePT) }

// BenchmarkTermsColdMemo measures analysis without the memo: every word is stemmed.
func BenchmarkTermsColdMemo(b *testing.B) {
	a := NewAnalyzerOptions(Options{Lang: "en", CacheSize: -1})
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	for b.Loop() {
		a.Terms(benchPage)
	}
}

func BenchmarkDetectLanguage(b *testing.B) {
	b.SetBytes(int64(len(benchPagePT)))
	b.ReportAllocs()
	for b.Loop() {
		DetectLanguage(benchPagePT)
	}
}

// BenchmarkDetectLanguageDragnet detects the language of real texts, the first 100 Dragnet
// main texts of the shared test data (an op reads them all): a crawl's vocabulary, where
// benchPagePT repeats one paragraph.
func BenchmarkDetectLanguageDragnet(b *testing.B) {
	texts, size := shareddata.Read(b, 100, "*.txt", "dragnet", "gold")
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			DetectLanguage(t)
		}
	}
}

// BenchmarkDetectLanguageLongText: a 1 MiB text costs what its first detectWords words cost.
func BenchmarkDetectLanguageLongText(b *testing.B) {
	long := strings.Repeat(benchPagePT, (1<<20)/len(benchPagePT))
	b.SetBytes(int64(len(long)))
	b.ReportAllocs()
	for b.Loop() {
		DetectLanguage(long)
	}
}

func BenchmarkCosine(b *testing.B) {
	a := NewAnalyzer("en")
	page := TF(a.Terms(benchPage))
	topic := TF(a.Terms("nuclear energy power reactor uranium atomic electric technology physics fuel"))
	b.ReportAllocs()
	for b.Loop() {
		Cosine(topic, page)
	}
}

// BenchmarkTermsCorpus analyzes the Dragnet main texts of the shared test data (1,381
// articles, about 11 MB) on every core at once, as the index builds a batch's documents:
// a crawl's vocabulary, tens of thousands of words, so that the memo's look-ups miss the
// CPU caches as they do in a crawl, which the one-paragraph pages above do not show.
func BenchmarkTermsCorpus(b *testing.B) {
	dir := filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold")
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(names) == 0 {
		b.Skipf("no Dragnet texts in %s (%v): this benchmark needs ../shared/testdata/dragnet", dir, err)
	}
	var pages []string
	size := 0
	for _, n := range names {
		t, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, string(t))
		size += len(t)
	}
	a := NewAnalyzer("en")
	var toks []Token
	for _, p := range pages {
		toks = a.AppendTokens(toks[:0], p) // fill the memo, as a long-running crawl has
	}
	b.SetBytes(int64(size / len(pages)))
	b.ReportAllocs()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		var toks []Token
		for pb.Next() {
			toks = a.AppendTokens(toks[:0], pages[int(next.Add(1))%len(pages)])
		}
	})
}
