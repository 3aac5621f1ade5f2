package index

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/sonda-search/sonda/query"
)

// QueryError is a malformed query: Pos is the byte offset of the problem in the query and
// Msg says what is wrong and how to fix it. Search returns it (as *QueryError) for every
// query it cannot parse, so a web layer can answer 400 with the message.
type QueryError = query.Error

// Request is a search.
type Request struct {
	Query   string `json:"q"`
	Page    int    `json:"page"`     // from 1 (0 means 1)
	PerPage int    `json:"per_page"` // default 10, at most 100
	Kind    string `json:"kind"`     // only documents of this kind ("": all)
	Facets  bool   `json:"facets"`
	// Operator overrides the index's implicit operator for this request: "and" or "or"
	// ("": the index's).
	Operator string `json:"operator,omitempty"`
	// Ranking overrides the index's ranking for this request (nil: the index's). A field
	// weight of 0 leaves that field out of matching: the geo vertical's "direct" search
	// looks for place names in a dataset's own metadata and anchors but not in its
	// producer's pages.
	Ranking *Ranking `json:"-"`
}

// Result is one page of results.
type Result struct {
	Total   uint64                  `json:"total"` // documents matching
	Took    time.Duration           `json:"took"`
	Hits    []Hit                   `json:"hits"`
	Facets  map[string][]FacetCount `json:"facets,omitempty"`
	Query   string                  `json:"query"` // the query as understood, in canonical form
	Page    int                     `json:"page"`
	PerPage int                     `json:"per_page"`
	// Pages is how many pages can be shown: results beyond MaxResults are never served.
	Pages int `json:"pages"`
	// Relaxed says fewer documents had every word than fill the page: the AllWords that
	// have them all come first, then documents with some of the words (OR).
	Relaxed  bool   `json:"relaxed,omitempty"`
	AllWords uint64 `json:"all_words,omitempty"`
	// Cached says the result came from the result cache.
	Cached bool `json:"cached,omitempty"`
	// FacetsOver is how many documents the facet counts describe. On one index that is
	// every match, Total (a relaxed result's: every document with some of the words), so
	// each count is exact: how many matches the facet's filter keeps. It exceeds Total only
	// in a Partial result, whose Total counts the matches seen while its facets count them
	// all. Gathered from the shards of a split collection (cluster/search), it is the
	// shards' FacetsOver added up: every match there too.
	FacetsOver int `json:"facets_over,omitempty"`
	// Shards is how many shards of a collection split over several indexes were asked
	// (see cluster/search; 0 for one index), and Missing names those that did not answer:
	// the results are then those of the others only.
	Shards  int      `json:"shards,omitempty"`
	Missing []string `json:"missing_shards,omitempty"`
	// Partial says the search stopped at its time budget (Options.Budget): the hits are the
	// best of the matches it had seen, and Total counts those (a lower bound).
	Partial bool `json:"partial,omitempty"`
}

// Hit is one result.
type Hit struct {
	ID          string         `json:"id"`
	Kind        string         `json:"kind"`
	URL         string         `json:"url"`
	Title       string         `json:"title"`
	Snippet     string         `json:"snippet"` // HTML: escaped text, query words in <mark>
	Score       float64        `json:"score"`
	Fetched     time.Time      `json:"fetched"`
	Date        time.Time      `json:"date"` // published (for articles) or fetched
	Host        string         `json:"host"`
	Lang        string         `json:"lang,omitempty"`
	ContentType string         `json:"content_type,omitempty"`
	InLinks     int            `json:"inlinks"`
	Relevance   float64        `json:"relevance"` // -1 without a topic
	Fields      map[string]any `json:"fields,omitempty"`
}

// FacetCount is one value of a facet with the number of matching documents that have it.
// Filter is the query-language filter that selects it (site:example.org, after:2024-05-01...),
// ready to be added to the query.
type FacetCount struct {
	Value  string `json:"value"`
	Count  int    `json:"count"`
	Filter string `json:"filter"`
}

// Facet names in Result.Facets.
const (
	FacetSite = "site"
	FacetType = "type"
	FacetLang = "lang"
	FacetDate = "date"
	// Facets of geographic datasets, from their typed fields of the same names (see
	// datasetFacets); only results that have the field count.
	FacetFormat   = "format"
	FacetCRS      = "crs"
	FacetProducer = "producer"
)

