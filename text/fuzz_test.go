package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"", "Ação Nuclear das Usinas", "l'énergie — state-of-the-art 東京タワー x²",
	"energi\u0301a \u0301 \xff\xfe İİ ẞ ǅ", strings.Repeat("a", 70) + " b",
	"ΣΊΣΥΦΟΣ ﬁle Ⅻ ½ ٣٤ ๑๒", "don't won't it's O'Neill",
}

// FuzzAnalyzer checks, for any input and every language: no panic, tokens whose spans lie
// in the input in order and spell the word, terms that are valid, folded, non-empty UTF-8,
// and Terms agreeing with Tokens.
func FuzzAnalyzer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	analyzers := []*Analyzer{NewAnalyzer(""), NewAnalyzer("en"), NewAnalyzer("pt"), NewAnalyzer("es"), NewAnalyzer("fr"),
		NewAnalyzerOptions(Options{Lang: "en", Stemmer: StemPorter})}
	f.Fuzz(func(t *testing.T, s string) {
		words := Words(s)
		prevEnd, prevPos := 0, 0
		for _, w := range words {
			if w.Start < prevEnd || w.End <= w.Start || w.End > len(s) || s[w.Start:w.End] != w.Term || w.Position <= prevPos {
				t.Fatalf("bad word %+v after end %d, position %d", w, prevEnd, prevPos)
			}
			prevEnd, prevPos = w.End, w.Position
		}
		for _, a := range analyzers {
			terms := a.Terms(s)
			toks := a.Tokens(s)
			if len(terms) != len(toks) {
				t.Fatalf("%s: %d terms but %d tokens", a.Lang(), len(terms), len(toks))
			}
			for i, term := range terms {
				if term == "" || !utf8.ValidString(term) || term != toks[i].Term {
					t.Fatalf("%s: bad term %q (token %q)", a.Lang(), term, toks[i].Term)
				}
				if Fold(term) != term {
					t.Fatalf("%s: term %q is not folded", a.Lang(), term)
				}
			}
		}
		DetectLanguage(s)
	})
}

// FuzzFold checks that Fold gives valid UTF-8, is idempotent and agrees with its fast path.
func FuzzFold(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Fold(s)
		if !utf8.ValidString(once) {
			t.Fatalf("Fold(%q) = %q: invalid UTF-8", s, once)
		}
		if twice := Fold(once); twice != once {
			t.Fatalf("Fold is not idempotent: %q → %q → %q", s, once, twice)
		}
		if got := string(appendFolded(nil, s)); got != once {
			t.Fatalf("fast path %q, slow path %q", once, got)
		}
	})
}
