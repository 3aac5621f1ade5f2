package geosearch

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/gazetteer"
	"github.com/sonda-search/sonda/geo/rank"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/query"
)

// Mode is a place-name search mode of the thesis (§4.2, Fig. 4-2).
type Mode string

const (
	// Direct looks for the query in the dataset's place names, the anchor text of the
	// links to it and its own metadata (file name, class, layers, sidecar text): the
	// thesis's "Search" button. The default.
	Direct Mode = "direct"
	// Expanded also looks in the extended anchor text (±20 words around the links) and in
	// the producer pages' title, description, keywords and text: the thesis's "Expanded
	// Search", for users unsure of a place's name or after a region's data in general.
	Expanded Mode = "expanded"
)

// ParseMode reads a mode name; "" is Direct.
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case "", Direct:
		return Direct, nil
	case Expanded:
		return Expanded, nil
	}
	return "", fmt.Errorf("search mode %q is not direct or expanded", s)
}

// Order is how results are ordered.
type Order string

const (
	// ByRelevance orders by text score, blended with how well a dataset's box fits the
	// place the query names. The default.
	ByRelevance Order = "relevance"
	// ByProducer is the thesis's order (§4.4): the producer's link score, then its number
	// of datasets, then downloads; relevance breaks the remaining ties.
	ByProducer Order = "producer"
)

// ParseOrder reads an order name; "" is ByRelevance.
func ParseOrder(s string) (Order, error) {
	switch Order(strings.ToLower(strings.TrimSpace(s))) {
	case "", ByRelevance:
		return ByRelevance, nil
	case ByProducer:
		return ByProducer, nil
	}
	return "", fmt.Errorf("order %q is not relevance or producer", s)
}

// Index is what the searcher needs of the search index (*index.Index).
type Index interface {
	Search(ctx context.Context, req index.Request) (*index.Result, error)
	Ranking() index.Ranking
}

// Request is a dataset search.
type Request struct {
	// Query is in the query language (package query): words, phrases, and filters such as
	// bbox:, format:, crs:, producer:. Empty with a BBox: every dataset in the box.
	Query string
	Mode  Mode
	// BBox restricts results to datasets whose box intersects it (the map search); it is
	// added to the query as a bbox: filter.
	BBox    *index.BBox
	Order   Order
	Page    int // from 1
	PerPage int // default 10, at most 100
	Facets  bool
	// NoPlaces turns the gazetteer match off: the query's words are then only words.
	NoPlaces bool
}

// Result is one page of datasets.
type Result struct {
	Total   uint64                        `json:"total"`
	Took    time.Duration                 `json:"took"`
	Query   string                        `json:"query"` // as the index ran it (places expanded)
	Mode    Mode                          `json:"mode"`
	Order   Order                         `json:"order"`
	Page    int                           `json:"page"`
	PerPage int                           `json:"per_page"`
	Pages   int                           `json:"pages"`
	Relaxed bool                          `json:"relaxed,omitempty"`
	Places  []PlaceMatch                  `json:"places,omitempty"`
	Hits    []Hit                         `json:"hits"`
	Facets  map[string][]index.FacetCount `json:"facets,omitempty"`
}

// PlaceMatch is a place the query's words name, matched against dataset boxes.
type PlaceMatch struct {
	Words   string  `json:"words"` // the words of the query that name it
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	Country string  `json:"country,omitempty"`
	Lon     float64 `json:"lon"`
	Lat     float64 `json:"lat"`
}

// Hit is one dataset.
type Hit struct {
	ID        string      `json:"id"`
	URL       string      `json:"url"`
	Name      string      `json:"name"`
	Snippet   string      `json:"snippet"`
	Score     float64     `json:"score"`
	Fit       float64     `json:"fit,omitempty"`    // how well the box fits the query's place (0..1)
	Covers    string      `json:"covers,omitempty"` // the query's place the box covers
	Format    string      `json:"format"`
	Container string      `json:"container,omitempty"`
	CRS       string      `json:"crs,omitempty"`
	CRSName   string      `json:"crs_name,omitempty"`
	Features  int         `json:"features"`
	Size      int64       `json:"size"`
	Fetched   time.Time   `json:"fetched"`
	Downloads int         `json:"downloads"`
	BBox      *index.BBox `json:"bbox,omitempty"`
	Thumbnail bool        `json:"thumbnail"`
	Class     string      `json:"class,omitempty"`
	Places    []string    `json:"places,omitempty"` // the first place names of its attributes
	Producer  Producer    `json:"producer"`
}

