package index

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
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
		if got := topWords(model, n); !slices.Equal(got, want) {
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
