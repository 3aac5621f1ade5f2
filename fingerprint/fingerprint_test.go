package fingerprint

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sonda-search/sonda/internal/shareddata"
)

func TestNormalizeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  \n\t ", ""},
		{"Hello, World!", "hello world"},
		{"São Paulo — Região  Metropolitana", "sao paulo regiao metropolitana"},
		{"AÇÃO ação Ação", "acao acao acao"},
		{"naïve café résumé Ångström", "naive cafe resume angstrom"},
		{"ǖ ẫ ḯ", "u a i"},               // several marks on one letter
		{"ﬁle ﬂow", "file flow"},         // ligatures (compatibility decomposition)
		{"ＦＵＬＬ　ｗｉｄｔｈ", "full width"},     // full-width forms and ideographic space
		{"ΣΟΦΙΑ σοφιας", "σοφια σοφιασ"}, // final sigma folds onto sigma
		{"Straße STRASSE", "straße strasse"},
		{"e-mail don't 1.000,50", "e mail don t 1 000 50"},
		{"x²+y² ½", "x2 y2 1 2"},
		{"東京都 tokyo", "東 京 都 tokyo"},
		{"カタカナとひらがな", "カ タ カ ナ と ひ ら か な"}, // the voicing mark is a nonspacing mark too
		{"한국어 텍스트", "한국어 텍스트"},
		{"bad\xffbyte\xc3", "bad byte"},
		{"tab\tnew\nline\u00a0nbsp\u200bzw", "tab new line nbsp zw"},
		{"<p>tags&amp;are just punctuation</p>", "p tags amp are just punctuation p"},
	}
	for _, tt := range tests {
		got := NormalizeText(tt.in)
		if got != tt.want {
			t.Errorf("NormalizeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) || NormalizeText(got) != got {
			t.Errorf("NormalizeText(%q) = %q is not a fixed point", tt.in, got)
		}
	}
}

func TestDropNumbers(t *testing.T) {
	n := Normalizer{DropNumbers: true}
	tests := []struct{ in, want string }{
		{"visits: 1.234 today 17/05/2024 at 10h00", "visits today at 10h00"},
		{"123 starts", "starts"},
		{"ends 99", "ends"},
		{"42", ""},
		{"٣ arabic-indic ٤٥", "arabic indic"},
		{"mp3 and h264 stay", "mp3 and h264 stay"},
	}
	for _, tt := range tests {
		if got := n.Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) with DropNumbers = %q, want %q", tt.in, got, tt.want)
		}
	}
	if n.Exact("Views: 10") != n.Exact("views 11") || Exact("Views: 10") == Exact("views 11") {
		t.Errorf("DropNumbers must make counters irrelevant to Exact, and only then")
	}
}

func TestExact(t *testing.T) {
	base := "O Instituto Nacional de Pesquisas Espaciais publicou os mapas da região."
	same := []string{
		base,
		"  o INSTITUTO nacional de pesquisas espaciais publicou os mapas da regiao ",
		"O Instituto Nacional de Pesquisas Espaciais\n\npublicou — os mapas da «região»!",
		"o instituto nacional de pesquisas espaciais publicou os mapas da região",
	}
	want := Exact(base)
	for _, s := range same {
		if got := Exact(s); got != want {
			t.Errorf("Exact(%q) = %v, want %v (same words)", s, got, want)
		}
	}
	for _, s := range []string{
		"O Instituto Nacional de Pesquisas Espaciais publicou os mapas da cidade.",
		"O Instituto Nacional de Pesquisas Espaciais publicou mapas da região.",
		"Instituto O Nacional de Pesquisas Espaciais publicou os mapas da região.",
	} {
		if Exact(s) == want {
			t.Errorf("Exact(%q) equals the base digest", s)
		}
	}
	if s := want.String(); len(s) != 32 || strings.Trim(s, "0123456789abcdef") != "" {
		t.Errorf("Digest.String() = %q, want 32 hex digits", s)
	}
	if f := Of(base); f.Exact != want || f.SimHash != SimHash(base) {
		t.Errorf("Of disagrees with Exact and SimHash")
	}
}

