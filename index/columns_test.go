package index

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// TestColumnsMatchDocValues: the facet rows read from the decoded columns equal those read
// through Bleve's doc value reader, for every document of an index of several segments
// (pages of three languages, kinds and hosts, datasets with typed fields, documents without
// a date), after deletes and replacements and after more segments are added; the cache
// holds only the segments of the current snapshot.
func TestColumnsMatchDocValues(t *testing.T) {
	// Several segments whatever the machine's load (see TestColumnCacheBounded).
	ix := openTest(t, Options{CacheEntries: -1, SyncWrites: true, keepSegments: true})
	mk := columnDoc
	check := func(when string) {
		t.Helper()
		r, err := ix.reader()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		snap := r.(*scorch.IndexSnapshot)
		var docs []collectedHit
		next := uint64(0)
		for _, s := range snap.Segments() {
			for d := range s.Segment().Count() {
				docs = append(docs, collectedHit{doc: next + d, score: float64(next + d)})
			}
			next += s.Segment().Count()
		}
		if len(snap.Segments()) < 2 {
			t.Fatalf("%s: %d segments; the test needs several", when, len(snap.Segments()))
		}
		want, err := facetRowsOf(r, docs)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := ix.columns.rows(r, docs)
		if !ok || err != nil {
			t.Fatalf("%s: columns: ok %v, %v", when, ok, err)
		}
		if g, w := rowStrings(got), rowStrings(want); !reflect.DeepEqual(g, w) {
			for i := range w {
				if i < len(g) && g[i] != w[i] {
					t.Fatalf("%s: document %d: columns %s, doc values %s", when, i, g[i], w[i])
				}
			}
			t.Fatalf("%s: %d rows from the columns, %d from doc values", when, len(g), len(w))
		}
		// Counting the values of sets of documents by their numbers gives the facets that
		// counting their rows does, for every document and for subsets of them.
		now := time.Unix(1700000000+100*3600, 0)
		for step := 1; step <= 5; step += 2 {
			var some []collectedHit
			var numbers []uint64
			for i := 0; i < len(docs); i += step {
				some = append(some, docs[i])
				numbers = append(numbers, docs[i].doc)
			}
			rows, err := facetRowsOf(r, some)
			if err != nil {
				t.Fatal(err)
			}
			top, every := facetCounting{now: now}, facetCounting{now: now, every: true}
			for _, fc := range []facetCounting{top, every} {
				counted, ok, err := ix.columns.countSets(snap, bySegment(snap.Segments(), numbers), fc)
				if !ok || err != nil {
					t.Fatalf("%s: counting the columns: ok %v, %v", when, ok, err)
				}
				if want := countFacets(rows, fc); !reflect.DeepEqual(counted, want) {
					t.Fatalf("%s, every %d documents, every value %v: counted from the columns\n%v\nfrom the rows\n%v", when, step, fc.every, counted, want)
				}
			}
			// A split collection's counts: each part's every value, added up (as Gather
			// adds up its shards'), are the ten best counted over them all.
			whole, _, err := ix.columns.countSets(snap, bySegment(snap.Segments(), numbers), top)
			if err != nil {
				t.Fatal(err)
			}
			added, dates := map[facetValue]int{}, make([]int, len(dateBuckets))
			for part := range 3 {
				var some []uint64
				for i := part; i < len(numbers); i += 3 {
					some = append(some, numbers[i])
				}
				counted, _, err := ix.columns.countSets(snap, bySegment(snap.Segments(), some), every)
				if err != nil {
					t.Fatal(err)
				}
				addFacets(added, dates, counted)
			}
			tally := newFacetTally(top)
			for v, n := range added {
				tally.value(v, n)
			}
			copy(tally.dates, dates)
			if got := tally.result(); !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s, every %d documents: three parts' counts added up\n%v\ncounted over them all\n%v", when, step, got, whole)
			}
		}
		ix.columns.mu.Lock()
		live := map[segment.Segment]bool{}
		for _, s := range snap.Segments() {
			live[s.Segment()] = true
		}
		for s := range ix.columns.segs {
			if !live[s] {
				t.Errorf("%s: the cache holds a segment that is no longer in the index", when)
			}
		}
		ix.columns.mu.Unlock()
	}
	for b := range 4 {
		var batch []Doc
		for i := range 40 {
			batch = append(batch, mk(b*40+i))
		}
		load(t, ix, batch...)
	}
	check("four batches")
	if err := ix.Delete(ctx, mk(3).ID, mk(50).ID); err != nil {
		t.Fatal(err)
	}
	changed := mk(7)
	changed.Host, changed.Lang = "moved.test", "en"
	load(t, ix, changed)
	check("after deletes and a replacement")
	for b := 4; b < 8; b++ {
		var batch []Doc
		for i := range 40 {
			batch = append(batch, mk(b*40+i))
		}
		load(t, ix, batch...)
	}
	check("eight batches")
	// And through a search: the facets of a search agree with those Bleve's reader gives.
	res, err := ix.Search(ctx, Request{Query: "common", Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.FacetsOver != int(res.Total) || len(res.Facets[FacetSite]) != 10 || len(res.Facets[FacetProducer]) != 2 {
		t.Errorf("facets of a search over the columns: over %d of %d, %v", res.FacetsOver, res.Total, res.Facets)
	}
}

// columnDoc is document i of the facet columns' tests: pages of three languages (and
// none), articles, datasets with typed fields, documents without a date, over 17 hosts.
func columnDoc(i int) Doc {
	host := fmt.Sprintf("h%d.test", i%7+i%11) // some more common: the ten best depend on the documents counted
	d := Doc{ID: fmt.Sprintf("http://%s/%d", host, i), URL: fmt.Sprintf("http://%s/%d", host, i), Host: host,
		Lang: []string{"en", "pt-BR", "de", ""}[i%4], Title: "page", Body: "common words",
		Fetched: time.Unix(1700000000+int64(i)*3600, 0), Relevance: -1}
	switch i % 5 {
	case 1:
		d.Kind = KindArticle
	case 2:
		d = boxDoc(i, BBox{West: -1, South: -1, East: 1, North: 1})
		d.Title, d.Body = "page", "common words"
		d.Fields["format"], d.Fields["crs"], d.Fields["producer"] = "shapefile", "epsg:4326", []string{"a.br", "b.br"}
	case 3:
		d.Fetched = time.Time{}
	}
	return d
}

// rowStrings writes facet rows out comparably.
func rowStrings(rows []facetRow) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		vs := make([]string, len(row.values))
		for j, v := range row.values {
			vs[j] = v.facet + "=" + v.value
		}
		slices.Sort(vs)
		out[i] = fmt.Sprintf("%v %d %v", row.dated, row.date, strings.Join(vs, ","))
	}
	return out
}

