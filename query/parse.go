package query

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Grammar (juxtaposition binds loosest, then OR, then AND):
//
//	query   = seq EOF
//	seq     = { clause }
//	clause  = [ "+" | "-" ] orExpr
//	orExpr  = andExpr { ( "OR" | "|" ) andExpr }
//	andExpr = primary { "AND" primary }
//	primary = "(" seq ")" | PHRASE | FIELD ":" ( WORD | PHRASE ) | WORD

// Options tune Parse.
type Options struct {
	// Implicit is what juxtaposed clauses mean (And by default).
	Implicit Operator
}

// Parse parses a query. The result is nil, with a nil error, for a query with nothing in
// it (empty or blank). Any other malformed query gives an *Error.
func Parse(q string, opts Options) (Node, error) {
	if len(q) > MaxLength {
		return nil, &Error{Pos: MaxLength, Msg: fmt.Sprintf("the query is longer than %d bytes; shorten it", MaxLength)}
	}
	if !utf8.ValidString(q) {
		return nil, &Error{Pos: firstInvalidUTF8(q), Msg: "the query is not valid UTF-8 text"}
	}
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	p := &parser{q: q, toks: toks, implicit: opts.Implicit}
	n, err := p.seq(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		// seq stops only at EOF or ")": an unmatched ")" is left.
		return nil, &Error{Pos: t.pos, Msg: `this ")" closes no "(": remove it or add the "(" it belongs to`}
	}
	if n == nil {
		return nil, nil
	}
	if !positive(n) {
		return nil, &Error{Pos: 0, Msg: "the query only excludes: add at least one word, phrase or filter to look for (e.g. reactor -coal)"}
	}
	return n, nil
}

func firstInvalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return 0
}

// positive reports whether n can match anything on its own (it is not only exclusions).
func positive(n Node) bool {
	b, ok := n.(*Bool)
	if !ok {
		return true
	}
	for _, c := range b.Must {
		if positive(c) {
			return true
		}
	}
	for _, c := range b.Should {
		if positive(c) {
			return true
		}
	}
	return false
}

type tokKind int

const (
	tEOF tokKind = iota
	tWord
	tPhrase
	tField // text is the lowercased field name; the value is the next token
	tLParen
	tRParen
	tPlus
	tMinus
	tOr
	tAnd
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// knownFields are the field names a "name:" prefix is recognized for.
var knownFields = map[string]bool{
	"site": true, "title": true, "inurl": true, "lang": true, "type": true, "topic": true,
	"after": true, "before": true, "date": true,
	"bbox": true, "format": true, "crs": true, "producer": true,
}

func knownField(name string) bool { return knownFields[name] }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// wordEnd is where a bare word starting at i ends: at space, a parenthesis or a quote.
func wordEnd(q string, i int) int {
	for i < len(q) && !isSpace(q[i]) && q[i] != '(' && q[i] != ')' && q[i] != '"' {
		i++
	}
	return i
}

func lex(q string) ([]token, error) {
	var toks []token
	clauses := 0
	phraseEnd := -1 // where the last phrase's closing quote ended
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '(':
			toks = append(toks, token{tLParen, "(", i})
			i++
			continue
		case c == ')':
			toks = append(toks, token{tRParen, ")", i})
			i++
			continue
		case c == '"':
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return nil, &Error{Pos: i, Msg: `this quote is never closed: add the closing " after the phrase`}
			}
			toks = append(toks, token{tPhrase, q[i+1 : i+1+end], i})
			i += end + 2
			phraseEnd = i
		case (c == '+' || c == '-') && i != phraseEnd:
			// A sign glued to a closing quote ("a"-b) starts a word; anywhere else it is
			// the required/excluded prefix.
			k := tPlus
			if c == '-' {
				k = tMinus
			}
			if i+1 >= len(q) || isSpace(q[i+1]) || q[i+1] == ')' {
				// A sign standing alone ("5 - 10", "rock + roll") is punctuation.
				i++
				continue
			}
			toks = append(toks, token{k, string(c), i})
			i++
			continue
		default:
			end := wordEnd(q, i)
			w := q[i:end]
			if w == "OR" || w == "|" {
				toks = append(toks, token{tOr, w, i})
				i = end
				continue
			}
			if w == "AND" {
				toks = append(toks, token{tAnd, w, i})
				i = end
				continue
			}
			if colon := strings.IndexByte(w, ':'); colon > 0 && knownField(strings.ToLower(w[:colon])) {
				toks = append(toks, token{tField, strings.ToLower(w[:colon]), i})
				valueAt := i + colon + 1
				switch {
				case valueAt < end:
					toks = append(toks, token{tWord, q[valueAt:end], valueAt})
				case valueAt < len(q) && q[valueAt] == '"':
					// the phrase is lexed next
				default:
					return nil, &Error{Pos: valueAt, Msg: fmt.Sprintf("%s: needs a value right after the colon, as in %s", w[:colon], fieldExample(strings.ToLower(w[:colon])))}
				}
				i = end
			} else {
				toks = append(toks, token{tWord, w, i})
				i = end
			}
		}
		// Only words, phrases and fields get here.
		if clauses++; clauses > MaxClauses {
			return nil, &Error{Pos: toks[len(toks)-1].pos, Msg: fmt.Sprintf("the query has more than %d words, phrases and filters; shorten it", MaxClauses)}
		}
	}
	return append(toks, token{tEOF, "", len(q)}), nil
}

