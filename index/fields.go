package index

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
)

// The text fields a query word is looked for in, each indexed once per language as
// <name>_<lang> (inurl is language-neutral).
const (
	fieldTitle       = "title"
	fieldBody        = "body"
	fieldHeadings    = "headings"
	fieldDescription = "description"
	fieldAnchors     = "anchors"
	fieldExtra       = "extra" // the text of kind-specific string fields
	fieldURL         = "inurl"
)

// textFields are the per-language text fields, in the order of a document's length record.
var textFields = []string{fieldTitle, fieldBody, fieldHeadings, fieldDescription, fieldAnchors, fieldExtra}

// Keyword, date and numeric fields, and stored-only ones.
const (
	fieldKind      = "kind"
	fieldHost      = "host"
	fieldSite      = "site" // the host and every parent domain of it
	fieldLang      = "lang"
	fieldCType     = "ctype"
	fieldCSub      = "csub" // content subtype: "pdf" of application/pdf
	fieldTopic     = "topic"
	fieldDate      = "date"
	fieldFetched   = "fetched"
	fieldRelevance = "relevance"
	fieldRelevant  = "relevant"
	fieldInLinks   = "inlinks"
	fieldLens      = "lens"   // analyzed field lengths: "<lang>|t,b,h,d,a,x,u"
	fieldFields    = "fields" // Doc.Fields as JSON
	storedPrefix   = "s_"     // stored copies of the text fields: s_title, s_body...
	typedPrefix    = "f_"     // indexed Doc.Fields values
)

func langField(name, code string) string { return name + "_" + code }

const (
	textOptions    = bindex.IndexField | bindex.IncludeTermVectors
	keywordOptions = bindex.IndexField | bindex.DocValues
	storeOnly      = bindex.StoreField
)

// built is a document ready for Bleve, with what the index's statistics need.
type built struct {
	doc *document.Document
	docLengths
}

// docLengths is what the statistics keep per document: its analyzer language, the
// analyzed lengths of textFields then inurl, and whether it has a topic relevance. It is
// recorded in the document (field lens) so that a replaced or deleted document's share
// can be taken out of the totals.
type docLengths struct {
	lang  string
	lens  [7]int
	topic bool
}

func (b docLengths) term() string {
	parts := make([]string, len(b.lens))
	for i, n := range b.lens {
		parts[i] = strconv.Itoa(n)
	}
	topic := "0"
	if b.topic {
		topic = "1"
	}
	return b.lang + "|" + strings.Join(parts, ",") + "|" + topic
}

func parseLens(s string) (l docLengths, ok bool) {
	lang, rest, ok := strings.Cut(s, "|")
	if !ok {
		return l, false
	}
	nums, topic, ok := strings.Cut(rest, "|")
	if !ok {
		return l, false
	}
	parts := strings.Split(nums, ",")
	if len(parts) != len(l.lens) {
		return l, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return l, false
		}
		l.lens[i] = n
	}
	l.lang, l.topic = lang, topic == "1"
	return l, true
}