// Producer is the site that published a dataset, as results show it.
type Producer struct {
	Site  string `json:"site"`
	Title string `json:"title,omitempty"`
	URL   string `json:"url,omitempty"` // the first producer page sonda saw
	Files int    `json:"files"`
	Score int    `json:"score"` // the thesis's link score
}

// Searcher searches datasets. It is safe for concurrent use.
type Searcher struct {
	ix  Index
	cat *catalog.Catalog
	gaz *gazetteer.Gazetteer

	mu       sync.Mutex
	scores   map[string]int
	scoredAt time.Time
}

// NewSearcher searches ix, showing producer and download figures from cat (nil: none)
// and matching place names with gaz (nil: the embedded gazetteer).
func NewSearcher(ix Index, cat *catalog.Catalog, gaz *gazetteer.Gazetteer) *Searcher {
	if gaz == nil {
		gaz = gazetteer.Default()
	}
	return &Searcher{ix: ix, cat: cat, gaz: gaz}
}

// window is how many of the best index results a search reorders (the index serves at most
// 100 per request); results past it follow in the index's order.
const window = 100

// maxPlacesPerSpan bounds the places one span of words may name (Boston, USA and Boston, UK...).
const maxPlacesPerSpan = 3

// Search runs a dataset search. A malformed query is an *index.QueryError.
func (s *Searcher) Search(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	if req.Page <= 0 {
		req.Page = 1
	}
	if req.PerPage <= 0 {
		req.PerPage = 10
	}
	req.PerPage = min(req.PerPage, 100)
	if req.Mode == "" {
		req.Mode = Direct
	}
	if req.Order == "" {
		req.Order = ByRelevance
	}
	q := strings.TrimSpace(req.Query)
	res := &Result{Mode: req.Mode, Order: req.Order, Page: req.Page, PerPage: req.PerPage, Hits: []Hit{}}
	var places []placeSpan
	if !req.NoPlaces && q != "" {
		var err error
		if q, places, err = s.expandPlaces(q); err != nil {
			return nil, err
		}
	}
	if req.BBox != nil {
		q = strings.TrimSpace(q + " bbox:" + req.BBox.String())
	}
	if q == "" {
		res.Took = time.Since(start)
		return res, nil
	}
	ir := index.Request{Query: q, Kind: index.KindDataset, Facets: req.Facets}
	if req.Mode == Direct {
		r := s.ix.Ranking()
		r.Body = 0
		ir.Ranking = &r
	}
	perWindow := max(1, window/req.PerPage) * req.PerPage
	from := (req.Page - 1) * req.PerPage
	rerank := from+req.PerPage <= perWindow
	if rerank {
		ir.Page, ir.PerPage = 1, perWindow
	} else {
		ir.Page, ir.PerPage = req.Page, req.PerPage
	}
	ixr, err := s.ix.Search(ctx, ir)
	if err != nil {
		return nil, err
	}
	res.Total, res.Relaxed, res.Query, res.Facets = ixr.Total, ixr.Relaxed, ixr.Query, ixr.Facets
	res.Pages = ixr.Pages
	if rerank {
		res.Pages = int((min(ixr.Total, uint64(max(ixr.Pages, 1)*ir.PerPage)) + uint64(req.PerPage) - 1) / uint64(req.PerPage))
	}
	for _, p := range places {
		res.Places = append(res.Places, p.matches...)
	}
	hits := make([]Hit, 0, len(ixr.Hits))
	best := 0.0
	for _, h := range ixr.Hits {
		best = max(best, h.Score)
	}
	for _, h := range ixr.Hits {
		hit := hitOf(h)
		if rerank {
			text := 0.0
			if best > 0 {
				text = h.Score / best
			}
			hit.Score = text
			if len(places) > 0 && hit.BBox != nil {
				for _, p := range places {
					for i, pl := range p.places {
						if f := Fit(*hit.BBox, pl); f > hit.Fit && contains(*hit.BBox, pl.Lon, pl.Lat) {
							hit.Fit, hit.Covers = f, p.matches[i].Name
						}
					}
				}
			}
			if len(places) > 0 {
				hit.Score = (text + hit.Fit) / 2
			}
		}
		hits = append(hits, hit)
	}
	s.enrich(hits)
	if rerank {
		switch req.Order {
		case ByProducer:
			sort.SliceStable(hits, func(i, j int) bool {
				a, b := hits[i], hits[j]
				if a.Producer.Score != b.Producer.Score {
					return a.Producer.Score > b.Producer.Score
				}
				if a.Producer.Files != b.Producer.Files {
					return a.Producer.Files > b.Producer.Files
				}
				if a.Downloads != b.Downloads {
					return a.Downloads > b.Downloads
				}
				return a.Score > b.Score
			})
		default:
			sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
		}
		hits = hits[min(from, len(hits)):min(from+req.PerPage, len(hits))]
	}
	res.Hits = hits
	res.Took = time.Since(start)
	return res, nil
}

