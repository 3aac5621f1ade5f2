package index

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	bindex "github.com/blevesearch/bleve_index_api"
)

// This file is pseudo-relevance feedback (feedback.go) for a collection split over shards,
// so that a cluster ranks with it as one index over all the pages does. One index builds
// the relevance model from its best feedbackDocs matches, checks the model's words against
// its document counts and rescores its best Window matches with the words kept. Over
// shards, the best matches are known only once the shards' answers to the search phase are
// gathered, and they lie on several shards; GatherFeedback therefore adds three phases
// between ShardSearch and Gather, each a call to the shards through FeedbackShards:
//
//  1. ShardFeedbackDocs: the shards holding the best feedbackDocs matches return their
//     words (title and body, as the model counts them). The gatherer adds them up in the
//     order one index does, so the model comes out the same to the last bit.
//  2. ShardTermCounts: every shard counts the documents holding each of the model's
//     likeliest words in each text field; the sums say which words are common in the whole
//     collection and what each word's IDF is.
//  3. ShardFeedbackScores: the shards holding the best Window matches score the words kept
//     in them, with the collection's counts.
//
// The scores then are one index's, and Gather blends and orders them as before.

// FeedbackDoc is a document's words as a relevance model counts them.
type FeedbackDoc struct {
	// Found is false for a document the shard no longer has.
	Found bool `json:"found"`
	// Listed says the words were read from the document's forward term list; one index
	// adds the documents read that way to its model before the others.
	Listed bool           `json:"listed,omitempty"`
	Lang   string         `json:"lang,omitempty"`
	Terms  map[string]int `json:"terms,omitempty"` // term → occurrences in title and body
}

// FieldTerm is a term of an indexed field (the field's name with its language suffix).
type FieldTerm struct {
	Field string `json:"field"`
	Term  string `json:"term"`
}

// FeedbackExpansion is the words a relevance model adds to a query, as the gatherer sends
// them to the shards that rescore with them.
type FeedbackExpansion struct {
	Words []ExpansionWord `json:"words"`
	// Counts are how many of the collection's documents have each word in each text field
	// (field → term → documents): the IDFs come from them.
	Counts map[string]map[string]uint64 `json:"counts"`
}

// ExpansionWord is a word of a FeedbackExpansion: a term of one analyzer language and its
// weight in the query (the feedback share times its probability in the model).
type ExpansionWord struct {
	Lang   string  `json:"lang"`
	Term   string  `json:"term"`
	Weight float64 `json:"weight"`
}

// FeedbackShards is what GatherFeedback needs of the shards of a collection: the three
// phases above, shard numbered as the parts given to it. A shard that fails is left out of
// the phase (its documents add nothing to the model and gain no score); the caller says so.
type FeedbackShards interface {
	// FeedbackDocs returns the words of documents ids of a shard (its ShardFeedbackDocs).
	FeedbackDocs(ctx context.Context, shard int, ids []string) ([]FeedbackDoc, error)
	// TermCounts returns how many documents of the whole collection have each of terms:
	// ShardTermCounts added up over the shards.
	TermCounts(ctx context.Context, terms []FieldTerm) ([]uint64, error)
	// FeedbackScores returns exp's score in each of documents ids of a shard (its
	// ShardFeedbackScores).
	FeedbackScores(ctx context.Context, shard int, exp *FeedbackExpansion, ids []string) ([]float64, error)
}

// ShardFeedbackDocs is feedback's first phase: the words of documents ids of this shard,
// as a relevance model counts them.
func (ix *Index) ShardFeedbackDocs(ctx context.Context, ids []string) ([]FeedbackDoc, error) {
	rd, err := ix.openReader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	out := make([]FeedbackDoc, len(ids))
	docs, at, err := internalDocs(rd, ids)
	if err != nil {
		return nil, err
	}
	if err = ix.modelDocs(ctx, rd, docs, &feedbackDocSink{out: out, at: at}); err != nil {
		return nil, err
	}
	return out, nil
}

// feedbackDocSink keeps the words modelDocs reads as FeedbackDocs: document i in out[at[i]].
type feedbackDocSink struct {
	out []FeedbackDoc
	at  []int
	cur *FeedbackDoc
}

func (s *feedbackDocSink) doc(i int, listed bool, lang string) {
	s.cur = &s.out[s.at[i]]
	*s.cur = FeedbackDoc{Found: true, Listed: listed, Lang: lang, Terms: map[string]int{}}
}

func (s *feedbackDocSink) word(term []byte, c int) { s.cur.Terms[string(term)] += c }
func (s *feedbackDocSink) done()                   {}

