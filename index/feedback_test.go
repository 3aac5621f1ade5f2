package index

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestTopWords: the relevance model's kept words are those a full sort by likelihood, then
// language and term, would put first, ties included.
func TestTopWords(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 200 {
		model := map[modelKey]float64{}
		for i := range rng.Intn(60) {
			// Few distinct probabilities: many ties, as words counted once in one page have.
			model[modelKey{[]string{"en", "pt", "xx"}[rng.Intn(3)], fmt.Sprintf("w%d", i)}] = float64(1+rng.Intn(4)) / 8
		}
		var all []feedbackWord
		for k, p := range model {
			all = append(all, feedbackWord{k.lang, k.term, p})
		}
		slices.SortFunc(all, func(a, b feedbackWord) int {
			switch {
			case a.p != b.p && a.p > b.p:
				return -1
			case a.p != b.p:
				return 1
			case a.lang+a.term < b.lang+b.term:
				return -1
			default:
				return 1
			}
		})
		n := 1 + rng.Intn(12)
		want := all[:min(n, len(all))]
		if got := topWords(maps.All(model), n); !slices.Equal(got, want) {
			t.Fatalf("trial %d, n %d: %v, want %v", trial, n, got, want)
		}
	}
}

// TestFeedbackLeavesOutCommonWords is issue 13's "museum import" as the demo's generated
// web had it once feedback was on: every word of that web is in about 60 % of its pages,
// so the relevance model of the best matches was ten words any long page has, and
// feedback lifted a long page that mentions the query in passing above the page titled
// with it. Words in more than half of the documents must not enter the model; here every
// word is, so feedback must leave the ranking as it is without it.
func TestFeedbackLeavesOutCommonWords(t *testing.T) {
	ix := openTest(t, Options{})
	// 169 made-up words; a page of 100–250 of them has each with odds of 45–75 %.
	var vocab []string
	syllables := strings.Fields("ka lo mi ne ru ti so fa de pu ga be zo")
	for _, a := range syllables {
		for _, b := range syllables {
			vocab = append(vocab, a+b+"n")
		}
	}
	rng := rand.New(rand.NewSource(13))
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.Intn(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	var docs []Doc
	for i := range 60 {
		body := words(100 + rng.Intn(150))
		switch i % 3 {
		case 0:
			body += " museum import " + words(30) + " museum import"
		case 1:
			body += " museum " + words(20) + " import " + words(10)
		}
		docs = append(docs, Doc{ID: fmt.Sprint("p", i), URL: fmt.Sprintf("http://a.test/p%d.html", i), Host: "a.test",
			Lang: "en", Title: words(3), Body: body, Relevance: -1})
	}
	docs = append(docs, Doc{ID: "docs", URL: "http://a.test/docs/", Host: "a.test", Lang: "en",
		Title: "Museum Import Rain", Body: "Museum Import Rain. " + words(40), Relevance: -1})
	load(t, ix, docs...)
	ranking := func(feedback float64) []string {
		r := ix.Ranking()
		r.Feedback = feedback
		if err := ix.SetRanking(r); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range find(t, ix, "museum import").Hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	without, with := ranking(0), ranking(defaultFeedback)
	if len(with) == 0 || with[0] != "docs" {
		t.Errorf("the page titled with both words is not first: %v", with)
	}
	if !slices.Equal(with, without) {
		t.Errorf("feedback made of words in most pages reordered the results:\nwith    %v\nwithout %v", with, without)
	}
}

// TestUntied: feedback's "best n" never splits a run of equal scores, whose order means
// nothing (one index orders them by internal document number, a split collection by
// shard): the run is taken whole when it ends within the limit, left out otherwise.
func TestUntied(t *testing.T) {
	for _, c := range []struct {
		scores   []float64
		n, limit int
		complete bool
		want     int
	}{
		{[]float64{5, 4, 3, 2}, 2, 2, false, 2},          // no tie at the edge
		{[]float64{5, 4, 4, 2}, 2, 2, false, 1},          // 4 runs past the edge, no room: left out
		{[]float64{5, 4, 4, 2}, 2, 4, false, 3},          // room: taken whole
		{[]float64{5, 4, 4, 4, 4, 1}, 3, 4, false, 1},    // the run ends past the limit
		{[]float64{5, 4, 4, 4, 4, 1}, 3, 5, false, 5},    // ends at the limit
		{[]float64{4, 4, 4, 4}, 2, 3, true, 0},           // every score equal, past the limit: none
		{[]float64{4, 4, 4, 4}, 2, 4, true, 4},           // within it, and they are every match
		{[]float64{4, 4, 4, 4}, 2, 4, false, 0},          // more may follow, equal: not known to end
		{[]float64{5, 4, 4}, 3, 3, false, 3},             // the edge is the end: nothing past it
		{[]float64{5, 4, 4}, 10, 20, false, 3},           // fewer than n
		{[]float64{5, 5, 4}, 2, 2, false, 2},             // a tie inside, not at the edge
		{[]float64{}, 10, 20, false, 0},                  // nothing
		{[]float64{3, 2}, 0, 0, false, 0},                // n 0
		{[]float64{6, 5, 5, 4, 4, 4}, 4, 4, false, 3},    // the run at the edge only
		{[]float64{6, 5, 4, 4, 4, 4}, 1, 1, false, 1},    // a run after the edge, not at it
		{[]float64{-1, -1, -2}, 1, 1, false, 0},          // scores need not be positive
		{[]float64{9, 8, 7, 6, 5, 4, 3}, 6, 6, false, 6}, // distinct
	} {
		if got := untied(c.n, c.limit, len(c.scores), c.complete, func(i int) float64 { return c.scores[i] }); got != c.want {
			t.Errorf("untied(n %d, limit %d, %v, complete %v) = %d, want %d", c.n, c.limit, c.scores, c.complete, got, c.want)
		}
	}
}

// recordSink keeps the words modelDocs gives, document by document, in the order given.
type recordSink struct {
	docs    []recordedDoc
	repeats int // terms given twice for one document (in its title and its body)
}

type recordedDoc struct {
	i    int
	lang string
	tf   map[string]int
}

func (s *recordSink) doc(i int, _ bool, lang string) {
	s.docs = append(s.docs, recordedDoc{i, lang, map[string]int{}})
}

func (s *recordSink) word(term []byte, c int) {
	d := s.docs[len(s.docs)-1]
	if _, ok := d.tf[string(term)]; ok {
		s.repeats++
	}
	d.tf[string(term)] += c
}

func (s *recordSink) done() {}

// TestRelevanceModelSumsAsReference: the relevance model, which numbers its words and
// counts each document's by number, is RM1's sum as a map of each page's word counts
// gives it (the way it was computed before), to the last bit: every word, and each word's
// probability, from documents read from forward term lists and from text alike, with terms
// that occur in a page's title and body.
func TestRelevanceModelSumsAsReference(t *testing.T) {
	docs := forwardCorpus(300, 3)
	ix := openTest(t, Options{CacheEntries: -1})
	putUnlisted(t, ix, false, docs[:100]...)
	if err := ix.Put(ctx, docs[100:]...); err != nil {
		t.Fatal(err)
	}
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewSource(4))
	repeats := 0
	for trial := range 20 {
		// feedbackDocs documents of both kinds, with scores of a ranking (some tied, one
		// at zero: left out as relevanceModel leaves it out).
		var hits []collectedHit
		for _, d := range rng.Perm(300)[:feedbackDocs] {
			hits = append(hits, collectedHit{doc: uint64(d), score: float64(rng.Intn(5)) / 3})
		}
		scores := make([]float64, len(hits))
		for i, h := range hits {
			scores[i] = h.score
		}
		m := newRelevanceModel(scores)
		if m == nil {
			continue
		}
		var read []collectedHit
		var readScores []float64
		for _, h := range hits {
			if h.score > 0 {
				read, readScores = append(read, h), append(readScores, h.score)
			}
		}
		if err := ix.modelDocs(ctx, r, read, &modelSink{m: m, scores: readScores}); err != nil {
			t.Fatal(err)
		}
		got := map[modelKey]float64{}
		for _, w := range m.vocab {
			if w.in {
				got[w.key] = w.p
			}
		}
		// The reference: each page's words counted in a map, added to a map of sums.
		rec := &recordSink{}
		if err := ix.modelDocs(ctx, r, read, rec); err != nil {
			t.Fatal(err)
		}
		repeats += rec.repeats
		want := map[modelKey]float64{}
		for _, d := range rec.docs {
			n := 0
			for _, c := range d.tf {
				n += c
			}
			if n == 0 {
				continue
			}
			pd := readScores[d.i] / m.total
			for term, c := range d.tf {
				want[modelKey{d.lang, term}] += pd * float64(c) / float64(n)
			}
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("trial %d: %d words, want %d", trial, len(got), len(want))
		}
		for k, p := range want {
			if math.Float64bits(got[k]) != math.Float64bits(p) {
				t.Fatalf("trial %d: P(%v) = %v, want %v", trial, k, got[k], p)
			}
		}
		c, w := m.candidates(), topWords(maps.All(want), feedbackCandidates)
		if !slices.Equal(c, w) {
			t.Fatalf("trial %d: candidates %v, want %v", trial, c, w)
		}
		// The candidates outlive the model (caches keep their terms): none may point into
		// its arena, which they would keep alive.
		arena := m.arena[:cap(m.arena)]
		lo, hi := uintptr(unsafe.Pointer(unsafe.SliceData(arena))), uintptr(unsafe.Pointer(unsafe.SliceData(arena)))+uintptr(len(arena))
		for _, word := range c {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(word.term))); p >= lo && p < hi {
				t.Fatalf("trial %d: candidate %q is cut from the model's arena", trial, word.term)
			}
		}
	}
	if repeats == 0 {
		t.Fatal("no page had a word in both its title and its body: the test proves less than it says")
	}
}

