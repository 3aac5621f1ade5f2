package text

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func upperFirst(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}

// TestDetectTableIsTheIndex: detectTable answers every word as detectIndex answers the word
// folded (what DetectLanguage looked up before the table): the function words themselves
// in every case, words with accents, marks, ligatures and letters that fold to two, words
// too long for a key, and every word of the shared test data's Dragnet texts when present.
func TestDetectTableIsTheIndex(t *testing.T) {
	words := []string{"", "a", "A", "ß", "STRASSE", "straße", "l'", "ﬁn", "e\u0301", "\u0301", "\xff", "\xffde",
		"ÜBER", "über", "uber", "não", "NÃO", "été", "Été", "οι", "und", "Und", "UND", "und1",
		"abcdefghijkl", "abcdefghijklm", "abcdefghijkß", "déjàdéjàdéjà", strings.Repeat("x", MaxTokenBytes)}
	for w := range detectIndex {
		words = append(words, w, strings.ToUpper(w), upperFirst(w), w+"s", "l"+w, w+"\u0301")
	}
	names, _ := filepath.Glob(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold", "*.txt"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		eachWord(s, func(start, end, _ int) bool {
			words = append(words, s[start:end])
			return true
		})
	}
	for _, w := range words {
		if got, want := detectTable.lookup(w), detectIndex[string(appendFolded(nil, w))]; got != want {
			t.Errorf("%q: the table gives %07b, the index %07b", w, got, want)
		}
	}
	t.Logf("%d words, %d of them from %d Dragnet texts", len(words), len(words)-7*len(detectIndex), len(names))
}

// TestDetectLanguageOf: DetectLanguageOf(title, body) is DetectLanguage(title+"\n"+body) to
// the last bit of the confidence, where the word limit or the letters' 64 KiB fall in the
// title, on the separator or in the body, inside a character or not, and on real texts
// (the Dragnet texts' first lines as titles) when the shared test data is there.
func TestDetectLanguageOf(t *testing.T) {
	pt := strings.Repeat("não são as ações do coração, ", 300)
	type pair struct{ title, body string }
	pairs := []pair{
		{"", ""}, {"", pt}, {pt, ""}, {"The title", pt}, {"Título", "the body of the page and its words"},
		{"ending badly \xe2\x80", "\x80\u0301starting with a mark"},
		{strings.Repeat("word ", detectWords-1), "und der die das"},
		{strings.Repeat("word ", detectWords), "und der die das"},
		{strings.Repeat("word ", detectWords+5), "und der die das"},
		{strings.Repeat("ã", letterBytes/2), "ñ"},
		{strings.Repeat("a", letterBytes-1), "ñññ"},
		{strings.Repeat("a", letterBytes), "ñññ"},
		{strings.Repeat("a", letterBytes+3), "ñññ"},
		{"t", strings.Repeat("x", letterBytes-3) + "ñ" + strings.Repeat("ß", 10)},
		{"t", strings.Repeat("x", letterBytes-4) + "ñ" + strings.Repeat("ß", 10)},
		{"t", strings.Repeat("x", letterBytes-5) + "ñ" + strings.Repeat("ß", 10)},
	}
	names, _ := filepath.Glob(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold", "*.txt"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		title, body, _ := strings.Cut(string(b), "\n")
		pairs = append(pairs, pair{title, body})
	}
	for _, p := range pairs {
		l1, c1 := DetectLanguageOf(p.title, p.body)
		l2, c2 := DetectLanguage(p.title + "\n" + p.body)
		if l1 != l2 || c1 != c2 {
			t.Errorf("title %.40q, body %.40q: DetectLanguageOf gives %s %v, DetectLanguage of the joined text %s %v", p.title, p.body, l1, c1, l2, c2)
		}
	}
}