// build turns d into a Bleve document.
func build(d Doc) (*built, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	if d.Kind == "" {
		d.Kind = KindPage
	}
	b := &built{doc: document.NewDocument(d.ID), docLengths: docLengths{lang: langCode(d.Lang), topic: d.Relevance >= 0}}
	doc := b.doc
	fw := newForwardBuilder(b.lang)
	addText := func(name string, i int, value string) {
		if value == "" {
			return
		}
		v := []byte(value) // one copy for both fields: neither changes it
		if f := newAnalyzedField(langField(name, b.lang), b.lang, value, v); f != nil {
			b.lens[i] = f.length
			fw.add(i, f)
			doc.AddField(f)
		}
		doc.AddField(document.NewTextFieldCustom(storedPrefix+name, nil, v, storeOnly, nil))
	}
	keyword := func(name, value string, opts bindex.FieldIndexingOptions) {
		if value != "" {
			doc.AddField(document.NewTextFieldCustom(name, nil, []byte(value), opts, nil))
		}
	}
	addText(fieldTitle, 0, d.Title)
	addText(fieldBody, 1, d.Body)
	addText(fieldHeadings, 2, d.Headings)
	addText(fieldDescription, 3, d.Description)
	addText(fieldAnchors, 4, strings.Join(d.Anchors, "\n"))

	extra, err := addTypedFields(doc, d.Fields)
	if err != nil {
		return nil, fmt.Errorf("index: document %s: %w", d.ID, err)
	}
	if extra != "" {
		if f := newAnalyzedField(langField(fieldExtra, b.lang), b.lang, extra, []byte(extra)); f != nil {
			b.lens[5] = f.length
			fw.add(5, f)
			doc.AddField(f)
		}
	}
	if d.URL != "" {
		words := urlWords(d.URL)
		if f := newAnalyzedField(fieldURL, neutral, words, []byte(words)); f != nil {
			b.lens[6] = f.length
			doc.AddField(f)
		}
		keyword(storedPrefix+"url", d.URL, storeOnly)
	}
	keyword(fieldKind, d.Kind, keywordOptions|bindex.StoreField)
	host := strings.ToLower(d.Host)
	keyword(fieldHost, host, keywordOptions|bindex.StoreField)
	for _, s := range siteSuffixes(host) {
		keyword(fieldSite, s, bindex.IndexField)
	}
	if d.Lang != "" {
		keyword(fieldLang, primaryLang(d.Lang), keywordOptions)
		keyword(storedPrefix+fieldLang, d.Lang, storeOnly)
	}
	if ct := strings.ToLower(strings.TrimSpace(d.ContentType)); ct != "" {
		keyword(fieldCType, ct, keywordOptions|bindex.StoreField)
		if _, sub, ok := strings.Cut(ct, "/"); ok {
			keyword(fieldCSub, sub, bindex.IndexField)
		}
	}
	for _, t := range d.Topics {
		keyword(fieldTopic, strings.ToLower(strings.TrimSpace(t)), keywordOptions|bindex.StoreField)
	}
	if date := d.Date(); !date.IsZero() {
		// Not stored: Doc.Date is read back from the published field or the fetch time.
		f, err := document.NewDateTimeFieldWithIndexingOptions(fieldDate, nil, date.UTC(), time.RFC3339Nano, keywordOptions)
		if err != nil {
			return nil, fmt.Errorf("index: document %s: date %v: %w", d.ID, date, err)
		}
		doc.AddField(f)
	}
	if !d.Fetched.IsZero() {
		f, err := document.NewDateTimeFieldWithIndexingOptions(fieldFetched, nil, d.Fetched.UTC(), time.RFC3339Nano, storeOnly)
		if err != nil {
			return nil, fmt.Errorf("index: document %s: fetched %v: %w", d.ID, d.Fetched, err)
		}
		doc.AddField(f)
	}
	doc.AddField(document.NewNumericFieldWithIndexingOptions(fieldRelevance, nil, d.Relevance, bindex.IndexField|bindex.StoreField|bindex.DocValues))
	doc.AddField(document.NewBooleanFieldWithIndexingOptions(fieldRelevant, nil, d.Relevant, bindex.IndexField|bindex.StoreField))
	doc.AddField(document.NewNumericFieldWithIndexingOptions(fieldInLinks, nil, float64(d.InLinks), storeOnly))
	if len(d.Fields) > 0 {
		j, err := encodeFields(d.Fields)
		if err != nil {
			return nil, fmt.Errorf("index: document %s: %w", d.ID, err)
		}
		keyword(fieldFields, string(j), storeOnly)
	}
	keyword(fieldLens, b.term(), bindex.IndexField|bindex.DocValues)
	doc.AddField(document.NewTextFieldCustom(fieldTerms, nil, fw.buf, storeOnly, nil))
	return b, nil
}

// addTypedFields indexes the kind-specific fields and returns their text, for the extra
// text field.
func addTypedFields(doc *document.Document, fields map[string]any) (string, error) {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var text []string
	for _, name := range names {
		fname := typedPrefix + name
		switch v := fields[name].(type) {
		case string:
			if v != "" {
				doc.AddField(document.NewTextFieldCustom(fname, nil, []byte(strings.ToLower(v)), keywordOptions, nil))
				text = append(text, v)
			}
		case []string:
			for _, s := range v {
				if s != "" {
					doc.AddField(document.NewTextFieldCustom(fname, nil, []byte(strings.ToLower(s)), keywordOptions, nil))
					text = append(text, s)
				}
			}
		case time.Time:
			if !v.IsZero() {
				f, err := document.NewDateTimeFieldWithIndexingOptions(fname, nil, v.UTC(), time.RFC3339Nano, keywordOptions)
				if err != nil {
					return "", fmt.Errorf("field %s: %w", name, err)
				}
				doc.AddField(f)
			}
		case bool:
			doc.AddField(document.NewBooleanFieldWithIndexingOptions(fname, nil, v, keywordOptions))
		case BBox:
			if err := addBBox(doc, fname, v); err != nil {
				return "", fmt.Errorf("field %s: %w", name, err)
			}
		case int, int64, float32, float64:
			x := toFloat(v)
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return "", fmt.Errorf("field %s: %v is not a finite number", name, v)
			}
			doc.AddField(document.NewNumericFieldWithIndexingOptions(fname, nil, x, keywordOptions))
		}
	}
	return strings.Join(text, "\n"), nil
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float32:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}

