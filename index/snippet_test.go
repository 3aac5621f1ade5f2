package index

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/internal/synthcorpus"
	"github.com/sonda-search/sonda/text"
)

// TestSnippetOnePass: snippetHits, which reads a body's words in one pass without
// keeping them, finds the same occurrences with the same windows as finding them in the
// list of all the body's words (snippetHitsFromWords, the way snippets were made before),
// for bodies of every length, query words at the start, the end and nowhere, words too
// long to index and ideographs, one to two dozen words asked for; and the snippets made
// from them are the same.
func TestSnippetOnePass(t *testing.T) {
	c := synthcorpus.New(5)
	rng := rand.New(rand.NewPCG(5, 6))
	var bodies []string
	for i := range 300 {
		body := synthDoc(c, i).Body
		words := strings.Fields(body)
		bodies = append(bodies, body, strings.Join(words[:min(len(words), 1+i%40)], " "))
	}
	bodies = append(bodies, "", "reactor", "the reactor", strings.Repeat("x", 70)+" reactor "+strings.Repeat("y", 70),
		"原子炉の燃料 reactor fuel 原子炉", strings.Repeat("word ", 40)+"reactor fuel", "reactor "+strings.Repeat("word ", 40),
		"reactor "+strings.Repeat("word ", 30)+"end.", "one two three four five reactor "+strings.Repeat("word ", 25)+"end.")
	checked, found := 0, 0
	for _, body := range bodies {
		words := text.Words(body)
		for range 4 {
			want := map[string]bool{}
			n := 1 + rng.IntN(3)
			if rng.IntN(4) == 0 {
				n = 17 + rng.IntN(8) // more than prefixes keeps in a list
			}
			for range n {
				w := "reactor"
				if len(words) > 0 && rng.IntN(4) > 0 {
					w = words[rng.IntN(len(words))].Term
				}
				if term, ok := textAnalyzerFor("en").Term(w); ok {
					want[term] = true
				}
			}
			got, ref := snippetHits(body, "en", want), snippetHitsFromWords(body, "en", want)
			if !reflect.DeepEqual(got, ref) {
				t.Fatalf("want %v in %q:\n%+v in one pass\n%+v from the words", want, body, got, ref)
			}
			checked++
			if len(got) > 0 {
				found++
				if s := snippet(body, "en", want); s != markWindow(body, ref) || !strings.Contains(s, "<mark>") {
					t.Fatalf("want %v in %q: snippet %q", want, body, s)
				}
			}
		}
	}
	if found < checked/2 {
		t.Fatalf("words found in only %d of %d bodies", found, checked)
	}
}

// snippetHitsFromWords finds the occurrences of want in the list of all the words of
// body (text.Words), as snippets did before snippetHits: the reference for
// TestSnippetOnePass.
func snippetHitsFromWords(body, code string, want map[string]bool) []snippetHit {
	a := textAnalyzerFor(code)
	ts := text.Words(body)
	var hits []snippetHit
	for i, w := range ts {
		term, ok := a.Term(w.Term)
		if !ok || !want[term] {
			continue
		}
		startTok := max(0, i-snippetLead)
		endTok := min(len(ts)-1, startTok+snippetTokens-1)
		h := snippetHit{tok: i, start: w.Start, end: w.End, term: term, from: ts[startTok].Start, to: ts[endTok].End, last: startTok + snippetTokens - 1}
		if startTok == 0 {
			h.from = 0
		}
		if endTok == len(ts)-1 {
			h.to = len(body)
		}
		hits = append(hits, h)
	}
	return hits
}
