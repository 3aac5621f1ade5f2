package index

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/sonda-search/sonda/query"
)

// This file lets a collection split over several indexes (shards: the nodes of a cluster)
// rank as one index over all of it would. BM25F takes document frequencies, document counts
// and average field lengths from its index, and the blend with link rank and relevance
// normalizes by the best text score, so neither a shard's scores nor its order mean
// anything next to another shard's. The search therefore runs in three phases, as
// Elasticsearch's dfs_query_then_fetch:
//
//  1. ShardStats: every shard counts its documents, field lengths and the documents holding
//     each term the query looks up; the gatherer adds them up (CollectionStats.Add).
//  2. ShardSearch: every shard ranks with the whole collection's statistics and returns its
//     best hits with their text scores and the raw signals of the blend (topic relevance,
//     link prior and in-link count); Gather merges them and blends, with the same code as
//     Search (blendHits), and counts facets over the best results of all shards.
//  3. ShardFetch: the shards holding the page's results return them with their snippets.
//
// What is equal to one index: text scores (every statistic BM25F and Bleve's clauses use is
// the collection's), topic relevance (a document's own), the blend and its window, totals,
// facets and pages. What is not: the link prior is whatever each shard's link graph says
// (a cluster makes in-link counts global by routing in-edges with the links, and PageRank
// global by storing the ranks its leader computed over the whole graph; package cluster),
// and the order of exactly equal scores: one index orders them by internal document
// number, which depends on how its segments lie, a split collection by shard and then by
// each shard's internal number.

// ShardRequest is a search as one shard of a split collection answers it. The gatherer
// fills every field, so that all shards rank alike whatever their own configuration.
type ShardRequest struct {
	Query    string  `json:"q"`
	Operator string  `json:"operator,omitempty"` // "and" or "or" ("": the shard's own)
	Kind     string  `json:"kind,omitempty"`
	Ranking  Ranking `json:"ranking"`
	// Need is how many of the best results the page needs (its last one's rank).
	Need   int  `json:"need,omitempty"`
	Facets bool `json:"facets,omitempty"`
	// Depth is the deepest result served (the gatherer's MaxResults).
	Depth int `json:"depth,omitempty"`
	// Langs are the analyzer languages the query's words are looked up in: the
	// collection's (ShardStats counts the terms of these; ShardFetch highlights them).
	Langs []string `json:"langs,omitempty"`
	// Links says some shard has a link graph, so the link prior takes part in the blend.
	Links bool `json:"links,omitempty"`
	// Now is the gatherer's time, which every shard counts the date facet's buckets from
	// (zero: the shard's own), so that their counts add up.
	Now time.Time `json:"now,omitzero"`
}

// CollectionStats are the counts scoring needs, of one shard or (added up) of a whole
// collection, for one query's terms.
type CollectionStats struct {
	Docs    int64                        `json:"docs"`    // documents (BM25F's N)
	Indexed uint64                       `json:"indexed"` // Bleve's document count (the N of its term clauses)
	Topic   int64                        `json:"topic"`   // documents with a topic relevance
	Langs   map[string]int64             `json:"langs"`   // documents per analyzer language
	Fields  map[string]FieldTotal        `json:"fields"`  // per indexed text field
	Terms   map[string]map[string]uint64 `json:"terms"`   // field → term → documents holding it
	Links   bool                         `json:"links,omitempty"`
}

// FieldTotal is how many documents have a field and their total analyzed length.
type FieldTotal struct {
	Docs   int64 `json:"docs"`
	Length int64 `json:"length"`
}

// Add adds o's counts to s.
func (s *CollectionStats) Add(o *CollectionStats) {
	if s.Langs == nil {
		s.Langs = map[string]int64{}
	}
	if s.Fields == nil {
		s.Fields = map[string]FieldTotal{}
	}
	if s.Terms == nil {
		s.Terms = map[string]map[string]uint64{}
	}
	s.Docs += o.Docs
	s.Indexed += o.Indexed
	s.Topic += o.Topic
	s.Links = s.Links || o.Links
	for l, n := range o.Langs {
		s.Langs[l] += n
	}
	for f, t := range o.Fields {
		st := s.Fields[f]
		st.Docs += t.Docs
		st.Length += t.Length
		s.Fields[f] = st
	}
	for f, terms := range o.Terms {
		m := s.Terms[f]
		if m == nil {
			m = make(map[string]uint64, len(terms))
			s.Terms[f] = m
		}
		for t, n := range terms {
			m[t] += n
		}
	}
}

