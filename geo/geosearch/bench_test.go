package geosearch

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/gazetteer"
	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
)

// synthDatasets fills a catalog with n datasets spread over the world's cities the way
// producers' data is: a box around a city (a district's to a state's size), that city and
// its region among the place names, the gazetteer places the box covers, a format, a
// producer site and a link with anchor text.
func synthDatasets(b *testing.B, db *store.DB, n int) {
	b.Helper()
	gaz := gazetteer.Default()
	cities := gaz.Within(geom.BBox{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}, 20000)
	rng := rand.New(rand.NewSource(7))
	cat := catalog.New(db)
	formats := []string{"shapefile", "geojson", "geotiff", "geopackage", "kml"}
	classes := []string{"rivers", "roads", "census tracts", "land use", "elevation", "buildings"}
	for i := range n {
		c := cities[rng.Intn(len(cities))]
		half := 0.02 + rng.ExpFloat64()*0.5
		box := geom.BBox{MinX: c.Lon - half, MinY: c.Lat - half, MaxX: c.Lon + half, MaxY: c.Lat + half}
		class := classes[rng.Intn(len(classes))]
		format := formats[rng.Intn(len(formats))]
		site := fmt.Sprintf("http://data%03d.example/", rng.Intn(400))
		u := fmt.Sprintf("%sfiles/%d_%s.zip", site, i, class)
		var covers []geo.Place
		for _, p := range gaz.Within(box, 8) {
			covers = append(covers, geo.Place{Name: p.Name, Kind: p.Kind.String(), Country: p.Country})
		}
		d := &catalog.Dataset{
			URL: u, Name: fmt.Sprintf("%d_%s.zip", i, class), Kind: "archive", FetchedAt: time.Unix(1.7e9, 0), Size: int64(1e4 + rng.Intn(1e7)),
			Geographic: true, BBox: box,
			Metadata: &geo.Dataset{File: u, Format: format, Container: "zip", BBox: box, Class: class,
				Layers: []*geo.Layer{{Name: class, Format: format, GeometryType: "Polygon", Features: 1 + rng.Intn(5000), BBoxWGS84: box}},
				Places: []geo.Place{{Name: c.Name, Field: "NAME"}, {Name: c.Region, Field: "STATE"}}, Covers: covers},
		}
		if err := cat.PutDataset(KeyOf(u), d); err != nil {
			b.Fatal(err)
		}
		if err := cat.PutLink(KeyOf(u), KeyOf(site), catalog.Link{Page: site, Site: site, Anchor: class + " of " + c.Name, GeoWords: 3}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch: dataset search over 20,000 datasets, in both of the thesis's modes
// with a place name the gazetteer knows, a class word, and a map box. It prints the
// latency percentiles of the mix.
func BenchmarkSearch(b *testing.B) {
	n := benchDatasets
	dir := b.TempDir()
	db, err := store.Open(dir+"/state", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ix, err := index.Open(dir+"/index", index.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	synthDatasets(b, db, n)
	start := time.Now()
	cat := catalog.New(db)
	if got, err := Reindex(context.Background(), cat, ix); err != nil || got != n {
		b.Fatalf("reindexed %d of %d: %v", got, n, err)
	}
	b.Logf("indexed %d datasets in %v (%.0f datasets/s)", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
	s := NewSearcher(ix, cat, nil)
	box := &index.BBox{West: -75, South: 39, East: -70, North: 43}
	reqs := []Request{
		{Query: "Boston"},
		{Query: "Boston", Mode: Expanded},
		{Query: "rivers São Paulo", Facets: true},
		{Query: "elevation", BBox: box},
		{BBox: box, Order: ByProducer},
	}
	var took []time.Duration
	perReq := make([][]time.Duration, len(reqs))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		res, err := s.Search(context.Background(), reqs[i%len(reqs)])
		if err != nil {
			b.Fatal(err)
		}
		if res.Total == 0 {
			b.Fatalf("%+v found nothing", reqs[i%len(reqs)])
		}
		took = append(took, time.Since(t0))
		perReq[i%len(reqs)] = append(perReq[i%len(reqs)], time.Since(t0))
	}
	b.StopTimer()
	for i, ts := range perReq {
		sort.Slice(ts, func(a, c int) bool { return ts[a] < ts[c] })
		if len(ts) > 0 {
			b.Logf("%+v: median %v, max %v", reqs[i], ts[len(ts)/2], ts[len(ts)-1])
		}
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	q := func(p float64) time.Duration { return took[int(p*float64(len(took)-1))] }
	b.ReportMetric(float64(q(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(q(0.99).Microseconds())/1000, "p99-ms")
}

// benchDatasets is the size of BenchmarkSearch's catalog.
var benchDatasets = func() int {
	if n, err := strconv.Atoi(os.Getenv("SONDA_BENCH_DATASETS")); err == nil && n > 0 {
		return n
	}
	return 20000
}()
