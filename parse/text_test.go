package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// writeBytewise is textBuilder.write as it was before runs of ASCII were written at once:
// one character at a time, each with its separator and its room checked on its own.
// TestTextBuilderRuns holds write to it.
func (t *textBuilder) writeBytewise(s []byte) {
	for len(s) > 0 && !t.truncated {
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		invisible := r == '\u00ad' || r == '\u200b' || r == '\ufeff'
		switch {
		case r < utf8.RuneSelf && asciiSpace[r], r >= utf8.RuneSelf && unicode.IsSpace(r):
			t.space = true
		case !invisible && t.sep(utf8.RuneLen(r)):
			t.buf = utf8.AppendRune(t.buf, r) // an invalid byte decodes as U+FFFD
		}
	}
}

// TestTextBuilderRuns: writing a run of ASCII at once builds the same text, blocks and
// truncation as writing it byte by byte, on the text of real pages (the shared test data's
// Dragnet pages when present, and the package's own) under caps that cut them anywhere.
func TestTextBuilderRuns(t *testing.T) {
	pages := [][]byte{realisticPage(50 << 10), []byte("a\u00a0b\xffc  d\u200be\n\tf" + contextDoc)}
	names, _ := filepath.Glob(filepath.Join("..", "..", "shared", "testdata", "dragnet", "html", "*.html"))
	if len(names) > 60 {
		names = names[:60]
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, b)
	}
	for pi, page := range pages {
		for _, max := range []int{-1, 0, 1, 7, 100, 1001, 4096, len(page) / 3} {
			var got, want textBuilder
			got.max, want.max = max, max
			z := html.NewTokenizer(bytes.NewReader(page))
			for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
				switch tt {
				case html.TextToken:
					s := z.Text()
					got.write(s)
					want.writeBytewise(s)
				case html.StartTagToken:
					name, _ := z.TagName()
					if a := atom.Lookup(name); a == atom.P || a == atom.Div || a == atom.Li {
						got.boundary(a)
						want.boundary(a)
					} else {
						got.wordBreak()
						want.wordBreak()
					}
				}
			}
			got.finish()
			want.finish()
			if !bytes.Equal(got.buf, want.buf) || got.truncated != want.truncated || !slices.Equal(got.spans, want.spans) {
				t.Fatalf("page %d, cap %d: text %d bytes (truncated %v, %d blocks), byte by byte %d (truncated %v, %d blocks)",
					pi, max, len(got.buf), got.truncated, len(got.spans), len(want.buf), want.truncated, len(want.spans))
			}
		}
	}
	if len(names) == 0 {
		t.Log("no Dragnet pages in ../shared/testdata: checked on the package's own pages only")
	}
}
