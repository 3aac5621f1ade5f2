package geosearch

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/discover"
	"github.com/sonda-search/sonda/geo/geoweb"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/internal/shareddata"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// geoCrawl is a finished crawl of the geo test web with the geo vertical, the page index
// sink and the dataset indexer: real crawler, Pebble and Bleve on disk.
type geoCrawl struct {
	gw   *geoweb.Web
	web  *testweb.Web
	cfg  config.Config
	db   *store.DB
	cat  *catalog.Catalog
	ix   *index.Index
	xr   *Indexer
	srch *Searcher
}

func crawlGeoWeb(t *testing.T) *geoCrawl {
	t.Helper()
	gw, err := geoweb.New(shareddata.Dir(t, "geo"), testweb.Config{Seed: 3, Hosts: 6, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	if err != nil {
		t.Fatal(err)
	}
	web := testweb.New(gw.Config)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Concurrency = 8
	cfg.Politeness.MinDelay = 0
	cfg.Politeness.DelayFactor = 0
	cfg.Log.Level = "warn"
	// The geo web has no slow pages; generous timeouts keep a loaded machine (CI runs
	// packages in parallel under -race) from turning a dataset download into a miss.
	cfg.Fetch.FirstByteTimeout = 20 * time.Second
	cfg.Fetch.BodyTimeout = 30 * time.Second
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ix, err := index.Open(index.DataDir(cfg.Data), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	cat := catalog.New(db)
	g := &geoCrawl{gw: gw, web: web, cfg: cfg, db: db, cat: cat, ix: ix}
	g.xr = NewIndexer(cat, ix, IndexerOptions{Delay: 50 * time.Millisecond})
	v := discover.New(cat, discover.Options{Data: cfg.Data, TempDir: t.TempDir(), Normalizer: urlnorm.New(crawl.NormalizerOptions(cfg))})
	isink := index.NewSink(ix, nil, index.SinkOptions{Delay: 50 * time.Millisecond})
	opts := append(v.CrawlOptions(), crawl.WithStore(db), crawl.WithSinks(isink, g.xr))
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.Run(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := isink.Close(); err != nil {
		t.Fatal(err)
	}
	// The indexer lives as long as the data directory is open (it also follows downloads
	// and link checks after the crawl): flush it, close it last.
	if err := g.xr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.xr.Close() })
	g.srch = NewSearcher(ix, cat, nil)
	return g
}

func (g *geoCrawl) search(t *testing.T, req Request) *Result {
	t.Helper()
	res, err := g.srch.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	return res
}

func hitURLs(r *Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.URL)
	}
	return out
}

// TestGeoWebAcceptance is issue 7's end-to-end acceptance on the geo test web: every
// dataset is found and indexed; the non-geographic archives are never downloaded;
// "Boston" returns a dataset that covers Boston first; map boxes return exactly the
// datasets whose box intersects them; facets count formats, CRSs and producers.
func TestGeoWebAcceptance(t *testing.T) {
	g := crawlGeoWeb(t)
	ctx := context.Background()

	// Every dataset found and indexed, as a dataset document with its box.
	for _, want := range g.gw.Datasets {
		doc, ok, err := g.ix.Document(ctx, DocID(want.URL))
		switch {
		case err != nil:
			t.Fatal(err)
		case !ok:
			t.Errorf("%s (%s) is not in the index", want.URL, want.Source)
		case doc.Kind != index.KindDataset || doc.Fields["format"] != want.Format:
			t.Errorf("%s: kind %s format %v, want dataset %s", want.URL, doc.Kind, doc.Fields["format"], want.Format)
		}
	}
	all := g.search(t, Request{Query: "bbox:-180,-90,180,90", PerPage: 100})
	withBox := 0
	for _, want := range g.gw.Datasets {
		if d, ok, _ := g.cat.Dataset(KeyOf(want.URL)); ok && !d.BBox.IsEmpty() {
			withBox++
		}
	}
	if int(all.Total) != withBox || withBox < 5 {
		t.Errorf("the world box returns %d datasets, %d have a box", all.Total, withBox)
	}

	// Non-geographic archives (and unwanted extensions) were never requested.
	requested := map[string]bool{}
	for _, r := range g.web.Requests() {
		requested["http://"+r.Host+r.Path] = true
	}
	for _, u := range g.gw.Forbidden {
		if requested[u] {
			t.Errorf("%s was downloaded", u)
		}
	}

	// "Boston": a dataset covering Boston first, and no world-wide one.
	coversBoston := map[string]bool{}
	for _, d := range g.gw.Datasets {
		if d.Covers == "Boston" {
			coversBoston[d.URL] = true
		}
	}
	for _, mode := range []Mode{Direct, Expanded} {
		res := g.search(t, Request{Query: "Boston", Mode: mode})
		if len(res.Hits) == 0 || !coversBoston[res.Hits[0].URL] {
			t.Fatalf("%s search for Boston: %v, want one of %v first", mode, hitURLs(res), coversBoston)
		}
		if h := res.Hits[0]; h.Covers != "Boston" || h.Fit < 0.3 {
			t.Errorf("%s: first hit covers %q with fit %.2f", mode, h.Covers, h.Fit)
		}
		if len(res.Places) == 0 || res.Places[0].Name != "Boston" {
			t.Errorf("places %+v", res.Places)
		}
	}
	// The world maps cover Boston too, below the city's datasets.
	res := g.search(t, Request{Query: "Boston", PerPage: 20})
	last := map[string]int{}
	for i, h := range res.Hits {
		last[h.URL] = i
	}
	for _, d := range g.gw.Datasets {
		if d.Covers == "Brazil" { // the world-wide ones
			if i, ok := last[d.URL]; ok && i < len(coversBoston) {
				t.Errorf("world dataset %s ranks %d for Boston", d.URL, i+1)
			}
		}
	}

	// Map boxes: exactly the datasets whose box intersects, whatever else is indexed.
	boxes := map[string]index.BBox{}
	_ = g.cat.Datasets(func(d *catalog.Dataset) error {
		if d.Searchable() && !d.BBox.IsEmpty() {
			boxes[d.URL] = index.BBox{West: d.BBox.MinX, South: d.BBox.MinY, East: d.BBox.MaxX, North: d.BBox.MaxY}
		}
		return nil
	})
	for _, q := range []index.BBox{
		{West: -71.2, South: 42.2, East: -70.9, North: 42.4},  // Boston
		{West: -74.3, South: 40.5, East: -73.7, North: 40.95}, // New York City
		{West: -0.3, South: 51.4, East: 0.1, North: 51.6},     // London
		{West: 170, South: -50, East: -170, North: -30},       // across the antimeridian
		{West: 10, South: -80, East: 11, North: -79},          // Antarctica
	} {
		var want []string
		for u, b := range boxes {
			if intersectsBox(b, q) {
				want = append(want, u)
			}
		}
		box := q
		res := g.search(t, Request{BBox: &box, PerPage: 100})
		got := hitURLs(res)
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("box %v: %v, want %v", q, got, want)
		}
	}

	// Facets.
	res = g.search(t, Request{Query: "bbox:-180,-90,180,90", Facets: true})
	for _, name := range []string{index.FacetFormat, index.FacetCRS, index.FacetProducer} {
		if len(res.Facets[name]) == 0 {
			t.Errorf("no %s facet: %v", name, res.Facets)
		}
	}
	// A facet's filter narrows the results to it.
	f := res.Facets[index.FacetFormat][0]
	narrowed := g.search(t, Request{Query: "bbox:-180,-90,180,90 " + f.Filter})
	if int(narrowed.Total) != f.Count {
		t.Errorf("%s: %d results, facet said %d", f.Filter, narrowed.Total, f.Count)
	}
}

