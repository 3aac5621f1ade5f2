package fingerprint

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestVolatileMask(t *testing.T) {
	v, err := NewVolatile(DefaultVolatileKinds...)
	if err != nil {
		t.Fatal(err)
	}
	// Pairs of texts that differ only in volatile fragments must normalize equally;
	// pairs that differ in content must not.
	same := []struct{ a, b string }{
		{"Updated 2024-01-02 10:00:00Z. Solar panels.", "Updated 2025-11-30 23:59:01Z. Solar panels."},
		{"Posted on March 3, 2024 by Ana", "Posted on April 17, 2025 by Ana"},
		{"Publicado em 3 de março de 2024", "Publicado em 21 de dezembro de 2025"},
		{"Publié le 3 mars 2024", "Publié le 9 décembre 2025"},
		{"Monday, 5 May 2024 news", "Tuesday, 6 May 2024 news"},
		{"Last login 10:42 pm", "Last login 9:03 am"},
		{"Updated 5 minutes ago", "Updated 2 hours ago"},
		{"atualizado há 3 horas", "atualizado há 10 minutos"},
		{"1,234 views · 12 comments", "1,301 views · 15 comments"},
		{"Visitas: 10.234", "Visitas: 10.301"},
		{"session a3f9c2e1b4d5f6a7b8c9 active", "session 77ffe21b0c9d8e7f6a5b active"},
		{"Docs for sonda. Version 1.4.2 built 2024-03-01", "Docs for sonda. Version 1.5.0 built 2024-04-11"},
		{"Docs v2.3.1", "Docs v2.4.0"},
		{"© 2019-2024 Example", "© 2019-2025 Example"},
		{"Today at 14h30", "Yesterday at 09h15"},
		{"cache buster 20240102T101010abc123", "cache buster 20250102T101010abd999"},
	}
	n := Normalizer{Volatile: v}
	for _, tc := range same {
		if n.Exact(tc.a) != n.Exact(tc.b) {
			t.Errorf("%q and %q differ after masking: %q vs %q", tc.a, tc.b, n.Normalize(tc.a), n.Normalize(tc.b))
		}
		if Exact(tc.a) == Exact(tc.b) {
			t.Errorf("%q and %q are equal even without masking: the case tests nothing", tc.a, tc.b)
		}
	}
	differ := []struct{ a, b string }{
		{"Price 10 euros", "Price 12 euros"}, // numbers are not masked by default
		{"Solar panels are cheap", "Wind turbines are cheap"},
		{"internationalization matters", "internationalisation matters"}, // long words are not ids
		{"chapter 3", "chapter 4"},
	}
	for _, tc := range differ {
		if n.Exact(tc.a) == n.Exact(tc.b) {
			t.Errorf("%q and %q are equal after masking: %q", tc.a, tc.b, n.Normalize(tc.a))
		}
	}
	// The text around a fragment survives.
	if got := n.Normalize("Updated 5 minutes ago: the river rose"); got != "updated the river rose" {
		t.Errorf("Normalize = %q", got)
	}
}

func TestVolatileKinds(t *testing.T) {
	if v, err := NewVolatile(); v != nil || err != nil {
		t.Errorf("no kinds: %v, %v; want nil, nil", v, err)
	}
	if _, err := NewVolatile("dates", "weather"); err == nil || !strings.Contains(err.Error(), "weather") {
		t.Errorf("unknown kind: error %v", err)
	}
	v, err := NewVolatile("numbers", "ids", "numbers")
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Kinds(); strings.Join(got, ",") != "ids,numbers" {
		t.Errorf("Kinds() = %v", got)
	}
	n := Normalizer{Volatile: v}
	if n.Exact("Price 10 euros, ref 123456789012345") != n.Exact("Price 12 euros, ref 998877665544332") {
		t.Error("numbers kind: prices and long numbers should be masked")
	}
	var none *Volatile
	if none.Mask("a 1") != "a 1" || none.Count("2024-01-01") != 0 || none.Kinds() != nil {
		t.Error("a nil Volatile must mask nothing")
	}
}

func TestVolatileCount(t *testing.T) {
	v, _ := NewVolatile("dates")
	if got := v.Count("Jan 3, 2024 — 2024-02-05 — nothing — 3 de março de 2024"); got != 3 {
		t.Errorf("Count = %d, want 3", got)
	}
}

func FuzzVolatileMask(f *testing.F) {
	f.Add("Updated 5 minutes ago, 1,234 views, v1.2.3, 2024-01-02T10:00Z")
	f.Add("há 3 horas — © 2024 — a3f9c2e1b4d5f6a7b8c9")
	v, err := NewVolatile(VolatileKinds...)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := tokenize(nil, s), tokenizeOneByOne(nil, s); !slices.Equal(got, want) {
			t.Fatalf("%q: tokens %v, want %v", s, got, want)
		}
		m := v.Mask(s)
		if len(m) > len(s) {
			t.Fatalf("masking grew the text: %q -> %q", s, m)
		}
		_ = Normalizer{Volatile: v}.Of(s)
	})
}

