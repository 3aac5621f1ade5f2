package index

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/sonda-search/sonda/text"
)

// analyzedField is an indexed text field that sonda analyzed itself: its term
// frequencies, with each occurrence's position and offsets, are built straight from the
// analyzer's tokens when the document is built, and Bleve takes them as they are.
//
// Bleve's own way (document.TextField with an analyzer) costs a page's body, per word, an
// analysis.Token (about 100 bytes with its term) that lives until Bleve has analyzed the
// field, then a map entry, a location and a growing slice of pointers per term in
// analysis.TokenFrequency, and scorch's Batch walks every location again to size the
// document. Here a field costs a handful of allocations, whatever its length, and knows its
// size. The terms and positions are the same as Bleve's (TestAnalyzedFieldMatchesBleve);
// the offsets are left out (see newAnalyzedField).
type analyzedField struct {
	name      string
	value     []byte
	length    int // analyzed tokens (stop words excluded)
	freqs     bindex.TokenFrequencies
	termBytes int // the bytes of the distinct terms
	size      int
}

var _ document.Field = (*analyzedField)(nil)

// tokenScratch holds the token slices and per-token term records that building a field
// needs only for its duration.
var tokenScratch = sync.Pool{New: func() any { return new(scratch) }}

type scratch struct {
	toks []text.Token
	tfs  []*bindex.TokenFreq
}

// Sizes of Bleve's records, for Size (Bleve counts them the same way).
const (
	sizeTokenFreq     = int(unsafe.Sizeof(bindex.TokenFreq{}))
	sizeTokenLocation = int(unsafe.Sizeof(bindex.TokenLocation{}))
	sizeAnalyzedField = int(unsafe.Sizeof(analyzedField{}))
	sizeMapEntry      = int(unsafe.Sizeof("")) + int(unsafe.Sizeof((*bindex.TokenFreq)(nil)))
)

// newAnalyzedField analyzes s with the analyzer of code into a field named name, whose
// value is value (s as bytes, shared with the stored copy); nil when s has no terms (only
// stop words, or no words).
func newAnalyzedField(name, code, s string, value []byte) *analyzedField {
	sc := tokenScratch.Get().(*scratch)
	defer tokenScratch.Put(sc)
	sc.toks = textAnalyzerFor(code).AppendTokens(sc.toks[:0], s)
	defer clear(sc.toks) // the pool must not keep terms or pages alive
	toks := sc.toks
	if len(toks) == 0 {
		return nil
	}
	// First pass: one record per distinct term, carved from chunks, with its frequency;
	// tfs remembers each token's record for the second pass.
	freqs := make(bindex.TokenFrequencies, len(toks)/2)
	sc.tfs = sc.tfs[:0]
	defer clear(sc.tfs)
	var chunk []bindex.TokenFreq
	termBytes := 0
	for i, tok := range toks {
		tf := freqs[tok.Term]
		if tf == nil {
			if len(chunk) == cap(chunk) {
				chunk = make([]bindex.TokenFreq, 0, min(len(toks)-i, 128))
			}
			chunk = chunk[:len(chunk)+1]
			tf = &chunk[len(chunk)-1]
			freqs[tok.Term] = tf
			termBytes += len(tok.Term)
		}
		tf.SetFrequency(tf.Frequency() + 1)
		sc.tfs = append(sc.tfs, tf)
	}
	// Second pass: every record's locations are a slice of one array of pointers, sized
	// by its frequency, pointing into one array of locations; the terms share one array.
	locs := make([]bindex.TokenLocation, len(toks))
	ptrs := make([]*bindex.TokenLocation, len(toks))
	terms := make([]byte, 0, termBytes)
	next := 0
	for i, tok := range toks {
		tf := sc.tfs[i]
		if tf.Locations == nil {
			n := tf.Frequency()
			tf.Locations = ptrs[next : next : next+n]
			next += n
			from := len(terms)
			terms = append(terms, tok.Term...)
			tf.Term = terms[from:len(terms):len(terms)]
		}
		// The index keeps each occurrence's position but not its offsets (zero): phrases
		// and the proximity score read positions only, and snippets and highlighting
		// analyze the stored text again, so nothing reads an offset from the index. Zap
		// writes a location as five uvarints (field, position, start, end, array
		// positions); a page's offsets, most of them past 127, took 2 bytes each, about a
		// tenth of an index of 11 KB pages (docs/benchmarks.md, issue 12).
		// TestIndexKeepsPositionsNotOffsets.
		locs[i] = bindex.TokenLocation{Position: tok.Position}
		tf.Locations = append(tf.Locations, &locs[i])
	}
	return &analyzedField{
		name: name, value: value, length: len(toks), freqs: freqs, termBytes: termBytes,
		size: sizeAnalyzedField + len(name) + len(value) +
			len(freqs)*(sizeMapEntry+sizeTokenFreq) + 2*termBytes + len(toks)*(8+sizeTokenLocation),
	}
}

func (f *analyzedField) Name() string                                      { return f.name }
func (f *analyzedField) ArrayPositions() []uint64                          { return nil }
func (f *analyzedField) Options() bindex.FieldIndexingOptions              { return textOptions }
func (f *analyzedField) Analyze()                                          {} // done when built
func (f *analyzedField) Value() []byte                                     { return f.value }
func (f *analyzedField) NumPlainTextBytes() uint64                         { return uint64(len(f.value)) }
func (f *analyzedField) Size() int                                         { return f.size }
func (f *analyzedField) EncodedFieldType() byte                            { return 't' }
func (f *analyzedField) AnalyzedLength() int                               { return f.length }
func (f *analyzedField) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return f.freqs }

// fieldRoster is every text field in every analyzer language, each with no terms. The
// first document of each batch carries it (addFieldRoster), so that every segment
// scorch writes has the same list of fields whatever languages its pages were in.
//
// Why: zap merges segments whose field lists are the same by copying each posting's
// frequencies, norms and positions, and their stored documents, as bytes; when one
// segment of a merge lacks a field that another has (a batch without a Portuguese page
// has no body_pt), it decodes and encodes every position and stored document again. In
// a 20,000-page crawl in which a few pages were Portuguese, that slow path was most of
// scorch's merging (3.4–4.2 s against 0.4–0.5 s copied, of 9.8–11.3 s merging), and
// merges are the index's cost that grows with its size. With the roster every merge
// copies, and scorch merged for 7.7–8.1 s (docs/benchmarks.md, issue 12). A field with no terms adds nothing to the
// postings, the stored documents or the statistics: its dictionary in the segment is
// empty, as a search of it finds nothing where it is absent.
var fieldRoster = func() []*analyzedField {
	var fs []*analyzedField
	for _, l := range append(slices.Clone(Languages), neutral) {
		for _, f := range textFields {
			name := langField(f, l)
			fs = append(fs, &analyzedField{name: name, freqs: bindex.TokenFrequencies{}, size: sizeAnalyzedField + len(name)})
		}
	}
	return fs
}()

// addFieldRoster adds fieldRoster's fields to doc (see there why), but the ones it has.
func addFieldRoster(doc *document.Document) {
	has := make(map[string]bool, len(doc.Fields))
	for _, f := range doc.Fields {
		has[f.Name()] = true
	}
	for _, f := range fieldRoster {
		if !has[f.name] {
			doc.AddField(f)
		}
	}
}