// datasetFacets are the typed fields counted as facets of their own name, each with the
// query-language filter of that name.
var datasetFacets = []string{FacetFormat, FacetCRS, FacetProducer}

const maxPerPage = 100

// Normalized is req with its defaults: page 1, 10 per page (at most 100), kind lowercased.
func (req Request) Normalized() Request {
	if req.Page <= 0 {
		req.Page = 1
	}
	if req.PerPage <= 0 {
		req.PerPage = 10
	}
	req.PerPage = min(req.PerPage, maxPerPage)
	req.Kind = normKind(req.Kind)
	return req
}

func normKind(kind string) string { return strings.ToLower(strings.TrimSpace(kind)) }

// withKind narrows q to the documents of kind ("": all).
func withKind(q bq.Query, kind string) bq.Query {
	if kind == "" {
		return q
	}
	kq := bleve.NewTermQuery(kind)
	kq.SetField(fieldKind)
	kq.SetBoost(filterBoost)
	return bleve.NewConjunctionQuery(q, kq)
}

// Search runs a query. A malformed query returns a *QueryError; an empty one an empty
// result.
func (ix *Index) Search(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	if ix.closed.Load() {
		return nil, errClosed
	}
	req = req.Normalized()
	op := ix.opts.Implicit
	if req.Operator != "" {
		o, err := query.ParseOperator(req.Operator)
		if err != nil {
			return nil, &QueryError{Pos: 0, Msg: err.Error()}
		}
		op = o
	}
	ranking, override := ix.Ranking(), ""
	if req.Ranking != nil {
		ranking = req.Ranking.withDefaults()
		if err := ranking.validate(); err != nil {
			return nil, err
		}
		override = fmt.Sprintf("%+v", ranking)
	}
	key := fmt.Sprintf("%q|%d|%d|%s|%t|%s|%s", req.Query, req.Page, req.PerPage, req.Kind, req.Facets, op, override)
	version := ix.cacheVersion()
	if r, ok := ix.cache.get(key, version); ok {
		c := *r
		c.Hits = append([]Hit(nil), r.Hits...)
		c.Cached, c.Took = true, time.Since(start)
		return &c, nil
	}
	n, err := query.Parse(req.Query, query.Options{Implicit: op})
	if err != nil {
		return nil, err // a *query.Error for a malformed query
	}
	res := &Result{Page: req.Page, PerPage: req.PerPage, Hits: []Hit{}}
	if n == nil {
		res.Took = time.Since(start)
		return res, nil
	}
	release, err := ix.takeTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var b *budget
	if ix.opts.Budget > 0 {
		// The budget starts with the search's turn: time spent waiting for one is not
		// the query's fault.
		b = &budget{until: time.Now().Add(ix.opts.Budget)}
		ctx = context.WithValue(ctx, budgetKey{}, b)
	}
	res.Query = n.String()
	v := ix.localView()
	need := req.Page * req.PerPage
	relax := op == query.And && relaxable(n)
	if relax {
		need = max(need, FillBelow) // every document with all the words, when they are few
	}
	v.pages = true
	rk, err := ix.rank(ctx, n, ranking, req.Kind, need, req.Facets, v)
	if err != nil {
		return nil, err
	}
	defer rk.close()
	filled := false
	if relax && rk.total < FillBelow {
		// Fewer than FillBelow documents have every word: after them come those with some
		// of the words, and the result says so. Relaxing only when none had them all cut a
		// question's results to the two or three pages that happened to contain every word:
		// on Cranfield asked through the API that cost 0.03 nDCG@10 (issue 13).
		if n2, err := query.Parse(req.Query, query.Options{Implicit: query.Or}); err == nil && n2 != nil {
			res2 := &Result{Page: req.Page, PerPage: req.PerPage, Hits: []Hit{}, Query: n2.String(), Relaxed: true, AllWords: rk.total}
			if filled, err = ix.runFilled(ctx, rk, n2, req, ranking, v, res2); err != nil {
				return nil, err
			}
			if filled {
				res = res2
			}
		}
	}
	if !filled {
		// The result pages are made once it is known which ranking they show.
		if err := ix.page(ctx, rk, req, res); err != nil {
			return nil, err
		}
	}
	res.Partial = b.spent()
	res.Took = time.Since(start)
	ix.cache.put(key, version, res)
	out := *res
	out.Hits = append([]Hit(nil), res.Hits...)
	return &out, nil
}