// Languages are the analyzer languages of the documents counted (every one when there are
// none), sorted: what ShardRequest.Langs should be.
func (s *CollectionStats) Languages() []string { return languagesOf(s.Langs) }

func (s *CollectionStats) fieldStats() fieldStats {
	fs := newFieldStats()
	fs.docs, fs.topic = s.Docs, s.Topic
	for l, n := range s.Langs {
		fs.langs[l] = n
	}
	for f, t := range s.Fields {
		fs.fields[f] = &fieldTotal{docs: t.Docs, length: t.Length}
	}
	return fs
}

func (s *fieldStats) export() *CollectionStats {
	cs := &CollectionStats{Docs: s.docs, Topic: s.topic, Langs: make(map[string]int64, len(s.langs)),
		Fields: make(map[string]FieldTotal, len(s.fields)), Terms: map[string]map[string]uint64{}}
	for l, n := range s.langs {
		if n != 0 {
			cs.Langs[l] = n
		}
	}
	for f, t := range s.fields {
		if t.docs != 0 {
			cs.Fields[f] = FieldTotal{Docs: t.docs, Length: t.length}
		}
	}
	return cs
}

// globalCounts are a collection's document count and term document frequencies, which
// countsReader gives Bleve's searchers and sonda's BM25F in place of the shard's own.
type globalCounts struct {
	docs  uint64
	terms map[string]map[string]uint64
}

// countsReader is an index reader whose document count and term document frequencies are
// a whole collection's (counts set), or which records the terms looked up and their
// local frequencies (recorded set).
type countsReader struct {
	bindex.IndexReader
	counts   *globalCounts
	recorded map[string]map[string]uint64
}

func (c *countsReader) DocCount() (uint64, error) {
	if c.counts != nil {
		return c.counts.docs, nil
	}
	return c.IndexReader.DocCount()
}

func (c *countsReader) TermFieldReader(ctx context.Context, term []byte, field string, freq, norm, vectors bool) (bindex.TermFieldReader, error) {
	r, err := c.IndexReader.TermFieldReader(ctx, term, field, freq, norm, vectors)
	if err != nil {
		return nil, err
	}
	if n := c.termCount(string(term), field, r.Count()); n != r.Count() {
		return &countedTerms{TermFieldReader: r, count: n}, nil
	}
	return r, nil
}

// termCount is the document frequency of term in field that searches through c score
// with, the shard having local: the collection's when c gives a collection's counts; it
// records local when c records the terms looked up.
func (c *countsReader) termCount(term, field string, local uint64) uint64 {
	if c.recorded != nil {
		m := c.recorded[field]
		if m == nil {
			m = map[string]uint64{}
			c.recorded[field] = m
		}
		m[term] = local
		return local
	}
	if c.counts != nil {
		// A term the statistics phase did not see (written since) keeps its local count.
		if n, ok := c.counts.terms[field][term]; ok {
			return n
		}
	}
	return local
}

// FieldDictContains passes Bleve's optional dictionary lookup through (range searchers use
// it to expand ranges to the terms the index holds).
func (c *countsReader) FieldDictContains(field string) (bindex.FieldDictContains, error) {
	if irc, ok := c.IndexReader.(bindex.IndexReaderContains); ok {
		return irc.FieldDictContains(field)
	}
	return nil, fmt.Errorf("index: the reader cannot look terms up in field %s", field)
}

// countedTerms is a term's postings in this shard with the collection's document count.
type countedTerms struct {
	bindex.TermFieldReader
	count uint64
}

func (c *countedTerms) Count() uint64 { return c.count }

// view is the ranking view of a collection's statistics.
func (s *CollectionStats) view(links bool, depth int) *view {
	fs := s.fieldStats()
	v := fs.view(s.Languages(), links, depth)
	v.global = &globalCounts{docs: s.Indexed, terms: s.Terms}
	return v
}

// shardQuery parses a shard request.
func (ix *Index) shardQuery(req ShardRequest) (query.Node, query.Operator, Ranking, error) {
	op := ix.opts.Implicit
	if req.Operator != "" {
		o, err := query.ParseOperator(req.Operator)
		if err != nil {
			return nil, op, Ranking{}, &QueryError{Pos: 0, Msg: err.Error()}
		}
		op = o
	}
	r := req.Ranking.withDefaults()
	if err := r.validate(); err != nil {
		return nil, op, r, err
	}
	if req.Depth < 0 || req.Need < 0 {
		return nil, op, r, fmt.Errorf("index: shard request: need %d and depth %d must not be negative", req.Need, req.Depth)
	}
	n, err := query.Parse(req.Query, query.Options{Implicit: op})
	if err != nil {
		return nil, op, r, err
	}
	return n, op, r, nil
}

