package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// intersects is the reference: closed intervals in latitude and, for the query, in
// longitude on either side of the antimeridian.
func intersects(doc, q BBox) bool {
	if doc.South > q.North || doc.North < q.South {
		return false
	}
	lon := func(w, e float64) bool { return doc.West <= e && doc.East >= w }
	if q.West > q.East {
		return lon(q.West, 180) || lon(-180, q.East)
	}
	return lon(q.West, q.East)
}

func boxDoc(i int, b BBox) Doc {
	return Doc{ID: fmt.Sprintf("dataset:%d", i), Kind: KindDataset, URL: fmt.Sprintf("http://data.test/%d.zip", i), Host: "data.test",
		Title: fmt.Sprintf("layer %d", i), Fetched: time.Unix(1e9, 0), Relevance: -1, Fields: map[string]any{"bbox": b}}
}

// TestBBoxFilterExact checks the bbox: filter against the reference on random boxes:
// world-wide ones, points, boxes touching at an edge, and query boxes across the
// antimeridian. It must return exactly the intersecting documents.
func TestBBoxFilterExact(t *testing.T) {
	ix := openTest(t, Options{CacheEntries: -1})
	rng := rand.New(rand.NewPCG(7, 7))
	coord := func(lo, hi float64) float64 {
		// Coarse values make shared edges and equal corners common.
		return lo + float64(rng.IntN(int((hi-lo)/5)+1))*5
	}
	var docs []Doc
	var boxes []BBox
	add := func(b BBox) {
		boxes = append(boxes, b)
		docs = append(docs, boxDoc(len(docs), b))
	}
	add(BBox{West: -180, South: -90, East: 180, North: 90}) // the world
	add(BBox{West: -71.06, South: 42.36, East: -71.06, North: 42.36})
	add(BBox{West: 179, South: -20, East: 180, North: -10})
	for range 300 {
		w, e := coord(-180, 180), coord(-180, 180)
		s, n := coord(-90, 90), coord(-90, 90)
		add(BBox{West: min(w, e), South: min(s, n), East: max(w, e), North: max(s, n)})
	}
	load(t, ix, docs...)
	queries := []BBox{{West: -180, South: -90, East: 180, North: 90}, {West: -71.06, South: 42.36, East: -71.06, North: 42.36},
		{West: 170, South: -30, East: -170, North: 0}, {West: 0, South: 0, East: 0, North: 0}}
	for range 60 {
		w, e := coord(-180, 180), coord(-180, 180)
		s, n := coord(-90, 90), coord(-90, 90)
		queries = append(queries, BBox{West: w, South: min(s, n), East: e, North: max(s, n)}) // w > e crosses
	}
	for _, q := range queries {
		var want []string
		for i, b := range boxes {
			if intersects(b, q) {
				want = append(want, docs[i].ID)
			}
		}
		var got []string
		for page := 1; ; page++ {
			res, err := ix.Search(ctx, Request{Query: "bbox:" + q.String(), Page: page, PerPage: 100})
			if err != nil {
				t.Fatalf("bbox:%s: %v", q, err)
			}
			got = append(got, ids(res)...)
			if len(res.Hits) < 100 {
				if int(res.Total) != len(want) {
					t.Errorf("bbox:%s: total %d, want %d", q, res.Total, len(want))
				}
				break
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("bbox:%s: %d documents, want %d", q, len(got), len(want))
		}
	}
}

func TestBBoxFieldRoundTripAndValidation(t *testing.T) {
	ix := openTest(t, Options{})
	b := BBox{West: -71.19, South: 42.23, East: -70.99, North: 42.4}
	load(t, ix, boxDoc(1, b))
	d, ok, err := ix.Document(ctx, "dataset:1")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got, ok := d.Fields["bbox"].(BBox); !ok || got != b {
		t.Errorf("stored box %#v, want %v", d.Fields["bbox"], b)
	}
	for _, bad := range []BBox{{West: 10, South: 0, East: -10, North: 1}, {West: -200, South: 0, East: 0, North: 1}, {West: 0, South: 5, East: 1, North: 4}} {
		if err := ix.Put(ctx, boxDoc(2, bad)); err == nil {
			t.Errorf("box %v accepted", bad)
		}
	}
}

// TestDatasetFiltersAndFacets: format:, crs: and producer: select datasets by their typed
// fields, and the facets of those names count them; pages get no dataset facets.
func TestDatasetFiltersAndFacets(t *testing.T) {
	ix := openTest(t, Options{CacheEntries: -1})
	mk := func(i int, format, crs, producer string) Doc {
		d := boxDoc(i, BBox{West: -10, South: -10, East: 10, North: 10})
		d.Title = "rivers layer"
		d.Fields["format"], d.Fields["crs"], d.Fields["producer"] = format, crs, []string{producer}
		return d
	}
	load(t, ix, mk(1, "shapefile", "epsg:4326", "ibge.gov.br"), mk(2, "shapefile", "epsg:31983", "ibge.gov.br"),
		mk(3, "geotiff", "epsg:4326", "inpe.br"), corpus[0])
	for q, want := range map[string][]string{
		"rivers format:shapefile":                       {"dataset:1", "dataset:2"},
		"rivers crs:4326":                               {"dataset:1", "dataset:3"},
		"rivers crs:EPSG:31983":                         {"dataset:2"},
		"rivers producer:www.inpe.br":                   {"dataset:3"},
		"format:shapefile producer:http://ibge.gov.br/": {"dataset:1", "dataset:2"},
	} {
		if got := ids(find(t, ix, q)); !sameSet(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	res, err := ix.Search(ctx, Request{Query: "rivers", Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{FacetFormat: "shapefile 2 format:shapefile", FacetCRS: "epsg:4326 2 crs:epsg:4326", FacetProducer: "ibge.gov.br 2 producer:ibge.gov.br"}
	for name, w := range want {
		fc := res.Facets[name]
		if len(fc) == 0 || fmt.Sprintf("%s %d %s", fc[0].Value, fc[0].Count, fc[0].Filter) != w {
			t.Errorf("facet %s: %+v, want first %s", name, fc, w)
		}
	}
	res, err = ix.Search(ctx, Request{Query: "reactor", Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Facets[FacetFormat]; ok {
		t.Errorf("pages got a format facet: %v", res.Facets)
	}
}

// TestRankingOverride: a request's ranking with a zero field weight leaves that field out
// of matching, and is cached apart from the index's ranking.
func TestRankingOverride(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix,
		Doc{ID: "a", URL: "http://a.test/", Title: "boston tracts", Body: "census", Relevance: -1},
		Doc{ID: "b", URL: "http://b.test/", Title: "world", Body: "a page that mentions boston", Relevance: -1})
	all := ids(find(t, ix, "boston"))
	noBody := DefaultRanking()
	noBody.Body = 0
	res, err := ix.Search(ctx, Request{Query: "boston", Ranking: &noBody})
	if err != nil {
		t.Fatal(err)
	}
	if !sameSet(all, []string{"a", "b"}) || !sameSet(ids(res), []string{"a"}) {
		t.Errorf("default %v, without body %v", all, ids(res))
	}
	if again := ids(find(t, ix, "boston")); !sameSet(again, all) {
		t.Errorf("the override leaked into the cache: %v", again)
	}
	bad := DefaultRanking()
	bad.Title = -1
	if _, err := ix.Search(ctx, Request{Query: "boston", Ranking: &bad}); err == nil {
		t.Error("a negative weight was accepted")
	}
}
