package parse

import (
	"strings"
	"testing"
)

// contextDoc has four links; its text is
//
//	Intro text here.
//	Alpha one beta gamma two delta
//	three
//	epsilon four
//	Outro words.
const contextDoc = `<p>Intro text here.</p>
<p>Alpha <a href="/1">one</a> beta  gamma <a href="/2">two</a> delta</p>
<ul><li><a href="/3">three</a></li><li>epsilon <a href="/4"><img alt="IMG"> four</a></li></ul>
<p>Outro words.</p>`

func TestLinkSpans(t *testing.T) {
	p := mustParse(t, contextDoc, "http://e.com/", Options{})
	want := []string{"one", "two", "three", "four"}
	if len(p.Links) != len(want) {
		t.Fatalf("%d links, want %d", len(p.Links), len(want))
	}
	for i, l := range p.Links {
		if got := p.Text()[l.TextStart:l.TextEnd]; got != want[i] {
			t.Errorf("link %d spans %q, want %q", i, got, want[i])
		}
	}
	if p.Links[3].Anchor != "IMG four" {
		t.Errorf("anchor with alt = %q", p.Links[3].Anchor)
	}
}

type contextCase struct {
	i, d          int
	before, after string
}

func TestLinkContext(t *testing.T) {
	p := mustParse(t, contextDoc, "http://e.com/", Options{})
	for _, fn := range []struct {
		name  string
		get   func(i, d int) (string, string)
		cases []contextCase
	}{
		{"LinkContext", p.LinkContext, []contextCase{
			{1, 1, "beta gamma", "delta"},
			{1, 2, "Intro text here.\nAlpha", "epsilon"},
			{1, 3, "", "Outro words."},
			{1, 4, "", ""},
			{0, 1, "Intro text here.\nAlpha", "beta gamma"},
			{0, 2, "", "delta"},
			{3, 1, "epsilon", "Outro words."},
			{3, 2, "delta", ""},
			{2, 1, "delta", "epsilon"},
			{1, 0, "", ""},
			{-1, 1, "", ""},
			{4, 1, "", ""},
		}},
		{"LinkContextSpan", p.LinkContextSpan, []contextCase{
			{1, 1, "beta gamma", "delta"},
			{1, 2, "Intro text here.\nAlpha one beta gamma", "delta\nthree\nepsilon"},
			{1, 9, "Intro text here.\nAlpha one beta gamma", "delta\nthree\nepsilon four\nOutro words."},
			{0, 1, "Intro text here.\nAlpha", "beta gamma"},
			{2, 0, "", ""},
			{9, 1, "", ""},
		}},
	} {
		for _, c := range fn.cases {
			b, a := fn.get(c.i, c.d)
			if b != c.before || a != c.after {
				t.Errorf("%s(%d, %d) = %q, %q; want %q, %q", fn.name, c.i, c.d, b, a, c.before, c.after)
			}
		}
	}
	// The cumulative span at d is the disjoint blocks 1..d plus the anchors between.
	for i := range p.Links {
		for d := 1; d <= 3; d++ {
			span, _ := p.LinkContextSpan(i, d)
			block, _ := p.LinkContext(i, d)
			if !strings.HasPrefix(span, block) {
				t.Errorf("LinkContextSpan(%d, %d) = %q does not start with block %q", i, d, span, block)
			}
		}
	}
}

func TestAnchorWindow(t *testing.T) {
	p := mustParse(t, contextDoc, "http://e.com/", Options{})
	tests := []struct {
		i, words int
		want     string
	}{
		{1, 2, "beta gamma two delta\nthree"},
		{1, 0, "two"},
		{0, 1, "Alpha one beta"},
		{0, 20, "Intro text here.\nAlpha one beta gamma two delta\nthree\nepsilon four\nOutro words."},
		{3, 1, "epsilon four\nOutro"},
		{4, 3, ""},
		{-1, 3, ""},
	}
	for _, tt := range tests {
		if got := p.AnchorWindow(tt.i, tt.words); got != tt.want {
			t.Errorf("AnchorWindow(%d, %d) = %q, want %q", tt.i, tt.words, got, tt.want)
		}
	}
}

func TestContextWithoutText(t *testing.T) {
	// Links with no text (frames, images without alt) sit at a point; an
	// iframe inside an anchor overlaps it. Nothing may panic or leak.
	p := mustParse(t, `<a href="/a">x <iframe src="/f"></iframe> y</a><a href="/b"><img src="i"></a>z`, "http://e.com/", Options{})
	if len(p.Links) != 3 {
		t.Fatalf("%d links", len(p.Links))
	}
	// The iframe sits inside the first anchor's span: nothing lies between
	// that anchor's end and the iframe, and "y" lies between the iframe and
	// the image link.
	if b, a := p.LinkContext(1, 1); b != "" || a != "y" {
		t.Errorf("iframe inside anchor: context %q, %q", b, a)
	}
	if b, a := p.LinkContext(2, 1); b != "y" || a != "z" {
		t.Errorf("image link: context %q, %q", b, a)
	}
	if got := p.AnchorWindow(2, 5); got != "x y z" {
		t.Errorf("AnchorWindow of image link = %q", got)
	}
}

func TestHasRel(t *testing.T) {
	l := Link{Rel: []string{"nofollow", "ugc"}}
	if !l.HasRel("ugc") || l.HasRel("sponsored") {
		t.Errorf("HasRel wrong for %v", l.Rel)
	}
}