func TestMD5Stripped(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"Olá,   Mundo!", "3b2613ff007c695c2d560d0e9c9ccbcf"}, // md5("ola mundo")
		{"OLA mundo", "3b2613ff007c695c2d560d0e9c9ccbcf"},
	}
	for _, tt := range tests {
		if got := MD5Stripped(tt.in); got != tt.want {
			t.Errorf("MD5Stripped(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestHamming(t *testing.T) {
	tests := []struct {
		a, b uint64
		want int
		near bool
	}{
		{0, 0, 0, true},
		{0, 1, 1, true},
		{0b1011, 0, 3, true},
		{0b1111, 0, 4, false},
		{^uint64(0), 0, 64, false},
		{1 << 63, 1, 2, true},
	}
	for _, tt := range tests {
		if got := Hamming(tt.a, tt.b); got != tt.want {
			t.Errorf("Hamming(%#x, %#x) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := NearDuplicate(tt.a, tt.b); got != tt.near {
			t.Errorf("NearDuplicate(%#x, %#x) = %v, want %v", tt.a, tt.b, got, tt.near)
		}
	}
}

func TestBands(t *testing.T) {
	if got := Bands(0x4444_3333_2222_1111); got != [4]uint16{0x1111, 0x2222, 0x3333, 0x4444} {
		t.Errorf("Bands = %x", got)
	}
	r := rand.New(rand.NewPCG(7, 7))
	shareBand := func(a, b uint64) bool {
		ba, bb := Bands(a), Bands(b)
		for i := range ba {
			if ba[i] == bb[i] {
				return true
			}
		}
		return false
	}
	for i := 0; i < 100000; i++ {
		h := r.Uint64()
		other := h
		for flips := r.IntN(NearDuplicateBits + 1); flips > 0; flips-- {
			other ^= 1 << r.IntN(64)
		}
		if !shareBand(h, other) {
			t.Fatalf("%#x and %#x are %d bits apart but share no band", h, other, Hamming(h, other))
		}
	}
	// The bound is tight: one flip per band, four bits, shares nothing.
	if h := r.Uint64(); shareBand(h, h^(1|1<<16|1<<32|1<<48)) {
		t.Errorf("four flips in four bands should share no band")
	}
}

// textGen writes pseudo-natural text: word frequencies follow Zipf's law
// over a 20,000-word vocabulary, like the stop-word-heavy text of real pages.
type textGen struct {
	r *rand.Rand
	z *rand.Zipf
}

func newTextGen(seed uint64) *textGen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &textGen{r, rand.NewZipf(r, 1.1, 2, 20000)}
}

func (g *textGen) word() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	n := g.z.Uint64()
	var b []byte
	for {
		b = append(b, letters[n%26])
		if n /= 26; n == 0 {
			return string(b)
		}
	}
}

func (g *textGen) words(n int) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	return w
}

// TestSimHashOneWordEdit replaces one word of a 500-word text, over many
// seeds, and reports how far the SimHash moves.
func TestSimHashOneWordEdit(t *testing.T) {
	const trials = 1000
	var hist [65]int
	total := 0
	for seed := uint64(0); seed < trials; seed++ {
		g := newTextGen(seed)
		a := g.words(500)
		b := append([]string(nil), a...)
		b[g.r.IntN(len(b))] = "edited" + fmt.Sprint(seed)
		d := Hamming(SimHash(strings.Join(a, " ")), SimHash(strings.Join(b, " ")))
		hist[d]++
		total += d
	}
	within := 0
	for d := 0; d <= NearDuplicateBits; d++ {
		within += hist[d]
	}
	t.Logf("one-word edit in 500 words, %d trials: distance histogram %v, mean %.2f, within %d bits %.1f%%",
		trials, hist[:9], float64(total)/trials, NearDuplicateBits, 100*float64(within)/trials)
	if within < trials*88/100 || float64(total)/trials > 2 {
		t.Errorf("only %d/%d one-word edits within %d bits (mean %.2f); want >= 88%% and mean <= 2",
			within, trials, NearDuplicateBits, float64(total)/trials)
	}
}

