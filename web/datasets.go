package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Datasets is the geo vertical's dataset search (package geo/geosearch, adapted by
// web/local): place-name search in the thesis's direct and expanded modes, map (box)
// search, the counting download redirect and the thumbnails.
type Datasets interface {
	SearchDatasets(ctx context.Context, req DatasetRequest) (*DatasetResult, error)
	// Download counts one download of the dataset with id and returns its URL; ok is false
	// for an unknown id, so the redirect can never point anywhere but at a dataset.
	Download(ctx context.Context, id string) (target string, ok bool, err error)
	// Thumbnail returns the dataset's PNG thumbnail; ok is false when it has none.
	Thumbnail(ctx context.Context, id string) (png []byte, ok bool, err error)
}

// DatasetRequest is a dataset search. Mode is "direct" (the default: place names, anchor
// text and the file's own metadata) or "expanded" (also the producers' pages); Order is
// "relevance" (default) or "producer" (the thesis's: producer score, files, downloads).
type DatasetRequest struct {
	Query    string
	Mode     string
	Order    string
	BBox     *[4]float64 // west, south, east, north
	Page     int
	PerPage  int
	Facets   bool
	NoPlaces bool // do not match the query's place names against dataset boxes
}

// DatasetResult is one page of datasets.
type DatasetResult struct {
	Total   uint64                  `json:"total"`
	TookMS  float64                 `json:"took_ms"`
	Query   string                  `json:"query"`
	Mode    string                  `json:"mode"`
	Order   string                  `json:"order"`
	Page    int                     `json:"page"`
	Pages   int                     `json:"pages"`
	Relaxed bool                    `json:"relaxed,omitempty"`
	Places  []DatasetPlace          `json:"places"`
	Hits    []DatasetHit            `json:"hits"`
	Facets  map[string][]FacetCount `json:"-"`
}

// DatasetPlace is a place the query named, whose covering datasets were matched.
type DatasetPlace struct {
	Words   string  `json:"words"`
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	Country string  `json:"country,omitempty"`
	Lon     float64 `json:"lon"`
	Lat     float64 `json:"lat"`
}

// DatasetHit is one dataset.
type DatasetHit struct {
	ID        string          `json:"id"`
	URL       string          `json:"url"`
	Name      string          `json:"name"`
	Snippet   string          `json:"snippet"`
	Score     float64         `json:"score"`
	Fit       float64         `json:"fit,omitempty"`
	Covers    string          `json:"covers,omitempty"`
	Format    string          `json:"format"`
	Container string          `json:"container,omitempty"`
	CRS       string          `json:"crs,omitempty"`
	CRSName   string          `json:"crs_name,omitempty"`
	Features  int             `json:"features"`
	Size      int64           `json:"size"`
	Fetched   time.Time       `json:"fetched"`
	Downloads int             `json:"downloads"`
	BBox      *[4]float64     `json:"bbox"`
	Thumbnail bool            `json:"thumbnail"`
	Class     string          `json:"class,omitempty"`
	Places    []string        `json:"places,omitempty"`
	Producer  DatasetProducer `json:"producer"`
}

// DatasetProducer is the site that published a dataset.
type DatasetProducer struct {
	Site  string `json:"site"`
	Title string `json:"title,omitempty"`
	URL   string `json:"url,omitempty"`
	Files int    `json:"files"`
	Score int    `json:"score"`
}

func (s *Server) datasetRoutes() []route {
	return []route{
		{"GET", "/datasets", "datasets-page", false, s.datasetsPage},
		{"GET", "/download", "download", false, s.download},
		{"GET", "/thumb", "thumbnail", false, s.thumbnail},
		{"GET", "/api/datasets", "api-datasets", false, s.apiDatasets},
	}
}

func (s *Server) datasets(w http.ResponseWriter, r *http.Request) Datasets {
	if s.o.Datasets == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "this server has no dataset search: turn on geo.enabled (sonda init --profile geo) and crawl")
		return nil
	}
	return s.o.Datasets
}

