package index

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/internal/synthcorpus"
)

// TestFacetsCountEveryMatch: a search's facet counts are exact, counted over every document
// the query matches (a relaxed query's: every document with some of its words), however
// few results the search scores for its page. They are checked against a brute-force count:
// the documents the query matches, ranked exhaustively as deep as there are (SearchIDs),
// counted value by value from the documents the test wrote, on an index of several segments
// with deleted documents, with the result depth (MaxResults) far below the matches.
func TestFacetsCountEveryMatch(t *testing.T) {
	ix := openTest(t, Options{CacheEntries: -1, SyncWrites: true, keepSegments: true})
	c := synthcorpus.New(1)
	start := time.Now()
	const n = 1500
	docs := map[string]Doc{}
	var gone []string
	for i := 0; i < n; i += 300 {
		batch := make([]Doc, 0, 300)
		for j := i; j < i+300; j++ {
			d := synthDoc(c, j)
			d.Lang = []string{"en", "pt-BR", "en", ""}[j%4]
			if j%5 == 1 {
				d.Kind = KindArticle
			}
			// Dates from now back over four years, each 29 minutes off any whole hour, so
			// that no date falls on a bucket's edge (whole days before now) while the test
			// runs.
			d.Fetched = start.Add(-time.Duration(j)*23*time.Hour - 29*time.Minute)
			batch = append(batch, d)
			docs[d.ID] = d
			if j%37 == 0 {
				gone = append(gone, d.ID)
			}
		}
		load(t, ix, batch...)
	}
	if err := ix.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	for _, id := range gone {
		delete(docs, id)
	}

	var queries []string
	for _, q := range synthcorpus.New(3).Log(400, 400) {
		if q.Kind != synthcorpus.KindShort && len(queries) < 8 || q.Kind == synthcorpus.KindShort && len(queries) < 14 {
			queries = append(queries, q.Text)
		}
	}
	some := synthDoc(c, 40)
	words := strings.Fields(some.Body)
	queries = append(queries,
		fmt.Sprintf("%q", strings.Join(words[2:4], " ")), // a phrase
		words[5]+" -"+words[6],                           // a word without another
		words[5]+" site:"+some.Host,                      // a word on one site
		queries[0]+" type:article",                       // a question among the articles
	)

	const depth = 20 // the deepest result: far below most queries' matches
	brute := func(q, op string) []string {
		ix.opts.MaxResults = 1 << 20
		ix.exhaustive.Store(true)
		defer func() { ix.opts.MaxResults = depth; ix.exhaustive.Store(false) }()
		ids, total, err := ix.SearchIDs(ctx, q, 1<<20, op)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(ids)) != total {
			t.Fatalf("%q: %d of %d matches ranked", q, len(ids), total)
		}
		return ids
	}
	ix.opts.MaxResults = depth
	var deep, most, relaxed, searches int
	for _, q := range queries {
		for _, op := range []string{"", "or"} {
			res, err := ix.Search(ctx, Request{Query: q, Operator: op, Facets: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Relaxed {
				op = "or"
				relaxed++
			}
			matches := brute(q, op)
			if res.Total != uint64(len(matches)) || res.FacetsOver != len(matches) {
				t.Fatalf("%q (%s): total %d, facets over %d; %d documents match", q, op, res.Total, res.FacetsOver, len(matches))
			}
			if want := bruteFacets(t, docs, matches, time.Now()); !reflect.DeepEqual(res.Facets, want) {
				t.Fatalf("%q (%s), %d matches: facets\n%v\ncounted one by one\n%v", q, op, len(matches), res.Facets, want)
			}
			if len(matches) > depth {
				deep++
			}
			if 2*len(matches) > len(docs) {
				most++ // counted as the index less the documents not matched (countSets)
			}
			searches++
		}
	}
	// The comparison shows something: a good share of the searches match more documents
	// than they rank, some most of the index, and some are relaxed.
	if deep < searches/4 || most == 0 || relaxed == 0 {
		t.Fatalf("%d of %d searches match more than %d documents, %d most of the index, %d relaxed: too few to tell", deep, searches, depth, most, relaxed)
	}
	t.Logf("%d searches, %d matching more than %d documents, %d most of the index, %d relaxed", searches, deep, depth, most, relaxed)
}

// bruteFacets counts the site, type, language and date facets of the documents ids of docs
// one by one: the ten most common values of each facet (ties by value), and the dates by
// bucket (a document in each bucket whose start it is newer than; older than a year:
// "older"), as Result.Facets shows them.
func bruteFacets(t *testing.T, docs map[string]Doc, ids []string, now time.Time) map[string][]FacetCount {
	counts := map[string]map[string]int{FacetSite: {}, FacetType: {}, FacetLang: {}}
	dates := make([]int, len(dateBuckets))
	last := len(dateBuckets) - 1
	for _, id := range ids {
		d, ok := docs[id]
		if !ok {
			t.Fatalf("a deleted or unknown document matched: %s", id)
		}
		counts[FacetSite][strings.ToLower(d.Host)]++
		kind := d.Kind
		if kind == "" {
			kind = KindPage
		}
		counts[FacetType][kind]++
		if d.Lang != "" {
			counts[FacetLang][primaryLang(d.Lang)]++
		}
		date := d.Date()
		for i, b := range dateBuckets[:last] {
			if date.After(now.Add(-b.age)) {
				dates[i]++
			}
		}
		if !date.After(now.Add(-dateBuckets[last-1].age)) {
			dates[last]++
		}
	}
	out := map[string][]FacetCount{}
	for facet, values := range counts {
		var fc []FacetCount
		for v, c := range values {
			fc = append(fc, FacetCount{Value: v, Count: c, Filter: facet + ":" + quoteValue(v)})
		}
		sort.Slice(fc, func(i, j int) bool { return betterFacet(fc[i], fc[j]) })
		if len(fc) > 0 {
			out[facet] = fc[:min(len(fc), 10)]
		}
	}
	var dc []FacetCount
	for i, b := range dateBuckets {
		if dates[i] == 0 {
			continue
		}
		f := FacetCount{Value: b.label, Count: dates[i]}
		if b.age > 0 {
			f.Filter = "after:" + now.Add(-b.age).UTC().Format("2006-01-02")
		} else {
			f.Filter = "before:" + now.Add(-dateBuckets[last-1].age).UTC().Format("2006-01-02")
		}
		dc = append(dc, f)
	}
	out[FacetDate] = dc
	return out
}
