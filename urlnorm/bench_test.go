package urlnorm

import (
	"strings"
	"testing"
)

var (
	benchTypical = "https://www.Example.com/news/2024/03/some-article-title.html?id=123&utm_source=feed#comments"
	benchLong    = "https://www.example.com/" + strings.Repeat("segment/", 250) + "?" + strings.Repeat("key=value&", 200)
	benchIDN     = "https://bücher.de/katalog/neu?seite=2"
	benchBase    = "https://www.example.com/news/2024/03/index.html?page=1"
)

var sink URL

func benchParse(b *testing.B, in string) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		u, err := defaultNorm.Parse(in)
		if err != nil {
			b.Fatal(err)
		}
		sink = u
	}
}

func BenchmarkParse(b *testing.B) {
	b.Run("typical", func(b *testing.B) { benchParse(b, benchTypical) })
	b.Run("long", func(b *testing.B) { benchParse(b, benchLong) })
	b.Run("idn-library", func(b *testing.B) { benchParse(b, benchIDN) })
}

func BenchmarkResolve(b *testing.B) {
	base, err := defaultNorm.Parse(benchBase)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, ref string }{
		{"relative", "../04/other-article.html?ref=home"},
		{"absolute-path", "/about/contact"},
		{"absolute", "https://cdn.example.net/img/logo.png"},
		{"long", strings.Repeat("../x/", 200) + "?" + strings.Repeat("k=v&", 200)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				u, err := defaultNorm.ResolveURL(base, tc.ref)
				if err != nil {
					b.Fatal(err)
				}
				sink = u
			}
		})
	}
	b.Run("strings", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := defaultNorm.Resolve(benchBase, "../04/other-article.html"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var keySink Key

func BenchmarkKey(b *testing.B) {
	u, _ := defaultNorm.Parse(benchTypical)
	b.ReportAllocs()
	for b.Loop() {
		keySink = u.Key()
	}
}

var stringSink string

func BenchmarkDomainKey(b *testing.B) {
	u, _ := defaultNorm.Parse("https://news.bbc.co.uk/x")
	b.ReportAllocs()
	for b.Loop() {
		stringSink = u.DomainKey()
	}
}