// ShardTermCounts is feedback's second phase: how many of this shard's documents have each
// of terms.
func (ix *Index) ShardTermCounts(ctx context.Context, terms []FieldTerm) ([]uint64, error) {
	rd, err := ix.openReader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	out := make([]uint64, len(terms))
	for i, ft := range terms {
		if out[i], err = ix.dfs.count(ctx, rd, ft.Term, ft.Field); err != nil {
			return nil, fmt.Errorf("index: count the documents with %s:%s: %w", ft.Field, ft.Term, err)
		}
	}
	return out, nil
}

// ShardFeedbackScores is feedback's third phase: the score of exp's words in each of
// documents ids of this shard, ranked as req says with the collection's statistics global
// (0 for a document the shard no longer has).
func (ix *Index) ShardFeedbackScores(ctx context.Context, req ShardRequest, global *CollectionStats, exp *FeedbackExpansion, ids []string) ([]float64, error) {
	if global == nil || exp == nil {
		return nil, fmt.Errorf("index: feedback scores need the collection's statistics and the expansion")
	}
	_, _, r, err := ix.shardQuery(req)
	if err != nil {
		return nil, err
	}
	rd, err := ix.openReader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	window, at, err := internalDocs(rd, ids)
	if err != nil {
		return nil, err
	}
	fs := global.fieldStats()
	q := exp.query(r, fs.bm25f())
	idfs, err := q.textIDFs(func(term, field string) (uint64, error) { return exp.Counts[field][term], nil })
	if err != nil {
		return nil, err
	}
	// The postings' way (documents stored without a forward term list) reads the IDFs
	// from the reader: give it the collection's counts.
	cr := &countsReader{IndexReader: rd, counts: &globalCounts{docs: global.Indexed, terms: exp.Counts}}
	if err := q.rescore(ctx, cr, ix.forward, idfs, window, false); err != nil {
		return nil, err
	}
	out := make([]float64, len(ids))
	for i, h := range window {
		out[at[i]] = h.score
	}
	return out, nil
}

// openReader is a snapshot of the index for one phase, or errClosed.
func (ix *Index) openReader() (bindex.IndexReader, error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	return ix.reader()
}

// internalDocs returns the documents of ids that reader rd has, in the order of ids (as
// collectedHits scored 0), and where each is in ids.
func internalDocs(rd bindex.IndexReader, ids []string) ([]collectedHit, []int, error) {
	var docs []collectedHit
	var at []int
	for i, id := range ids {
		iid, err := rd.InternalID(id)
		if err != nil {
			return nil, nil, fmt.Errorf("index: look document %s up: %w", id, err)
		}
		if len(iid) == 0 {
			continue
		}
		docs, at = append(docs, collectedHit{doc: iid.Value()}), append(at, i)
	}
	return docs, at, nil
}

// expansion is the words of a relevance model as a query adds them, each weighing r's
// feedback share times its probability.
func expansion(r Ranking, model []feedbackWord) *FeedbackExpansion {
	exp := &FeedbackExpansion{Words: make([]ExpansionWord, len(model))}
	for i, w := range model {
		exp.Words[i] = ExpansionWord{Lang: w.lang, Term: w.term, Weight: r.Feedback * w.p}
	}
	return exp
}

// query is the expansion as a query scored with r over statistics stats.
func (exp *FeedbackExpansion) query(r Ranking, stats *bm25fStats) *bm25fQuery {
	ws := make([]bm25fWord, len(exp.Words))
	for i, w := range exp.Words {
		ws[i] = bm25fWord{terms: map[string]string{w.Lang: w.Term}, weight: w.Weight}
	}
	return &bm25fQuery{words: ws, fields: textFields, r: r, stats: stats}
}