func (ix *Index) cacheVersion() cacheVersion {
	v := cacheVersion{gen: ix.gen.Load()}
	if ix.opts.Links != nil {
		if s := ix.opts.Links.Summary(); s != nil {
			v.rank = s.At.UnixNano()
		}
	}
	return v
}

// relaxable reports whether n is a conjunction of several plain words, which OR can relax.
func relaxable(n query.Node) bool {
	b, ok := n.(*query.Bool)
	if !ok {
		return false
	}
	words := 0
	for _, c := range b.Must {
		if _, ok := c.(*query.Word); ok {
			words++
		}
	}
	return words >= 2
}

// languages are the analyzer languages of the documents in the index.
func (ix *Index) languages() []string {
	ix.statsMu.RLock()
	defer ix.statsMu.RUnlock()
	return languagesOf(ix.stats.langs)
}

// languagesOf are the languages with documents among counts (every analyzer language when
// there are none), sorted.
func languagesOf(counts map[string]int64) []string {
	var out []string
	for l, n := range counts {
		if n > 0 {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = append(append(out, Languages...), neutral)
	}
	sort.Strings(out)
	return out
}

// ranked is what a query found, best first.
type ranked struct {
	total     uint64
	hits      []scored
	signals   map[string]linkSignal
	facets    map[string][]FacetCount
	facetOver int
	tr        translation
	blend     bool                  // the best Window results are (to be) blended with links and relevance
	snap      *scorch.IndexSnapshot // held for the pages (collected.snap): close releases it
}

// close releases the snapshot rk's hits were found in.
func (rk *ranked) close() {
	if rk.snap != nil {
		rk.snap.Close()
		rk.snap = nil
	}
}

// view is the collection a query is ranked against: the index itself, or, for one shard
// of a collection split over several indexes, the whole collection's statistics (see
// shard.go), so that every shard scores as one index over all the documents would.
type view struct {
	langs   []string
	bs      *bm25fStats
	bleve   *search.BM25Stats
	topical bool // some document has a topic relevance
	links   bool // the link prior takes part in the blend
	depth   int  // MaxResults
	pages   bool // the hits keep their snapshot for their result pages (collectOptions.pages)
	// counting is how facets are counted: a shard counts every value from its
	// gatherer's time (ShardRequest.Now).
	counting facetCounting
	// global are the whole collection's document and term counts (nil: the index's own);
	// the shard path returns its best hits unblended, with their raw signals.
	global *globalCounts
}

// localView is the index's own statistics, in one snapshot.
func (ix *Index) localView() *view {
	ix.statsMu.RLock()
	defer ix.statsMu.RUnlock()
	return ix.stats.view(languagesOf(ix.stats.langs), ix.opts.Links != nil, ix.opts.MaxResults)
}

// view is the ranking view of statistics s over languages langs.
func (s *fieldStats) view(langs []string, links bool, depth int) *view {
	fields := make([]string, 0, len(langs)*len(textFields)+9)
	for _, l := range langs {
		for _, f := range textFields {
			fields = append(fields, langField(f, l))
		}
	}
	// Every field a Bleve term or phrase query may touch needs BM25 statistics (keyword
	// fields have length 1); sonda's own BM25F clauses take theirs from the translation.
	fields = append(fields, fieldURL, fieldKind, fieldHost, fieldSite, fieldLang, fieldCType, fieldCSub, fieldTopic, fieldDate)
	for _, name := range datasetFacets {
		fields = append(fields, typedPrefix+name)
	}
	return &view{langs: langs, bs: s.bm25f(), bleve: s.bm25Stats(fields), topical: s.topic > 0, links: links, depth: depth}
}

// rank runs a parsed query and returns at least the best n results (fewer when fewer
// match; never more than MaxResults), in final order; on the shard path (v.global set),
// in text order, unblended, with the link signals of the best Window.
func (ix *Index) rank(ctx context.Context, n query.Node, r Ranking, kind string, need int, facets bool, v *view) (*ranked, error) {
	tr := translate(n, r, v.langs, v.bs)
	q := withKind(tr.q, kind)
	useRelevance := r.Relevance > 0 && v.topical
	blend := r.Link > 0 && v.links || useRelevance || tr.text == 0
	size := need
	if blend {
		size = max(need, r.Window)
	}
	size = min(size, v.depth)
	sctx := context.WithValue(ctx, search.BM25StatsKey, v.bleve)
	o := collectOptions{n: size, facets: facets, counting: v.counting, counts: v.global, exhaustive: ix.exhaustive.Load(), pages: v.pages && v.global == nil}
	if r.Feedback > 0 && tr.text > 0 {
		// Pseudo-relevance feedback (feedback.go) rescores the best Window matches. A shard
		// of a split collection returns its best Window unrescored: its best matches are
		// not the collection's, and the gatherer rescores them (GatherFeedback). One more
		// than the window shows whether a tie runs past its edge (untied).
		o.n = min(max(o.n, r.Window+1), v.depth)
		if v.global == nil {
			// Rescoring through the postings (short ones, throughPostings) reads the
			// decoded postings kept in memory as matching does.
			o.rescore = ix.feedback(withPostingsCache(ctx, ix.postings), r, tr.text, v.bs)
		}
	}
	if useRelevance {
		o.relevance = r.Window
	}
	c, err := ix.collect(sctx, q, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("index: search %q: %w", n.String(), err)
	}
	out := &ranked{total: c.total, facets: c.facets, facetOver: c.facetOver, tr: tr, hits: c.hits, blend: blend, snap: c.snap}
	if !blend {
		return out, nil
	}
	if r.Link > 0 && ix.opts.Links != nil {
		if out.signals, err = ix.linkSignals(r, out.hits[:min(len(out.hits), r.Window)]); err != nil {
			out.close()
			return nil, err
		}
	}
	if v.global == nil {
		blendHits(blendRanking(r, useRelevance), out.hits, out.signals, v.links, tr.text == 0)
	}
	return out, nil
}

// FillBelow is how many documents must have every word of an implicit-AND query for its
// results to be those alone; with fewer, documents with some of the words follow them. It
// does not depend on the page asked for, so that every page of a result agrees on its
// total and order. cluster/search's gatherer fills the same way (FillGathered).
const FillBelow = 10

// fillOrder is all followed by the items of some that are not in all, their scores scaled
// below the last of all's so that scores keep descending.
func fillOrder[T any](all, some []T, id func(*T) string, score func(*T) *float64) []T {
	first := make(map[string]bool, len(all))
	floor := math.Inf(1)
	for i := range all {
		first[id(&all[i])] = true
		floor = min(floor, *score(&all[i]))
	}
	out := append([]T(nil), all...)
	top := 0.0
	for _, h := range some {
		if first[id(&h)] {
			continue
		}
		s := score(&h)
		if top == 0 {
			top = *s
		}
		if len(all) > 0 && top > 0 {
			*s = floor * *s / top * 0.999
		}
		out = append(out, h)
	}
	return out
}

// runFilled fills res with the requested page of the documents that match all the words
// (rkAll, the query with AND, every one of them), best first, followed by those that match
// only some (the same words with OR), ranked among themselves below the last of the first.
// Total and facets are some's. It reports false, leaving res unpaged, when no more
// documents have some of the words than have them all.
func (ix *Index) runFilled(ctx context.Context, rkAll *ranked, some query.Node, req Request, r Ranking, v *view, res *Result) (bool, error) {
	need := req.Page * req.PerPage
	rk, err := ix.rank(ctx, some, r, req.Kind, need+len(rkAll.hits), req.Facets, v)
	if err != nil {
		return false, err
	}
	defer rk.close()
	if rk.total <= rkAll.total {
		return false, nil
	}
	hits := fillOrder(rkAll.hits, rk.hits, func(h *scored) string { return h.id }, func(h *scored) *float64 { return &h.score })
	for id, s := range rkAll.signals {
		if rk.signals == nil {
			rk.signals = map[string]linkSignal{}
		}
		rk.signals[id] = s
	}
	rk.hits = hits
	return true, ix.page(ctx, rk, req, res)
}

// page fills res with the requested page of a ranking.
func (ix *Index) page(ctx context.Context, rk *ranked, req Request, res *Result) error {
	from := (req.Page - 1) * req.PerPage
	need := from + req.PerPage
	res.Total = rk.total
	capped := min(int(res.Total), ix.opts.MaxResults)
	res.Pages = (capped + req.PerPage - 1) / req.PerPage
	if req.Facets {
		res.Facets, res.FacetsOver = rk.facets, rk.facetOver
	}
	if from >= len(rk.hits) {
		return nil
	}
	for _, h := range rk.hits[from:min(need, len(rk.hits))] {
		hit, err := ix.resultHit(ctx, h, rk.tr, rk.signals)
		if err != nil {
			return err
		}
		res.Hits = append(res.Hits, hit)
	}
	return nil
}

// resultHit is a result as shown: its stored document, snippet and in-link count.
func (ix *Index) resultHit(ctx context.Context, h scored, tr translation, signals map[string]linkSignal) (Hit, error) {
	hit, err := ix.hit(ctx, h, tr)
	if err != nil {
		return Hit{}, err
	}
	if s, ok := signals[h.id]; ok {
		hit.InLinks = s.inLinks
	} else if ix.opts.Links != nil {
		if sig, err := ix.opts.Links.Signals([]string{hit.URL}); err == nil {
			hit.InLinks = sig[0].InLinks
		}
	}
	return hit, nil
}

// SearchIDs ranks the documents matching q (in the query language, with implicit operator
// op: "and", "or" or "" for the index's) and returns the IDs of the best n, best first,
// and how many matched. It ranks exactly as Search does, without building result pages:
// evaluations use it to rank deep (up to MaxResults) at little cost.
func (ix *Index) SearchIDs(ctx context.Context, q string, n int, op string) ([]string, uint64, error) {
	o := ix.opts.Implicit
	if op != "" {
		var err error
		if o, err = query.ParseOperator(op); err != nil {
			return nil, 0, &QueryError{Pos: 0, Msg: err.Error()}
		}
	}
	node, err := query.Parse(q, query.Options{Implicit: o})
	if err != nil || node == nil {
		return nil, 0, err
	}
	rk, err := ix.rank(ctx, node, ix.Ranking(), "", n, false, ix.localView())
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, 0, min(n, len(rk.hits)))
	for _, h := range rk.hits[:min(n, len(rk.hits))] {
		ids = append(ids, h.id)
	}
	return ids, rk.total, nil
}

