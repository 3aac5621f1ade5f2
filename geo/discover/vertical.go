package discover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/rank"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/urlnorm"
)

// Options configure the geo vertical. Zero fields take the defaults in the comments.
type Options struct {
	Lexicon *Lexicon // DefaultLexicon()
	// MinPageHits is how many lexicon matches make a page geo-interesting: 1, the thesis's
	// rule (§3.6: a single match is enough).
	MinPageHits int
	// WindowWords is the extended anchor: words on each side of a link (thesis: 20).
	WindowWords int
	// MaxDatasetBytes caps one dataset download (default 64 MiB); bigger files are recorded
	// with the error "too-large".
	MaxDatasetBytes int64
	// ProducerBoost is added to the priority of links found on producer pages, putting
	// them ahead of others as the thesis's URL list does (Fig. 3-12). Default 1000.
	ProducerBoost float64
	// Base scores links before the boost (default: breadth-first).
	Base crawl.LinkScorer
	// Data is the crawl's data directory: thumbnails go to Data/geo/thumbs, shapefile
	// parts wait in Data/geo/parts until their set is complete.
	Data string
	// TempDir holds downloads while they are inspected (default os.TempDir()).
	TempDir string
	// Places extracts place names (default geo.NewPlaceFinder(nil)).
	Places *geo.PlaceFinder
	// Normalizer must be the crawl's (crawl.NormalizerOptions), so keys agree.
	Normalizer *urlnorm.Normalizer
	Logger     *slog.Logger
}

// Vertical is the geo vertical's crawl integration: an Analyzer (page evidence, producer
// pages, dataset records), a LinkFilter (unwanted extensions; archives only on evidence), a
// LinkScorer (producer-derived links first), a RequestPolicy (datasets are downloaded
// whatever their media type, up to MaxDatasetBytes) and a Sink (forgets per-page state).
type Vertical struct {
	opts     Options
	cat      *catalog.Catalog
	verdicts sync.Map // *crawl.Document → *verdict, from Analyze until Consume
	groups   sync.Mutex

	Stats Stats
}

// Stats count what the vertical did.
type Stats struct {
	GeoPages, ProducerPages, Datasets, NotGeographic, Failed, Rejected atomic.Int64
}

type verdict struct {
	hits     int
	producer bool
	admit    map[int]bool // link index → archive/csv/tiff admitted on evidence
	datasets int
}

