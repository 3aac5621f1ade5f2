package index

import (
	"context"
	"math"
	"reflect"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// This file is sonda's scorer: BM25F over the text fields, as a Bleve query of its own.
//
// Why not Bleve's scoring: Bleve 2.6 scores each (term, field) pair separately with a
// formula that departs from BM25 — it takes the square root of the term frequency, its
// query normalization makes IDF count twice (idf² per term), every disjunction multiplies
// by the fraction of clauses matched, and it estimates average field length from the number
// of distinct terms. On Cranfield those cost about a tenth of BM25's MAP. BM25F (Robertson,
// Zaragoza and Taylor, "Simple BM25 extension to multiple weighted fields", CIKM 2004)
// also treats fields properly: a word's frequencies in title, body, anchors... are weighted
// and length-normalized per field, then summed, and only the sum is saturated, so a word in
// three fields is not counted as three separate matches.
//
// Bleve still does everything else: the postings (TermFieldReader), boolean structure,
// phrases, filters, collection, facets. A bm25fQuery is one clause: a set of words, all or
// any of which must occur in its fields.

// bm25fWord is one query word: its term in each language's fields and in the URL field.
type bm25fWord struct {
	terms   map[string]string // analyzer language → analyzed term
	urlTerm string            // neutral analysis, for inurl ("" : not looked for there)
	weight  float64           // the word's share of the query (0: 1, a typed word)
}

// bm25fStats are the collection statistics a query scores with.
type bm25fStats struct {
	docs   float64            // documents in the index
	langs  map[string]float64 // documents per analyzer language
	avgLen map[string]float64 // per field
}

type bm25fQuery struct {
	words  []bm25fWord
	all    bool     // every word must match (AND); otherwise any (OR)
	fields []string // field group (without language suffix): textFields or just title
	r      Ranking
	stats  *bm25fStats
	prox   float64 // proximity weight: adjacent words in order earn this × BM25F-like score
}

// Searcher implements Bleve's query.Query.
func (q *bm25fQuery) Searcher(ctx context.Context, i bindex.IndexReader, _ mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	s, err := q.open(ctx, i)
	if err != nil {
		return nil, err
	}
	for _, w := range s.words {
		if err := w.start(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// open returns the searcher with its words' postings opened, not yet read: their IDFs
// are known, and it is ready to start.
func (q *bm25fQuery) open(ctx context.Context, i bindex.IndexReader) (*bm25fSearcher, error) {
	s := &bm25fSearcher{q: q, all: q.all}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	vectors := q.prox > 0 && len(q.words) > 1
	ps := newPostingsSource(i, postingsCacheOf(ctx))
	for wi, w := range q.words {
		cw := &wordCursor{}
		anyDF := 0.0 // documents with the word in some language's fields (an upper bound)
		for lang, term := range w.terms {
			df := 0.0
			for _, f := range q.fields {
				weight := q.r.fieldWeight(f)
				if weight <= 0 {
					continue
				}
				name := langField(f, lang)
				if _, any := q.stats.avgLen[name]; !any {
					continue // no document has this field: no postings to look up
				}
				fr, err := newFieldReader(ctx, i, ps, term, name, vectors, f == fieldTitle || f == fieldBody)
				if err != nil {
					return nil, err
				}
				if fr == nil {
					continue
				}
				fr.weight, fr.avgLen, fr.lang, fr.field = weight, q.stats.avgLen[name], lang, f
				fr.term, fr.name = term, name
				df = max(df, float64(fr.count))
				cw.readers = append(cw.readers, fr)
			}
			anyDF += df
			if df > 0 {
				if cw.idf == nil {
					cw.idf = map[string]float64{}
				}
				idf := q.idf(lang, df)
				cw.idf[lang] = idf
				for _, fr := range cw.readers {
					if fr.lang == lang {
						fr.idf = idf
					}
				}
			}
		}
		if _, any := q.stats.avgLen[fieldURL]; any && w.urlTerm != "" && q.r.URL > 0 && len(q.fields) > 1 {
			fr, err := newFieldReader(ctx, i, ps, w.urlTerm, fieldURL, false, false)
			if err != nil {
				return nil, err
			}
			if fr != nil {
				fr.weight, fr.avgLen = q.r.URL, q.stats.avgLen[fieldURL]
				fr.term, fr.name = w.urlTerm, fieldURL
				// A word's IDF is the word's, not the field's (BM25F): the documents
				// that have it anywhere, not only in the URL. Counting only URLs made
				// a word common in text but rare in paths ("import" in
				// /search-import-854.html) outscore pages titled with it (issue 13's
				// "museum import").
				df := max(float64(fr.count), anyDF)
				n := max(q.stats.docs, df)
				cw.urlIDF = math.Log(1 + (n-df+0.5)/(df+0.5))
				cw.readers = append(cw.readers, fr)
			}
		}
		cw.index, cw.weight = wi, w.weight
		if cw.weight == 0 {
			cw.weight = 1
		}
		if len(cw.readers) == 0 {
			if q.all {
				s.empty, s.none = true, true // a required word occurs nowhere: nothing matches
			}
			continue
		}
		s.words = append(s.words, cw)
	}
	if len(s.words) == 0 {
		s.empty, s.none = true, true
	}
	ok = true
	return s, nil
}

// idf is the IDF of a word that df documents of language lang have in some field.
func (q *bm25fQuery) idf(lang string, df float64) float64 {
	n := max(q.stats.langs[lang], df)
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// textIDFs returns the IDF of each word of q in each language whose fields have it, as
// open computes them (the URL field aside), from count: how many documents have a term in
// a field.
func (q *bm25fQuery) textIDFs(count func(term, field string) (uint64, error)) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(q.words))
	for wi, w := range q.words {
		for lang, term := range w.terms {
			df := 0.0
			for _, f := range q.fields {
				name := langField(f, lang)
				if _, any := q.stats.avgLen[name]; !any || q.r.fieldWeight(f) <= 0 {
					continue
				}
				n, err := count(term, name)
				if err != nil {
					return nil, err
				}
				df = max(df, float64(n))
			}
			if df > 0 {
				if out[wi] == nil {
					out[wi] = map[string]float64{}
				}
				out[wi][lang] = q.idf(lang, df)
			}
		}
	}
	return out, nil
}

// fieldReader is the postings of one term in one field: read straight from each
// segment's zap postings when the index reader is a snapshot of segments (postings.go),
// through Bleve's TermFieldReader otherwise.
type fieldReader struct {
	segs   *segmentPostings       // the direct way (nil: r)
	r      bindex.TermFieldReader // Bleve's way
	cur    *bindex.TermFieldDoc   // r's current posting
	buf    bindex.TermFieldDoc
	seek   bindex.IndexInternalID // scratch: Advance's target
	count  uint64                 // documents with the term in the field (the IDF's)
	doc    uint64                 // the current document's number (noDoc when exhausted)
	freq   uint64                 // the term's frequency in it
	length float64                // the field's length in it, read back from zap's norm
	weight float64
	avgLen float64
	idf    float64  // the word's IDF in lang (wordCursor.idf[lang]; 0 for inurl)
	lang   string   // "" for inurl
	field  string   // the field group: title, body...
	term   string   // the analyzed term
	name   string   // the index field (with its language suffix)
	pos    []uint64 // scratch for positions
}

// newFieldReader opens the postings of term in field (nil: no document has it); vectors
// reads the term's positions too when the field is positional (title and body, whose
// positions proximity reads). ps, when set, reads the segments of snapshot r directly.
func newFieldReader(ctx context.Context, i bindex.IndexReader, ps *postingsSource, term, field string, vectors, positional bool) (*fieldReader, error) {
	vectors = vectors && positional
	if ps != nil {
		segs, n, err := ps.open(term, field, vectors, positional)
		if err != nil || segs == nil {
			return nil, err
		}
		return &fieldReader{segs: segs, count: ps.count(term, field, n), doc: noDoc}, nil
	}
	r, err := i.TermFieldReader(ctx, []byte(term), field, true, true, vectors)
	if err != nil {
		return nil, err
	}
	if r.Count() == 0 {
		r.Close()
		return nil, nil
	}
	return &fieldReader{r: r, count: r.Count(), doc: noDoc}, nil
}

func (f *fieldReader) close() {
	if f.r != nil {
		f.r.Close()
	}
}

// noDoc is the document number of an exhausted cursor: after every document.
const noDoc = math.MaxUint64

// The cursors compare documents by number, decoded once per posting: comparing Bleve's
// 8-byte IDs as byte slices at every step of the merge cost about a twentieth of a search.

func (f *fieldReader) next() error {
	if s := f.segs; s != nil {
		// The common case inline: the next posting of a decoded list without deletions
		// (what segmentPostings.next does then, without its calls: a tenth of matching).
		if s.at < len(s.lists) {
			l := &s.lists[s.at]
			if d := l.dl; d != nil && l.del == nil && s.i+1 < len(d.docs) {
				i := s.i + 1
				x := d.fn[i]
				s.i, s.cur = i, nil
				s.doc, s.freq, s.length = uint64(d.docs[i]), uint64(x>>16), lengthOfNorm(uint64(x&0xffff))
				f.doc, f.freq, f.length = l.first+s.doc, s.freq, s.length
				return nil
			}
		}
		ok, err := s.next()
		f.setPosting(ok)
		return err
	}
	d, err := f.r.Next(f.buf.Reset())
	f.set(d)
	return err
}

func (f *fieldReader) set(d *bindex.TermFieldDoc) {
	f.cur, f.doc = d, noDoc
	if d != nil {
		f.doc, f.freq, f.length = d.ID.Value(), d.Freq, normLength(d.Norm)
	}
}

// setPosting makes the segments' current posting the reader's (ok false: none left).
func (f *fieldReader) setPosting(ok bool) {
	f.doc = noDoc
	if ok {
		s := f.segs
		f.doc, f.freq, f.length = s.offset()+s.doc, s.freq, s.length
	}
}

// advance moves to the first posting at or after document doc.
func (f *fieldReader) advance(doc uint64) error {
	if f.doc != noDoc && f.doc >= doc {
		return nil
	}
	if f.segs != nil {
		ok, err := f.segs.advance(doc)
		f.setPosting(ok)
		return err
	}
	f.seek = bindex.NewIndexInternalID(f.seek, doc)
	d, err := f.r.Advance(f.seek, f.buf.Reset())
	f.set(d)
	return err
}

// positions returns the term's positions in the current document, in increasing order
// (nil when it was opened without them).
func (f *fieldReader) positions() []uint64 {
	f.pos = f.pos[:0]
	if f.segs != nil {
		f.pos = f.segs.positions(f.pos)
		return f.pos
	}
	if f.cur != nil {
		for _, v := range f.cur.Vectors {
			f.pos = append(f.pos, v.Pos)
		}
	}
	return f.pos
}

// wordCursor walks the documents containing one word in any of its fields.
type wordCursor struct {
	readers []*fieldReader
	idf     map[string]float64 // per language
	urlIDF  float64
	weight  float64 // multiplies the word's score (bm25fWord.weight)
	index   int     // the word's position in the query
	cur     uint64  // the smallest current document of the readers (noDoc: none left)
	lang    string  // language of the fields that matched the current document (score sets it)
	langIDF float64 // and the word's IDF in it (idf[lang])
}

func (w *wordCursor) start() error {
	for _, f := range w.readers {
		if err := f.next(); err != nil {
			return err
		}
	}
	w.settle()
	return nil
}

// settle sets cur to the smallest current document among the readers (noDoc: none left).
func (w *wordCursor) settle() {
	w.cur = noDoc
	for _, f := range w.readers {
		w.cur = min(w.cur, f.doc)
	}
}

// advance moves every reader to the first document at or after doc.
func (w *wordCursor) advance(doc uint64) error {
	for _, f := range w.readers {
		if err := f.advance(doc); err != nil {
			return err
		}
	}
	w.settle()
	return nil
}

// step moves the readers that are at cur past it.
func (w *wordCursor) step() error {
	at := w.cur
	for _, f := range w.readers {
		if f.doc == at && at != noDoc {
			if err := f.next(); err != nil {
				return err
			}
		}
	}
	w.settle()
	return nil
}

// score is the word's BM25F score in the document all its matching readers are at.
// The IDF is the language's of the last matching reader that has one (each reader holds
// its language's: a lookup in idf at every match was a thirtieth of a search's CPU).
func (w *wordCursor) score(k1, b float64) float64 {
	tf := 0.0
	var text *fieldReader // the last matching reader of a language's fields
	for _, f := range w.readers {
		if f.doc != w.cur || f.doc == noDoc {
			continue
		}
		tf += f.tf(f.freq, f.length, f.weight, b)
		if f.lang != "" {
			text = f
		}
	}
	idf := w.urlIDF
	w.lang, w.langIDF = "", 0
	if text != nil {
		idf, w.lang, w.langIDF = text.idf, text.lang, text.idf
	}
	return saturate(w.weight, idf, tf, k1)
}

// tf is the term's frequency freq in a document whose field is length long, weighted and
// normalized (fieldTF).
func (f *fieldReader) tf(freq uint64, length, weight, b float64) float64 {
	avg := f.avgLen
	if avg <= 0 {
		avg = length
	}
	return fieldTF(weight, int(freq), length, avg, b)
}

// fieldTF is a word's frequency in one field of a document, weighted by the field's
// weight and normalized by the field's length against its average (BM25F).
func fieldTF(weight float64, freq int, length, avg, b float64) float64 {
	return weight * float64(freq) / (1 - b + b*length/avg)
}

// saturate is a word's BM25F score from its weighted, normalized frequency tf summed over
// fields.
func saturate(weight, idf, tf, k1 float64) float64 {
	return weight * idf * tf * (k1 + 1) / (tf + k1)
}

// positions returns the positions of the word in one field of the current document, in
// increasing order (a word is in one language's copy of the field at most).
func (w *wordCursor) positions(field string) []uint64 {
	for _, f := range w.readers {
		if f.doc != w.cur || f.doc == noDoc || f.field != field {
			continue
		}
		if pos := f.positions(); len(pos) > 0 {
			return pos
		}
	}
	return nil
}

// in says whether the word is in one field of the current document.
func (w *wordCursor) in(field string) bool {
	for _, f := range w.readers {
		if f.doc == w.cur && f.doc != noDoc && f.field == field {
			return true
		}
	}
	return false
}

// bm25fSearcher merges the words' postings: a document matches when all words (all) or
// any word occur in it, and scores the sum of the words' BM25F scores.
type bm25fSearcher struct {
	at    []*wordCursor // scratch: the words at the current document
	q     *bm25fQuery
	words []*wordCursor
	all   bool
	empty bool        // nothing (more) to return
	none  bool        // nothing matches at all (empty from the start)
	prune *maxScore   // dynamic pruning, when the collector asked for it (prune.go)
	cands *candidates // an AND's matching documents, when the collector found them (prune.go)
}

var reflectStaticSizeBM25F = int(reflect.TypeOf(bm25fSearcher{}).Size())

func (s *bm25fSearcher) Size() int { return reflectStaticSizeBM25F }

// Weight is neutral: BM25F scores need no query normalization, and Bleve's would square
// IDF again (see the file comment).
func (s *bm25fSearcher) Weight() float64            { return 1 }
func (s *bm25fSearcher) SetQueryNorm(float64)       {}
func (s *bm25fSearcher) Min() int                   { return 0 }
func (s *bm25fSearcher) DocumentMatchPoolSize() int { return 1 }

func (s *bm25fSearcher) Count() uint64 {
	var n uint64
	for _, w := range s.words {
		for _, f := range w.readers {
			n += f.count
		}
	}
	return n
}

func (s *bm25fSearcher) Close() error {
	for _, w := range s.words {
		for _, f := range w.readers {
			f.close()
		}
	}
	return nil
}

func (s *bm25fSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	return s.match(ctx)
}

// match wraps what nextDoc finds in a DocumentMatch, for Bleve's searchers.
func (s *bm25fSearcher) match(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	doc, score, ok, err := s.nextDoc()
	if !ok || err != nil {
		return nil, err
	}
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = bindex.NewIndexInternalID(dm.IndexInternalID, doc)
	dm.Score = score
	return dm, nil
}

func (s *bm25fSearcher) Advance(ctx *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	if s.empty {
		return nil, nil
	}
	doc := id.Value()
	for _, w := range s.words {
		if err := w.advance(doc); err != nil {
			return nil, err
		}
	}
	return s.match(ctx)
}

// nextDoc finds the next matching document at or after the cursors' positions, scores it
// and moves past it (ok false: none left). The collector calls it directly when the query
// is one BM25F clause: a match then costs no DocumentMatch.
func (s *bm25fSearcher) nextDoc() (doc uint64, score float64, ok bool, err error) {
	if s.empty {
		return 0, 0, false, nil
	}
	if s.prune != nil && s.prune.active() {
		return s.nextPruned()
	}
	if s.all && s.cands != nil {
		for {
			var ok bool
			if doc, ok = s.cands.next(); !ok {
				s.empty = true
				return 0, 0, false, nil
			}
			agree := true
			for _, w := range s.words {
				if err := w.advance(doc); err != nil {
					return 0, 0, false, err
				}
				agree = agree && w.cur == doc
			}
			if agree { // always, unless the postings and their bitmaps disagree
				break
			}
		}
	} else if s.all {
		// Leapfrog: move every word to the largest current document until they agree.
		for {
			hi := uint64(0)
			for _, w := range s.words {
				hi = max(hi, w.cur)
			}
			if hi == noDoc {
				s.empty = true
				return 0, 0, false, nil
			}
			agree := true
			for _, w := range s.words {
				if w.cur != hi {
					agree = false
					if err := w.advance(hi); err != nil {
						return 0, 0, false, err
					}
				}
			}
			if agree {
				doc = hi
				break
			}
		}
	} else {
		doc = noDoc
		for _, w := range s.words {
			doc = min(doc, w.cur)
		}
		if doc == noDoc {
			s.empty = true
			return 0, 0, false, nil
		}
	}
	k1, b := s.q.r.K1, s.q.r.B
	at := s.at[:0]
	for _, w := range s.words {
		if w.cur == doc {
			score += w.score(k1, b)
			at = append(at, w)
		}
	}
	s.at = at
	if s.q.prox > 0 && len(at) > 1 {
		score += s.proximity(at, k1)
	}
	for _, w := range at {
		if err := w.step(); err != nil {
			return 0, 0, false, err
		}
	}
	return doc, score, true, nil
}

// proximity scores pairs of query words that are adjacent in the query and occur next to
// each other, in order, in the body or title: for each such pair, prox × the pair's
// saturated count × the smaller IDF of its two words. It is the ordered-bigram part of
// Metzler and Croft's sequential dependence model, in BM25 form.
func (s *bm25fSearcher) proximity(at []*wordCursor, k1 float64) float64 {
	total := 0.0
	for i := 1; i < len(at); i++ {
		a, b := at[i-1], at[i]
		if b.index != a.index+1 || a.lang == "" || b.lang != a.lang {
			continue
		}
		count := 0.0
		for _, field := range []string{fieldTitle, fieldBody} {
			// The positions are copied only when both words are in the field.
			if !a.in(field) || !b.in(field) {
				continue
			}
			pa, pb := a.positions(field), b.positions(field)
			if len(pa) == 0 || len(pb) == 0 {
				continue
			}
			// Count positions p of a with b at p+1, or at p+2 (one stop word between:
			// positions keep stop-word gaps); both lists are sorted.
			n, j := 0, 0
			for _, p := range pa {
				for j < len(pb) && pb[j] <= p {
					j++
				}
				if j < len(pb) && pb[j] <= p+2 {
					n++
				}
			}
			count += s.q.r.fieldWeight(field) * float64(n)
		}
		if count == 0 {
			continue
		}
		idf := min(a.langIDF, b.langIDF)
		total += s.q.prox * idf * count * (k1 + 1) / (count + k1)
	}
	return total
}
