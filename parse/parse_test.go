package parse

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustParse(t testing.TB, body, pageURL string, opts Options) *Page {
	t.Helper()
	p, err := Parse([]byte(body), pageURL, opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func blockTexts(p *Page) []string {
	var out []string
	for _, b := range p.Blocks {
		out = append(out, b.Tag+":"+b.Text)
	}
	return out
}

func TestBlocks(t *testing.T) {
	tests := []struct {
		name, html string
		want       []string // tag:text
	}{
		{"paragraphs", `<p>foo</p><p>bar</p>`, []string{"p:foo", "p:bar"}},
		{"no glue across blocks", `<div>one</div><div>two</div><h2>three</h2>`, []string{"div:one", "div:two", "h2:three"}},
		{"inline glues", `<p><span>ab</span><span>cd</span> <em>e</em></p>`, []string{"p:abcd e"}},
		{"nested blocks", `<div>a<div>b</div>c</div>`, []string{"div:a", "div:b", "div:c"}},
		{"p closed by div", `<p>a<div>b</div>c`, []string{"p:a", "div:b", "body:c"}},
		{"br splits", `<p>line one<br>line two<br/>three</p>`, []string{"p:line one", "p:line two", "p:three"}},
		{"end br", `a</br>b`, []string{"body:a", "body:b"}},
		{"list items unclosed", `<ul><li>one<li>two<li>three</ul>after`, []string{"li:one", "li:two", "li:three", "body:after"}},
		{"table cells", `<table><tr><td>a<td>b<tr><th>c</table>`, []string{"td:a", "td:b", "th:c"}},
		{"whitespace collapsed", "<p>  a \n\t b\r\n  c  </p>", []string{"p:a b c"}},
		{"entities and nbsp", `<p>caf&eacute;&nbsp;&amp;&#x41;&#66;&lt;</p>`, []string{"p:café &AB<"}},
		{"unicode spaces", "<p>a\u00a0\u00a0b\u3000c\u200bd\u00ade</p>", []string{"p:a b cde"}},
		{"buttons separate words", `<button>Menu</button><button>Search</button><img>x`, []string{"body:Menu Search x"}},
		{"wbr does not separate", `super<wbr>cali`, []string{"body:supercali"}},
		{"excluded content", `<head><title>T</title><style>p{}</style><script>var x="<p>no</p>"</script></head>
			<body><noscript>nojs</noscript><template><p>tpl</p></template><p>yes<textarea>input</textarea></p>
			<svg><text>svgtext</text></svg><iframe>fallback</iframe><select><option>opt</select></body>`,
			[]string{"p:yes", "option:opt"}},
		{"svg ended by html tag", `<svg><text>in</text><p>out`, []string{"p:out"}},
		{"nested svg", `<svg><svg></svg><text>in</text></svg>after`, []string{"body:after"}},
		{"self-closing svg", `<svg/>after`, []string{"body:after"}},
		{"nested template", `<template><template></template>x</template>y`, []string{"body:y"}},
		{"xmp and plaintext shown", `<xmp><b>raw</b></xmp><plaintext><i>to end`, []string{"xmp:<b>raw</b>", "plaintext:<i>to end"}},
		{"comments ignored", `a<!-- b -->c<!doctype x>`, []string{"body:ac"}},
		{"dl", `<dl><dt>term<dd>def</dl>`, []string{"dt:term", "dd:def"}},
		{"text outside body", `<html>loose<head></head><body><p>x`, []string{"body:loose", "p:x"}},
		{"empty", ``, nil},
		{"only whitespace", " \n <div> </div> ", nil},
		{"uppercase tags", `<P>A<BR>B</P><DIV>C</DIV>`, []string{"p:A", "p:B", "div:C"}},
		{"heading inside link", `<a href="/x"><h3>Title</h3><p>Lead</p></a>`, []string{"h3:Title", "p:Lead"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.html, "http://example.com/", Options{})
			if got := blockTexts(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("blocks = %q, want %q", got, tt.want)
			}
			var texts []string
			for _, b := range p.Blocks {
				texts = append(texts, b.Text)
				if p.Text()[b.Start:b.Start+len(b.Text)] != b.Text {
					t.Errorf("block %q not at offset %d of Text()", b.Text, b.Start)
				}
			}
			if want := strings.Join(texts, "\n"); p.Text() != want {
				t.Errorf("Text() = %q, want blocks joined: %q", p.Text(), want)
			}
		})
	}
}

func TestMetadata(t *testing.T) {
	const doc = `<!DOCTYPE html>
<html lang="pt-BR"><head>
<meta charset="utf-8">
<title>
  Mapas   &amp; dados
</title>
<title>second</title>
<base href="/site/">
<meta name="Description" content="  Uma   página ">
<meta name="keywords" content="geo, mapas , ,shapefile">
<meta name="keywords" content="ignored">
<meta name="robots" content="noindex, nofollow">
<meta name="Googlebot" content="noarchive">
<meta name="sonda" content="nofollow">
<meta property="og:title" content="OG title">
<meta property="og:title" content="second og">
<meta name="twitter:card" content="summary">
<meta name="author" content="">
<meta http-equiv="refresh" content="5; URL='next.html'">
<link rel="canonical" href="https://example.com/site/page">
<link rel="canonical" href="/other">
<link rel="next" href="?p=2"><link rel="Previous" href="?p=0">
<link rel="alternate" hreflang="en" href="/en/page">
<link rel="alternate" hreflang="x-default" href="javascript:no">
<link rel="alternate" type="application/rss+xml; charset=utf-8" title="Feed" href="/feed.xml">
<link rel="alternate" type="application/json" href="/wp-json/1">
<link rel="stylesheet" href="/s.css"><link rel="shortcut icon" href="/favicon.ico">
</head><body><p>x</p></body></html>`
	p := mustParse(t, doc, "http://example.com/a/b.html", Options{RobotsNames: []string{"Sonda"}})
	check := func(field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	check("Title", p.Title, "Mapas & dados")
	check("Lang", p.Lang, "pt")
	check("BaseURL", p.BaseURL, "http://example.com/site/")
	check("Description", p.Description, "Uma página")
	check("Keywords", p.Keywords, []string{"geo", "mapas", "shapefile"})
	check("Robots", p.Robots, []Meta{{"robots", "noindex, nofollow"}, {"googlebot", "noarchive"}, {"sonda", "nofollow"}})
	check("Meta", p.Meta, map[string]string{"og:title": "OG title", "twitter:card": "summary"})
	check("Canonical", p.Canonical, "https://example.com/site/page")
	check("Next", p.Next, "http://example.com/site/?p=2")
	check("Prev", p.Prev, "http://example.com/site/?p=0")
	check("RefreshURL", p.RefreshURL, "http://example.com/site/next.html")
	check("RefreshDelay", p.RefreshDelay, 5)
	check("Hreflang", p.Hreflang, []Alternate{{URL: "http://example.com/en/page", Hreflang: "en"}})
	check("Feeds", p.Feeds, []Alternate{{URL: "http://example.com/feed.xml", Type: "application/rss+xml", Title: "Feed"}})
	check("Resources", p.Resources, []Resource{
		{"http://example.com/s.css", "link", "href"}, {"http://example.com/favicon.ico", "link", "href"}})
	check("Text", p.Text(), "x")
}

func TestLang(t *testing.T) {
	tests := []struct{ html, want string }{
		{`<html lang="EN_us">`, "en"},
		{`<html xml:lang="de">`, "de"},
		{`<html lang="">` + `<meta http-equiv="Content-Language" content="fr, en">`, "fr"},
		{`<html><meta http-equiv="content-language" content="es-419">`, "es"},
		{`<html lang="x-klingon">`, ""},
		{`<html lang="123">`, ""},
		{`<html lang="zh-Hant-TW">`, "zh"},
		{`<p>no html tag</p>`, ""},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.html, "http://e.com/", Options{}).Lang; got != tt.want {
			t.Errorf("%s: Lang = %q, want %q", tt.html, got, tt.want)
		}
	}
}

type linkView struct {
	URL, Anchor, Tag string
	Rel              []string
}

func links(p *Page) []linkView {
	var out []linkView
	for _, l := range p.Links {
		out = append(out, linkView{l.URL, l.Anchor, l.Tag, l.Rel})
	}
	return out
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name, html string
		want       []linkView
		bad, non   int
	}{
		{"relative and absolute", `<a href="c.html">C</a><a href="/d">D</a><a href="https://x.org/">X</a><a href="//y.org/z">Y</a>`,
			[]linkView{{"http://e.com/a/c.html", "C", "a", nil}, {"http://e.com/d", "D", "a", nil},
				{"https://x.org/", "X", "a", nil}, {"http://y.org/z", "Y", "a", nil}}, 0, 0},
		{"base relative", `<base href="../other/"><a href="p">P</a>`,
			[]linkView{{"http://e.com/other/p", "P", "a", nil}}, 0, 0},
		{"base after links still applies", `<a href="p">P</a><base href="http://cdn.org/">`,
			[]linkView{{"http://cdn.org/p", "P", "a", nil}}, 0, 0},
		{"javascript base ignored", `<base href="javascript:x"><a href="p">P</a>`,
			[]linkView{{"http://e.com/a/p", "P", "a", nil}}, 0, 0},
		{"whitespace in href", "<a href=\"  /x\n/y\t \">W</a>", []linkView{{"http://e.com/x/y", "W", "a", nil}}, 0, 0},
		{"quoting", `<a href=/u1>U</a><a href='/s q'>S</a><a HREF="/d?a=1&amp;b=2">D</a>`,
			[]linkView{{"http://e.com/u1", "U", "a", nil}, {"http://e.com/s%20q", "S", "a", nil},
				{"http://e.com/d?a=1&b=2", "D", "a", nil}}, 0, 0},
		{"nested inline and alt", `<a href="/n"><span>Big <b>news</b></span><img alt="logo" src="l.png"> today</a>`,
			[]linkView{{"http://e.com/n", "Big news logo today", "a", nil}}, 0, 0},
		{"image only", `<a href="/i"><img src="x.png" alt=" Site  home "></a>`,
			[]linkView{{"http://e.com/i", "Site home", "a", nil}}, 0, 0},
		{"title fallback", `<a href="/t" title="Go  home"> </a>`, []linkView{{"http://e.com/t", "Go home", "a", nil}}, 0, 0},
		{"no href", `<a name="top">Top</a><a id="x">X</a>`, nil, 0, 0},
		{"duplicates kept", `<a href="/d">1</a><a href="/d">2</a>`,
			[]linkView{{"http://e.com/d", "1", "a", nil}, {"http://e.com/d", "2", "a", nil}}, 0, 0},
		{"non-http", `<a href="javascript:void(0)">j</a><a href="mailto:a@b">m</a><a href="tel:1">t</a>
			<a href="data:text/html,x">d</a><a href=" JavaScript:x">J</a><a href="ftp://f.org/">f</a><a href="java&#10;script:x">n</a>`,
			nil, 0, 7},
		{"unresolvable", `<a href="http://[::1">bad</a><a href="http://exa mple.com/">sp</a><a href="/ok">ok</a>`,
			[]linkView{{"http://e.com/ok", "ok", "a", nil}}, 2, 0},
		{"absurdly long", `<a href="/` + strings.Repeat("x", maxRefBytes) + `">long</a>`, nil, 1, 0},
		{"rel tokens", `<a href="/r" rel=" NoFollow  ugc
			sponsored">r</a>`, []linkView{{"http://e.com/r", "r", "a", []string{"nofollow", "ugc", "sponsored"}}}, 0, 0},
		{"fragment and empty", `<a href="#top">top</a><a href="">self</a>`,
			[]linkView{{"http://e.com/a/b.html?q#top", "top", "a", nil}, {"http://e.com/a/b.html?q", "self", "a", nil}}, 0, 0},
		{"a inside a", `<a href="/1">one<a href="/2">two</a>three</a>`,
			[]linkView{{"http://e.com/1", "one", "a", nil}, {"http://e.com/2", "two", "a", nil}}, 0, 0},
		{"named a ends open a", `<a href="/1">one<a name="n">two</a>`, []linkView{{"http://e.com/1", "one", "a", nil}}, 0, 0},
		{"unclosed a ends at cell", `<table><tr><td><a href="/1">one</td><td>two</td></tr></table>`,
			[]linkView{{"http://e.com/1", "one", "a", nil}}, 0, 0},
		{"a around table keeps cells", `<a href="/1">x<table><td>in</td></table>y</a>z`,
			[]linkView{{"http://e.com/1", "x in y", "a", nil}}, 0, 0},
		{"unclosed a spans blocks", `<p><a href="/1">one</p><p>two`, []linkView{{"http://e.com/1", "one two", "a", nil}}, 0, 0},
		{"area iframe frame", `<map><area href="/m" alt="Map"></map><iframe src="/f" title="Frame"></iframe><frame src="/g">`,
			[]linkView{{"http://e.com/m", "Map", "area", nil}, {"http://e.com/f", "Frame", "iframe", nil}, {"http://e.com/g", "", "frame", nil}}, 0, 0},
		{"svg link", `<svg><a xlink:href="/s"><text>t</text></a></svg><a href="/h">h</a>`,
			[]linkView{{"http://e.com/s", "", "a", nil}, {"http://e.com/h", "h", "a", nil}}, 0, 0},
		{"links in template and noscript ignored", `<template><a href="/t">t</a></template><noscript><a href="/n">n</a></noscript>`, nil, 0, 0},
		{"links inside blocks", `<ul><li><a href="/1">One</a> first</li><li>second <a href="/2">Two</a></li></ul>`,
			[]linkView{{"http://e.com/1", "One", "a", nil}, {"http://e.com/2", "Two", "a", nil}}, 0, 0},
		{"link to idn", `<a href="http://bücher.de/ä">b</a>`, []linkView{{"http://xn--bcher-kva.de/%C3%A4", "b", "a", nil}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.html, "http://e.com/a/b.html?q", Options{})
			if got := links(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("links =\n %+v\nwant\n %+v", got, tt.want)
			}
			if p.BadLinks != tt.bad || p.NonHTTPLinks != tt.non {
				t.Errorf("BadLinks, NonHTTPLinks = %d, %d; want %d, %d", p.BadLinks, p.NonHTTPLinks, tt.bad, tt.non)
			}
			for _, l := range p.Links {
				if l.TextStart > l.TextEnd || l.TextEnd > len(p.Text()) {
					t.Errorf("link %q span [%d,%d) outside text of %d bytes", l.URL, l.TextStart, l.TextEnd, len(p.Text()))
				}
			}
		})
	}
}