func contains(b index.BBox, lon, lat float64) bool {
	return lon >= b.West && lon <= b.East && lat >= b.South && lat <= b.North
}

// hitOf reads a dataset hit's typed fields.
func hitOf(h index.Hit) Hit {
	out := Hit{ID: h.ID, URL: h.URL, Name: h.Title, Snippet: h.Snippet, Score: h.Score, Fetched: h.Fetched}
	f := h.Fields
	str := func(name string) string { s, _ := f[name].(string); return s }
	num := func(name string) float64 {
		switch v := f[name].(type) {
		case float64:
			return v
		case int:
			return float64(v)
		case int64:
			return float64(v)
		}
		return 0
	}
	list := func(name string) []string {
		switch v := f[name].(type) {
		case []string:
			return v
		case []any:
			out := make([]string, 0, len(v))
			for _, x := range v {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
		return nil
	}
	out.Format, out.Container, out.CRS, out.CRSName, out.Class = str("format"), str("container"), str("crs"), str("crs_name"), str("class")
	out.Features, out.Size = int(num("features")), int64(num("size"))
	out.Thumbnail, _ = f["thumbnail"].(bool)
	if b, ok := f["bbox"].(index.BBox); ok {
		out.BBox = &b
	}
	if p := list("places"); len(p) > 0 {
		out.Places = p[:min(len(p), 12)]
	}
	if p := list("producer"); len(p) > 0 {
		out.Producer.Site = p[0]
	}
	return out
}

// enrich adds what changes without the document being rewritten: downloads and the
// producer's record and score, read from the catalog.
func (s *Searcher) enrich(hits []Hit) {
	if s.cat == nil {
		return
	}
	scores := s.producerScores()
	sites := siteCache(s.cat) // hits of one producer read its record once
	for i := range hits {
		h := &hits[i]
		if d, ok, err := s.cat.Dataset(KeyOf(h.URL)); err == nil && ok {
			h.Downloads = d.Downloads
		}
		if h.Producer.Site == "" {
			continue
		}
		h.Producer.Score = scores[h.Producer.Site]
		if site := sites(h.Producer.Site); site != nil {
			h.Producer.Title, h.Producer.URL, h.Producer.Files = site.Title, site.Home, len(site.DatasetURLs)
		}
	}
}

// scoreTTL is how long producer scores are reused: they move only as a crawl finds links.
const scoreTTL = 30 * time.Second

func (s *Searcher) producerScores() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scores != nil && time.Since(s.scoredAt) < scoreTTL {
		return s.scores
	}
	producers := map[string]bool{}
	_ = s.cat.Sites(func(site *catalog.Site) error { producers[site.Site] = true; return nil })
	var edges []rank.Edge
	_ = s.cat.Edges(func(from, to string) error { edges = append(edges, rank.Edge{From: from, To: to}); return nil })
	s.scores = rank.Scores(edges, func(site string) bool { return producers[site] })
	s.scoredAt = time.Now()
	return s.scores
}

// placeSpan is a run of query words that names places.
type placeSpan struct {
	start, end int // byte range in the query
	words      string
	places     []gazetteer.Place
	matches    []PlaceMatch
}

// maxSpanWords is the longest place name looked up, in words ("são josé dos campos").
const maxSpanWords = 5

// expandPlaces finds the place names among the query's top-level words and phrases and
// rewrites each as (words OR bbox:point...), so that datasets covering the place match too.
func (s *Searcher) expandPlaces(q string) (string, []placeSpan, error) {
	n, err := query.Parse(q, query.Options{})
	if err != nil {
		return "", nil, err
	}
	var items []queryItem
	add := func(c query.Node) {
		switch w := c.(type) {
		case *query.Word:
			if w.Field == query.Default {
				items = append(items, queryItem{w.At, w.At + len(w.Text), w.Text, false})
			}
		case *query.Phrase:
			if w.Field == query.Default {
				items = append(items, queryItem{w.At, w.At + len(w.Text) + 2, w.Text, true})
			}
		}
	}
	switch b := n.(type) {
	case *query.Bool:
		for _, c := range b.Must {
			add(c)
		}
	default:
		add(n)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].start < items[j].start })
	var spans []placeSpan
	for i := 0; i < len(items); {
		found := false
		for k := min(len(items), i+maxSpanWords); k > i; k-- {
			if k > i+1 && !adjacent(q, items[i:k]) {
				continue
			}
			words := make([]string, 0, k-i)
			for _, it := range items[i:k] {
				words = append(words, it.text)
			}
			name := strings.Join(words, " ")
			ps := s.gaz.Lookup(name)
			if len(ps) == 0 {
				continue
			}
			sp := placeSpan{start: items[i].start, end: items[k-1].end, words: name}
			for _, p := range ps[:min(len(ps), maxPlacesPerSpan)] {
				sp.places = append(sp.places, p)
				sp.matches = append(sp.matches, PlaceMatch{Words: name, Name: p.Name, Kind: p.Kind.String(), Country: p.Country, Lon: p.Lon, Lat: p.Lat})
			}
			spans = append(spans, sp)
			i, found = k, true
			break
		}
		if !found {
			i++
		}
	}
	if len(spans) == 0 {
		return q, nil, nil
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(q[last:sp.start])
		b.WriteString("(")
		if strings.Contains(sp.words, " ") {
			b.WriteString(`"` + strings.ReplaceAll(sp.words, `"`, "") + `"`)
		} else {
			b.WriteString(sp.words)
		}
		for _, p := range sp.places {
			pt := index.BBox{West: p.Lon, South: p.Lat, East: p.Lon, North: p.Lat}
			b.WriteString(" OR bbox:" + pt.String())
		}
		b.WriteString(")")
		last = sp.end
	}
	b.WriteString(q[last:])
	return b.String(), spans, nil
}