// Ranking returns the ranking in use.
func (ix *Index) Ranking() Ranking { return *ix.ranking.Load() }

// SetRanking changes the ranking of later searches (and, since BM25's k1 and b are
// process-wide in Bleve, of every index in the process).
func (ix *Index) SetRanking(r Ranking) error {
	r = r.withDefaults()
	if err := r.validate(); err != nil {
		return err
	}
	ix.ranking.Store(&r)
	setBM25(r.K1, r.B)
	ix.gen.Add(1) // cached results were ranked the old way
	return nil
}

// decodeNumber decodes a numeric field's full-precision doc value (Bleve also stores
// coarser prefixes of it, for range queries, which are skipped).
func decodeNumber(term []byte) (float64, bool) {
	i, ok := decodeInt(term)
	return numeric.Int64ToFloat64(i), ok
}

// decodeInt decodes a full-precision prefix-coded integer (a date field's nanoseconds).
func decodeInt(term []byte) (int64, bool) {
	pc := numeric.PrefixCoded(term)
	if shift, err := pc.Shift(); err != nil || shift != 0 {
		return 0, false
	}
	i, err := pc.Int64()
	return i, err == nil
}

// scored is a result on its way to the page.
type scored struct {
	id        string
	text      float64 // BM25 text score
	score     float64 // final score
	relevance float64
	// snap, when set, is the snapshot the result was found in, still open, and doc its
	// number there: its page reads the stored document by number (documentAt).
	snap *scorch.IndexSnapshot
	doc  uint64
}