func BenchmarkVolatileMask(b *testing.B) {
	v, _ := NewVolatile(DefaultVolatileKinds...)
	para := "The municipal water board met on March 3, 2024 and published 1,234 pages of minutes. " +
		"Updated 5 minutes ago by the editors; version 2.4.1 of the portal is online. "
	text := strings.Repeat(para+"Rivers, reservoirs and treatment plants were discussed at length again. ", 60)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		v.Mask(text)
	}
}

// TestListedWordsFitLower: scanner.lower gives up on words longer than maxListedWord, so
// every listed word must fit, or it would never be found.
func TestListedWordsFitLower(t *testing.T) {
	lists := []map[string]bool{months, weekdays, ordinals, relativeDays, timeWords, timeUnits, counterWords, versionWords}
	for first := range justNow {
		lists = append(lists, map[string]bool{first: true})
	}
	for _, l := range lists {
		for w := range l {
			if len(w) > maxListedWord {
				t.Errorf("%q is %d bytes, longer than maxListedWord (%d)", w, len(w), maxListedWord)
			}
		}
	}
}

// BenchmarkVolatileMaskProse masks ordinary prose (benchText: 20 KB, few numbers), what
// most crawled pages are: the cost there is the scan over every word, not the rules.
func BenchmarkVolatileMaskProse(b *testing.B) {
	v, _ := NewVolatile(DefaultVolatileKinds...)
	text := benchText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		v.Mask(text)
	}
}

// TestVolatileMaskMemoryBound: masking a long hostile text (a token at nearly every byte)
// allocates a small multiple of its size, not the ~60 times a token per byte costs when
// the whole text is tokenized at once; and chunking changes nothing on text with lines.
func TestVolatileMaskMemoryBound(t *testing.T) {
	v, _ := NewVolatile(DefaultVolatileKinds...)
	hostile := strings.Repeat("1.2-3/4 ", 10<<20/8) // 10 MiB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	masked := v.Mask(hostile)
	runtime.ReadMemStats(&after)
	if len(masked) > len(hostile) {
		t.Fatalf("masked text longer than the text")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 6*uint64(len(hostile)) {
		t.Errorf("Mask of %d bytes allocated %d bytes (%.1f×); want at most 6×", len(hostile), alloc, float64(alloc)/float64(len(hostile)))
	}

	para := "The board met on March 3, 2024; updated 5 minutes ago, version 2.4.1, 1,234 visitors.\n" +
		"Rivers and reservoirs were discussed again at length by everyone present.\n"
	text := strings.Repeat(para, 3*maxScanChunk/len(para)+7)
	whole := scanner{s: text, v: v, toks: tokenize(nil, text)}
	whole.run()
	var got []span
	v.scan(text, func(spans []span) { got = append(got, spans...) })
	if len(got) != len(whole.out) {
		t.Fatalf("chunked scan found %d fragments, whole text %d", len(got), len(whole.out))
	}
	for i := range got {
		if got[i] != whole.out[i] {
			t.Fatalf("fragment %d: chunked %v, whole %v", i, got[i], whole.out[i])
		}
	}
}

// tokenizeOneByOne is tokenize as it was before it took ASCII runs in one step: a token
// kind per character. TestTokenizeRuns holds tokenize to it.
func tokenizeOneByOne(toks []token, s string) []token {
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		kind := uint8(tPunct)
		switch {
		case r >= '0' && r <= '9':
			kind = tNum
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == 0xa0 || r >= utf8.RuneSelf && unicode.IsSpace(r):
			kind = tSpace
		case r < utf8.RuneSelf && (r|0x20 >= 'a' && r|0x20 <= 'z') || r >= utf8.RuneSelf && unicode.IsLetter(r):
			kind = tWord
		}
		if kind != tPunct && len(toks) > 0 && toks[len(toks)-1].kind == kind && toks[len(toks)-1].to == i {
			toks[len(toks)-1].to = i + size
		} else {
			toks = append(toks, token{kind: kind, from: i, to: i + size})
		}
		i += size
	}
	return toks
}

// TestTokenizeRuns: taking ASCII runs in one step gives the same tokens as a kind per
// character, on mixed scripts, spaces of every sort, invalid UTF-8 and the prose of
// benchText.
func TestTokenizeRuns(t *testing.T) {
	texts := []string{"", "a", "1", " ", "-", "abc123def", "Ünïcödé123abc", "abc\u00a0def  \t\n1,234.5",
		"日本語のテキスト2024年", "\xff\xfeab\x80 12", "x\u2003y\u200bz", "éa", "aé1", "Mar 3, 2024 — 10:45 am",
		"a3f9c2e1b4d5f6a7b8c9", "##!!..", benchText()}
	for _, s := range texts {
		got, want := tokenize(nil, s), tokenizeOneByOne(nil, s)
		if !slices.Equal(got, want) {
			t.Errorf("%.40q: tokens %v, want %v", s, got[:min(len(got), 20)], want[:min(len(want), 20)])
		}
	}
}

