package text

import (
	"strings"
	"testing"
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

func BenchmarkCosine(b *testing.B) {
	a := NewAnalyzer("en")
	page := TF(a.Terms(benchPage))
	topic := TF(a.Terms("nuclear energy power reactor uranium atomic electric technology physics fuel"))
	b.ReportAllocs()
	for b.Loop() {
		Cosine(topic, page)
	}
}
