package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/web"
)

// GeoBackend adapts the geo vertical's dataset search (package geo/geosearch over the index
// ix and the catalog cat) to the web layer's Datasets interface. data is the data
// directory, where the thumbnails are.
func GeoBackend(ix *index.Index, cat *catalog.Catalog, data string) web.Datasets {
	return geoBackend{s: geosearch.NewSearcher(ix, cat, nil), cat: cat, data: data}
}

type geoBackend struct {
	s    *geosearch.Searcher
	cat  *catalog.Catalog
	data string
}

func (b geoBackend) SearchDatasets(ctx context.Context, req web.DatasetRequest) (*web.DatasetResult, error) {
	mode, err := geosearch.ParseMode(req.Mode)
	if err != nil {
		return nil, &web.QueryError{Msg: err.Error()}
	}
	order, err := geosearch.ParseOrder(req.Order)
	if err != nil {
		return nil, &web.QueryError{Msg: err.Error()}
	}
	gr := geosearch.Request{Query: req.Query, Mode: mode, Order: order, Page: req.Page, PerPage: req.PerPage, Facets: req.Facets, NoPlaces: req.NoPlaces}
	if req.BBox != nil {
		gr.BBox = &index.BBox{West: req.BBox[0], South: req.BBox[1], East: req.BBox[2], North: req.BBox[3]}
	}
	res, err := b.s.Search(ctx, gr)
	if err != nil {
		return nil, SearchError(err)
	}
	out := &web.DatasetResult{Total: res.Total, TookMS: float64(res.Took.Microseconds()) / 1000, Query: res.Query, Mode: string(res.Mode),
		Order: string(res.Order), Page: res.Page, Pages: res.Pages, Relaxed: res.Relaxed, Hits: make([]web.DatasetHit, 0, len(res.Hits)),
		Places: make([]web.DatasetPlace, 0, len(res.Places)), Facets: webFacets(res.Facets)}
	for _, p := range res.Places {
		out.Places = append(out.Places, web.DatasetPlace{Words: p.Words, Name: p.Name, Kind: p.Kind, Country: p.Country, Lon: p.Lon, Lat: p.Lat})
	}
	for _, h := range res.Hits {
		wh := web.DatasetHit{ID: h.ID, URL: h.URL, Name: h.Name, Snippet: h.Snippet, Score: h.Score, Fit: h.Fit, Covers: h.Covers,
			Format: h.Format, Container: h.Container, CRS: h.CRS, CRSName: h.CRSName, Features: h.Features, Size: h.Size,
			Fetched: h.Fetched, Downloads: h.Downloads, Thumbnail: h.Thumbnail, Class: h.Class, Places: h.Places,
			Producer: web.DatasetProducer{Site: h.Producer.Site, Title: h.Producer.Title, URL: h.Producer.URL, Files: h.Producer.Files, Score: h.Producer.Score}}
		if h.BBox != nil {
			wh.BBox = &[4]float64{h.BBox.West, h.BBox.South, h.BBox.East, h.BBox.North}
		}
		out.Hits = append(out.Hits, wh)
	}
	return out, nil
}

// record finds the catalog record of a dataset's index ID.
func (b geoBackend) record(id string) (*catalog.Dataset, bool, error) {
	u := geosearch.URLOf(id)
	if u == "" {
		return nil, false, nil
	}
	return b.cat.Dataset(geosearch.KeyOf(u))
}

// Download counts the download in the catalog (the thesis's download counter) and returns
// the dataset's URL. A dataset that is gone is not offered.
func (b geoBackend) Download(_ context.Context, id string) (string, bool, error) {
	d, ok, err := b.record(id)
	if err != nil || !ok || d.Gone != "" {
		return "", false, err
	}
	if _, _, err := b.cat.AddDownload(geosearch.KeyOf(d.URL)); err != nil {
		return "", false, err
	}
	return d.URL, true, nil
}

// Thumbnail reads the dataset's thumbnail from the data directory; the path comes from
// the record and must stay inside DATA/geo.
func (b geoBackend) Thumbnail(_ context.Context, id string) ([]byte, bool, error) {
	d, ok, err := b.record(id)
	if err != nil || !ok || d.Thumbnail == "" {
		return nil, false, err
	}
	root := filepath.Join(b.data, "geo")
	p := filepath.Join(b.data, d.Thumbnail)
	if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
		return nil, false, fmt.Errorf("thumbnail path %q of %s is outside %s", d.Thumbnail, d.URL, root)
	}
	png, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return png, err == nil, err
}