// queryItem is a top-level word or phrase of a query, at its byte range in the query.
type queryItem struct {
	start, end int
	text       string
	phrase     bool
}

// adjacent reports whether the items stand next to each other in q, separated by spaces
// only, and are plain words (a phrase stands for itself).
func adjacent(q string, items []queryItem) bool {
	for i, it := range items {
		if it.phrase {
			return false
		}
		if i > 0 {
			prevEnd := items[i-1].end
			if prevEnd > it.start || strings.TrimSpace(q[prevEnd:it.start]) != "" {
				return false
			}
		}
	}
	return true
}

// Fit is how well a dataset's box fits a place: 1 when the box has the place's area,
// 1/(1+d) when the areas differ by d orders of magnitude (a box 10 times too big or too
// small scores 0.5, a world map around a city about 0.13). A region's or country's area is
// its box's; a city's is its population over 3,000 people per km², a typical urban
// density (Boston about 5,000, São Paulo 7,400, Atlanta 1,400), at least 1 km².
func Fit(b index.BBox, p gazetteer.Place) float64 {
	box := math.Max(AreaKm2(b), 1)
	place := 0.0
	if p.Kind != gazetteer.City && p.MaxLon > p.MinLon && p.MaxLat > p.MinLat {
		place = AreaKm2(index.BBox{West: p.MinLon, South: p.MinLat, East: p.MaxLon, North: p.MaxLat})
	} else {
		place = float64(p.Population) / 3000
	}
	place = math.Max(place, 1)
	return 1 / (1 + math.Abs(math.Log10(box/place)))
}

// AreaKm2 is the area of a longitude-latitude box on the sphere of the Earth's mean radius:
// R²·Δλ·(sin φ₂ − sin φ₁).
func AreaKm2(b index.BBox) float64 {
	const r = 6371.0
	w := b.East - b.West
	if w < 0 {
		w += 360
	}
	rad := math.Pi / 180
	return r * r * w * rad * math.Abs(math.Sin(b.North*rad)-math.Sin(b.South*rad))
}