// datasetParams reads q, mode, order, bbox, page, per_page and places; the error is a
// message for the user.
func (s *Server) datasetParams(v url.Values) (DatasetRequest, error) {
	req := DatasetRequest{Query: strings.TrimSpace(v.Get("q")), Mode: strings.ToLower(strings.TrimSpace(v.Get("mode"))),
		Order: strings.ToLower(strings.TrimSpace(v.Get("order"))), Facets: true, NoPlaces: v.Get("places") == "off"}
	if len(req.Query) > maxQueryLength {
		return req, fmt.Errorf("the query is %d bytes long; at most %d are accepted", len(req.Query), maxQueryLength)
	}
	switch req.Mode {
	case "", "direct", "expanded":
	default:
		return req, fmt.Errorf("mode must be direct or expanded, not %q", req.Mode)
	}
	switch req.Order {
	case "", "relevance", "producer":
	default:
		return req, fmt.Errorf("order must be relevance or producer, not %q", req.Order)
	}
	if b := strings.TrimSpace(v.Get("bbox")); b != "" {
		box, err := parseBox(b)
		if err != nil {
			return req, err
		}
		req.BBox = &box
	}
	var err error
	if req.Page, err = intParam(v, "page", 1, 1, s.o.MaxResults); err != nil {
		return req, err
	}
	if req.PerPage, err = intParam(v, "per_page", s.o.PerPage, 1, 100); err != nil {
		return req, err
	}
	if req.Query == "" && req.BBox == nil {
		return req, errors.New("give a place or words with q=, a box with bbox=west,south,east,north, or both")
	}
	return req, nil
}

// parseBox reads west,south,east,north in degrees (west > east crosses the antimeridian).
func parseBox(s string) ([4]float64, error) {
	var b [4]float64
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return b, fmt.Errorf("bbox must be west,south,east,north in degrees, e.g. -71.2,42.2,-70.9,42.4, not %q", s)
	}
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || x != x {
			return b, fmt.Errorf("bbox: %q is not a number", p)
		}
		b[i] = x
	}
	if b[0] < -180 || b[0] > 180 || b[2] < -180 || b[2] > 180 || b[1] < -90 || b[1] > 90 || b[3] < -90 || b[3] > 90 || b[1] > b[3] {
		return b, fmt.Errorf("bbox %q: longitudes run from -180 to 180, latitudes from -90 to 90, south below north", s)
	}
	return b, nil
}

func (s *Server) searchDatasets(r *http.Request, ds Datasets, req DatasetRequest) (*DatasetResult, error) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	res, err := ds.SearchDatasets(ctx, req)
	if err == nil {
		res.Hits, res.Places = nonNil(res.Hits), nonNil(res.Places)
	}
	return res, err
}

// apiDatasetResult is the answer of GET /api/datasets.
type apiDatasetResult struct {
	*DatasetResult
	Facets map[string][]apiFacet `json:"facets"`
}

func (s *Server) apiDatasets(w http.ResponseWriter, r *http.Request) {
	ds := s.datasets(w, r)
	if ds == nil {
		return
	}
	req, err := s.datasetParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.searchDatasets(r, ds, req)
	if err != nil {
		code, msg, pos := s.backendError(w, r, "dataset search", err)
		writeJSON(w, code, apiError{Error: msg, Position: pos})
		return
	}
	writeJSON(w, http.StatusOK, apiDatasetResult{DatasetResult: res, Facets: apiFacets(res.Facets)})
}

// download is the counting redirect: it counts the download, then sends the browser to
// the dataset's own URL (which is only ever a dataset the catalog holds).
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	ds := s.datasets(w, r)
	if ds == nil {
		return
	}
	id := r.URL.Query().Get("id")
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	target, ok, err := ds.Download(ctx, id)
	switch {
	case err != nil:
		code, msg, _ := s.backendError(w, r, "download", err)
		s.fail(w, r, code, msg)
	case !ok:
		s.fail(w, r, http.StatusNotFound, "no dataset has the id "+strconv.Quote(id))
	default:
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, target, http.StatusFound)
	}
}

