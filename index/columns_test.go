package index

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// TestColumnsMatchDocValues: the facet rows read from the decoded columns equal those read
// through Bleve's doc value reader, for every document of an index of several segments
// (pages of three languages, kinds and hosts, datasets with typed fields, documents without
// a date), after deletes and replacements and after more segments are added; the cache
// holds only the segments of the current snapshot.
func TestColumnsMatchDocValues(t *testing.T) {
	ix := openTest(t, Options{CacheEntries: -1})
	mk := func(i int) Doc {
		host := fmt.Sprintf("h%d.test", i%7)
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
				docs = append(docs, collectedHit{iid: bindex.NewIndexInternalID(nil, next+d), score: float64(next + d)})
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
		norm := func(rows []facetRow) []string {
			out := make([]string, len(rows))
			for i, row := range rows {
				vs := make([]string, len(row.values))
				for j, v := range row.values {
					vs[j] = v.facet + "=" + v.value
				}
				slices.Sort(vs)
				out[i] = fmt.Sprintf("%v %v %d %v", row.score, row.dated, row.date, strings.Join(vs, ","))
			}
			return out
		}
		if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
			for i := range w {
				if i < len(g) && g[i] != w[i] {
					t.Fatalf("%s: document %d: columns %s, doc values %s", when, i, g[i], w[i])
				}
			}
			t.Fatalf("%s: %d rows from the columns, %d from doc values", when, len(g), len(w))
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
	if res.FacetsOver != int(res.Total) || len(res.Facets[FacetSite]) != 9 || len(res.Facets[FacetProducer]) != 2 {
		t.Errorf("facets of a search over the columns: over %d of %d, %v", res.FacetsOver, res.Total, res.Facets)
	}
}
