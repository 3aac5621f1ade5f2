package scope

import (
	"testing"
)

var verdictSink Verdict

func BenchmarkCheck(b *testing.B) {
	r := DefaultRules()
	r.DenyHosts = []string{"*.ads.example.com", "tracker.example.net"}
	r.DenyDomains = []string{"doubleclick.net"}
	r.Deny = []string{`\.(?:jpe?g|png|gif|pdf|zip)$`, `/(?:login|logout|cart)\b`}
	s, err := Compile(r, mustURLs(b, "https://www.example.com/", "https://news.example.org/"))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, url string }{
		{"in-scope", "https://www.example.com/news/2024/03/some-article-title.html?id=123"},
		{"other-domain", "https://www.other-site.com/news/2024/03/some-article-title.html"},
		{"deny-regex", "https://www.example.com/media/2024/photo.jpg"},
	} {
		u := mustURL(b, tc.url)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				verdictSink = s.Check(u, 3)
			}
		})
	}
}

func BenchmarkCheckVariants(b *testing.B) {
	s, _ := Compile(DefaultRules(), nil)
	c := NewMemoryVariants(1 << 16)
	u := mustURL(b, "https://www.example.com/cal?month=2024-01")
	b.ReportAllocs()
	for b.Loop() {
		verdictSink, _ = s.CheckVariants(u, c)
	}
}