// lineTexts are texts of several lines for the tests that mask and fingerprint them a line
// at a time: prose, fragments at line ends and starts, a line longer than a scan chunk, and
// empty lines.
func lineTexts() []string {
	long := strings.Repeat("Rivers and reservoirs, 1,234 visitors, updated 5 minutes ago. ", 2*maxScanChunk/60)
	return []string{"", "\n", "\n\n", "one line, March 3, 2024", benchText(),
		"Updated 5\nminutes ago\nMarch\n3, 2024\n10:45\nam, 1,234\nviews v1.2\n.3",
		"Menu\nHome\nPosted Monday\n3 May 2024 at 10:45 am\n\nThe board met.\n© 2024\n",
		long + "\n" + long + "\nshort 7 days ago\n" + long}
}

// TestMaskLineByLine: a fragment never spans lines, so masking a text is masking each of
// its lines (what Normalizer.OfMain relies on).
func TestMaskLineByLine(t *testing.T) {
	v, _ := NewVolatile(DefaultVolatileKinds...)
	for _, text := range lineTexts() {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = v.Mask(l)
		}
		if got, want := v.Mask(text), strings.Join(lines, "\n"); got != want {
			t.Errorf("%.60q: masked whole %.200q, line by line %.200q", text, got, want)
		}
	}
}

// TestOfMain: OfMain gives the fingerprints Of gives and the digest Exact gives of the main
// lines joined, whichever lines are main.
func TestOfMain(t *testing.T) {
	v, _ := NewVolatile(DefaultVolatileKinds...)
	for _, n := range []Normalizer{{}, {Volatile: v}, {Volatile: v, DropNumbers: true}} {
		for _, text := range lineTexts() {
			lines := strings.Split(text, "\n")
			for _, pick := range []func(int) bool{
				func(int) bool { return true }, func(int) bool { return false },
				func(i int) bool { return i%2 == 1 }, func(i int) bool { return i%3 != 0 },
			} {
				var main []string
				for i, l := range lines {
					if pick(i) {
						main = append(main, l)
					}
				}
				wantMain := n.Exact(strings.Join(main, "\n"))
				if main == nil {
					wantMain = n.Exact(text)
				}
				all, got := n.OfMain(text, pick)
				if want := n.Of(text); all != want {
					t.Errorf("%.60q: OfMain's fingerprint %v, Of's %v", text, all, want)
				}
				if got != wantMain {
					t.Errorf("%.60q, main lines %.60q: digest %v, want %v", text, main, got, wantMain)
				}
			}
		}
	}
}

// TestVolatileIdentifierEdges pins what every kind masked does to identifiers at the edges
// of their runs (next to '_', '-', other punctuation, non-ASCII letters, invalid bytes), as
// the scanner did before its fast paths for words before white space: the masks below are
// that scanner's output.
func TestVolatileIdentifierEdges(t *testing.T) {
	v, err := NewVolatile(VolatileKinds...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"session a1b2c3d4e5f6a7b8 end", "session   end"},
		{"x_a1b2c3d4e5f6a7b8c9 y", "  y"},
		{"a1b2c3d4e5f6a7b8c9- y", " - y"},
		{"-a1b2c3d4e5f6a7b8c9 y", "-a b c d e f a b c  y"},
		{"(a1b2c3d4e5f6a7b8c9).", "( )."},
		{"id=deadbeef1234, next", "id= , next"},
		{"é1b2c3d4e5f6a7b8c9d0 y", "é b c d e f a b c d  y"},
		{"a1b2c3d4e5f6a7b8c9d0é y", "a b c d e f a b c d é y"},
		{"v_2024_build_77_release_x y", "  y"},
		{"abc–123–def–456–ghi–789", "abc– –def– –ghi– "},
		{"abc\xe2123def456ghi789jkl", "abc\xe2 "},
		{"token:abcdef0123456789;", "token: ;"},
		{"trailing abcdef0123456789", "trailing  "},
		{"abcdef0123456789", " "},
		{"a-b-c-d-e-f-1-2-3-4-5-6-7-8", " "},
		{"__a1b2c3d4e5f6a7b8c9__", "__a b c d e f a b c __"},
		{"Published 2024-01-02 by x_9f8e7d6c5b4a3f2e1d", "Published   by  "},
		{"word-word-word-word-1234", " "},
	} {
		if got := v.Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
