package text

import (
	"unicode"
	"unicode/utf8"
)

// MaxTokenBytes is the longest token kept; longer runs of letters and digits are base64,
// hashes or glued-together words, which would only bloat vectors and indexes.
const MaxTokenBytes = 64

// Token is one word of a text.
type Token struct {
	Term     string // the analyzed term (for Words: the word as written)
	Start    int    // byte offset of the word in the analyzed text
	End      int    // byte offset just after it
	Position int    // 1-based ordinal of the word among all words of the text, stop words included
}

// Words splits s into words as written, with their offsets and positions; Analyzer.Tokens
// analyzes the same words. A word is a run of letters, digits and combining marks; every
// Han, Hiragana and Katakana character is a word of its own (those scripts do not separate
// words with spaces, and single characters are the usual unit for matching them).
func Words(s string) []Token {
	var out []Token
	eachWord(s, func(start, end, pos int) bool {
		out = append(out, Token{Term: s[start:end], Start: start, End: end, Position: pos})
		return true
	})
	return out
}

// EachWord calls fn with the span of each word Words would return, in order, without
// making the slice: for a caller that keeps a few of a long text's words.
func EachWord(s string, fn func(start, end int)) {
	eachWord(s, func(start, end, _ int) bool { fn(start, end); return true })
}

// eachWord calls fn with the span and position of every word of s, dropping words longer
// than MaxTokenBytes (they still count for positions), until fn returns false.
func eachWord(s string, fn func(start, end, pos int) bool) {
	pos := 0
	start := -1
	more := true
	emit := func(end int) {
		pos++
		if end-start <= MaxTokenBytes {
			more = fn(start, end, pos)
		}
		start = -1
	}
	for i := 0; i < len(s) && more; {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiWord[c] {
				if start < 0 {
					start = i
				}
				// The rest of the run of ASCII letters and digits in one loop: most of a
				// text's words.
				for i++; i < len(s) && s[i] < utf8.RuneSelf && asciiWord[s[i]]; i++ {
				}
				continue
			}
			if start >= 0 {
				emit(i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if start >= 0 {
				emit(i)
			}
		case isIdeograph(r):
			if start >= 0 {
				emit(i)
			}
			start = i
			emit(i + size)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
		case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
			// A mark belongs to the word it follows; a mark with no word before it is
			// dropped rather than starting one.
		default:
			if start >= 0 {
				emit(i)
			}
		}
		i += size
	}
	if start >= 0 && more {
		emit(len(s))
	}
}

var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

func isIdeograph(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// CutBytes cuts s to at most n bytes without splitting a UTF-8 sequence: stored fields
// and records are bounded in bytes, and a cut character would be invalid UTF-8.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
