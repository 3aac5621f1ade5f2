package index

import (
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2"
	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/sonda-search/sonda/query"
)

// filterBoost is the weight of metadata filters (site:, lang:...): they select documents
// and should not change text scores, but Bleve has no non-scoring clause and a zero
// weight would make a filter-only query's normalization divide by zero.
const filterBoost = 1e-6

// translation is a parsed query made into a Bleve query, with what ranking and snippets
// need to know about it.
type translation struct {
	q bq.Query
	// terms are the analyzed words and phrase words to highlight, by analyzer language.
	terms map[string]map[string]bool
	// text is the number of words and phrases looked for (0: a filter-only query).
	text int
}

type translator struct {
	r     Ranking
	langs []string // analyzer languages query words are analyzed in
	tr    translation
}

// translate turns a parsed query into a Bleve query. langs are the analyzer languages of
// the documents in the index (a top-level lang: filter narrows them).
func translate(n query.Node, r Ranking, langs []string) translation {
	t := &translator{r: r, langs: narrowLangs(n, langs)}
	t.tr.terms = map[string]map[string]bool{}
	main := t.node(n, true)
	if main == nil {
		main = bleve.NewMatchNoneQuery()
	}
	if r.Proximity > 0 {
		if pairs := t.proximity(n); len(pairs) > 0 {
			wrapper := bleve.NewBooleanQuery()
			wrapper.AddMust(main)
			wrapper.AddShould(pairs...)
			main = wrapper
		}
	}
	t.tr.q = main
	return t.tr
}