func intersectsBox(b, q index.BBox) bool {
	if b.South > q.North || b.North < q.South {
		return false
	}
	lon := func(w, e float64) bool { return b.West <= e && b.East >= w }
	if q.West > q.East {
		return lon(q.West, 180) || lon(-180, q.East)
	}
	return lon(q.West, q.East)
}

// TestModesAndOrder: direct search finds datasets by their own words and anchors, not by
// their producer page's text; expanded search finds them by both. The producer order puts
// the better-linked producer's datasets first.
func TestModesAndOrder(t *testing.T) {
	g := crawlGeoWeb(t)
	// "informação" is on the Portuguese producer's page only (its first paragraph), not in
	// any anchor, file name or attribute.
	direct := g.search(t, Request{Query: "sistemas informação", Mode: Direct, NoPlaces: true})
	expanded := g.search(t, Request{Query: "sistemas informação", Mode: Expanded, NoPlaces: true})
	if direct.Total != 0 || expanded.Total == 0 {
		t.Errorf("producer-page words: direct %d results, expanded %d", direct.Total, expanded.Total)
	}
	// Anchor words are found in both modes.
	for _, mode := range []Mode{Direct, Expanded} {
		if r := g.search(t, Request{Query: "elevação", Mode: mode, NoPlaces: true}); r.Total == 0 {
			t.Errorf("%s: the anchor word elevação finds nothing", mode)
		}
	}
	res := g.search(t, Request{Query: "bbox:-180,-90,180,90", Order: ByProducer, PerPage: 100})
	for i := 1; i < len(res.Hits); i++ {
		a, b := res.Hits[i-1].Producer, res.Hits[i].Producer
		if a.Score < b.Score || a.Score == b.Score && a.Files < b.Files {
			t.Errorf("producer order broken at %d: %+v before %+v", i, a, b)
		}
	}
	if res.Hits[0].Producer.Title == "" || res.Hits[0].Producer.URL == "" || res.Hits[0].Producer.Files == 0 {
		t.Errorf("producer details missing: %+v", res.Hits[0].Producer)
	}
}

// TestGoneDatasetsLeaveSearch: a dataset marked gone (a revisit's 404, or recheck)
// leaves the index; downloads are counted and survive a refetch.
func TestGoneDatasetsLeaveSearch(t *testing.T) {
	g := crawlGeoWeb(t)
	ctx := context.Background()
	u := g.gw.Datasets[0].URL
	k := KeyOf(u)
	if _, ok, err := g.cat.AddDownload(k); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, _, err := g.cat.MarkGone(k, "http-"+http.StatusText(404), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := g.xr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := g.ix.Document(ctx, DocID(u)); ok {
		t.Errorf("%s is still indexed after it was marked gone", u)
	}
	d, _, _ := g.cat.Dataset(k)
	if d.Downloads != 1 {
		t.Errorf("downloads %d", d.Downloads)
	}
	// Rebuild: Reindex restores what is searchable and leaves the gone one out.
	n, err := Reindex(ctx, g.cat, g.ix)
	if err != nil || n < len(g.gw.Datasets)-1 {
		t.Errorf("reindexed %d of %d: %v", n, len(g.gw.Datasets)-1, err)
	}
	if _, ok, _ := g.ix.Document(ctx, DocID(u)); ok {
		t.Errorf("%s came back with the rebuild", u)
	}
	_ = os.Remove(filepath.Join(g.cfg.Data, "nothing"))
}