func fieldExample(name string) string {
	switch name {
	case "site":
		return "site:example.org"
	case "lang":
		return "lang:pt"
	case "type":
		return "type:article or type:pdf"
	case "topic":
		return "topic:nuclear"
	case "after", "before":
		return name + ":2024-01-15"
	case "date":
		return "date:2024-01..2024-03"
	case "bbox":
		return "bbox:-71.2,42.2,-70.9,42.4 (west,south,east,north in degrees)"
	case "format":
		return "format:shapefile or format:geotiff"
	case "crs":
		return "crs:4326 or crs:epsg:31983"
	case "producer":
		return "producer:ibge.gov.br"
	}
	return name + ":word or " + name + `:"a phrase"`
}

type parser struct {
	q        string
	toks     []token
	i        int
	depth    int
	implicit Operator
}

func (p *parser) peek() token { return p.toks[p.i] }

// next consumes a token; at the end it keeps returning the EOF token.
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// seq parses clauses until EOF or ")".
func (p *parser) seq(at int) (Node, error) {
	b := &Bool{At: at}
	count := 0
	for {
		t := p.peek()
		if t.kind == tEOF || t.kind == tRParen {
			break
		}
		prefix := p.peek()
		if prefix.kind == tPlus || prefix.kind == tMinus {
			p.next()
		}
		n, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		count++
		switch {
		case prefix.kind == tPlus:
			b.Must = append(b.Must, n)
		case prefix.kind == tMinus:
			b.MustNot = append(b.MustNot, n)
		case isFilter(n):
			b.Must = append(b.Must, n)
		case p.implicit == Or:
			b.Should = append(b.Should, n)
		default:
			b.Must = append(b.Must, n)
		}
	}
	switch {
	case count == 0:
		return nil, nil
	case count == 1 && len(b.MustNot) == 0:
		// One clause: the clause itself (a lone "+x" means x).
		if len(b.Must) == 1 {
			return b.Must[0], nil
		}
		return b.Should[0], nil
	}
	return b, nil
}

// isFilter reports whether n restricts by metadata only (a filter, date range, or a
// combination of them), which the implicit operator never turns into an optional clause.
func isFilter(n Node) bool {
	switch n := n.(type) {
	case *Filter, *DateRange:
		return true
	case *Bool:
		for _, group := range [][]Node{n.Must, n.Should, n.MustNot} {
			for _, c := range group {
				if !isFilter(c) {
					return false
				}
			}
		}
		return true
	}
	return false
}