// ShardStats is the statistics phase: this index's counts, and the documents holding each
// term the query (translated for req.Langs; with its relaxation to OR, when it has one)
// looks up.
func (ix *Index) ShardStats(ctx context.Context, req ShardRequest) (cs *CollectionStats, err error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	n, op, r, err := ix.shardQuery(req)
	if err != nil {
		return nil, err
	}
	ix.statsMu.RLock()
	cs = ix.stats.export()
	ix.statsMu.RUnlock()
	cs.Links = ix.opts.Links != nil
	rd, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if cs.Indexed, err = rd.DocCount(); err != nil {
		return nil, fmt.Errorf("index: count documents: %w", err)
	}
	if n == nil {
		return cs, nil
	}
	defer func() {
		if p := recover(); p != nil {
			cs, err = nil, fmt.Errorf("index: search failed inside Bleve: %v", p)
		}
	}()
	langs := req.Langs
	if len(langs) == 0 {
		langs = languagesOf(cs.Langs)
	}
	// Every field of every language is looked up, present here or not: another shard may
	// have it.
	every := &bm25fStats{docs: 1, langs: map[string]float64{}, avgLen: map[string]float64{fieldURL: 1}}
	for _, l := range langs {
		every.langs[l] = 1
		for _, f := range textFields {
			every.avgLen[langField(f, l)] = 1
		}
	}
	rec := &countsReader{IndexReader: rd, recorded: cs.Terms}
	record := func(n query.Node) error {
		q := withKind(translate(n, r, langs, every).q, normKind(req.Kind))
		s, err := q.Searcher(ctx, rec, ix.bi.Mapping(), search.SearcherOptions{})
		if err != nil {
			return fmt.Errorf("index: search %q: %w", n.String(), err)
		}
		return s.Close()
	}
	if err := record(n); err != nil {
		return nil, err
	}
	if op == query.And && relaxable(n) {
		if n2, err := query.Parse(req.Query, query.Options{Implicit: query.Or}); err == nil && n2 != nil {
			if err := record(n2); err != nil {
				return nil, err
			}
		}
	}
	return cs, nil
}

// ShardHits is one shard's answer to the search phase.
type ShardHits struct {
	Total uint64     `json:"total"`
	Hits  []ShardHit `json:"hits"` // by text score, best first
	// Facets are the shard's facet counts over every match of the query (with Facets):
	// every value of each keyword facet, best first, and the date buckets from the
	// request's Now, without filters. Gather adds them up over the shards: the counts of
	// the whole collection, exact, as one index counts them.
	Facets map[string][]FacetCount `json:"facet_counts,omitempty"`
	// FacetsOver is how many documents Facets count (ShardHits.Total, unless the search
	// ran out of time).
	FacetsOver int    `json:"facets_over,omitempty"`
	Query      string `json:"query"` // canonical form
	// FilterOnly says the query has no words, only filters.
	FilterOnly bool `json:"filter_only,omitempty"`
	// Relaxable says the query is words that OR can relax when no document has them all.
	Relaxable bool `json:"relaxable,omitempty"`
	// Words is how many words and phrases the query scores text with, which feedback's
	// share of the score is divided among (GatherFeedback).
	Words int `json:"words,omitempty"`
}

// ShardHit is one of a shard's best results with the signals the blend needs.
type ShardHit struct {
	ID        string  `json:"id"`
	Text      float64 `json:"text"`      // text score, from the collection's statistics
	Relevance float64 `json:"relevance"` // topic relevance (-1: none or not read)
	// Linked says the shard's link graph gave InLinks and Prior.
	Linked  bool    `json:"linked,omitempty"`
	InLinks int     `json:"inlinks,omitempty"`
	Prior   float64 `json:"prior,omitempty"`
}

// Validate reports whether h is well formed, as Gather needs it: no negative count, and
// only the date facet's buckets in its date facet.
func (h *ShardHits) Validate() error {
	if h.FacetsOver < 0 {
		return fmt.Errorf("index: shard hits: facets over %d documents", h.FacetsOver)
	}
	for name, counts := range h.Facets {
		for _, c := range counts {
			if c.Count < 0 {
				return fmt.Errorf("index: shard hits: facet %s value %q counted %d times", name, c.Value, c.Count)
			}
			if name == FacetDate && dateBucket(c.Value) < 0 {
				return fmt.Errorf("index: shard hits: date facet bucket %q is not one of sonda's", c.Value)
			}
		}
	}
	return nil
}

