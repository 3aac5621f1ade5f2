// Package text owns sonda's text analysis: Unicode tokenization, case and accent folding,
// stop words, stemming, language detection, sparse term vectors, cosine similarity and
// TF-IDF. The crawler's page relevance (package focus) and the search index both analyze
// text through it, so a word means the same thing to the crawler and to the index.
//
// An Analyzer turns text into terms:
//
//	tokens   runs of letters, digits and combining marks; apostrophes, hyphens and all
//	         other punctuation separate tokens; every Han, Hiragana or Katakana character
//	         is a token of its own; tokens longer than MaxTokenBytes are dropped (base64,
//	         hashes and other non-words)
//	lower    Unicode lowercase
//	stop     stop words of the language are removed (compared folded, so "nao" and "não"
//	         are both stop words in Portuguese)
//	stem     Snowball stemmer of the language, applied to the lowercase, still accented
//	         word, since the Snowball rules for Portuguese, Spanish and French are written
//	         for accented suffixes ("-ção", "-ción", "-ément")
//	fold     accents are removed from the stem, so a query typed without accents finds
//	         the accented word
//
// Stemming is done by github.com/blevesearch/snowballstem, the Go code generated from the
// Snowball project's own algorithms (English "Porter2", the original Porter for the seed
// 001 thesis mode, Portuguese, Spanish, French). github.com/kljensen/snowball, the other
// pinned module, has no Portuguese stemmer. The stop-word lists and the language
// detector are sonda's own (see stopwords.go for how the lists were made).
package text
