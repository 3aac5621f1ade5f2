// Package query owns sonda's search query language: its grammar, the parser that turns a
// user's query into a tree, and the errors that tell the user where a query went wrong.
// It knows nothing about the index; package index translates the tree into Bleve queries.
//
// # Language
//
//	solar reactor          both words (implicit AND; configurable, see Operator)
//	solar OR wind          either word ("|" works too); OR binds tighter than juxtaposition
//	solar AND wind         both words, explicitly
//	"nuclear fuel"         the phrase
//	+reactor -coal         reactor required, coal excluded (seed 002's MySQL boolean mode);
//	                       a sign standing alone, as in "5 - 10", is punctuation
//	(solar OR wind) -coal  parentheses group
//	title:reactor          a word (or "phrase") in the title; inurl: matches URL words
//	site:example.org       pages of example.org and its subdomains
//	lang:pt                pages in Portuguese (primary language subtag)
//	type:article           a kind (page, article, dataset) or a content type: type:pdf,
//	                       type:application/pdf, type:html
//	topic:nuclear          pages labelled with a topic
//	after:2024-01-01       dated on or after the start of that day (2024 and 2024-01 work too)
//	before:2024-03         dated before the start of March 2024
//	date:2024-01..2024-03  January to March 2024, inclusive; date:2024, date:..2023-12 also
//	bbox:-71.2,42.2,-70.9,42.4
//	                       documents whose WGS84 box intersects west,south,east,north
//	                       (geographic datasets; west > east crosses the antimeridian)
//	format:shapefile       datasets of a format; crs:4326 (or crs:epsg:4326) of a CRS;
//	                       producer:ibge.gov.br published by a producer site
//
// Filters (site, lang, type, topic, the dates and the dataset filters) side by side with other clauses are always
// required, whatever the implicit operator: "reactor site:example.org" never means "reactor OR any page
// of example.org". Inside an explicit OR they combine like anything else. A word like
// "12:30" or "http://x" whose prefix is not a known field name is an ordinary word.
//
// The implicit operator is AND by default, as in today's web search engines: every word a
// user types narrows the results, counts and facets describe a precise set, and
// conjunctions are cheaper to evaluate. Seed 002 used MySQL's boolean mode, where it is OR;
// Operator selects either, and package index falls back to OR when AND matches nothing so
// a long natural-language question still gets answers.
//
// # Limits
//
// A query longer than MaxLength bytes, with more than MaxClauses words, phrases and
// filters, or nested deeper than MaxDepth parentheses is rejected with an *Error: the
// parser never panics and never does unbounded work, whatever it is given.
package query

import (
	"fmt"
	"strings"
	"time"
)

// Operator is what juxtaposed clauses mean.
type Operator int

const (
	// And requires every clause (the default).
	And Operator = iota
	// Or requires at least one clause and ranks documents that match more of them higher.
	Or
)

// ParseOperator reads "and" or "or" (any case).
func ParseOperator(s string) (Operator, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "and", "":
		return And, nil
	case "or":
		return Or, nil
	}
	return And, fmt.Errorf("query: operator %q is not and or or", s)
}

func (o Operator) String() string {
	if o == Or {
		return "or"
	}
	return "and"
}

// Limits on what Parse accepts.
const (
	MaxLength  = 2048 // bytes
	MaxClauses = 64   // words, phrases and filters
	MaxDepth   = 16   // nested parentheses
)

// Error is a malformed query: Pos is the byte offset in the query where the problem is
// (len(query) for a problem at the end) and Msg says what is wrong and how to fix it.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("query: at %d: %s", e.Pos, e.Msg) }

// Node is a part of a parsed query.
type Node interface {
	// Pos is the byte offset in the query where the node starts.
	Pos() int
	// String writes the node back in the query language (canonical form).
	String() string
}

// Field names a text field a word or phrase is searched in.
type Field string

// The text fields. Default means the document's text fields together (title, body,
// headings, description, anchors, URL words), each with its ranking weight.
const (
	Default Field = ""
	Title   Field = "title"
	URL     Field = "inurl"
)

// Word is one word to look for. The index analyzes Text (which may analyze to several
// terms, like "boundary-layer", or to none, like a stop word).
type Word struct {
	Field Field
	Text  string
	At    int
}

// Phrase is words that must appear together, in order.
type Phrase struct {
	Field Field
	Text  string
	At    int
}

// Filter restricts documents by a keyword field: Name is "site", "lang", "type", "topic",
// "format", "crs" (Value "epsg:N" for a code), "producer" or "bbox" (Value in BBox.String
// form); Value is lowercased.
type Filter struct {
	Name  string
	Value string
	At    int
}

// DateRange keeps documents dated in [From, To); a zero bound is open.
type DateRange struct {
	From, To time.Time
	At       int
}

// Bool combines clauses: every Must clause, at least one Should clause when there is no
// Must clause (otherwise Should clauses only raise the score), and no MustNot clause.
type Bool struct {
	Must, Should, MustNot []Node
	At                    int
}

// Pos implements Node.
func (n *Word) Pos() int      { return n.At }
func (n *Phrase) Pos() int    { return n.At }
func (n *Filter) Pos() int    { return n.At }
func (n *DateRange) Pos() int { return n.At }
func (n *Bool) Pos() int      { return n.At }

func fieldPrefix(f Field) string {
	if f == Default {
		return ""
	}
	return string(f) + ":"
}

func (n *Word) String() string   { return fieldPrefix(n.Field) + quoteWord(n.Text) }
func (n *Phrase) String() string { return fieldPrefix(n.Field) + `"` + n.Text + `"` }
func (n *Filter) String() string {
	if n.Name == "bbox" {
		return n.Name + ":" + n.Value // numbers and commas: read back whole after the colon
	}
	return n.Name + ":" + quoteWord(n.Value)
}

func (n *DateRange) String() string {
	day := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format("2006-01-02")
	}
	switch {
	case n.To.IsZero():
		return "after:" + day(n.From)
	case n.From.IsZero():
		return "before:" + day(n.To)
	}
	// date: ranges are inclusive of their last day.
	return "date:" + day(n.From) + ".." + day(n.To.AddDate(0, 0, -1))
}

func (n *Bool) String() string {
	var parts []string
	if len(n.Must) == 0 && len(n.MustNot) == 0 {
		// A pure disjunction reads best as an OR chain.
		for _, c := range n.Should {
			parts = append(parts, groupString(c))
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	}
	for _, c := range n.Must {
		parts = append(parts, "+"+groupString(c))
	}
	for _, c := range n.Should {
		parts = append(parts, groupString(c))
	}
	for _, c := range n.MustNot {
		parts = append(parts, "-"+groupString(c))
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func groupString(n Node) string { return n.String() }

// quoteWord writes a word so that it parses back as the same single word.
func quoteWord(s string) string {
	if s == "OR" || s == "AND" || s == "|" || strings.ContainsAny(s, " \t\n\r\"()") || strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		return `"` + s + `"`
	}
	if i := strings.IndexByte(s, ':'); i > 0 && knownField(strings.ToLower(s[:i])) {
		return `"` + s + `"`
	}
	return s
}
