package index

import (
	"context"
	"iter"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// This file is pseudo-relevance feedback: RM3, the relevance model of Lavrenko and Croft
// (SIGIR 2001) interpolated with the query, as Abdul-Jaleel et al. ran it at TREC 2004
// and as Anserini and Terrier run it by default in their feedback experiments.
//
// Why: people type questions in their own words, and the pages that answer them use other
// words as well ("pressure distribution" and "slender bodies" for "cones"). The best
// few matches of a query say which words those are: the words they share, weighted by how
// well each page matched. RM3 adds them to the query with a small weight of their own.
// On Cranfield asked through the HTTP API it gained 5 % of nDCG@10 on the tuning half and
// 7 % on the held-out half with the textbook settings below, chosen on neither (see
// docs/benchmarks.md).
//
// A word found in most of the collection's documents is left out of the model: its
// Robertson–Spärck Jones weight, log((N − df + ½)/(df + ½)), is below zero past half the
// documents — its presence says nothing for a topic. Without this rule, on a collection
// whose every word is common (the demo's generated web, where each word is in about 60 %
// of the pages), the model is ten words that any long page has, and feedback lifted long
// pages that mention the query in passing above the page titled with it (issue 13's
// "museum import"). On Cranfield few words are that common and the scores are unchanged.
//
// Three choices differ from the textbook, to keep what a query matches the same as without
// feedback and its cost bounded: the expansion words only rescore the documents the query
// matches (a result never gains pages that have none of the words typed, and totals,
// facets and the implicit AND mean what they did); they rescore only the best Window
// matches (Ranking.Window, as the link blend does), so a common word's hundred thousand
// matches cost no more than its best two hundred; and the model reads at most
// feedbackRead bytes of each page, so that its cost does not grow with page size.
const (
	feedbackDocs  = 10       // best matches the model is made of (Anserini's fbDocs)
	feedbackTerms = 10       // words it adds (fbTerms)
	feedbackRead  = 16 << 10 // bytes of a document's title and body it reads

	// feedbackCandidates is how many of the model's likeliest words are checked against
	// the collection for the feedbackTerms kept: the common ones among them are dropped.
	feedbackCandidates = 3 * feedbackTerms
)

// feedbackWord is one word of a relevance model: a term of one analyzer language and
// its probability.
type feedbackWord struct {
	lang, term string
	p          float64
}

// relevanceModel returns the feedbackTerms most likely words of the relevance model of
// hits (RM1): P(w|R) = Σ_d P(w|d)·P(d|q), with P(w|d) the word's share of the terms of the
// document's title and body and P(d|q) the document's share of the hits' scores. Words
// for which common says true are left out (see the file's comment); common may be nil.
// Probabilities are renormalized over the words kept. The documents' terms are read in
// snapshot r (modelDocs).
func (ix *Index) relevanceModel(ctx context.Context, r bindex.IndexReader, hits []collectedHit, common func(feedbackWord) (bool, error)) ([]feedbackWord, error) {
	scores := make([]float64, len(hits))
	for i, h := range hits {
		scores[i] = h.score
	}
	m := newRelevanceModel(scores)
	if m == nil {
		return nil, nil
	}
	var docs []collectedHit
	var docScores []float64
	for _, h := range hits {
		if h.score > 0 {
			docs, docScores = append(docs, h), append(docScores, h.score)
		}
	}
	defer m.release()
	if err := ix.modelDocs(ctx, r, docs, &modelSink{m: m, scores: docScores}); err != nil {
		return nil, err
	}
	return m.words(common)
}

// relevanceModel is RM1's sum, P(w|R) = Σ_d P(w|d)·P(d|q), as its documents are added.
//
// Its words are numbered as they come (ids), and a document's counts are kept by number
// (count, then end): counting each page's words in a map of strings, then adding them to a
// map keyed by language and term, hashed every word twice and allocated a string for each
// word of each page — about a twelfth of a search's CPU. The sums are the same, added in
// the same order, so the model is the same to the last bit. Its maps and slices are reused
// from one search to the next (release), and its words' strings are cut from shared blocks
// (arena).
type relevanceModel struct {
	total float64                     // the hits' scores added up (negative ones as 0): P(d|q)'s denominator
	docs  int                         // how many documents it is made of, at most
	ids   map[string]map[string]int32 // language → term → the word's number
	vocab []modelWord                 // by number
	arena []byte                      // the words' bytes (never rewritten: strings point into it)
	// The document being added: the numbers of its words (in the order met), their
	// counts' sum, its language and that language's ids.
	met  []int32
	n    int
	cur  string
	lang map[string]int32
}

// modelWord is a word of a relevance model.
type modelWord struct {
	key   modelKey
	p     float64 // P(w|R) so far
	count int     // its count in the document being added (-1: not in it)
	in    bool    // it is in the model: a document with words had it
}

// modelPool keeps relevance models' maps and slices for the next search.
var modelPool = sync.Pool{New: func() any { return &relevanceModel{ids: map[string]map[string]int32{}} }}

// A model of more words than this is not kept for reuse (its maps would stay that large).
const modelPoolWords = 1 << 15

// newRelevanceModel returns the model of hits scored scores, or nil when no hit has a
// positive score. release gives it back when it is no longer used.
func newRelevanceModel(scores []float64) *relevanceModel {
	total := 0.0
	for _, s := range scores {
		total += max(0, s)
	}
	if total <= 0 {
		return nil
	}
	m := modelPool.Get().(*relevanceModel)
	m.total, m.docs = total, len(scores)
	return m
}

// release gives the model's maps and slices back for reuse. The words it returned stay
// valid (copies: candidates).
func (m *relevanceModel) release() {
	if len(m.vocab) > modelPoolWords {
		return
	}
	for _, ids := range m.ids {
		clear(ids)
	}
	clear(m.vocab) // no strings kept alive
	m.vocab, m.met, m.arena = m.vocab[:0], m.met[:0], nil
	m.lang, m.cur, m.n = nil, "", 0
	modelPool.Put(m)
}

// add adds a document of language lang scored score, with its words counted in tf. The
// documents must be added in the same order wherever a model is to come out the same to
// the last bit (one index, or a collection split over shards: GatherFeedback).
func (m *relevanceModel) add(lang string, tf map[string]int, score float64) {
	m.begin(lang)
	for t, c := range tf {
		id, ok := m.lang[t]
		if !ok {
			id = m.newWord(t)
		}
		m.tally(id, c)
	}
	m.end(score)
}

// begin starts adding a document of language lang: count its words, then end it.
func (m *relevanceModel) begin(lang string) {
	if m.lang == nil || m.cur != lang {
		if m.lang = m.ids[lang]; m.lang == nil {
			m.lang = map[string]int32{}
			m.ids[lang] = m.lang
		}
		m.cur = lang
	}
	m.met, m.n = m.met[:0], 0
}

// count counts term c times in the document being added (a term may come more than once:
// in its title and in its body).
func (m *relevanceModel) count(term []byte, c int) {
	id, ok := m.lang[string(term)] // looked up without a copy
	if !ok {
		id = m.newWord(m.intern(term))
	}
	m.tally(id, c)
}

// intern returns term as a string cut from the arena.
func (m *relevanceModel) intern(term []byte) string {
	if len(term) == 0 {
		return ""
	}
	if len(m.arena)+len(term) > cap(m.arena) {
		m.arena = make([]byte, 0, max(16<<10, len(term))) // the old block stays with its strings
	}
	at := len(m.arena)
	m.arena = append(m.arena, term...)
	return unsafe.String(&m.arena[at], len(term))
}

// newWord numbers a word of the current document's language met for the first time.
func (m *relevanceModel) newWord(term string) int32 {
	id := int32(len(m.vocab))
	m.lang[term] = id
	m.vocab = append(m.vocab, modelWord{key: modelKey{m.cur, term}, count: -1})
	return id
}

func (m *relevanceModel) tally(id int32, c int) {
	w := &m.vocab[id]
	if w.count < 0 { // not met in this document yet
		w.count = 0
		m.met = append(m.met, id)
	}
	w.count += c
	m.n += c
}

// end adds the document being added, scored score, to the model: each of its words' share
// of its words, times its share of the hits' scores.
func (m *relevanceModel) end(score float64) {
	n := m.n
	pd := score / m.total
	for _, id := range m.met {
		w := &m.vocab[id]
		if n != 0 {
			w.p += pd * float64(w.count) / float64(n)
			w.in = true
		}
		w.count = -1
	}
	m.met = m.met[:0]
}

// candidates are the model's feedbackCandidates likeliest words, likeliest first: those
// that words keeps from, and whose document counts a split collection gathers.
// Their terms are copied out of the arena: they outlive the search (the caches of document
// counts and postings keep them as keys), and a term cut from the arena would keep its
// whole block alive (the load test's server grew by 120 MiB more in 90 s).
func (m *relevanceModel) candidates() []feedbackWord {
	words := topWords(func(yield func(modelKey, float64) bool) {
		for _, w := range m.vocab {
			if w.in && !yield(w.key, w.p) {
				return
			}
		}
	}, feedbackCandidates)
	for i := range words {
		words[i].term = strings.Clone(words[i].term)
	}
	return words
}

// modelSink adds the documents modelDocs reads to a relevance model, scored scores (by
// their position in the documents read).
type modelSink struct {
	m      *relevanceModel
	scores []float64
	at     int
}

func (s *modelSink) doc(i int, _ bool, lang string) { s.m.begin(lang); s.at = i }
func (s *modelSink) word(term []byte, c int)        { s.m.count(term, c) }
func (s *modelSink) done()                          { s.m.end(s.scores[s.at]) }

// words returns the model's feedbackTerms likeliest words for which common (nil: none)
// says false, their probabilities renormalized over the words kept; nil when none is kept.
func (m *relevanceModel) words(common func(feedbackWord) (bool, error)) ([]feedbackWord, error) {
	words := m.candidates()
	kept := words[:0]
	for _, w := range words {
		if len(kept) == feedbackTerms {
			break
		}
		if common != nil {
			c, err := common(w)
			if err != nil {
				return nil, err
			}
			if c {
				continue
			}
		}
		kept = append(kept, w)
	}
	words = kept
	if len(words) == 0 {
		return nil, nil
	}
	sum := 0.0
	for _, w := range words {
		sum += w.p
	}
	for i := range words {
		words[i].p /= sum
	}
	return words, nil
}

// wordSink receives the words of documents, one document at a time: doc starts document
// i, word gives a term of it and how often it occurs (a term may come more than once: in
// the title and in the body; term is valid only during the call), done ends it.
type wordSink interface {
	doc(i int, listed bool, lang string)
	word(term []byte, c int)
	done()
}

// modelDocs gives sink the words of each of docs that a relevance model counts
// (modelTerm) in its title and body, and its analyzer language: first the documents
// stored with a forward term list (forward.go; listed true), in order, then, in order,
// those stored without one, whose first feedbackRead bytes of text are analyzed again. A
// document deleted since it was found is left out.
func (ix *Index) modelDocs(ctx context.Context, r bindex.IndexReader, docs []collectedHit, sink wordSink) error {
	var scratch []byte
	var unlisted []int // documents stored without a forward term list
	word := func(term []byte, c int) {
		if modelTerm(term) {
			sink.word(term, c)
		}
	}
	err := forwardLists(r, ix.forward, docs, func(i int, list forwardList, ok bool) error {
		if !ok {
			unlisted = append(unlisted, i)
			return nil
		}
		sink.doc(i, true, list.lang)
		err := list.eachSection(func(sec forwardSection) error {
			if textFields[sec.field] != fieldTitle && textFields[sec.field] != fieldBody {
				return nil
			}
			var err error
			scratch, err = sec.eachTerm(scratch, word)
			return err
		})
		if err != nil {
			return err
		}
		sink.done()
		return nil
	})
	if err != nil {
		return err
	}
	for _, i := range unlisted {
		id, err := r.ExternalID(docs[i].iid())
		if err != nil {
			return err
		}
		d, ok, err := ix.Document(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			continue // deleted since the search
		}
		code := langCode(d.Lang)
		text := d.Title + "\n" + d.Body
		if len(text) > feedbackRead {
			text = text[:feedbackRead]
		}
		sink.doc(i, false, code)
		for _, t := range textAnalyzerFor(code).Terms(text) {
			word([]byte(t), 1)
		}
		sink.done()
	}
	return nil
}

// modelTerm says whether a relevance model counts a term: one-letter terms and numbers
// say little about a topic and match widely.
func modelTerm(t []byte) bool {
	return len(t) >= 2 && !isNumber(t)
}

// modelKey is a word of a relevance model: a term of one analyzer language.
type modelKey struct{ lang, term string }

// topWords returns the n most likely words of model, most likely first (see before), in
// one pass that keeps the best so far in order: a model has thousands of words and only
// ten are kept, and sorting them all (ties broken by a concatenated key) cost a twentieth
// of a search's CPU on 100,000 pages.
func topWords(model iter.Seq2[modelKey, float64], n int) []feedbackWord {
	words := make([]feedbackWord, 0, n+1)
	for k, p := range model {
		w := feedbackWord{k.lang, k.term, p}
		if len(words) == n && !w.before(words[n-1]) {
			continue
		}
		i := len(words)
		for i > 0 && w.before(words[i-1]) {
			i--
		}
		words = append(words, feedbackWord{})
		copy(words[i+1:], words[i:])
		words[i] = w
		words = words[:min(len(words), n)]
	}
	return words
}

// before orders a relevance model's words: the more likely first, then by language and
// term (every language code has two letters, so this is the order of lang+term).
func (w feedbackWord) before(o feedbackWord) bool {
	if w.p != o.p {
		return w.p > o.p
	}
	if w.lang != o.lang {
		return w.lang < o.lang
	}
	return w.term < o.term
}

func isNumber(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// feedback returns the collector's rescore step for a query of words words and phrases
// (RM3): when the query matches more documents than the model reads, the model of the best
// feedbackDocs rescores the best r.Window as
//
//	(1 − r.Feedback) × score / words + r.Feedback × Σ P(w|R) × BM25F(w)
//
// so each typed word weighs (1 − r.Feedback)/words against the model's words, as in RM3's
// interpolated query. The matches after the window keep their order, their scores scaled
// alike, below the window's. The model's words are scored in each document of the window
// from its forward term list (forward.go), as the postings would score them.
func (ix *Index) feedback(ctx context.Context, r Ranking, words int, stats *bm25fStats) func(bindex.IndexReader, []collectedHit, uint64) error {
	return func(ir bindex.IndexReader, best []collectedHit, total uint64) error {
		// With no more matches than the model reads there is no best few to learn from:
		// the model would be all the matches, and would only rank them by their likeness
		// to each other.
		if total <= feedbackDocs || len(best) == 0 {
			return nil
		}
		// A word is common when the body fields of more than half of its language's
		// documents have it (the field most documents have; the same counts the query's
		// IDF comes from).
		common := func(w feedbackWord) (bool, error) {
			if stats.langs[w.lang] <= 0 {
				return false, nil
			}
			df, err := ix.dfs.count(ctx, ir, w.term, langField(fieldBody, w.lang))
			return commonWord(df, stats.langs[w.lang]), err
		}
		complete := uint64(len(best)) >= total
		model, err := ix.relevanceModel(ctx, ir, best[:untied(feedbackDocs, 2*feedbackDocs, len(best), complete, hitScore(best))], common)
		if err != nil || len(model) == 0 {
			return err
		}
		q := expansion(r, model).query(r, stats)
		postings := uint64(0) // the expansion's postings, all fields
		idfs, err := q.textIDFs(func(term, field string) (uint64, error) {
			n, err := ix.dfs.count(ctx, ir, term, field)
			postings += n
			return n, err
		})
		if err != nil {
			return err
		}
		scale := feedbackScale(r, words)
		for i := range best {
			best[i].score *= scale
		}
		window := best[:untied(r.Window, r.Window, len(best), complete, hitScore(best))]
		if err := q.rescore(ctx, ir, ix.forward, idfs, window, throughPostings(postings, len(window))); err != nil {
			return err
		}
		sort.SliceStable(window, func(a, b int) bool {
			if window[a].score != window[b].score {
				return window[a].score > window[b].score
			}
			return window[a].doc < window[b].doc
		})
		return nil
	}
}

// commonWord says whether a word that df documents of its language have in their body
// field, of docs documents of that language, is too common for a relevance model (see the
// file's comment): in more than half of them.
func commonWord(df uint64, docs float64) bool { return docs > 0 && float64(df) > docs/2 }

// feedbackScale is what feedback multiplies the text scores of a query of words words and
// phrases by: each typed word weighs (1 − r.Feedback)/words against the model's words.
func feedbackScale(r Ranking, words int) float64 { return (1 - r.Feedback) / float64(max(1, words)) }

// rescore adds q's score in each document of window to its score, in snapshot ir (idfs:
// its words' IDFs, textIDFs): from the documents' forward term lists, or from the
// postings for those stored without one and, with viaPostings, for all of them. Both
// ways give the same scores.
func (q *bm25fQuery) rescore(ctx context.Context, ir bindex.IndexReader, cache *forwardCache, idfs []map[string]float64, window []collectedHit, viaPostings bool) error {
	var unlisted []int
	if viaPostings {
		unlisted = make([]int, len(window))
		for i := range unlisted {
			unlisted[i] = i
		}
	} else {
		var err error
		if unlisted, err = q.rescoreForward(ir, cache, idfs, window); err != nil {
			return err
		}
	}
	if len(unlisted) == 0 {
		return nil
	}
	s, err := q.open(ctx, ir)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.rescorePostings(window, unlisted)
}

// untied returns how many of a ranking's first results feedback takes as "the best n"
// (length of them known, best first, score(i) the i-th's score; complete says they are
// every match): n when the n-th and the next score differently. Otherwise a run of equal
// scores crosses the edge, and their order means nothing — one index orders them by
// internal document number, which depends on how its segments lie, a split collection by
// shard — so which of them are taken must not depend on it: the whole run when it ends
// within limit results (and is known to end there), none of it otherwise.
func untied(n, limit, length int, complete bool, score func(int) float64) int {
	if n >= length {
		return length
	}
	if n <= 0 {
		return 0
	}
	edge := score(n - 1)
	if score(n) != edge {
		return n
	}
	end := n + 1
	for end < length && end <= limit && score(end) == edge {
		end++
	}
	if end <= limit && (end < length || complete) {
		return end
	}
	for n > 0 && score(n-1) == edge {
		n--
	}
	return n
}

func hitScore(hits []collectedHit) func(int) float64 {
	return func(i int) float64 { return hits[i].score }
}

// forwardDocPostings is what reading one document's forward term list costs, counted in
// postings walked: a stored-field read decompresses the whole stored document (its text
// too) and visits each of its fields. Through the postings, rescoring walks every posting
// of the expansion up to the window's last document. 300 sends Cranfield's questions (1,400
// short abstracts, short postings lists: the lists cost them 0.6 ms more CPU at p50) the
// postings' way and the 100,000 pages of "Search under load" (ten common words, the walk
// three times the cost of the lists) the lists' way (docs/benchmarks.md). A variable for
// the tests, which take each way.
var forwardDocPostings uint64 = 300

// throughPostings says whether rescoring window documents is cheaper through the postings
// of the expansion, postings long in all (every one walked up to the window's last
// document), than through the window's forward term lists. Both give the same scores.
func throughPostings(postings uint64, window int) bool {
	return postings < uint64(window)*forwardDocPostings
}

// rescoreForward adds q's score in each document of window to its score, reading the
// words' frequencies from the documents' forward term lists in snapshot ir; idfs are the
// words' IDFs (textIDFs); cache holds segments' lists in memory (nil: none). It returns the positions in window of the documents it could not
// read that way (stored without a list). The arithmetic is bm25fSearcher's, in its order.
func (q *bm25fQuery) rescoreForward(ir bindex.IndexReader, cache *forwardCache, idfs []map[string]float64, window []collectedHit) (unlisted []int, err error) {
	// The words to look for in a document of each language, sorted (forwardSection.find).
	type wanted struct {
		terms []string
		words []int // each term's word in q.words
	}
	want := map[string]*wanted{}
	for wi, w := range q.words {
		for lang, term := range w.terms {
			if _, ok := idfs[wi][lang]; ok {
				if want[lang] == nil {
					want[lang] = &wanted{}
				}
				want[lang].terms = append(want[lang].terms, term)
				want[lang].words = append(want[lang].words, wi)
			}
		}
	}
	for _, w := range want {
		sort.Sort(byTerm{w.terms, w.words})
	}
	// Which of a document's fields the words are looked for in (as open's readers).
	weights := make([]float64, len(textFields))
	for _, f := range q.fields {
		for i, name := range textFields {
			if name == f {
				weights[i] = q.r.fieldWeight(f)
			}
		}
	}
	// The fields' average lengths in each language (-1: no document has the field).
	avgs := map[string][]float64{}
	averages := func(lang string) []float64 {
		a, ok := avgs[lang]
		if !ok {
			a = make([]float64, len(textFields))
			for i, f := range textFields {
				a[i] = -1
				if avg, has := q.stats.avgLen[langField(f, lang)]; has {
					a[i] = avg
				}
			}
			avgs[lang] = a
		}
		return a
	}
	k1, b := q.r.K1, q.r.B
	nf := len(textFields)
	tf := make([]float64, len(q.words)*nf) // word × field: weighted, normalized frequency
	var scratch []byte
	// The section being read, and what find found in it (one closure for the search).
	var words *wanted
	var field int
	var weight, length, avg float64
	found := func(j, freq int) {
		if freq > 0 {
			tf[words.words[j]*nf+field] = fieldTF(weight, freq, length, avg, b)
		}
	}
	err = forwardLists(ir, cache, window, func(i int, list forwardList, ok bool) error {
		if !ok {
			unlisted = append(unlisted, i)
			return nil
		}
		if words = want[list.lang]; words == nil {
			return nil
		}
		clear(tf)
		avgLen := averages(list.lang)
		err := list.eachSection(func(sec forwardSection) error {
			field = sec.field
			weight, avg = weights[field], avgLen[field]
			if weight <= 0 || avg == -1 {
				return nil
			}
			length = fieldLength(sec.length)
			if avg <= 0 {
				avg = length
			}
			var err error
			scratch, err = sec.find(words.terms, scratch, found)
			return err
		})
		if err != nil {
			return err
		}
		score := 0.0
		for wi, w := range q.words {
			sum, matched := 0.0, false
			for _, x := range tf[wi*nf : (wi+1)*nf] {
				if x != 0 {
					sum, matched = sum+x, true
				}
			}
			if matched {
				weight := w.weight
				if weight == 0 {
					weight = 1 // a typed word (as open's cursors)
				}
				score += saturate(weight, idfs[wi][list.lang], sum, k1)
			}
		}
		window[i].score += score
		return nil
	})
	if err != nil {
		return nil, err
	}
	return unlisted, nil
}

// rescorePostings adds s's score in the documents of window at positions at to their
// scores, advancing s's postings to each: the way for documents stored without a forward
// term list. It walks each word's postings up to the last document asked for.
func (s *bm25fSearcher) rescorePostings(window []collectedHit, at []int) error {
	if len(at) == 0 || s.empty {
		return nil
	}
	for _, w := range s.words {
		if err := w.start(); err != nil {
			return err
		}
	}
	// The postings are read forward, in document order.
	order := append([]int(nil), at...)
	sort.Slice(order, func(a, b int) bool { return window[order[a]].doc < window[order[b]].doc })
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0)}
	var m *search.DocumentMatch // the last match, at or after the document asked
	var err error
	for _, i := range order {
		h := &window[i]
		if m == nil || m.IndexInternalID.Value() < h.doc {
			if m != nil {
				sctx.DocumentMatchPool.Put(m)
			}
			if m, err = s.Advance(sctx, h.iid()); err != nil {
				return err
			}
			if m == nil {
				break // nothing further matches
			}
		}
		if m.IndexInternalID.Value() == h.doc {
			h.score += m.Score
		}
	}
	return nil
}