// narrowLangs keeps the languages a top-level lang: filter asks for.
func narrowLangs(n query.Node, langs []string) []string {
	var want []string
	collect := func(c query.Node) {
		if f, ok := c.(*query.Filter); ok && f.Name == "lang" {
			want = append(want, langCode(f.Value))
		}
	}
	if b, ok := n.(*query.Bool); ok {
		for _, c := range b.Must {
			collect(c)
		}
	} else {
		collect(n)
	}
	if len(want) == 0 {
		return langs
	}
	sort.Strings(want)
	return compactStrings(want)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// node translates n; positive says whether n counts toward what is looked for (it is not
// under a -). A node that analyzes to nothing (a stop word) gives nil.
func (t *translator) node(n query.Node, positive bool) bq.Query {
	switch n := n.(type) {
	case *query.Word:
		return t.word(n, positive)
	case *query.Phrase:
		return t.phrase(n, positive)
	case *query.Filter:
		return filter(n)
	case *query.DateRange:
		q := bleve.NewDateRangeQuery(n.From, n.To)
		q.SetField(fieldDate)
		q.SetBoost(filterBoost)
		return q
	case *query.Bool:
		return t.boolean(n, positive)
	}
	return nil
}

func (t *translator) boolean(n *query.Bool, positive bool) bq.Query {
	var must, should, not []bq.Query
	for _, c := range n.Must {
		if q := t.node(c, positive); q != nil {
			must = append(must, q)
		}
	}
	for _, c := range n.Should {
		if q := t.node(c, positive); q != nil {
			should = append(should, q)
		}
	}
	for _, c := range n.MustNot {
		if q := t.node(c, false); q != nil {
			not = append(not, q)
		}
	}
	if len(must)+len(should) == 0 {
		if len(not) == 0 {
			return nil
		}
		// Only exclusions left (the rest were stop words): everything but them.
		must = append(must, bleve.NewMatchAllQuery())
	}
	if len(not) == 0 {
		switch {
		case len(must) == 1 && len(should) == 0:
			return must[0]
		case len(must) == 0 && len(should) == 1:
			return should[0]
		case len(should) == 0:
			return bleve.NewConjunctionQuery(must...)
		case len(must) == 0:
			return bleve.NewDisjunctionQuery(should...)
		}
	}
	b := bleve.NewBooleanQuery()
	if len(must) > 0 {
		b.AddMust(must...)
	}
	if len(should) > 0 {
		b.AddShould(should...)
		if len(must) == 0 {
			b.SetMinShould(1)
		}
	}
	if len(not) > 0 {
		b.AddMustNot(not...)
	}
	return b
}

func filter(f *query.Filter) bq.Query {
	term := func(field, v string) bq.Query {
		q := bleve.NewTermQuery(v)
		q.SetField(field)
		q.SetBoost(filterBoost)
		return q
	}
	switch f.Name {
	case "site":
		return term(fieldSite, strings.TrimPrefix(f.Value, "*."))
	case "lang":
		return term(fieldLang, f.Value)
	case "topic":
		return term(fieldTopic, f.Value)
	case "type":
		// A kind (type:article), a media type (type:application/pdf) or a subtype (type:pdf).
		d := bleve.NewDisjunctionQuery(term(fieldKind, f.Value), term(fieldCType, f.Value), term(fieldCSub, f.Value))
		d.SetBoost(filterBoost)
		return d
	}
	return nil
}

func (t *translator) remember(code string, ts []string) {
	m := t.tr.terms[code]
	if m == nil {
		m = map[string]bool{}
		t.tr.terms[code] = m
	}
	for _, s := range ts {
		m[s] = true
	}
}

// analyzed returns the terms of s in language code, as phrase slots: one slot per
// position, nil where a stop word was.
func analyzed(code, s string) [][]string {
	ts := terms(code, s)
	if len(ts) == 0 {
		return nil
	}
	first := ts[0].Position
	slots := make([][]string, ts[len(ts)-1].Position-first+1)
	for _, tok := range ts {
		p := tok.Position - first
		slots[p] = append(slots[p], string(tok.Term))
	}
	return slots
}

func flatten(slots [][]string) []string {
	var out []string
	for _, s := range slots {
		out = append(out, s...)
	}
	return out
}

// match looks for analyzed slots in a field: a term query for one term, else a phrase.
func match(slots [][]string, field string, boost float64) bq.Query {
	if len(slots) == 1 && len(slots[0]) == 1 {
		q := bleve.NewTermQuery(slots[0][0])
		q.SetField(field)
		q.SetBoost(boost)
		return q
	}
	q := bq.NewMultiPhraseQuery(slots, field)
	q.SetBoost(boost)
	return q
}

// fieldsFor returns the text fields a word is looked for in, with their weights.
func (t *translator) fieldsFor(f query.Field) []string {
	switch f {
	case query.Title:
		return []string{fieldTitle}
	case query.URL:
		return nil
	}
	return textFields
}

func disjunction(qs []bq.Query) bq.Query {
	switch len(qs) {
	case 0:
		return nil
	case 1:
		return qs[0]
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// text looks for the words of s (a word or a phrase) in field group f of every language.
// A single word that is a stop word in any of those languages is dropped altogether, so
// that "the" does not become a required word for documents in languages that do not
// know it as one: stop words are the union of the languages' lists.
func (t *translator) text(f query.Field, s string, positive bool) bq.Query {
	if !strings.ContainsAny(strings.TrimSpace(s), " \t") {
		for _, code := range t.langs {
			if analyzed(code, s) == nil {
				return nil
			}
		}
	}
	var perLang []bq.Query
	for _, code := range t.langs {
		slots := analyzed(code, s)
		if slots == nil {
			continue
		}
		if positive {
			t.remember(code, flatten(slots))
		}
		var fq []bq.Query
		for _, name := range t.fieldsFor(f) {
			if w := t.r.fieldWeight(name); w > 0 {
				fq = append(fq, match(slots, langField(name, code), w))
			}
		}
		if q := disjunction(fq); q != nil {
			perLang = append(perLang, q)
		}
	}
	if f == query.Default || f == query.URL {
		w := t.r.URL
		if f == query.URL {
			w = 1
		}
		if slots := analyzed(neutral, s); slots != nil && w > 0 {
			perLang = append(perLang, match(slots, fieldURL, w))
		}
	}
	q := disjunction(perLang)
	if q != nil && positive {
		t.tr.text++
	}
	return q
}

func (t *translator) word(w *query.Word, positive bool) bq.Query {
	return t.text(w.Field, w.Text, positive)
}

func (t *translator) phrase(p *query.Phrase, positive bool) bq.Query {
	return t.text(p.Field, p.Text, positive)
}

// proximity returns, for each pair of adjacent words the query looks for (in the order
// typed, at the top level or in any group), a clause that scores documents where the two
// words appear side by side: the sequential-dependence idea of Metzler and Croft (2005)
// reduced to ordered bigrams.
func (t *translator) proximity(n query.Node) []bq.Query {
	var out []bq.Query
	var visit func(n query.Node)
	visit = func(n query.Node) {
		b, ok := n.(*query.Bool)
		if !ok {
			return
		}
		var words []*query.Word
		for _, group := range [][]query.Node{b.Must, b.Should} {
			for _, c := range group {
				if w, ok := c.(*query.Word); ok && w.Field == query.Default {
					words = append(words, w)
				}
				visit(c)
			}
		}
		sort.Slice(words, func(i, j int) bool { return words[i].At < words[j].At })
		for i := 1; i < len(words); i++ {
			if q := t.pair(words[i-1].Text + " " + words[i].Text); q != nil {
				out = append(out, q)
			}
		}
	}
	visit(n)
	return out
}

func (t *translator) pair(s string) bq.Query {
	var qs []bq.Query
	for _, code := range t.langs {
		slots := analyzed(code, s)
		if len(slots) != 2 || slots[0] == nil || slots[1] == nil {
			continue // a stop word, or a word that is itself several terms
		}
		for _, name := range []string{fieldTitle, fieldBody} {
			if w := t.r.fieldWeight(name) * t.r.Proximity; w > 0 {
				qs = append(qs, match(slots, langField(name, code), w))
			}
		}
	}
	return disjunction(qs)
}