// GatherFeedback applies pseudo-relevance feedback to the shards' answers to the search
// phase (parts, nil for a missing shard) as one index over the whole collection applies
// it (feedback.go): it changes their hits' text scores in place, and Gather then blends
// and orders them. r and depth are as for Gather; global are the collection's statistics.
// It does nothing when r has no feedback, the query no words, or too few documents match.
// Errors are the shards' (their phases left out); the scores are then as far as they got.
func GatherFeedback(ctx context.Context, r Ranking, depth int, global *CollectionStats, parts []*ShardHits, shards FeedbackShards) error {
	r = r.withDefaults()
	if depth <= 0 {
		depth = defaultMaxResults
	}
	words, total := 0, uint64(0)
	type ref struct {
		shard, hit int
		text       float64
	}
	var best []ref
	for si, p := range parts {
		if p == nil {
			continue
		}
		words, total = max(words, p.Words), total+p.Total
		for hi, h := range p.Hits {
			best = append(best, ref{si, hi, h.Text})
		}
	}
	if r.Feedback <= 0 || words == 0 || total <= feedbackDocs || len(best) == 0 {
		return nil
	}
	// The collection's best matches, in Gather's order.
	sort.SliceStable(best, func(i, j int) bool {
		if best[i].text != best[j].text {
			return best[i].text > best[j].text
		}
		return best[i].shard < best[j].shard
	})
	best = best[:min(len(best), depth)]
	hitOf := func(x ref) *ShardHit { return &parts[x.shard].Hits[x.hit] }
	var errs []error

	// Phase 1: the model of the best feedbackDocs.
	text := func(i int) float64 { return best[i].text }
	complete := uint64(len(best)) >= total
	modelHits := best[:untied(feedbackDocs, 2*feedbackDocs, len(best), complete, text)]
	scores := make([]float64, len(modelHits))
	for i, x := range modelHits {
		scores[i] = x.text
	}
	m := newRelevanceModel(scores)
	if m == nil {
		return nil
	}
	defer m.release()
	docs := make([]FeedbackDoc, len(modelHits))
	byShard := map[int][]int{} // shard → positions in modelHits, with a positive score
	for i, x := range modelHits {
		if x.text > 0 {
			byShard[x.shard] = append(byShard[x.shard], i)
		}
	}
	errs = append(errs, eachShard(byShard, func(shard int, at []int) error {
		ids := make([]string, len(at))
		for k, i := range at {
			ids[k] = hitOf(modelHits[i]).ID
		}
		got, err := shards.FeedbackDocs(ctx, shard, ids)
		if err == nil && len(got) != len(ids) {
			err = fmt.Errorf("index: %d documents' words for %d asked", len(got), len(ids))
		}
		if err != nil {
			return err
		}
		for k, i := range at {
			docs[i] = got[k]
		}
		return nil
	})...)
	// One index adds the documents read from forward term lists first, then the others.
	for _, listed := range []bool{true, false} {
		for i, d := range docs {
			if d.Found && d.Listed == listed && modelHits[i].text > 0 {
				m.add(d.Lang, d.Terms, modelHits[i].text)
			}
		}
	}

	// Phase 2: the candidates' document counts, in every text field of their language.
	cands := m.candidates()
	var asked []FieldTerm
	for _, w := range cands {
		for _, f := range textFields {
			asked = append(asked, FieldTerm{langField(f, w.lang), w.term})
		}
	}
	counts := map[string]map[string]uint64{}
	if len(asked) > 0 {
		n, err := shards.TermCounts(ctx, asked)
		if err == nil && len(n) != len(asked) {
			err = fmt.Errorf("index: %d term counts for %d asked", len(n), len(asked))
		}
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for i, ft := range asked {
			if counts[ft.Field] == nil {
				counts[ft.Field] = map[string]uint64{}
			}
			counts[ft.Field][ft.Term] = n[i]
		}
	}
	fs := global.fieldStats()
	stats := fs.bm25f()
	model, _ := m.words(func(w feedbackWord) (bool, error) {
		return commonWord(counts[langField(fieldBody, w.lang)][w.term], stats.langs[w.lang]), nil
	})
	if len(model) == 0 {
		return errors.Join(errs...)
	}

	// Phase 3: the words kept rescore the best Window.
	exp := expansion(r, model)
	exp.Counts = map[string]map[string]uint64{}
	for _, w := range model {
		for _, f := range textFields {
			name := langField(f, w.lang)
			if exp.Counts[name] == nil {
				exp.Counts[name] = map[string]uint64{}
			}
			exp.Counts[name][w.term] = counts[name][w.term]
		}
	}
	scale := feedbackScale(r, words)
	for _, p := range parts {
		if p == nil {
			continue
		}
		for i := range p.Hits {
			p.Hits[i].Text *= scale
		}
	}
	window := best[:untied(r.Window, r.Window, len(best), complete, text)]
	inWindow := map[int][]ref{}
	for _, x := range window {
		inWindow[x.shard] = append(inWindow[x.shard], x)
	}
	errs = append(errs, eachShard(inWindow, func(shard int, xs []ref) error {
		ids := make([]string, len(xs))
		for k, x := range xs {
			ids[k] = hitOf(x).ID
		}
		add, err := shards.FeedbackScores(ctx, shard, exp, ids)
		if err == nil && len(add) != len(ids) {
			err = fmt.Errorf("index: %d feedback scores for %d documents", len(add), len(ids))
		}
		if err != nil {
			return err
		}
		for k, x := range xs {
			hitOf(x).Text += add[k] // each shard's own hits: no two goroutines share one
		}
		return nil
	})...)
	return errors.Join(errs...)
}

// eachShard calls fn for every shard of work at once and returns their errors.
func eachShard[T any](work map[int][]T, fn func(shard int, items []T) error) []error {
	errs := make([]error, 0, len(work))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for shard, items := range work {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(shard, items); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}