// BenchmarkRelevanceModel builds the relevance model of ten pages read from their forward
// term lists, as feedback does for every search.
func BenchmarkRelevanceModel(b *testing.B) {
	ix := openTest(b, Options{CacheEntries: -1})
	if err := ix.Put(ctx, forwardCorpus(300, 3)...); err != nil {
		b.Fatal(err)
	}
	r, err := ix.reader()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var hits []collectedHit
	for i := range feedbackDocs {
		hits = append(hits, collectedHit{doc: uint64(7 * i), score: float64(feedbackDocs - i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if words, err := ix.relevanceModel(ctx, r, hits, nil); err != nil || len(words) == 0 {
			b.Fatal(words, err)
		}
	}
}

// BenchmarkMatchOr scores every match of an OR of five words (no pruning), as the fill of
// an implicit AND with few matches does.
func BenchmarkMatchOr(b *testing.B) {
	ix := openTest(b, Options{CacheEntries: -1})
	if err := ix.Put(ctx, forwardCorpus(2000, 5)...); err != nil {
		b.Fatal(err)
	}
	ix.statsMu.Lock()
	stats := ix.stats.bm25f()
	ix.statsMu.Unlock()
	var ws []bm25fWord
	for _, w := range strings.Fields("reactor fuel water steam safety") {
		ws = append(ws, bm25fWord{terms: map[string]string{"en": textAnalyzerFor("en").Terms(w)[0]}})
	}
	r := DefaultRanking()
	q := &bm25fQuery{words: ws, fields: textFields, r: r, stats: stats, prox: r.Proximity}
	b.ReportAllocs()
	for b.Loop() {
		if c, err := ix.collect(ctx, q, collectOptions{n: 1000, exhaustive: true}); err != nil || c.total == 0 {
			b.Fatal(err)
		}
	}
}
