package fingerprint

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzNormalize checks that normalization never panics and yields valid
// UTF-8 words separated by single spaces, is idempotent (so fingerprints of
// already-normalized text agree), and that DropNumbers leaves no number.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "São Paulo, 2024!", "ﬁ ＦＵＬＬ ΣΟΦΙΑΣ", "東京 カタカナ が", "bad\xffutf8\xc3", "a1 22 b3 ٤٥"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeText(s)
		if !utf8.ValidString(n) || strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("NormalizeText(%q) = %q: not clean words", s, n)
		}
		for _, r := range n {
			if r != ' ' && !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mc, r) {
				t.Fatalf("NormalizeText(%q) = %q keeps %q", s, n, r)
			}
		}
		if again := NormalizeText(n); again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, again)
		}
		if Of(s) != Of(n) {
			t.Fatalf("fingerprints of %q and its normal form %q differ", s, n)
		}
		for _, w := range strings.Fields(Normalizer{DropNumbers: true}.Normalize(s)) {
			if strings.IndexFunc(w, func(r rune) bool { return !unicode.IsNumber(r) }) < 0 {
				t.Fatalf("DropNumbers kept the number %q from %q", w, s)
			}
		}
	})
}
