package text

import (
	"hash/maphash"
	"strings"
	"sync"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/porter"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/spanish"
)

// Languages are the languages an Analyzer stems and removes stop words for.
var Languages = []string{"en", "pt", "es", "fr"}

// Stemmer names for Options.Stemmer.
const (
	StemSnowball = "snowball" // the language's Snowball stemmer (English: Porter2); the default
	StemPorter   = "porter"   // the original Porter (1980) stemmer, English only: seed 001's choice
	StemNone     = "none"     // no stemming
)

// Options configure an Analyzer beyond its language.
type Options struct {
	Lang          string // ISO 639-1 code or English name; "" or unknown: language-neutral
	Stemmer       string // StemSnowball (default), StemPorter or StemNone
	KeepStopWords bool   // keep stop words (phrase-heavy uses); default removes them
	// CacheSize bounds the memo of analyzed words (default 1<<17 words, about 10 MiB at
	// most; negative disables it). Stemming is the costly step and word frequencies are
	// Zipfian, so a modest memo answers almost every lookup.
	CacheSize int
}

// Analyzer turns text into terms for one language. It is safe for concurrent use; build one
// per language and keep it (its memo of analyzed words is what makes it fast).
type Analyzer struct {
	lang    string
	stemmer string
	stop    map[string]bool // folded stop words; nil when kept
	stem    func(*snowballstem.Env) bool
	memo    *memo
}

// NewAnalyzer returns the default analyzer for lang: "en", "pt", "es" or "fr" (region
// subtags and English names are accepted: "pt-BR", "Portuguese"). Any other value, ""
// included, gives the language-neutral analyzer: tokenization and folding only.
func NewAnalyzer(lang string) *Analyzer { return NewAnalyzerOptions(Options{Lang: lang}) }

// NewAnalyzerOptions returns an analyzer configured by o.
func NewAnalyzerOptions(o Options) *Analyzer {
	a := &Analyzer{lang: NormalizeLang(o.Lang), stemmer: o.Stemmer}
	if !isSupported(a.lang) {
		a.lang = ""
	}
	if a.stemmer == "" {
		a.stemmer = StemSnowball
	}
	switch {
	case a.stemmer == StemPorter && a.lang == "en":
		a.stem = porter.Stem
	case a.stemmer == StemSnowball:
		a.stem = snowballStemmers[a.lang] // nil for the neutral analyzer
	default:
		a.stemmer = StemNone
	}
	if a.stem == nil {
		a.stemmer = StemNone
	}
	if !o.KeepStopWords && a.lang != "" {
		a.stop = stopSets[a.lang]
	}
	size := o.CacheSize
	if size == 0 {
		size = 1 << 17
	}
	if size > 0 {
		a.memo = newMemo(size)
	}
	return a
}

var snowballStemmers = map[string]func(*snowballstem.Env) bool{
	"en": english.Stem, "pt": portuguese.Stem, "es": spanish.Stem, "fr": french.Stem,
}

func isSupported(lang string) bool { return snowballStemmers[lang] != nil }

// Lang is the analyzer's language ("" for the language-neutral analyzer).
func (a *Analyzer) Lang() string { return a.lang }

// Stemmer is the stemmer in use: StemSnowball, StemPorter or StemNone.
func (a *Analyzer) Stemmer() string { return a.stemmer }

// IsStopWord reports whether word (in any case, with or without accents) is one of the
// analyzer's stop words.
func (a *Analyzer) IsStopWord(word string) bool { return a.stop[Fold(word)] }

// Terms returns the terms of s in order: words lowercased, stop words removed, stemmed
// and folded.
func (a *Analyzer) Terms(s string) []string { return a.AppendTerms(nil, s) }

// AppendTerms appends the terms of s to dst.
func (a *Analyzer) AppendTerms(dst []string, s string) []string {
	eachWord(s, func(start, end, _ int) bool {
		if t, ok := a.term(s[start:end]); ok {
			dst = append(dst, t)
		}
		return true
	})
	return dst
}

// Tokens is Terms with each term's offsets in s and its word position (stop words leave
// gaps in positions, so phrase matching still knows which words were adjacent).
func (a *Analyzer) Tokens(s string) []Token { return a.AppendTokens(nil, s) }

// AppendTokens appends the tokens of s to dst: a caller that analyzes text after text
// reuses one slice.
func (a *Analyzer) AppendTokens(dst []Token, s string) []Token {
	eachWord(s, func(start, end, pos int) bool {
		if t, ok := a.term(s[start:end]); ok {
			dst = append(dst, Token{Term: t, Start: start, End: end, Position: pos})
		}
		return true
	})
	return dst
}

// Term analyzes one word; ok is false for a stop word or a word that is not one word.
// The word is split as Words splits it, without making the slice (snippets ask for every
// word of a page that may be a query's).
func (a *Analyzer) Term(word string) (term string, ok bool) {
	n, w := 0, ""
	eachWord(word, func(start, end, _ int) bool {
		n++
		w = word[start:end]
		return n < 2 // a second word: not one word
	})
	if n != 1 {
		return "", false
	}
	return a.term(w)
}

// term analyzes one word as eachWord found it.
func (a *Analyzer) term(word string) (string, bool) {
	if a.memo != nil {
		if t, ok := a.memo.get(word); ok {
			return t, t != ""
		}
	}
	t := a.analyze(word)
	if a.memo != nil {
		a.memo.put(word, t)
	}
	return t, t != ""
}

// analyze is term without the memo; "" means a stop word.
func (a *Analyzer) analyze(word string) string {
	low := lower(word)
	folded := Fold(low)
	if a.stop[folded] {
		return ""
	}
	if a.stem == nil {
		return folded
	}
	env := snowballstem.NewEnv(low)
	a.stem(env)
	return Fold(env.Current())
}

// NormalizeLang maps a language tag or English language name to its lowercase primary
// subtag: "pt-BR" → "pt", "EN_us" → "en", "Portuguese" → "pt". Unknown names are returned
// lowercased.
func NormalizeLang(lang string) string {
	l := strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	if code, ok := langNames[l]; ok {
		return code
	}
	return l
}

var langNames = map[string]string{
	"english": "en", "portuguese": "pt", "spanish": "es", "french": "fr", "german": "de",
	"italian": "it", "dutch": "nl", "eng": "en", "por": "pt", "spa": "es", "fra": "fr", "fre": "fr",
}

// memo is a bounded, sharded map from a word as written to its term ("" for stop words).
// Once full it stops growing rather than evicting: the words seen first are the frequent
// ones, and a memo that never evicts needs no bookkeeping on the hot path.
type memo struct {
	seed   maphash.Seed
	shards [16]memoShard
}

type memoShard struct {
	mu  sync.RWMutex
	m   map[string]string
	max int
}

func newMemo(size int) *memo {
	m := &memo{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i] = memoShard{m: map[string]string{}, max: max(size/len(m.shards), 1)}
	}
	return m
}

func (m *memo) shard(word string) *memoShard {
	return &m.shards[maphash.String(m.seed, word)%uint64(len(m.shards))]
}

func (m *memo) get(word string) (string, bool) {
	s := m.shard(word)
	s.mu.RLock()
	t, ok := s.m[word]
	s.mu.RUnlock()
	return t, ok
}

func (m *memo) put(word, term string) {
	s := m.shard(word)
	s.mu.Lock()
	if len(s.m) < s.max {
		// Clone: word is usually a slice of a whole page, which the memo must not pin.
		s.m[strings.Clone(word)] = strings.Clone(term)
	}
	s.mu.Unlock()
}
