package focus

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchArticle is a page of about 6 KiB of text with 40 links, like a news article.
func benchArticle() string {
	var b strings.Builder
	b.WriteString("<html><title>Uranium enrichment and the fuel cycle</title><body>")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "<p>The reactor operators reported that coolant flow and fuel temperatures stayed within limits during the test, and that the plant will return to full power next week. See <a href=\"http://site%d.test/page%d\">nuclear safety report %d</a> for details on the inspection.</p>", i%7, i, i)
	}
	b.WriteString("</body></html>")
	return b.String()
}

func BenchmarkRelevanceAnalyze(b *testing.B) {
	rel := testRelevance(b)
	html := benchArticle()
	d := fetched(b, nil, "http://a.test/", html)
	b.SetBytes(int64(len(d.Text)))
	b.ReportAllocs()
	for b.Loop() {
		d.Record.Relevance, d.Record.Relevant = nil, nil
		rel.Analyze(context.Background(), d)
	}
}

// BenchmarkLanguageAnalyze measures the language analyzer on the article, which every
// crawl runs on every page.
func BenchmarkLanguageAnalyze(b *testing.B) {
	d := fetched(b, nil, "http://a.test/", benchArticle())
	b.SetBytes(int64(len(d.Text)))
	b.ReportAllocs()
	for b.Loop() {
		d.Record.Lang = ""
		Language{}.Analyze(context.Background(), d)
	}
}

// benchScore measures one strategy scoring every link of the article.
func benchScore(b *testing.B, name string, opts StrategyOptions) {
	rel := testRelevance(b)
	opts.Relevance = rel
	s, err := NewStrategy(name, opts)
	if err != nil {
		b.Fatal(err)
	}
	d := fetched(b, rel, "http://a.test/", benchArticle())
	links := make([]int, len(d.Page.Links))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i := range links {
			s.Score(link(b, d, i))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(links)), "ns/link")
}

func BenchmarkScoreBestFirst(b *testing.B) { benchScore(b, "best-first", StrategyOptions{}) }
func BenchmarkScoreShark(b *testing.B)     { benchScore(b, "shark", StrategyOptions{}) }
func BenchmarkScoreOnline(b *testing.B)    { benchScore(b, "online", StrategyOptions{}) }
func BenchmarkScoreMLP(b *testing.B) {
	benchScore(b, "mlp", StrategyOptions{MLP: NewMLP(NumLinkFeatures, 4, 1)})
}
