package parse

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/internal/shareddata"
)

var benchWords = strings.Fields(`the of and a in to is was for on that with as by at from his her
an were are which this be has had it not or have their its one also after new first two been other
nuclear energy reactor plant power water fuel safety data map city river region survey census
population agency report minister said year years government national state public research
são paulo região dados mapas município informação população energia nuclear usina segurança`)

// realisticPage builds a deterministic news-article page of about size
// bytes shaped like real ones: a head full of metas, inline CSS and JS,
// JSON-LD, navigation menus, an article with inline links, a related-links
// sidebar with thumbnails, a link-heavy footer and tracking scripts.
func realisticPage(size int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(benchWords[r.IntN(len(benchWords))])
		}
		return b.String()
	}
	slug := func() string { return strings.ReplaceAll(words(4), " ", "-") }
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="pt-BR" class="no-js"><head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + words(8) + ` | Jornal Exemplo</title>
<meta name="description" content="` + words(25) + `">
<meta name="keywords" content="energia, nuclear, mapas, dados">
<meta name="robots" content="index, follow, max-image-preview:large">
<meta property="og:type" content="article"><meta property="og:title" content="` + words(8) + `">
<meta property="og:url" content="https://news.example.com/2024/05/` + slug() + `.html">
<meta property="og:image" content="https://cdn.example.com/img/` + slug() + `.jpg">
<meta property="article:published_time" content="2024-05-17T10:00:00-03:00">
<meta name="twitter:card" content="summary_large_image"><meta name="author" content="Redação">
<link rel="canonical" href="https://news.example.com/2024/05/` + slug() + `.html">
<link rel="alternate" hreflang="en" href="https://news.example.com/en/` + slug() + `">
<link rel="alternate" type="application/rss+xml" title="RSS" href="/feed/">
<link rel="stylesheet" href="/static/css/main.4f3a2b.css"><link rel="icon" href="/favicon.ico">
<link rel="preload" href="/static/fonts/inter.woff2" as="font" crossorigin>
<style>`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, ".c%d{margin:0 auto;padding:%dpx;color:#%06x;font:14px/1.4 Inter,sans-serif}\n", i, i, r.IntN(1<<24))
	}
	b.WriteString(`</style>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());`)
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&b, "var cfg%d={id:'%s',enabled:%v,sizes:[[300,250],[728,90]],path:'/ads/%d'};if(a<b&&b>c){f(cfg%d)}\n", i, slug(), i%2 == 0, i, i)
	}
	b.WriteString(`</script>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"` + words(8) + `"}</script>
</head>
<body class="article-page">
<!-- header -->
<header class="site-header"><div class="container"><a class="logo" href="/"><img src="/static/logo.svg" alt="Jornal Exemplo"></a>
<nav class="main-nav"><ul>`)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, `<li class="nav-item"><a href="/secao/%s/" class="nav-link">%s</a></li>`+"\n", slug(), words(1+r.IntN(2)))
	}
	b.WriteString(`</ul></nav><form action="/busca"><input type="search" name="q" placeholder="Buscar"><button>Buscar</button></form></div></header>
<main><div class="container"><nav class="breadcrumbs"><a href="/">Início</a> &rsaquo; <a href="/energia/">Energia</a> &rsaquo; <span>Nuclear</span></nav>
<article class="post"><h1 class="post-title">` + words(10) + `</h1>
<div class="byline">Por <a href="/autor/` + slug() + `" rel="author">` + words(2) + `</a> &middot; <time datetime="2024-05-17">17/05/2024 10h00</time></div>
<figure><img src="/img/main.jpg" srcset="/img/main-480.jpg 480w, /img/main-960.jpg 960w" alt="` + words(6) + `"><figcaption>` + words(12) + `</figcaption></figure>
`)
	body := b.Len()
	for b.Len() < body+size/2 {
		b.WriteString(`<p>`)
		for s := 0; s < 4; s++ {
			b.WriteString(words(10 + r.IntN(10)))
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, ` <a href="/2024/05/%s.html">%s</a> `, slug(), words(2+r.IntN(4)))
			case 1:
				fmt.Fprintf(&b, ` <strong>%s</strong> `, words(3))
			case 2:
				fmt.Fprintf(&b, ` <a href="https://other%d.example.org/%s" target="_blank" rel="noopener nofollow">%s</a>, `, r.IntN(50), slug(), words(3))
			}
			b.WriteString(words(5) + ". ")
		}
		b.WriteString("</p>\n")
	}
	b.WriteString(`</article>
<aside class="related"><h2>Leia também</h2><ul>`)
	for i := 0; i < 15; i++ {
		fmt.Fprintf(&b, `<li><a href="/2024/05/%s.html"><img src="/thumb/%d.jpg" alt="" loading="lazy" width="120" height="80"><span class="t">%s</span></a></li>`+"\n", slug(), i, words(8))
	}
	b.WriteString(`</ul></aside></div></main>
<footer class="site-footer"><div class="cols">`)
	for b.Len() < size-1500 {
		b.WriteString(`<div class="col"><h4>` + words(2) + `</h4><ul>`)
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&b, `<li><a href="/%s/">%s</a></li>`, slug(), words(2))
		}
		b.WriteString("</ul></div>\n")
	}
	b.WriteString(`</div><p>&copy; 2024 Jornal Exemplo. <a href="mailto:redacao@example.com">Contato</a> <a href="javascript:void(0)" onclick="cmp()">Privacidade</a></p></footer>
<script src="https://www.googletagmanager.com/gtag/js?id=G-XXXX" async></script>
<script src="/static/js/app.91bc.js" defer></script>
<noscript><img height="1" width="1" src="https://www.facebook.com/tr?id=1&ev=PageView&noscript=1"></noscript>
</body></html>`)
	return []byte(b.String())
}

