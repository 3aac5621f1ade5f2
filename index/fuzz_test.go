package index

import (
	"errors"
	"strings"
	"testing"
)

// FuzzSearch checks that no query, however malformed, makes Search fail with anything
// but a *QueryError, or produce a snippet that is not safe HTML (only <mark> tags).
func FuzzSearch(f *testing.F) {
	ix := openTest(f, Options{})
	load(f, ix, corpus...)
	for _, s := range []string{"reactor", `"fuel rods" -coal`, "(a OR b) AND c", "site:reactor.test lang:en", "date:2024-01..2024-03",
		"title:\"x\" inurl:y", "+-a", "((", "the", "usina elétrica", "<script>", "a OR", "type:pdf reactor"} {
		f.Add(s, "")
		f.Add(s, "or")
	}
	f.Fuzz(func(t *testing.T, q, op string) {
		if op != "" && op != "or" && op != "and" {
			op = ""
		}
		r, err := ix.Search(ctx, Request{Query: q, Operator: op, Facets: len(q)%2 == 0})
		if err != nil {
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("Search(%q): %v is not a *QueryError", q, err)
			}
			return
		}
		for _, h := range r.Hits {
			s := strings.ReplaceAll(strings.ReplaceAll(h.Snippet, "<mark>", ""), "</mark>", "")
			if strings.ContainsAny(s, "<>") {
				t.Fatalf("Search(%q): snippet with markup: %q", q, h.Snippet)
			}
		}
	})
}