func TestSimHashUnrelated(t *testing.T) {
	const pairs = 500
	minDist, total := 64, 0
	for seed := uint64(0); seed < pairs; seed++ {
		a := strings.Join(newTextGen(seed).words(500), " ")
		b := strings.Join(newTextGen(seed+1_000_000).words(500), " ")
		d := Hamming(SimHash(a), SimHash(b))
		minDist = min(minDist, d)
		total += d
	}
	t.Logf("unrelated 500-word texts, %d pairs: min distance %d, mean %.1f", pairs, minDist, float64(total)/pairs)
	if minDist <= 10 {
		t.Errorf("unrelated texts came within %d bits; want > 10", minDist)
	}
}

func TestSimHashStable(t *testing.T) {
	text := "Mapas do município de São José dos Campos na escala 1:20.000"
	if SimHash(text) != SimHash("MAPAS do municipio de sao jose dos campos, na escala 1 20 000!") {
		t.Errorf("SimHash must depend only on the normalized words")
	}
	// Fixed values: stored fingerprints must stay comparable across releases.
	if got := SimHash(text); got != simHashGolden {
		t.Errorf("SimHash(%q) = %#x, want %#x: the algorithm changed", text, got, simHashGolden)
	}
	if SimHash("") != 0 || SimHash(" ,. ") != 0 {
		t.Errorf("text without words must hash to 0")
	}
	if one := SimHash("word"); one == 0 || one != SimHash("WORD!") {
		t.Errorf("a one-word text is a single feature: %#x", one)
	}
}

// simHashGolden pins the SimHash of TestSimHashStable's text.
const simHashGolden = 0x83acd58424247d3

func TestShortTextsDiffer(t *testing.T) {
	if SimHash("alpha beta") == SimHash("beta alpha") {
		t.Errorf("word order must matter")
	}
}

// BenchmarkFingerprint measures each step on 20 KB of page text.
func BenchmarkFingerprint(b *testing.B) {
	text := benchText()
	for _, bm := range []struct {
		name string
		fn   func(string)
	}{
		{"NormalizeText", func(s string) { NormalizeText(s) }},
		{"SimHash", func(s string) { SimHash(s) }},
		{"Exact", func(s string) { Exact(s) }},
		{"Of", func(s string) { Of(s) }},
		{"MD5Stripped", func(s string) { MD5Stripped(s) }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				bm.fn(text)
			}
		})
	}
}

// BenchmarkOfMainDragnet fingerprints real texts as the crawl does each page
// (crawl.Crawler.fingerprint: OfMain with the default volatile kinds masked), the first 100
// Dragnet main texts of the shared test data, every fourth line taken for a menu (an op
// reads them all).
func BenchmarkOfMainDragnet(b *testing.B) {
	texts, size := shareddata.Read(b, 100, "*.txt", "dragnet", "gold")
	v, _ := NewVolatile(DefaultVolatileKinds...)
	n := Normalizer{Volatile: v}
	inMain := func(line int) bool { return line%4 != 3 }
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			n.OfMain(t, inMain)
		}
	}
}

// benchText is about 20 KB of page text, the visible text of a typical
// 50-100 KB article page, with Portuguese accents and punctuation.
func benchText() string {
	g := newTextGen(1)
	var b strings.Builder
	for b.Len() < 20000 {
		b.WriteString(strings.Join(g.words(12), " "))
		b.WriteString(", região São José. Ação: 2024!\n")
	}
	return b.String()
}
