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