func (s *Server) thumbnail(w http.ResponseWriter, r *http.Request) {
	ds := s.datasets(w, r)
	if ds == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	png, ok, err := ds.Thumbnail(ctx, r.URL.Query().Get("id"))
	switch {
	case err != nil:
		code, msg, _ := s.backendError(w, r, "thumbnail", err)
		s.fail(w, r, code, msg)
	case !ok:
		s.fail(w, r, http.StatusNotFound, "this dataset has no thumbnail")
	default:
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Write(png)
	}
}

// datasetsData is the datasets page.
type datasetsData struct {
	Req        DatasetRequest
	Result     *DatasetResult
	Hits       []datasetView
	Facets     []facetGroup
	First      int
	Last       int
	Box        string // the bbox parameter as given
	Prev, Next string
	Error      string
	Searched   bool
}

type datasetView struct {
	DatasetHit
	Rank     int
	BoxAttr  string // "w,s,e,n" for the map script
	SizeText string
	Type     string
}

func (s *Server) datasetsPage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	pg := page{Title: "Datasets", Query: "", Nav: "datasets"}
	d := datasetsData{Box: strings.TrimSpace(v.Get("bbox"))}
	ds := s.datasets(w, r)
	if ds == nil {
		return
	}
	if v.Get("q") == "" && v.Get("bbox") == "" {
		d.Req = DatasetRequest{Mode: "direct"}
		s.render(w, http.StatusOK, "datasets", pg.with(d))
		return
	}
	req, err := s.datasetParams(v)
	d.Req, d.Searched = req, true
	if err != nil {
		d.Error = err.Error()
		s.render(w, http.StatusBadRequest, "datasets", pg.with(d))
		return
	}
	res, err := s.searchDatasets(r, ds, req)
	if err != nil {
		code, msg, _ := s.backendError(w, r, "dataset search", err)
		d.Error = msg
		s.render(w, code, "datasets", pg.with(d))
		return
	}
	if req.Query != "" {
		pg.Title = req.Query + " – datasets"
	}
	d.Result = res
	d.First = (req.Page-1)*req.PerPage + 1
	for i, h := range res.Hits {
		dv := datasetView{DatasetHit: h, Rank: d.First + i, SizeText: formatBytes(h.Size), Type: h.Format}
		if h.Container != "" {
			dv.Type = h.Format + " in " + h.Container
		}
		if h.BBox != nil {
			dv.BoxAttr = fmt.Sprintf("%g,%g,%g,%g", h.BBox[0], h.BBox[1], h.BBox[2], h.BBox[3])
		}
		d.Hits = append(d.Hits, dv)
	}
	d.Last = d.First + len(d.Hits) - 1
	d.Facets = facetGroups(req.Query, res.Facets, func(q string) string { return datasetsURL(v, q, 1) })
	if req.Page > 1 {
		d.Prev = datasetsURL(v, req.Query, req.Page-1)
	}
	if req.Page < res.Pages {
		d.Next = datasetsURL(v, req.Query, req.Page+1)
	}
	s.render(w, http.StatusOK, "datasets", pg.with(d))
}

// datasetsURL is the datasets page with v's parameters, q and page replaced.
func datasetsURL(v url.Values, q string, page int) string {
	out := url.Values{}
	for _, k := range []string{"mode", "order", "bbox", "places", "per_page"} {
		if x := v.Get(k); x != "" {
			out.Set(k, x)
		}
	}
	if q != "" {
		out.Set("q", q)
	}
	if page > 1 {
		out.Set("page", strconv.Itoa(page))
	}
	return "/datasets?" + out.Encode()
}

// formatBytes writes a size for people: 591 kB, 2.5 MB.
func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 0, 64) + " kB"
	case n < 1000*1000*1000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + " GB"
}
