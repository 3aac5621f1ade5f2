package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Fold lowercases s and removes its accents: "Ação Nuclear" becomes "acao nuclear",
// "Straße" becomes "strasse". Letters that do not decompose into a base letter and marks
// but have a conventional ASCII spelling (ß, æ, œ, ø, ł, đ, þ, ı) are spelled out; other
// characters are kept lowercase. Invalid UTF-8 bytes are dropped.
func Fold(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return string(appendFolded(make([]byte, 0, len(s)), s))
		}
	}
	return s // already folded: ASCII without capitals
}

// appendFolded appends the folded form of s to b.
func appendFolded(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			continue
		}
		b = appendFoldedRune(b, r)
	}
	return b
}

// appendFoldedRune appends the folded form of one non-ASCII rune.
func appendFoldedRune(b []byte, r rune) []byte {
	if r >= latinFoldEnd {
		if unicode.Is(unicode.Mn, r) {
			return b // a combining mark on its own (text in decomposed form)
		}
		r = unicode.ToLower(r) // 'ẞ' lowers into the table's range
		if r >= latinFoldEnd {
			return foldSlow(b, r)
		}
	}
	if r < utf8.RuneSelf {
		return append(b, byte(r))
	}
	if f := latinFold[r-utf8.RuneSelf]; f != "" {
		return append(b, f...)
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// foldSlow folds a rune outside the table: decompose it and keep the non-mark runes.
func foldSlow(b []byte, r rune) []byte {
	if sp, ok := foldSpecial[r]; ok {
		return append(b, sp...)
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	props := norm.NFD.Properties(buf[:n])
	d := props.Decomposition()
	if d == nil {
		return utf8.AppendRune(b, r)
	}
	for len(d) > 0 {
		dr, size := utf8.DecodeRune(d)
		d = d[size:]
		switch sp, ok := foldSpecial[dr]; {
		case ok:
			b = append(b, sp...) // ǿ decomposes to ø, which has no decomposition of its own
		case !unicode.Is(unicode.Mn, dr):
			b = utf8.AppendRune(b, dr)
		}
	}
	return b
}

// foldSpecial spells out letters that are not a base letter plus marks.
var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d",
	'ı': "i", 'ħ': "h", 'Ħ': "h", 'ŋ': "n", 'Ŋ': "n", 'ĸ': "k", 'ŀ': "l", 'Ŀ': "l",
	'ſ': "s", 'ƒ': "f",
}

// latinFoldEnd bounds the precomputed table: Latin-1 Supplement, Latin Extended-A and B
// cover the accented letters of every language sonda stems and most other European ones.
const latinFoldEnd = 0x250

// latinFold maps runes from 0x80 up to latinFoldEnd to their folded spelling ("" when the
// rune folds to its own lowercase form).
var latinFold = func() (t [latinFoldEnd - utf8.RuneSelf]string) {
	for r := rune(utf8.RuneSelf); r < latinFoldEnd; r++ {
		if s, ok := foldSpecial[r]; ok {
			t[r-utf8.RuneSelf] = s
			continue
		}
		lower := unicode.ToLower(r)
		f := string(foldSlow(nil, lower))
		if f != string(lower) {
			t[r-utf8.RuneSelf] = f
		}
	}
	return t
}()

// isFolded reports whether s is already lowercase ASCII, the common case that needs no copy.
func isFolded(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// lower lowercases s, copying only when something changes.
func lower(s string) string {
	if isFolded(s) {
		return s
	}
	return strings.ToLower(s)
}