// dateBucket is the number of the date facet's bucket labelled label (-1: none).
func dateBucket(label string) int {
	for i, b := range dateBuckets {
		if b.label == label {
			return i
		}
	}
	return -1
}

// ShardSearch is the search phase: the shard's best hits ranked with the collection's
// statistics, unblended.
func (ix *Index) ShardSearch(ctx context.Context, req ShardRequest, global *CollectionStats) (*ShardHits, error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	n, op, r, err := ix.shardQuery(req)
	if err != nil {
		return nil, err
	}
	out := &ShardHits{Hits: []ShardHit{}}
	if n == nil {
		return out, nil
	}
	out.Query, out.Relaxable = n.String(), op == query.And && relaxable(n)
	depth := req.Depth
	if depth <= 0 {
		depth = ix.opts.MaxResults
	}
	v := global.view(req.Links, depth)
	v.counting = facetCounting{now: req.Now, every: true}
	rk, err := ix.rank(ctx, n, r, normKind(req.Kind), max(req.Need, 1), req.Facets, v)
	if err != nil {
		return nil, err
	}
	out.Total, out.FilterOnly, out.Words = rk.total, rk.tr.text == 0, rk.tr.text
	out.Hits = make([]ShardHit, len(rk.hits))
	for i, h := range rk.hits {
		sh := ShardHit{ID: h.id, Text: h.text, Relevance: h.relevance}
		if s, ok := rk.signals[h.id]; ok {
			sh.Linked, sh.InLinks, sh.Prior = true, s.inLinks, s.prior
		}
		out.Hits[i] = sh
	}
	if req.Facets {
		out.Facets, out.FacetsOver = rk.facets, rk.facetOver
	}
	return out, nil
}

// ShardFetch is the fetch phase: the stored documents of ids as results, with snippets
// for the query's words (in req.Langs) and in-link counts; a document deleted since shows
// only its ID.
func (ix *Index) ShardFetch(ctx context.Context, req ShardRequest, ids []string) ([]Hit, error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	n, _, r, err := ix.shardQuery(req)
	if err != nil {
		return nil, err
	}
	langs := req.Langs
	if len(langs) == 0 {
		langs = ix.languages()
	}
	tr := translation{terms: map[string]map[string]bool{}}
	if n != nil {
		tr = translate(n, r, langs, &bm25fStats{langs: map[string]float64{}, avgLen: map[string]float64{}})
	}
	out := make([]Hit, 0, len(ids))
	for _, id := range ids {
		h, err := ix.resultHit(ctx, scored{id: id, relevance: -1}, tr, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// Gathered is a page of results merged from the shards of a collection.
type Gathered struct {
	// Result is the page. Its hits carry ID, URL (the ID), score and relevance, and
	// in-link count when a link graph gave it; the fetch phase fills in the rest.
	Result *Result
	// Shards are the shard (the index in the parts given to Gather) of each hit.
	Shards []int
	// Relaxable says the query is words that OR can relax, should no document have them
	// all (Total 0): search again with operator "or" and mark the result Relaxed.
	Relaxable bool
}

// Gather merges the shards' answers to the search phase into the page req asks for, as
// one index over the whole collection (with statistics global) would rank it. Missing
// shards are nil parts; a part that does not Validate is an error.
func Gather(req Request, r Ranking, depth int, global *CollectionStats, parts []*ShardHits, now time.Time) (*Gathered, error) {
	return gather(req.Normalized(), r, depth, global, parts, now)
}

// GatherFirst is Gather for the best n results of req's query as one page, n not limited
// to a page's size (FillGathered's inputs).
func GatherFirst(req Request, n int, r Ranking, depth int, global *CollectionStats, parts []*ShardHits, now time.Time) (*Gathered, error) {
	req = req.Normalized()
	req.Page, req.PerPage = 1, max(n, 1)
	return gather(req, r, depth, global, parts, now)
}

func gather(req Request, r Ranking, depth int, global *CollectionStats, parts []*ShardHits, now time.Time) (*Gathered, error) {
	r = r.withDefaults()
	if depth <= 0 {
		depth = defaultMaxResults
	}
	res := &Result{Page: req.Page, PerPage: req.PerPage, Hits: []Hit{}}
	type fromShard struct {
		scored
		shard int
	}
	var all []fromShard
	facets := map[facetValue]int{} // every shard's counts, added up
	dates := make([]int, len(dateBuckets))
	facetsOver := 0
	signals := map[string]linkSignal{}
	filterOnly, relaxable := false, false
	for i, p := range parts {
		if p == nil {
			continue
		}
		res.Total += p.Total
		if res.Query == "" {
			res.Query = p.Query
		}
		filterOnly = filterOnly || p.FilterOnly
		relaxable = relaxable || p.Relaxable
		for _, h := range p.Hits {
			all = append(all, fromShard{scored{id: h.ID, text: h.Text, score: h.Text, relevance: h.Relevance}, i})
			if h.Linked {
				signals[h.ID] = linkSignal{inLinks: h.InLinks, prior: h.Prior}
			}
		}
		if err := p.Validate(); err != nil {
			return nil, err
		}
		addFacets(facets, dates, p.Facets)
		facetsOver += p.FacetsOver
	}
	// Best text first; equal scores in shard order, each shard's in its own order (by
	// internal document number, as one index orders them), so that a deeper page extends
	// a shallower one.
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].text != all[j].text {
			return all[i].text > all[j].text
		}
		return all[i].shard < all[j].shard
	})
	need := req.Page * req.PerPage
	useRelevance := r.Relevance > 0 && global.Topic > 0
	blend := r.Link > 0 && global.Links || useRelevance || filterOnly
	size := need
	if blend {
		size = max(need, r.Window)
	}
	all = all[:min(len(all), size, depth)]
	hits := make([]scored, len(all))
	shardOf := make(map[string]int, len(all))
	for i, h := range all {
		hits[i] = h.scored
		shardOf[h.id] = h.shard
	}
	if blend {
		blendHits(blendRanking(r, useRelevance), hits, signals, global.Links, filterOnly)
	}
	res.Pages = (min(int(res.Total), depth) + req.PerPage - 1) / req.PerPage
	if req.Facets {
		t := newFacetTally(facetCounting{now: now})
		for v, n := range facets {
			t.value(v, n)
		}
		copy(t.dates, dates)
		res.Facets, res.FacetsOver = t.result(), facetsOver
	}
	out := &Gathered{Result: res}
	from := (req.Page - 1) * req.PerPage
	for _, h := range hits[min(from, len(hits)):min(need, len(hits))] {
		hit := Hit{ID: h.id, URL: h.id, Score: h.score, Relevance: h.relevance}
		if s, ok := signals[h.id]; ok {
			hit.InLinks = s.inLinks
		}
		res.Hits = append(res.Hits, hit)
		out.Shards = append(out.Shards, shardOf[h.id])
	}
	out.Relaxable = relaxable
	return out, nil
}