func TestRawKept(t *testing.T) {
	p := mustParse(t, `<a href=" /x?a=1&amp;b ">x</a>`, "http://e.com/", Options{})
	if got := p.Links[0].Raw; got != " /x?a=1&b " {
		t.Errorf("Raw = %q", got)
	}
}

func TestResources(t *testing.T) {
	const doc = `<img src="/a.png" srcset="/a-1x.png 1x, /a-2x.png 2x" data-src="/lazy.png">
<img src="data:image/gif;base64,R0lG">
<picture><source srcset="/w.webp 100w,/x,y.webp 200w"></picture>
<script src="/app.js"></script><script>inline()</script>
<video src="/v.mp4" poster="/p.jpg"><track src="/t.vtt"></video><audio src="/s.mp3"></audio>
<embed src="/e.swf"><object data="/o.pdf"></object><input type="IMAGE" src="/btn.png"><input type="text" src="/no">
<a href="/file.zip" download>get</a><link rel="preload" href="/font.woff2">`
	p := mustParse(t, doc, "http://e.com/", Options{})
	var got []string
	for _, r := range p.Resources {
		got = append(got, r.Tag+" "+r.Attr+" "+r.URL)
	}
	want := []string{
		"img src http://e.com/a.png", "img srcset http://e.com/a-1x.png", "img srcset http://e.com/a-2x.png",
		"img data-src http://e.com/lazy.png", "source srcset http://e.com/w.webp", "source srcset http://e.com/x,y.webp",
		"script src http://e.com/app.js", "video src http://e.com/v.mp4", "video poster http://e.com/p.jpg",
		"track src http://e.com/t.vtt", "audio src http://e.com/s.mp3", "embed src http://e.com/e.swf",
		"object data http://e.com/o.pdf", "input src http://e.com/btn.png", "a href http://e.com/file.zip",
		"link href http://e.com/font.woff2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resources =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Links) != 1 || p.Links[0].Anchor != "get" {
		t.Errorf("a[download] must also be a link: %+v", p.Links)
	}
}

