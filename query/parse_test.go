package query

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseCanonical(t *testing.T) {
	and, or := Options{Implicit: And}, Options{Implicit: Or}
	tests := []struct {
		q    string
		opts Options
		want string
	}{
		{"reactor", and, "reactor"},
		{"solar reactor", and, "(+solar +reactor)"},
		{"solar reactor", or, "(solar OR reactor)"},
		// Seed 002's Quadro 25, in MySQL boolean mode (implicit OR).
		{"sistemas de busca", or, "(sistemas OR de OR busca)"},
		{"+sistemas +de +busca", or, "(+sistemas +de +busca)"},
		{"+sistemas -busca", or, "(+sistemas -busca)"},
		{`"sistemas de busca"`, or, `"sistemas de busca"`},
		// OR binds tighter than juxtaposition, AND tighter than OR.
		{"a b OR c", and, "(+a +(b OR c))"},
		{"a OR b AND c", and, "(a OR (+b +c))"},
		{"a | b", and, "(a OR b)"},
		{"(solar OR wind) -coal", and, "(+(solar OR wind) -coal)"},
		{"-(a OR b) c", and, "(+c -(a OR b))"},
		{"((a))", and, "a"},
		{"+a", or, "a"},
		// Filters are required whatever the operator.
		{"reactor site:Example.org", or, "(+site:example.org reactor)"},
		{"site:https://example.org/", and, "site:example.org"},
		{"lang:PT type:article topic:nuclear", or, "(+lang:pt +type:article +topic:nuclear)"},
		{"title:reactor inurl:docs", and, "(+title:reactor +inurl:docs)"},
		{`title:"fuel rods"`, and, `title:"fuel rods"`},
		{"a OR site:x.org", or, "(a OR site:x.org)"},
		// Unknown prefixes and glued signs are words.
		{"12:30 http://x.org", and, "(+12:30 +http://x.org)"},
		{"c++ boundary-layer", and, "(+c++ +boundary-layer)"},
		// A sign standing alone is punctuation.
		{"5 - 10 +", and, "(+5 +10)"},
		{`"a"-b`, and, `(+"a" +"-b")`},
		// Dates.
		{"after:2024-01-15", and, "after:2024-01-15"},
		{"after:2024", and, "after:2024-01-01"},
		{"before:2024-03", and, "before:2024-03-01"},
		{"date:2024-01..2024-03", and, "date:2024-01-01..2024-03-31"},
		{"date:2024", and, "date:2024-01-01..2024-12-31"},
		{"date:2024-02-29", and, "date:2024-02-29..2024-02-29"},
		{"date:..2023-12", and, "before:2024-01-01"},
		{"date:2023..", and, "after:2023-01-01"},
		{"   ", and, ""},
		{"", and, ""},
	}
	for _, tt := range tests {
		n, err := Parse(tt.q, tt.opts)
		if err != nil {
			t.Errorf("Parse(%q, %v): %v", tt.q, tt.opts.Implicit, err)
			continue
		}
		got := ""
		if n != nil {
			got = n.String()
		}
		if got != tt.want {
			t.Errorf("Parse(%q, %v) = %s, want %s", tt.q, tt.opts.Implicit, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		q      string
		pos    int
		inMsg  string
		impl   Operator
		nested bool
	}{
		{`"open phrase`, 0, "never closed", And, false},
		{`a (b c`, 2, "never closed", And, false},
		{`a b)`, 3, "closes no", And, false},
		{`()`, 0, "empty", And, false},
		{`""`, 0, "quotes are empty", And, false},
		{`a OR`, 2, "both sides", And, false},
		{`OR a`, 0, "both sides", And, false},
		{`a OR OR b`, 5, "nothing between", And, false},
		{`a OR -b`, 5, "cannot follow OR", And, false},
		{`a AND`, 2, "both sides", And, false},
		{`+-a`, 1, "cannot be repeated", And, false},
		{`-a -b`, 0, "only excludes", And, false},
		{`-a`, 0, "only excludes", Or, false},
		{`site:`, 5, "needs a value", And, false},
		{`site: x`, 5, "needs a value", And, false},
		{`site:x.org/path`, 5, "without a path", And, false},
		{`title:(a b)`, 6, "needs a value", And, false},
		{`after:yesterday`, 6, "not a date", And, false},
		{`after:2024-13-01`, 6, "not a valid date", And, false},
		{`date:2024-03..2024-01`, 5, "ends before it starts", And, false},
		{`date:..`, 5, "no start and no end", And, false},
		{`date:2024..x`, 11, "not a date", And, false},
		{strings.Repeat("(", MaxDepth+1) + "a" + strings.Repeat(")", MaxDepth+1), MaxDepth, "nested", And, false},
		{strings.Repeat("a ", MaxClauses+1), 2 * MaxClauses, "more than", And, false},
		{strings.Repeat("x", MaxLength+1), MaxLength, "longer than", And, false},
		{"a \xff b", 2, "UTF-8", And, false},
	}
	for _, tt := range tests {
		_, err := Parse(tt.q, Options{Implicit: tt.impl})
		var qe *Error
		if !errors.As(err, &qe) {
			t.Errorf("Parse(%q) error = %v, want *Error", tt.q, err)
			continue
		}
		if qe.Pos != tt.pos || !strings.Contains(qe.Msg, tt.inMsg) {
			t.Errorf("Parse(%q) = at %d %q, want at %d containing %q", tt.q, qe.Pos, qe.Msg, tt.pos, tt.inMsg)
		}
	}
}

func TestParseStructure(t *testing.T) {
	n, err := Parse(`+reactor "fuel rods" -coal site:a.org date:2024-01..2024-03`, Options{Implicit: Or})
	if err != nil {
		t.Fatal(err)
	}
	b, ok := n.(*Bool)
	if !ok {
		t.Fatalf("got %T, want *Bool", n)
	}
	if len(b.Must) != 3 || len(b.Should) != 1 || len(b.MustNot) != 1 {
		t.Fatalf("must %d should %d not %d, want 3 1 1", len(b.Must), len(b.Should), len(b.MustNot))
	}
	if w, ok := b.Must[0].(*Word); !ok || w.Text != "reactor" || w.At != 1 {
		t.Errorf("first must = %#v", b.Must[0])
	}
	if p, ok := b.Should[0].(*Phrase); !ok || p.Text != "fuel rods" || p.At != 9 {
		t.Errorf("should = %#v", b.Should[0])
	}
	r, ok := b.Must[2].(*DateRange)
	if !ok {
		t.Fatalf("last must = %T", b.Must[2])
	}
	wantFrom, wantTo := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)
	if !r.From.Equal(wantFrom) || !r.To.Equal(wantTo) {
		t.Errorf("range = %v..%v, want %v..%v", r.From, r.To, wantFrom, wantTo)
	}
}

func TestParseOperator(t *testing.T) {
	for in, want := range map[string]Operator{"and": And, "OR": Or, "": And, " or ": Or} {
		if got, err := ParseOperator(in); err != nil || got != want {
			t.Errorf("ParseOperator(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseOperator("xor"); err == nil {
		t.Error("ParseOperator(xor) succeeded")
	}
}