// TestColumnCacheBounded: the column cache holds at most its limit, dropping the segments
// unused for longest first; a segment too big for it is read through the doc values; with
// no cache, the caller is told to read them itself. The rows are right in every case.
func TestColumnCacheBounded(t *testing.T) {
	if got := openTest(t, Options{}).columns.limit; got != DefaultFacetCache {
		t.Errorf("default limit %d, want %d", got, DefaultFacetCache)
	}
	// Four batches, four segments: each batch written through to disk before the next
	// (scorch's persister merges the batches still in memory when it falls behind), and
	// no merges (the merger merged them into two now and then, on a loaded machine).
	ix := openTest(t, Options{CacheEntries: -1, SyncWrites: true, keepSegments: true})
	for b := range 4 {
		var batch []Doc
		for i := range 40 {
			batch = append(batch, columnDoc(b*40+i))
		}
		load(t, ix, batch...)
	}
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	segs := r.(*scorch.IndexSnapshot).Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments; the test needs three", len(segs))
	}
	var all []collectedHit
	of := make([][]collectedHit, len(segs)) // each segment's documents
	next := uint64(0)
	for si, s := range segs {
		for d := range s.Segment().Count() {
			h := collectedHit{doc: next + d, score: float64(next + d)}
			of[si] = append(of[si], h)
			all = append(all, h)
		}
		next += s.Segment().Count()
	}
	read := func(c *columnCache, docs []collectedHit) {
		t.Helper()
		ix.columns = c
		got, ok, err := c.rows(r, docs)
		if !ok || err != nil {
			t.Fatalf("limit %d: ok %v, %v", c.limit, ok, err)
		}
		want, err := facetRowsOf(r, docs)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := rowStrings(got), rowStrings(want); !reflect.DeepEqual(g, w) {
			t.Fatalf("limit %d: rows %v, doc values %v", c.limit, g, w)
		}
		if c.bytes > c.limit || c.bytes < 0 {
			t.Fatalf("limit %d: holds %d bytes", c.limit, c.bytes)
		}
	}
	held := func(c *columnCache) []int {
		var out []int
		for si, s := range segs {
			if sc, ok := c.segs[s.Segment()]; ok && sc.bytes > 0 {
				out = append(out, si)
			}
		}
		return out
	}
	// Each segment's size, from a cache with room for all.
	big := newColumnCache(1 << 30)
	read(big, all)
	size := make([]int64, len(segs))
	for si, s := range segs {
		size[si] = big.segs[s.Segment()].bytes
	}
	if h := held(big); len(h) != len(segs) {
		t.Fatalf("a big cache holds segments %v of %d", h, len(segs))
	}

	// Room for any two of three segments, not all three: the one unused for longest goes.
	c := newColumnCache(size[0] + size[1] + size[2] - 1)
	for _, step := range []struct {
		ask  int
		want []int
	}{{0, []int{0}}, {1, []int{0, 1}}, {2, []int{1, 2}}, {0, []int{0, 2}}, {2, []int{0, 2}}, {1, []int{1, 2}}} {
		read(c, of[step.ask])
		if got := held(c); !slices.Equal(got, step.want) {
			t.Fatalf("after asking for segment %d: holds %v, want %v", step.ask, got, step.want)
		}
	}
	// Rows over every segment at once are right whatever is dropped meanwhile.
	read(c, all)

	// No segment fits: every row from the doc values, nothing held.
	small := newColumnCache(10)
	read(small, all)
	if h := held(small); len(h) > 0 || small.bytes != 0 {
		t.Fatalf("a 10-byte cache holds segments %v, %d bytes", h, small.bytes)
	}

	// No cache: the caller reads the doc values (Index.facetRows does).
	if _, ok, _ := newColumnCache(-1).rows(r, all); ok {
		t.Fatal("a disabled cache answered")
	}
	ix.columns = newColumnCache(-1)
	rows, err := ix.facetRows(r, all)
	if err != nil || len(rows) != len(all) {
		t.Fatalf("facet rows without a cache: %d of %d, %v", len(rows), len(all), err)
	}
}

// TestFacetTallyKeepsTheTenBest: the ten values a facet shows are the ten most common,
// ties by value, as sorting every value gives, whatever the order the values come in.
func TestFacetTallyKeepsTheTenBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := rng.IntN(40)
		var values []FacetCount
		for i := range n {
			values = append(values, FacetCount{Value: fmt.Sprintf("s%02d.test", i), Count: 1 + rng.IntN(5)})
		}
		rng.Shuffle(len(values), func(i, j int) { values[i], values[j] = values[j], values[i] })
		tally := newFacetTally(facetCounting{now: time.Now()})
		var want []FacetCount
		for _, v := range values {
			tally.value(facetValue{FacetSite, v.Value}, v.Count)
			want = append(want, FacetCount{Value: v.Value, Count: v.Count, Filter: FacetSite + ":" + v.Value})
		}
		slices.SortFunc(want, func(a, b FacetCount) int {
			if a.Count != b.Count {
				return b.Count - a.Count
			}
			return strings.Compare(a.Value, b.Value)
		})
		want = want[:min(len(want), 10)]
		got := tally.result()[FacetSite]
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: %v, want %v", round, got, want)
		}
	}
}