func (p *parser) orExpr() (Node, error) {
	first, err := p.andExpr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tOr {
		return first, nil
	}
	b := &Bool{At: first.Pos(), Should: []Node{first}}
	for p.peek().kind == tOr {
		op := p.next()
		if !startsPrimary(p.peek().kind) {
			return nil, p.danglingOperator(op)
		}
		n, err := p.andExpr()
		if err != nil {
			return nil, err
		}
		b.Should = append(b.Should, n)
	}
	return b, nil
}

func (p *parser) andExpr() (Node, error) {
	first, err := p.primary()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tAnd {
		return first, nil
	}
	b := &Bool{At: first.Pos(), Must: []Node{first}}
	for p.peek().kind == tAnd {
		op := p.next()
		if !startsPrimary(p.peek().kind) {
			return nil, p.danglingOperator(op)
		}
		n, err := p.primary()
		if err != nil {
			return nil, err
		}
		b.Must = append(b.Must, n)
	}
	return b, nil
}

func startsPrimary(k tokKind) bool {
	return k == tWord || k == tPhrase || k == tField || k == tLParen
}

func (p *parser) danglingOperator(op token) error {
	t := p.peek()
	switch t.kind {
	case tPlus, tMinus:
		return &Error{Pos: t.pos, Msg: fmt.Sprintf("%q cannot follow %s: put the prefix before the whole group, as in -(a %s b)", t.text, op.text, op.text)}
	case tOr, tAnd:
		return &Error{Pos: t.pos, Msg: fmt.Sprintf("%s follows %s with nothing between them: remove one", t.text, op.text)}
	}
	return &Error{Pos: op.pos, Msg: fmt.Sprintf("%s needs something on both sides, as in solar %s wind", op.text, op.text)}
}

func (p *parser) primary() (Node, error) {
	t := p.next()
	switch t.kind {
	case tWord:
		return &Word{Text: t.text, At: t.pos}, nil
	case tPhrase:
		return phraseOrNothing(Default, t)
	case tField:
		return p.field(t)
	case tLParen:
		if p.depth >= MaxDepth {
			return nil, &Error{Pos: t.pos, Msg: fmt.Sprintf("parentheses are nested more than %d deep; simplify the query", MaxDepth)}
		}
		p.depth++
		n, err := p.seq(t.pos)
		p.depth--
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, &Error{Pos: t.pos, Msg: `this "(" is never closed: add the ")" that ends the group`}
		}
		if n == nil {
			return nil, &Error{Pos: t.pos, Msg: "the parentheses are empty: put words inside them or remove them"}
		}
		return n, nil
	case tOr, tAnd:
		return nil, &Error{Pos: t.pos, Msg: fmt.Sprintf("%s needs something on both sides, as in solar %s wind", t.text, t.text)}
	case tPlus, tMinus:
		return nil, &Error{Pos: t.pos, Msg: fmt.Sprintf("%q applies to a whole clause and cannot be repeated or used inside OR/AND; write %sword", t.text, t.text)}
	case tRParen:
		return nil, &Error{Pos: t.pos, Msg: `this ")" closes no "(": remove it or add the "(" it belongs to`}
	}
	return nil, &Error{Pos: t.pos, Msg: "the query ends where a word, phrase or group was expected"}
}

// phraseOrNothing turns a quoted string into a Phrase; an empty phrase is an error.
func phraseOrNothing(f Field, t token) (Node, error) {
	if strings.TrimSpace(t.text) == "" {
		return nil, &Error{Pos: t.pos, Msg: `the quotes are empty: put the words of the phrase between them`}
	}
	return &Phrase{Field: f, Text: t.text, At: t.pos}, nil
}

