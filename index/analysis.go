package index

import (
	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/sonda-search/sonda/text"
)

// Languages are the languages with their own analyzer (stop words and stemming). Text in
// any other language, or in an unknown one, is analyzed language-neutrally: tokenized,
// lowercased and accent-folded, with no stop words and no stemming. Each language has its
// own copy of every text field (title_en, body_pt...), so each field's statistics (IDF,
// average length) are those of one language and a query word is analyzed once per
// language present in the index.
var Languages = []string{"en", "es", "fr", "pt"}

// neutral is the field suffix of text in no supported language.
const neutral = "xx"

// langCode maps a language tag ("pt-BR", "EN") to the code of its analyzer: one of
// Languages, or neutral.
func langCode(tag string) string {
	tag = primaryLang(tag)
	for _, l := range Languages {
		if tag == l {
			return l
		}
	}
	return neutral
}

// analyzers holds one analyzer per language code, built at start-up: package text's
// analyzer (Unicode words, lowercase, stop words, the language's Snowball stemmer, accent
// folding), the same one focused crawling scores pages with. Documents and queries are
// both analyzed through it, so they always agree on what a term is. Analyzers are safe
// for concurrent use.
var analyzers = func() map[string]*text.Analyzer {
	m := map[string]*text.Analyzer{neutral: text.NewAnalyzer("")}
	for _, l := range Languages {
		m[l] = text.NewAnalyzer(l)
	}
	return m
}()

// textAnalyzerFor returns the analyzer of a language code (see langCode).
func textAnalyzerFor(code string) *text.Analyzer {
	if a, ok := analyzers[code]; ok {
		return a
	}
	return analyzers[neutral]
}

// analyzerFor returns the analyzer of a language code as a Bleve analyzer.
func analyzerFor(code string) analysis.Analyzer { return textAnalyzer{textAnalyzerFor(code)} }

// textAnalyzer adapts a text.Analyzer to Bleve: its tokens keep their byte offsets (for
// snippets) and word positions with gaps where stop words were (for phrases).
type textAnalyzer struct{ a *text.Analyzer }

func (t textAnalyzer) Analyze(b []byte) analysis.TokenStream {
	toks := t.a.Tokens(string(b))
	// Three allocations per stream, not one per term: a page's body has thousands of terms,
	// and a batch of pages holds all their streams until Bleve has analyzed them.
	n := 0
	for _, tok := range toks {
		n += len(tok.Term)
	}
	terms := make([]byte, 0, n)
	backing := make([]analysis.Token, len(toks))
	ts := make(analysis.TokenStream, len(toks))
	for i, tok := range toks {
		from := len(terms)
		terms = append(terms, tok.Term...)
		backing[i] = analysis.Token{Term: terms[from:len(terms):len(terms)], Start: tok.Start, End: tok.End, Position: tok.Position, Type: analysis.AlphaNumeric}
		ts[i] = &backing[i]
	}
	return ts
}

// terms analyzes s with the analyzer of code and returns its terms with their positions
// (stop words leave gaps in the positions, as in the index).
func terms(code, s string) analysis.TokenStream {
	return analyzerFor(code).Analyze([]byte(s))
}
