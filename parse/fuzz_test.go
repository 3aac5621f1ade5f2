package parse

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

var fuzzSeeds = []string{
	contextDoc,
	`<html lang=en><title>t</title><base href="/b/"><meta name=robots content=noindex><a href=x>x</a>`,
	`<a href="javascript:x">j</a><a href="http://[::1">b</a><a href='//h.org/p'>p</a><area href=/m alt=m>`,
	`<table><tr><td><a href=/1>one<td>two</table><svg><a xlink:href=/s>s</a><p>out`,
	`<p>a<br>b<template><a href=/t>t</a></template><iframe src=/f>x</iframe><img src=i alt=a srcset="a 1x, b 2x">`,
	"<a href=/x>\xff\xfe<b>bold</a></b>\x00<meta http-equiv=refresh content='0;url=/r'>",
	`<plaintext><a href=/no>`,
	`<div><div><div><a href=/1><a href=/2></div></div></div></a>`,
}

// FuzzParse checks the invariants every consumer relies on, for any input:
// no panic, valid UTF-8 text, blocks that tile Text(), absolute http(s)
// links with ordered spans inside the text, and context accessors that
// return substrings of the text for every index and distance.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Parse(body, "http://example.com/dir/page.html", Options{MaxLinks: 200, MaxTextBytes: 1 << 16})
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		text := p.Text()
		if !utf8.ValidString(text) || !utf8.ValidString(p.Title) {
			t.Fatalf("invalid UTF-8 in text %q or title %q", text, p.Title)
		}
		var joined []string
		for _, b := range p.Blocks {
			if b.Text == "" || b.Text != strings.TrimSpace(b.Text) || strings.Contains(b.Text, "\n") || strings.Contains(b.Text, "  ") {
				t.Fatalf("block %q not collapsed", b.Text)
			}
			if b.Start+len(b.Text) > len(text) || text[b.Start:b.Start+len(b.Text)] != b.Text {
				t.Fatalf("block %q not at offset %d", b.Text, b.Start)
			}
			joined = append(joined, b.Text)
		}
		if strings.Join(joined, "\n") != text {
			t.Fatalf("blocks do not tile the text")
		}
		prevStart := 0
		for _, l := range p.Links {
			if !isHTTPURL(l.URL) {
				t.Fatalf("link %q is not absolute http(s)", l.URL)
			}
			if u, err := whatwg.Parse(l.URL); err != nil || u.Href(false) != l.URL {
				t.Fatalf("link %q does not reparse to itself: %v", l.URL, err)
			}
			if l.TextStart < prevStart || l.TextStart > l.TextEnd || l.TextEnd > len(text) {
				t.Fatalf("bad span [%d,%d) after %d in %d bytes", l.TextStart, l.TextEnd, prevStart, len(text))
			}
			prevStart = l.TextStart
			if !utf8.ValidString(l.Anchor) || len(l.Anchor) > maxAnchorBytes {
				t.Fatalf("bad anchor %q", l.Anchor)
			}
		}
		for _, r := range p.Resources {
			if !isHTTPURL(r.URL) {
				t.Fatalf("resource %q is not absolute http(s)", r.URL)
			}
		}
		for i := -1; i <= len(p.Links) && i < 30; i++ {
			for d := 0; d <= 6; d++ {
				b, a := p.LinkContext(i, d)
				sb, sa := p.LinkContextSpan(i, d)
				w := p.AnchorWindow(i, d*4)
				for _, s := range []string{b, a, sb, sa, w} {
					if !strings.Contains(text, s) {
						t.Fatalf("context %q (i=%d d=%d) is not part of the text", s, i, d)
					}
				}
			}
		}
	})
}

// FuzzTagAtom checks that reading tag names from raw token bytes agrees
// with the tokenizer's own TagName.
func FuzzTagAtom(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("<DiV\tclass=x><A/><br/></SPAN\n><x\x00y><svg:a>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		z := html.NewTokenizer(bytes.NewReader(body))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				return
			}
			if tt != html.StartTagToken && tt != html.EndTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			raw := bytes.Clone(z.Raw())
			name, _ := z.TagName()
			if got, want := tagAtom(raw), atom.Lookup(name); got != want {
				t.Fatalf("tagAtom(%q) = %v, TagName gives %q (%v)", raw, got, name, want)
			}
		}
	})
}