func TestRealisticPage(t *testing.T) {
	body := realisticPage(50 << 10)
	if n := len(body); n < 48<<10 || n > 54<<10 {
		t.Fatalf("generated page is %d bytes, want about 50 KiB", n)
	}
	p := mustParse(t, string(body), "https://news.example.com/2024/05/x.html", Options{})
	if len(p.Links) < 200 || len(p.Blocks) < 100 || p.Title == "" || p.Lang != "pt" || p.NonHTTPLinks != 2 {
		t.Errorf("links %d, blocks %d, title %q, lang %q, non-http %d", len(p.Links), len(p.Blocks), p.Title, p.Lang, p.NonHTTPLinks)
	}
	if strings.Contains(p.Text(), "gtag") || strings.Contains(p.Text(), "margin") {
		t.Errorf("script or style leaked into the text")
	}
}

// BenchmarkParse measures a realistic 50 KiB article page with the default
// WHATWG resolver; BenchmarkParseNoResolve isolates tokenizing and text
// building by using a resolver that only concatenates.
func BenchmarkParse(b *testing.B) {
	body := realisticPage(50 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body, "https://news.example.com/2024/05/x.html", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseDragnet parses real pages, the first 100 of the shared test data's Dragnet
// set (news and blog articles as their sites served them; an op parses them all): their
// text is most of what the crawl's parser writes, where BenchmarkParse's page is mostly
// links.
func BenchmarkParseDragnet(b *testing.B) {
	files, size := shareddata.Read(b, 100, "*.html", "dragnet", "html")
	pages := make([][]byte, len(files))
	for i, f := range files {
		pages[i] = []byte(f)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pages {
			if _, err := Parse(p, "https://news.example.com/2024/05/x.html", Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

type concatResolver struct{}

func (concatResolver) Resolve(base, ref string) (string, error) { return base + ref, nil }

func BenchmarkParseNoResolve(b *testing.B) {
	body := realisticPage(50 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body, "https://news.example.com/2024/05/x.html", Options{Resolver: concatResolver{}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLinkContext(b *testing.B) {
	p, _ := Parse(realisticPage(50<<10), "https://news.example.com/", Options{})
	b.ReportAllocs()
	for b.Loop() {
		for i := range p.Links {
			for d := 1; d <= 5; d++ {
				p.LinkContext(i, d)
			}
			p.AnchorWindow(i, 20)
		}
	}
}
