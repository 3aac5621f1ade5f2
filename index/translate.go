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
	stats *bm25fStats
	tr    translation
}

// translate turns a parsed query into a Bleve query. langs are the analyzer languages of
// the documents in the index (a top-level lang: filter narrows them).
func translate(n query.Node, r Ranking, langs []string, stats *bm25fStats) translation {
	t := &translator{r: r, langs: narrowLangs(n, langs), stats: stats}
	t.tr.terms = map[string]map[string]bool{}
	main := t.node(n, true)
	if main == nil {
		main = bleve.NewMatchNoneQuery()
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
		if n.Field == query.Default || n.Field == query.Title {
			return t.words(subWords(n), true, positive)
		}
		return t.text(n.Field, n.Text, positive)
	case *query.Phrase:
		return t.phrase(n, positive)
	case *query.Filter:
		return filter(n)
	case *query.DateRange:
		q := bleve.NewDateRangeQuery(n.From, n.To)
		q.SetField(fieldDate)
		return &constQuery{q: q, score: filterBoost}
	case *query.Bool:
		return t.boolean(n, positive)
	}
	return nil
}

// flatten splices nested groups that mean the same as their parent: a group of required
// clauses among required clauses ("a (b -c)" under AND is a, b and not c), a group of
// optional clauses among optional ones ("a OR (b OR c)").
func flatten(n *query.Bool) (must, should, not []query.Node) {
	for _, c := range n.Must {
		if b, ok := c.(*query.Bool); ok && len(b.Should) == 0 {
			m, _, x := flatten(b)
			must, not = append(must, m...), append(not, x...)
			continue
		}
		must = append(must, c)
	}
	for _, c := range n.Should {
		if b, ok := c.(*query.Bool); ok && len(b.Must) == 0 && len(b.MustNot) == 0 {
			_, sh, _ := flatten(b)
			should = append(should, sh...)
			continue
		}
		should = append(should, c)
	}
	return must, should, append(not, n.MustNot...)
}

// subWords splits a word at its word boundaries ("boundary-layer" is boundary and layer):
// each part is scored as a word of its own, and the proximity score rewards them for
// standing together.
func subWords(w *query.Word) []*query.Word {
	ts := terms(neutral, w.Text)
	if len(ts) <= 1 {
		return []*query.Word{w}
	}
	out := make([]*query.Word, 0, len(ts))
	for _, tok := range ts {
		out = append(out, &query.Word{Field: w.Field, Text: w.Text[tok.Start:tok.End], At: w.At + tok.Start})
	}
	return out
}

func (t *translator) boolean(n *query.Bool, positive bool) bq.Query {
	mustNodes, shouldNodes, notNodes := flatten(n)
	// Plain words are scored together by BM25F, one clause per group: the required words,
	// the optional ones.
	group := func(children []query.Node, all bool) []bq.Query {
		var out []bq.Query
		var plain []*query.Word
		for _, c := range children {
			if w, ok := c.(*query.Word); ok && (w.Field == query.Default || w.Field == query.Title) {
				for _, sub := range subWords(w) {
					if t.bm25fWord(sub) != nil {
						plain = append(plain, sub)
					}
				}
				continue
			}
			if q := t.node(c, positive); q != nil {
				out = append(out, q)
			}
		}
		if q := t.words(plain, all, positive); q != nil {
			out = append(out, q)
		}
		return out
	}
	must := group(mustNodes, true)
	should := group(shouldNodes, false)
	var not []bq.Query
	for _, c := range notNodes {
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
	var optional bq.Query
	if len(should) > 0 {
		optional = disjunction(should)
	}
	if len(not) == 0 {
		switch {
		case len(must) == 0:
			return optional
		case len(should) == 0 && len(must) == 1:
			return must[0]
		case len(should) == 0:
			return bleve.NewConjunctionQuery(must...)
		}
	}
	b := bleve.NewBooleanQuery()
	if len(must) > 0 {
		b.AddMust(must...)
	}
	if optional != nil {
		// One optional clause: Bleve's coordination factor over it is 1.
		b.AddShould(optional)
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
	case "format", "crs", "producer":
		// Dataset filters: the typed fields of that name (see datasetFacets).
		return term(typedPrefix+f.Name, f.Value)
	case "bbox":
		b, err := query.ParseBBox(f.Value)
		if err != nil {
			return bleve.NewMatchNoneQuery() // the parser validated it; never here
		}
		return &constQuery{q: bboxQuery(b), score: filterBoost}
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

func flattenSlots(slots [][]string) []string {
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

// disjunction matches any of qs, scoring the sum of those that match (see sumQuery).
func disjunction(qs []bq.Query) bq.Query {
	switch len(qs) {
	case 0:
		return nil
	case 1:
		return qs[0]
	}
	return &sumQuery{clauses: qs}
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
			t.remember(code, flattenSlots(slots))
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

func (t *translator) phrase(p *query.Phrase, positive bool) bq.Query {
	return t.text(p.Field, p.Text, positive)
}

// bm25fWord returns the word's term in each language, or nil when it is not a plain word
// for BM25F: in a field group other than the default and title, or analyzed to other than
// exactly one term in some language (a stop word, or "boundary-layer", which is a phrase).
func (t *translator) bm25fWord(w *query.Word) *bm25fWord {
	if w.Field != query.Default && w.Field != query.Title {
		return nil
	}
	bw := &bm25fWord{terms: make(map[string]string, len(t.langs))}
	for _, code := range t.langs {
		ts := terms(code, w.Text)
		if len(ts) != 1 {
			return nil
		}
		bw.terms[code] = string(ts[0].Term)
	}
	if w.Field == query.Default {
		if ts := terms(neutral, w.Text); len(ts) == 1 {
			bw.urlTerm = string(ts[0].Term)
		}
	}
	return bw
}

// words makes the BM25F clause of plain words (in query order), one per field group; nil
// when there are none.
func (t *translator) words(ws []*query.Word, all, positive bool) bq.Query {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].At < ws[j].At })
	byField := map[query.Field][]bm25fWord{}
	var order []query.Field
	for _, w := range ws {
		bw := t.bm25fWord(w)
		if bw == nil {
			continue
		}
		if _, seen := byField[w.Field]; !seen {
			order = append(order, w.Field)
		}
		byField[w.Field] = append(byField[w.Field], *bw)
		if positive {
			for code, term := range bw.terms {
				t.remember(code, []string{term})
			}
			t.tr.text++
		}
	}
	var qs []bq.Query
	for _, f := range order {
		q := &bm25fQuery{words: byField[f], all: all, fields: t.fieldsFor(f), r: t.r, stats: t.stats, prox: t.r.Proximity}
		qs = append(qs, q)
	}
	switch {
	case len(qs) == 0:
		return nil
	case len(qs) == 1:
		return qs[0]
	case all:
		return bleve.NewConjunctionQuery(qs...)
	}
	return disjunction(qs)
}