func TestSrcset(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a.jpg", []string{"a.jpg"}},
		{" a.jpg 1x , b.jpg 2x ", []string{"a.jpg", "b.jpg"}},
		{"a.jpg,b.jpg", []string{"a.jpg,b.jpg"}}, // one URL: only whitespace ends a URL
		{"a.jpg 1x,b.jpg", []string{"a.jpg", "b.jpg"}},
		{"a,b.jpg 100w, c.jpg (x, y) 2x, d.jpg", []string{"a,b.jpg", "c.jpg", "d.jpg"}},
		{",,, ", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		srcsetURLs(tt.in, func(u string) { got = append(got, u) })
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("srcsetURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRefresh(t *testing.T) {
	tests := []struct {
		in    string
		delay int
		ref   string
	}{
		{"0; url=/next", 0, "/next"},
		{"5;URL='a b.html'", 5, "a b.html"},
		{` 3 , "x.html" junk`, 3, "x.html"},
		{"10", 10, ""},
		{"1.5; url = y", 1, "y"},
		{".5;z", 0, "z"},
		{"0 http://other.org/", 0, "http://other.org/"},
		{"x; url=/no", 0, ""},
		{"5x; url=/no", 0, ""},
		{"", 0, ""},
		{"99999999999999999999; url=/big", 1<<31 - 1, "/big"},
	}
	for _, tt := range tests {
		d, r := parseRefresh(tt.in)
		if d != tt.delay || r != tt.ref {
			t.Errorf("parseRefresh(%q) = %d, %q; want %d, %q", tt.in, d, r, tt.delay, tt.ref)
		}
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString(`<p>word word <a href="/l">link</a> <img src="/i.png"></p>`)
	}
	p := mustParse(t, b.String(), "http://e.com/", Options{MaxLinks: 10, MaxTextBytes: 100})
	if len(p.Links) != 10 || len(p.Resources) != 10 || p.DroppedLinks != 80 {
		t.Errorf("links, resources, dropped = %d, %d, %d; want 10, 10, 80", len(p.Links), len(p.Resources), p.DroppedLinks)
	}
	if !p.TextTruncated || len(p.Text()) > 100 || len(p.Text()) < 90 {
		t.Errorf("TextTruncated = %v, len(Text) = %d; want true and ~100", p.TextTruncated, len(p.Text()))
	}
	for _, l := range p.Links {
		if l.TextEnd > len(p.Text()) {
			t.Errorf("link span %d beyond truncated text", l.TextEnd)
		}
	}
	// Multi-byte characters are never split by the cap.
	p = mustParse(t, strings.Repeat("é", 100), "http://e.com/", Options{MaxTextBytes: 51})
	if !utf8.ValidString(p.Text()) || len(p.Text()) != 50 {
		t.Errorf("truncated text %q (%d bytes) not cut at a character boundary", p.Text(), len(p.Text()))
	}
	// Negative means unlimited.
	p = mustParse(t, b.String(), "http://e.com/", Options{MaxLinks: -1, MaxTextBytes: -1})
	if len(p.Links) != 50 || p.TextTruncated {
		t.Errorf("unlimited: %d links, truncated %v", len(p.Links), p.TextTruncated)
	}
}

func TestLongAnchorCapped(t *testing.T) {
	p := mustParse(t, `<a href="/x">`+strings.Repeat("ação ", 1000), "http://e.com/", Options{})
	a := p.Links[0].Anchor
	if len(a) > maxAnchorBytes || len(a) < maxAnchorBytes-4 || !utf8.ValidString(a) {
		t.Errorf("anchor of %d bytes (valid %v), want just under %d", len(a), utf8.ValidString(a), maxAnchorBytes)
	}
	if p.Links[0].TextEnd != len(p.Text()) {
		t.Errorf("the span still covers the whole anchor")
	}
}

func TestDeepNesting(t *testing.T) {
	const n = 200000
	doc := strings.Repeat("<div><span><a href=/x>", n) + "deep" + strings.Repeat("</a></span></div>", n)
	p := mustParse(t, doc, "http://e.com/", Options{})
	if p.Text() != "deep" || len(p.Links) != DefaultMaxLinks {
		t.Errorf("Text = %q, %d links", p.Text(), len(p.Links))
	}
}

func TestInvalidUTF8(t *testing.T) {
	p := mustParse(t, "<title>a\xffb</title><p>x\xc3y\xed\xa0\x80z\x00w</p><a href=\"/\xfe\">l\xff</a>", "http://e.com/", Options{})
	for _, s := range []string{p.Title, p.Text(), p.Links[0].Anchor} {
		if !utf8.ValidString(s) {
			t.Errorf("invalid UTF-8 in %q", s)
		}
	}
	// Each invalid byte becomes U+FFFD; NUL, like other controls, separates words.
	if p.Text() != "x\ufffdy\ufffd\ufffd\ufffdz w\nl\ufffd" {
		t.Errorf("Text = %q", p.Text())
	}
}

type prefixResolver struct{ calls int }

func (r *prefixResolver) Resolve(base, ref string) (string, error) {
	r.calls++
	if ref == "reject" {
		return "", errors.New("out of scope")
	}
	return "https://norm.example/" + strings.TrimPrefix(base, "http://") + "|" + ref, nil
}

func TestCustomResolver(t *testing.T) {
	r := &prefixResolver{}
	p := mustParse(t, `<base href="/b/"><a href="x">x</a><a href="reject">r</a><a href="mailto:m">m</a><img src="i">`,
		"http://e.com/", Options{Resolver: r})
	if got := links(p); len(got) != 1 || got[0].URL != "https://norm.example/e.com/b/|x" {
		t.Errorf("links = %+v", got)
	}
	if p.BadLinks != 1 || p.NonHTTPLinks != 1 {
		t.Errorf("BadLinks, NonHTTPLinks = %d, %d", p.BadLinks, p.NonHTTPLinks)
	}
	if r.calls != 3 { // x, reject, i: mailto never reaches the resolver
		t.Errorf("resolver called %d times, want 3", r.calls)
	}
}

func TestBadPageURL(t *testing.T) {
	for _, u := range []string{"", "not a url", "http://[::1"} {
		if _, err := Parse([]byte("<p>x"), u, Options{}); err == nil || !strings.Contains(err.Error(), "page URL") {
			t.Errorf("Parse with page URL %q: err = %v, want a page URL error", u, err)
		}
	}
}

func TestBOMAndNUL(t *testing.T) {
	p := mustParse(t, "\xef\xbb\xbf<p>a\x00b</p>", "http://e.com/", Options{})
	if p.Text() != "a b" {
		t.Errorf("Text = %q", p.Text())
	}
}