// New returns the vertical writing to cat.
func New(cat *catalog.Catalog, opts Options) *Vertical {
	if opts.Lexicon == nil {
		opts.Lexicon = DefaultLexicon()
	}
	if opts.MinPageHits <= 0 {
		opts.MinPageHits = 1
	}
	if opts.WindowWords <= 0 {
		opts.WindowWords = 20
	}
	if opts.MaxDatasetBytes <= 0 {
		opts.MaxDatasetBytes = 64 << 20
	}
	if opts.ProducerBoost == 0 {
		opts.ProducerBoost = 1000
	}
	if opts.Base == nil {
		opts.Base = crawl.BreadthFirst{}
	}
	if opts.Places == nil {
		opts.Places = geo.NewPlaceFinder(nil)
	}
	if opts.Normalizer == nil {
		opts.Normalizer = urlnorm.New(urlnorm.Options{})
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Vertical{opts: opts, cat: cat}
}

// CrawlOptions are the crawl options that install the vertical.
func (v *Vertical) CrawlOptions() []crawl.Option {
	return []crawl.Option{crawl.WithAnalyzers(v), crawl.WithLinkFilters(v), crawl.WithLinkScorer(v),
		crawl.WithRequestPolicies(v), crawl.WithSinks(v)}
}

// Name implements crawl.Analyzer and crawl.Sink.
func (v *Vertical) Name() string { return "geo" }

// ThumbnailPath is where a dataset's thumbnail is kept, relative to the data directory.
func ThumbnailPath(key store.URLKey) string {
	return filepath.Join("geo", "thumbs", hex.EncodeToString(key[:])+".png")
}

// Analyze implements crawl.Analyzer.
func (v *Vertical) Analyze(ctx context.Context, d *crawl.Document) error {
	if d.Page != nil {
		return v.analyzePage(d)
	}
	if d.Fetch == nil || d.Fetch.Status < 200 || d.Fetch.Status > 299 {
		return nil
	}
	kind := Classify(d.URL.String())
	if !kind.Fetched() && kind != Service && !geoMediaType(d.Fetch.MediaType) {
		return nil
	}
	return v.analyzeDataset(ctx, d, kind)
}

// geoMediaType reports media types that carry geographic data (or archives of it).
func geoMediaType(t string) bool {
	switch t {
	case "application/zip", "application/x-zip-compressed", "application/geo+json", "application/vnd.geo+json",
		"application/vnd.google-earth.kml+xml", "application/vnd.google-earth.kmz", "application/gpx+xml",
		"application/geopackage+sqlite3", "image/tiff", "application/gml+xml", "application/x-shapefile":
		return true
	}
	return false
}

func site(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return rank.Site(p.Hostname())
}

// maxContextText bounds the page text kept as a producer's search context.
const maxContextText = 4 << 10

func (v *Vertical) analyzePage(d *crawl.Document) error {
	p := d.Page
	pageText := strings.Join([]string{p.Title, p.Description, strings.Join(p.Keywords, " "), d.Text}, "\n")
	hits := v.opts.Lexicon.Match(pageText)
	vd := &verdict{hits: hits.Total, admit: map[int]bool{}}
	geoPage := hits.Total >= v.opts.MinPageHits
	if geoPage {
		v.Stats.GeoPages.Add(1)
	}
	pageURL := d.URL.String()
	from := site(pageURL)
	pageKey := store.URLKey(d.URL.Key())
	var errs []error
	var datasetURLs []string
	linkedSites := map[string]bool{}
	parts := map[string][]string{} // shapefile group → part URLs linked on this page
	for i := range p.Links {
		lk := &p.Links[i]
		if to := site(lk.URL); to != "" && to != from && isAbsolute(lk.Raw) {
			linkedSites[to] = true
		}
		kind := Classify(lk.URL)
		if !kind.Fetched() {
			continue
		}
		window := p.AnchorWindow(i, v.opts.WindowWords)
		anchorHits := v.opts.Lexicon.Match(lk.Anchor + " " + window).Total
		if kind.NeedsEvidence() {
			if !geoPage && anchorHits == 0 {
				continue
			}
			vd.admit[i] = true
		}
		u, err := v.opts.Normalizer.Parse(lk.URL)
		if err != nil {
			continue
		}
		vd.datasets++
		datasetURLs = append(datasetURLs, u.String())
		if kind == Shapefile {
			g := groupOf(u.String())
			parts[g] = append(parts[g], u.String())
		}
		link := catalog.Link{Page: pageURL, PageTitle: p.Title, Site: from, Anchor: lk.Anchor, Window: window, GeoWords: hits.Total}
		if err := v.cat.PutLink(store.URLKey(u.Key()), pageKey, link); err != nil {
			errs = append(errs, err)
		}
	}
	for to := range linkedSites {
		if err := v.cat.PutEdge(from, to, pageKey); err != nil {
			errs = append(errs, err)
		}
	}
	for g, urls := range parts {
		if err := v.expectParts(g, urls); err != nil {
			errs = append(errs, err)
		}
	}
	if vd.datasets > 0 {
		vd.producer = true
		v.Stats.ProducerPages.Add(1)
		err := v.cat.UpdateSite(from, func(s *catalog.Site) {
			if s.Home == "" {
				s.Home, s.Title, s.Description, s.Keywords = pageURL, p.Title, p.Description, p.Keywords
			}
			if len(s.Text) < maxContextText {
				s.Text = text.CutBytes(strings.TrimSpace(s.Text+"\n"+d.Text), maxContextText)
			}
			s.Pages = appendNew(s.Pages, pageURL)
			for _, u := range datasetURLs {
				s.DatasetURLs = appendNew(s.DatasetURLs, u)
			}
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	v.verdicts.Store(d, vd)
	return errors.Join(errs...)
}

func isAbsolute(raw string) bool {
	r := strings.ToLower(strings.TrimSpace(raw))
	return strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "//")
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if len(list) >= 1000 {
		return list
	}
	return append(list, s)
}

// Admit implements crawl.LinkFilter: unwanted extensions never enter the frontier, and
// archives (and .tif, .csv) only when their page or anchor gave geographic evidence.
func (v *Vertical) Admit(l crawl.Link) (bool, string) {
	kind := Classify(l.URL.String())
	switch {
	case kind == Unwanted:
		v.Stats.Rejected.Add(1)
		return false, "geo-unwanted-extension"
	case kind.NeedsEvidence():
		if l.Source == nil || l.Index < 0 {
			return true, "" // a seed or a redirect target: someone asked for it
		}
		if vd, ok := v.verdicts.Load(l.Source); ok && vd.(*verdict).admit[l.Index] {
			return true, ""
		}
		v.Stats.Rejected.Add(1)
		return false, "geo-no-evidence"
	}
	return true, ""
}

// Score implements crawl.LinkScorer: the base score, plus ProducerBoost for links found on
// producer pages.
func (v *Vertical) Score(l crawl.Link) float64 {
	s := v.opts.Base.Score(l)
	if l.Source != nil {
		if vd, ok := v.verdicts.Load(l.Source); ok && vd.(*verdict).producer {
			s += v.opts.ProducerBoost
		}
	}
	return s
}

// AdjustRequest implements crawl.RequestPolicy: dataset URLs are downloaded whatever media
// type the server declares, up to MaxDatasetBytes.
func (v *Vertical) AdjustRequest(u urlnorm.URL, _ frontier.Item, req *fetch.Request) {
	if k := Classify(u.String()); k.Fetched() || k == Service {
		req.AnyType = true
		req.MaxBodyBytes = v.opts.MaxDatasetBytes
	}
}

// Consume implements crawl.Sink: the page's verdict is no longer needed once its links are
// queued.
func (v *Vertical) Consume(_ context.Context, d *crawl.Document) error {
	v.verdicts.Delete(d)
	return nil
}

// analyzeDataset inspects a downloaded dataset and records it.
func (v *Vertical) analyzeDataset(ctx context.Context, d *crawl.Document, kind Kind) error {
	res := d.Fetch
	u := d.URL.String()
	name := path.Base(d.URL.Path())
	if name == "" || name == "/" || name == "." {
		name = "download"
	}
	key := store.URLKey(d.URL.Key())
	rec := &catalog.Dataset{URL: u, FinalURL: res.FinalURL, Name: name, Kind: kind.String(), FetchedAt: res.StartedAt.UTC(),
		Size: int64(len(res.Body)), ContentType: res.MediaType}
	switch {
	case res.Skipped != "":
		rec.Error = "not-downloaded: " + res.Skipped
	case res.Truncated == fetch.TruncatedLength:
		rec.Error = fmt.Sprintf("too-large: more than %d bytes (geo max-dataset-bytes)", v.opts.MaxDatasetBytes)
	case res.Truncated != "":
		rec.Error = "truncated: " + res.Truncated
	}
	if rec.Error != "" {
		v.Stats.Failed.Add(1)
		return v.cat.PutDataset(key, rec)
	}
	if kind == Shapefile {
		return v.shapefilePart(ctx, d, rec)
	}
	tmp, err := os.MkdirTemp(v.opts.TempDir, "sonda-dl-*")
	if err != nil {
		return fmt.Errorf("geo: temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, safeName(name))
	if err := os.WriteFile(file, res.Body, 0o600); err != nil {
		return fmt.Errorf("geo: %w", err)
	}
	return v.inspectAndStore(ctx, key, rec, file, name)
}

func safeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		name = "download"
	}
	return text.CutBytes(name, 200)
}

// inspectAndStore reads a dataset file, draws its thumbnail and writes its record.
func (v *Vertical) inspectAndStore(ctx context.Context, key store.URLKey, rec *catalog.Dataset, file, name string) error {
	ds, err := geo.Inspect(ctx, file, geo.Options{Name: name, TempDir: v.opts.TempDir, Places: v.opts.Places})
	if err != nil {
		rec.Error = err.Error()
		if errors.Is(err, geo.ErrUnknownFormat) || strings.Contains(err.Error(), "no geographic data") {
			rec.Error = "not-geographic"
			v.Stats.NotGeographic.Add(1)
		} else {
			v.Stats.Failed.Add(1)
		}
		return v.cat.PutDataset(key, rec)
	}
	ds.File = name
	rec.Geographic, rec.Metadata, rec.BBox = true, ds, ds.BBox
	if v.opts.Data != "" {
		if png, err := ds.Thumbnail(geo.ThumbnailSize); err == nil {
			rel := ThumbnailPath(key)
			abs := filepath.Join(v.opts.Data, rel)
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err == nil && os.WriteFile(abs, png, 0o644) == nil {
				rec.Thumbnail = rel
			}
		}
	}
	v.Stats.Datasets.Add(1)
	return v.cat.PutDataset(key, rec)
}

// Shapefiles published raw arrive as separate parts (.shp, .dbf, .prj, ...). Each part is
// kept in Data/geo/parts/<group> until every part the producer page linked has arrived;
// then the set is inspected once, recorded under the .shp's URL, and removed.

// groupOf names a shapefile's part set: its URL without the extension.
func groupOf(u string) string {
	return strings.TrimSuffix(u, path.Ext(u))
}

func (v *Vertical) groupDir(group string) string {
	h := sha256.Sum256([]byte(strings.ToLower(group)))
	return filepath.Join(v.opts.Data, "geo", "parts", hex.EncodeToString(h[:12]))
}

// expectParts notes the parts a page links for a group.
func (v *Vertical) expectParts(group string, urls []string) error {
	if v.opts.Data == "" {
		return nil
	}
	v.groups.Lock()
	defer v.groups.Unlock()
	dir := v.groupDir(group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("geo: %w", err)
	}
	want := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, "expected.json")); err == nil {
		var old []string
		_ = json.Unmarshal(b, &old)
		for _, u := range old {
			want[u] = true
		}
	}
	for _, u := range urls {
		want[u] = true
	}
	var list []string
	for u := range want {
		list = append(list, u)
	}
	b, _ := json.Marshal(list)
	return os.WriteFile(filepath.Join(dir, "expected.json"), b, 0o644)
}

func (v *Vertical) shapefilePart(ctx context.Context, d *crawl.Document, rec *catalog.Dataset) error {
	if v.opts.Data == "" {
		return nil // nowhere to gather parts
	}
	u := d.URL.String()
	group := groupOf(u)
	v.groups.Lock()
	defer v.groups.Unlock()
	dir := v.groupDir(group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("geo: %w", err)
	}
	base := path.Base(group)
	ext := strings.ToLower(path.Ext(u))
	if err := os.WriteFile(filepath.Join(dir, safeName(base)+ext), d.Fetch.Body, 0o600); err != nil {
		return fmt.Errorf("geo: %w", err)
	}
	var expected []string
	if b, err := os.ReadFile(filepath.Join(dir, "expected.json")); err == nil {
		_ = json.Unmarshal(b, &expected)
	}
	complete := true
	for _, e := range append(expected, u) {
		p := filepath.Join(dir, safeName(base)+strings.ToLower(path.Ext(e)))
		if _, err := os.Stat(p); err != nil {
			complete = false
		}
	}
	_, err := os.Stat(filepath.Join(dir, safeName(base)+".shp"))
	if !complete || err != nil {
		return nil // not every part linked has arrived, or the .shp has not
	}
	shpURL := group + ".shp"
	for _, e := range expected {
		if strings.EqualFold(path.Ext(e), ".shp") {
			shpURL = e
		}
	}
	su, err := v.opts.Normalizer.Parse(shpURL)
	if err != nil {
		return fmt.Errorf("geo: %w", err)
	}
	rec.URL, rec.Name, rec.Kind = su.String(), path.Base(su.Path()), Shapefile.String()
	var size int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && e.Name() != "expected.json" {
			size += fi.Size()
		}
	}
	rec.Size = size
	err = v.inspectAndStore(ctx, store.URLKey(su.Key()), rec, filepath.Join(dir, safeName(base)+".shp"), rec.Name)
	_ = os.RemoveAll(dir) // the thesis's policy: data files are not kept once read
	return err
}