// addFacets adds a shard's facet counts (ShardHits.Facets, validated) to facets and, for
// the date facet, to dates (by bucket).
func addFacets(facets map[facetValue]int, dates []int, counts map[string][]FacetCount) {
	for name, fc := range counts {
		for _, c := range fc {
			if name == FacetDate {
				dates[dateBucket(c.Value)] += c.Count
			} else {
				facets[facetValue{name, c.Value}] += c.Count
			}
		}
	}
}

// FillGathered is Search's filling of an implicit-AND query that fewer than FillBelow
// documents fully match, for gathered answers: all is the AND query gathered for its first
// max(need, FillBelow) results, some the OR query gathered for its first need + len(all's
// hits), where need is req.Page × req.PerPage. It returns req's page of all's documents
// followed by some's others, ranked as one index ranks them, Relaxed, with AllWords.
func FillGathered(req Request, depth int, all, some *Gathered) *Gathered {
	req = req.Normalized()
	if depth <= 0 {
		depth = defaultMaxResults
	}
	type hitAt struct {
		Hit
		shard int
	}
	wrap := func(g *Gathered) []hitAt {
		out := make([]hitAt, len(g.Result.Hits))
		for i, h := range g.Result.Hits {
			out[i] = hitAt{h, g.Shards[i]}
		}
		return out
	}
	merged := fillOrder(wrap(all), wrap(some), func(h *hitAt) string { return h.ID }, func(h *hitAt) *float64 { return &h.Score })
	res := *some.Result
	res.Page, res.PerPage, res.Relaxed, res.AllWords = req.Page, req.PerPage, true, all.Result.Total
	res.Pages = (min(int(res.Total), depth) + req.PerPage - 1) / req.PerPage
	res.Hits = []Hit{}
	out := &Gathered{Result: &res, Relaxable: some.Relaxable || all.Relaxable}
	from, need := (req.Page-1)*req.PerPage, req.Page*req.PerPage
	for _, h := range merged[min(from, len(merged)):min(need, len(merged))] {
		res.Hits = append(res.Hits, h.Hit)
		out.Shards = append(out.Shards, h.shard)
	}
	return out
}