func (p *parser) field(t token) (Node, error) {
	v := p.next()
	if v.kind != tWord && v.kind != tPhrase {
		return nil, &Error{Pos: v.pos, Msg: fmt.Sprintf("%s: needs a value right after the colon, as in %s", t.text, fieldExample(t.text))}
	}
	switch t.text {
	case "title", "inurl":
		if v.kind == tPhrase {
			return phraseOrNothing(Field(t.text), v)
		}
		return &Word{Field: Field(t.text), Text: v.text, At: t.pos}, nil
	case "after", "before", "date":
		return parseDates(t.text, v.text, t.pos, v.pos)
	}
	value := strings.ToLower(strings.TrimSpace(v.text))
	if value == "" {
		return nil, &Error{Pos: v.pos, Msg: fmt.Sprintf("%s: needs a value, as in %s", t.text, fieldExample(t.text))}
	}
	switch t.text {
	case "site", "producer":
		value = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(value, "https://"), "http://"), "/")
		if t.text == "producer" {
			value = strings.TrimPrefix(value, "www.") // producers are sites, named without www.
		}
		if value == "" || strings.ContainsAny(value, "/ ") {
			return nil, &Error{Pos: v.pos, Msg: t.text + ": takes a host or domain name such as example.org, without a path"}
		}
	case "bbox":
		box, err := ParseBBox(value)
		if err != nil {
			return nil, &Error{Pos: v.pos, Msg: "bbox: " + err.Error() + "; write west,south,east,north in degrees, as in " + fieldExample("bbox")}
		}
		value = box.String()
	case "crs":
		value = strings.TrimPrefix(value, "epsg:")
		if value == "" {
			return nil, &Error{Pos: v.pos, Msg: "crs: needs an EPSG code, as in " + fieldExample("crs")}
		}
		if _, err := strconv.Atoi(value); err == nil {
			value = "epsg:" + value
		}
	}
	return &Filter{Name: t.text, Value: value, At: t.pos}, nil
}

// parseDates reads after:D, before:D and date:D, date:A..B, date:A.., date:..B where each
// date is YYYY, YYYY-MM or YYYY-MM-DD (UTC) and stands for the whole year, month or day.
func parseDates(name, v string, at, valueAt int) (Node, error) {
	bad := func(pos int, why string) error {
		return &Error{Pos: pos, Msg: fmt.Sprintf("%s: %s; write dates as 2024, 2024-03 or 2024-03-15, as in %s", name, why, fieldExample(name))}
	}
	if name != "date" {
		start, _, err := period(v)
		if err != nil {
			return nil, bad(valueAt, err.Error())
		}
		if name == "after" {
			return &DateRange{From: start, At: at}, nil
		}
		return &DateRange{To: start, At: at}, nil
	}
	lo, hi, isRange := strings.Cut(v, "..")
	if !isRange {
		start, end, err := period(v)
		if err != nil {
			return nil, bad(valueAt, err.Error())
		}
		return &DateRange{From: start, To: end, At: at}, nil
	}
	r := &DateRange{At: at}
	if lo != "" {
		start, _, err := period(lo)
		if err != nil {
			return nil, bad(valueAt, err.Error())
		}
		r.From = start
	}
	if hi != "" {
		_, end, err := period(hi)
		if err != nil {
			return nil, bad(valueAt+len(lo)+2, err.Error())
		}
		r.To = end
	}
	switch {
	case r.From.IsZero() && r.To.IsZero():
		return nil, bad(valueAt, "the range has no start and no end")
	case !r.From.IsZero() && !r.To.IsZero() && !r.From.Before(r.To):
		return nil, bad(valueAt, "the range ends before it starts")
	}
	return r, nil
}

// period returns the start and the end (exclusive) of the year, month or day s names.
func period(s string) (start, end time.Time, err error) {
	for _, f := range []struct {
		layout string
		step   func(time.Time) time.Time
	}{
		{"2006-01-02", func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }},
		{"2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }},
		{"2006", func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }},
	} {
		if len(s) != len(f.layout) {
			continue
		}
		t, perr := time.Parse(f.layout, s)
		if perr != nil {
			return start, end, fmt.Errorf("%q is not a valid date", s)
		}
		return t, f.step(t), nil
	}
	return start, end, fmt.Errorf("%q is not a date", s)
}