// storedFields is Doc.Fields as stored: the values as JSON, plus which of them were
// times, so they come back as time.Time.
type storedFields struct {
	Values map[string]any `json:"v"`
	Times  []string       `json:"t,omitempty"`
	Boxes  []string       `json:"b,omitempty"`
}

func encodeFields(fields map[string]any) ([]byte, error) {
	s := storedFields{Values: fields}
	for name, v := range fields {
		switch v.(type) {
		case time.Time:
			s.Times = append(s.Times, name)
		case BBox:
			s.Boxes = append(s.Boxes, name)
		}
	}
	sort.Strings(s.Times)
	sort.Strings(s.Boxes)
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("fields cannot be stored as JSON: %w", err)
	}
	return b, nil
}

func decodeFields(b []byte) (map[string]any, error) {
	var s storedFields
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	for _, name := range s.Times {
		if str, ok := s.Values[name].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, str); err == nil {
				s.Values[name] = t
			}
		}
	}
	for _, name := range s.Boxes {
		if b, err := json.Marshal(s.Values[name]); err == nil {
			var box BBox
			if json.Unmarshal(b, &box) == nil {
				s.Values[name] = box
			}
		}
	}
	return s.Values, nil
}

// primaryLang is the primary subtag of a language tag, lowercased: "pt" for "pt-BR".
func primaryLang(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	return tag
}

// urlWords is the text of a URL that inurl: searches: the words of its host, path and
// query values, split at every character that is not a letter or digit (a word tokenizer
// would keep "manual.pdf" or "www.example.org" whole).
func urlWords(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return splitNonWord(raw)
	}
	parts := []string{u.Hostname()}
	if p, err := url.PathUnescape(u.EscapedPath()); err == nil {
		parts = append(parts, p)
	} else {
		parts = append(parts, u.EscapedPath())
	}
	for _, vs := range u.Query() {
		parts = append(parts, vs...)
	}
	return splitNonWord(strings.Join(parts, " "))
}

func splitNonWord(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}

// siteSuffixes returns host and each parent domain of it (not the top-level domain):
// www.a.example.org gives www.a.example.org, a.example.org, example.org.
func siteSuffixes(host string) []string {
	if host == "" {
		return nil
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i] // a port
	}
	out := []string{host}
	for {
		i := strings.IndexByte(host, '.')
		if i < 0 {
			break
		}
		host = host[i+1:]
		if !strings.Contains(host, ".") {
			break // the TLD alone
		}
		out = append(out, host)
	}
	return out
}

// decode rebuilds a Doc from its stored fields.
func decode(id string, doc bindex.Document) (Doc, error) {
	d := Doc{ID: id, Relevance: -1}
	var err error
	doc.VisitFields(func(f bindex.Field) {
		if err != nil {
			return
		}
		switch name := f.Name(); name {
		case storedPrefix + fieldTitle:
			d.Title = string(f.Value())
		case storedPrefix + fieldBody:
			d.Body = string(f.Value())
		case storedPrefix + fieldHeadings:
			d.Headings = string(f.Value())
		case storedPrefix + fieldDescription:
			d.Description = string(f.Value())
		case storedPrefix + fieldAnchors:
			d.Anchors = strings.Split(string(f.Value()), "\n")
		case storedPrefix + "url":
			d.URL = string(f.Value())
		case fieldKind:
			d.Kind = string(f.Value())
		case fieldHost:
			d.Host = string(f.Value())
		case storedPrefix + fieldLang:
			d.Lang = string(f.Value())
		case fieldCType:
			d.ContentType = string(f.Value())
		case fieldTopic:
			d.Topics = append(d.Topics, string(f.Value()))
		case fieldFetched:
			if dt, ok := f.(bindex.DateTimeField); ok {
				t, _, e := dt.DateTime()
				if e == nil {
					d.Fetched = t.UTC()
				}
			}
		case fieldRelevance:
			if nf, ok := f.(bindex.NumericField); ok {
				if x, e := nf.Number(); e == nil {
					d.Relevance = x
				}
			}
		case fieldRelevant:
			if bf, ok := f.(bindex.BooleanField); ok {
				if v, e := bf.Boolean(); e == nil {
					d.Relevant = v
				}
			}
		case fieldInLinks:
			if nf, ok := f.(bindex.NumericField); ok {
				if x, e := nf.Number(); e == nil {
					d.InLinks = int(x)
				}
			}
		case fieldFields:
			d.Fields, err = decodeFields(f.Value())
			if err != nil {
				err = fmt.Errorf("index: document %s: stored fields: %w", id, err)
			}
		}
	})
	return d, err
}