type linkSignal struct {
	inLinks int
	prior   float64
}

// linkSignals returns the link signals of hits, by ID: in-link count and the prior the
// ranking's LinkSignal chooses.
func (ix *Index) linkSignals(r Ranking, hits []scored) (map[string]linkSignal, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	urls := make([]string, len(hits))
	for i, h := range hits {
		urls[i] = h.id
	}
	sig, err := ix.opts.Links.Signals(urls)
	if err != nil {
		return nil, fmt.Errorf("index: link signals: %w", err)
	}
	signals := make(map[string]linkSignal, len(sig))
	for i, s := range sig {
		p := s.Prior
		if r.LinkSignal == "inlinks" {
			p = s.InLinkPrior
		}
		signals[urls[i]] = linkSignal{inLinks: s.InLinks, prior: p}
	}
	return signals, nil
}

// blendRanking is r as the blend applies it: when no document has a topic relevance, its
// weight goes back to the text, so that the balance of text and links is the same
// whatever the relevance weight.
func blendRanking(r Ranking, useRelevance bool) Ranking {
	if !useRelevance {
		r.Relevance = 0
	}
	return r
}

// blendHits reorders the best Window hits (in text order) by the final score (see
// Ranking). links says a link graph takes part (without one the link weight is 0);
// filterOnly says the query has no words, so text scores say nothing and the link prior
// decides. A single index and the gatherer of a split one both blend here, so that their
// orders and scores agree.
func blendHits(r Ranking, hits []scored, signals map[string]linkSignal, links, filterOnly bool) {
	window := hits[:min(len(hits), r.Window)]
	if len(window) == 0 {
		return
	}
	best := 0.0
	for _, h := range window {
		best = max(best, h.text)
	}
	wl, wr := r.Link, r.Relevance
	if !links {
		wl = 0
	}
	wt := max(0, 1-wl-wr)
	if filterOnly && wl > 0 {
		wt = 0 // no words: the text score is the same filter weight for all
	}
	for i := range window {
		h := &window[i]
		text := 0.0
		if best > 0 {
			text = h.text / best
		}
		h.score = wt*text + wl*signals[h.id].prior + wr*max(0, h.relevance)
	}
	sort.SliceStable(window, func(i, j int) bool { return window[i].score > window[j].score })
	// Keep scores of the hits past the window below the window's.
	if len(hits) > len(window) {
		floor := math.Inf(1)
		for _, h := range window {
			floor = min(floor, h.score)
		}
		for i := len(window); i < len(hits); i++ {
			hits[i].score = floor * hits[i].text / max(best, hits[i].text) * 0.999
		}
	}
}

