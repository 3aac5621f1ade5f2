package index

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/pt"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	tokenizer "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
	"golang.org/x/text/unicode/norm"
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

// analyzers holds one analyzer per language code, built at start-up; they are safe for
// concurrent use.
var analyzers = func() map[string]analysis.Analyzer {
	m := map[string]analysis.Analyzer{neutral: newAnalyzer(neutral)}
	for _, l := range Languages {
		m[l] = newAnalyzer(l)
	}
	return m
}()

// analyzerFor returns the analyzer of a language code (see langCode).
func analyzerFor(code string) analysis.Analyzer {
	if a, ok := analyzers[code]; ok {
		return a
	}
	return analyzers[neutral]
}

// newAnalyzer builds the analyzer of a language code. It is the one place that decides
// how text becomes terms, for documents and queries alike: lowercase, stop words, the
// language's Snowball stemmer (a light stemmer for Portuguese), then accent folding, so a
// query typed without accents finds accented words. The chain is assembled from Bleve's
// own components until package text (shared with focused crawling) provides it.
func newAnalyzer(code string) analysis.Analyzer {
	cache := registry.NewCache()
	component := func(name string) analysis.TokenFilter {
		f, err := cache.TokenFilterNamed(name)
		if err != nil {
			panic("index: Bleve token filter " + name + " is not registered: " + err.Error())
		}
		return f
	}
	tok, err := cache.TokenizerNamed(tokenizer.Name)
	if err != nil {
		panic("index: Bleve tokenizer: " + err.Error())
	}
	var filters []analysis.TokenFilter
	switch code {
	case "en":
		filters = []analysis.TokenFilter{component(en.PossessiveName), component(lowercase.Name), component(en.StopName), component(en.SnowballStemmerName)}
	case "es":
		filters = []analysis.TokenFilter{component(lowercase.Name), component(es.StopName), component(es.SnowballStemmerName)}
	case "fr":
		filters = []analysis.TokenFilter{component(fr.ElisionName), component(lowercase.Name), component(fr.StopName), component(fr.SnowballStemmerName)}
	case "pt":
		filters = []analysis.TokenFilter{component(lowercase.Name), component(pt.StopName), component(pt.LightStemmerName)}
	default:
		filters = []analysis.TokenFilter{component(lowercase.Name)}
	}
	filters = append(filters, foldFilter{})
	return &analysis.DefaultAnalyzer{Tokenizer: tok, TokenFilters: filters}
}

// foldFilter removes accents (combining marks after canonical decomposition) from terms.
type foldFilter struct{}

func (foldFilter) Filter(ts analysis.TokenStream) analysis.TokenStream {
	for _, t := range ts {
		if isASCII(t.Term) {
			continue
		}
		t.Term = foldBytes(t.Term)
	}
	return ts
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func foldBytes(b []byte) []byte {
	d := norm.NFD.Bytes(b)
	out := d[:0]
	for i := 0; i < len(d); {
		r, n := utf8.DecodeRune(d[i:])
		if !unicode.Is(unicode.Mn, r) {
			out = utf8.AppendRune(out, r)
		}
		i += n
	}
	return out
}

// terms analyzes s with the analyzer of code and returns its terms with their positions
// (stop words leave gaps in the positions, as in the index).
func terms(code, s string) analysis.TokenStream {
	return analyzerFor(code).Analyze([]byte(s))
}