// dfCache keeps how many documents have a term in a field, for the snapshot the index
// was last searched through: the expansion words of feedback are common words that come
// back query after query (and the model's thirty candidates are checked against the
// collection), and looking their counts up in every segment's term dictionary for every
// field cost a twentieth of a search.
type dfCache struct {
	memo snapshotMemo[fieldTerm, uint64]
}

type fieldTerm struct{ field, term string }

func (c *dfCache) count(ctx context.Context, r bindex.IndexReader, term, field string) (uint64, error) {
	return c.memo.get(r, fieldTerm{field, term}, func() (uint64, error) {
		tfr, err := r.TermFieldReader(ctx, []byte(term), field, false, false, false)
		if err != nil {
			return 0, err
		}
		n := tfr.Count()
		return n, tfr.Close()
	})
}

// snapshotMemo keeps values computed from an index snapshot, for the snapshot last asked
// about: a new snapshot (any write) starts it afresh. It holds at most memoSize values;
// values computed from a reader that is not a snapshot of segments are not kept.
type snapshotMemo[K comparable, V any] struct {
	mu   sync.Mutex
	snap *scorch.IndexSnapshot
	m    map[K]V
}

const memoSize = 1 << 16

func (c *snapshotMemo[K, V]) get(r bindex.IndexReader, key K, compute func() (V, error)) (V, error) {
	snap, _ := r.(*scorch.IndexSnapshot)
	if snap != nil {
		c.mu.Lock()
		if c.snap != snap {
			c.snap, c.m = snap, map[K]V{}
		}
		v, ok := c.m[key]
		c.mu.Unlock()
		if ok {
			return v, nil
		}
	}
	v, err := compute()
	if err != nil || snap == nil {
		return v, err
	}
	c.mu.Lock()
	if c.snap == snap && len(c.m) < memoSize {
		c.m[key] = v
	}
	c.mu.Unlock()
	return v, nil
}

// byTerm sorts terms and the words they stand for together.
type byTerm struct {
	terms []string
	words []int
}

func (b byTerm) Len() int           { return len(b.terms) }
func (b byTerm) Less(i, j int) bool { return b.terms[i] < b.terms[j] }
func (b byTerm) Swap(i, j int) {
	b.terms[i], b.terms[j] = b.terms[j], b.terms[i]
	b.words[i], b.words[j] = b.words[j], b.words[i]
}