// hit loads a result's stored document and makes its snippet.
func (ix *Index) hit(ctx context.Context, h scored, tr translation) (Hit, error) {
	var d Doc
	var ok bool
	var err error
	if h.snap != nil {
		d, ok, err = ix.documentAt(ctx, h.snap, h.doc, h.id)
	} else {
		d, ok, err = ix.Document(ctx, h.id)
	}
	if err != nil {
		return Hit{}, err
	}
	if !ok {
		// Deleted between the search and now: show what is known.
		return Hit{ID: h.id, URL: h.id, Score: h.score}, nil
	}
	code := langCode(d.Lang)
	text := d.Body
	if text == "" {
		text = d.Description
	}
	return Hit{
		ID: d.ID, Kind: d.Kind, URL: d.URL, Title: d.Title, Snippet: snippet(text, code, tr.terms[code]),
		Score: h.score, Fetched: d.Fetched, Date: d.Date(), Host: d.Host, Lang: d.Lang, ContentType: d.ContentType,
		InLinks: d.InLinks, Relevance: d.Relevance, Fields: d.Fields,
	}, nil
}

// dateBuckets are the date facet's ranges, newest first, relative to now.
var dateBuckets = []struct {
	label string
	age   time.Duration // documents newer than now − age; 0: the rest
}{
	{"past day", 24 * time.Hour},
	{"past week", 7 * 24 * time.Hour},
	{"past month", 30 * 24 * time.Hour},
	{"past year", 365 * 24 * time.Hour},
	{"older", 0},
}

// quoteValue quotes a facet value that would not parse back as one word.
func quoteValue(s string) string {
	if strings.ContainsAny(s, " \t\"()") {
		return strconv.Quote(s)
	}
	return s
}
