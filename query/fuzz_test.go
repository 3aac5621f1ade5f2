package query

import (
	"errors"
	"testing"
)

// FuzzParse checks that any input parses or fails with an *Error whose position lies in
// the query, and that a parsed query's canonical form parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"solar reactor", `"fuel rods" -coal`, "(a OR b) AND c", "+a -b c", "site:x.org lang:pt",
		"date:2024-01..2024-03", "after:2024 before:2025-02", `title:"a b" inurl:docs`,
		"a (b (c OR d))", `"a"-b`, "c++ -(x | y)", "type:pdf topic:geo", "((", `")`, "a OR",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, q string, or bool) {
		opts := Options{Implicit: And}
		if or {
			opts.Implicit = Or
		}
		n, err := Parse(q, opts)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%q): error %v is not *Error", q, err)
			}
			if qe.Pos < 0 || qe.Pos > len(q) || qe.Msg == "" {
				t.Fatalf("Parse(%q): bad error %+v", q, qe)
			}
			return
		}
		if n == nil {
			return
		}
		canon := n.String()
		n2, err := Parse(canon, opts)
		if err != nil {
			t.Fatalf("Parse(%q) gave %q, which does not parse: %v", q, canon, err)
		}
		if n2 == nil || n2.String() != canon {
			t.Fatalf("Parse(%q) gave %q, which parses to %v", q, canon, n2)
		}
	})
}
