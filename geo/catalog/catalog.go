// Package catalog keeps the geo vertical's records in the crawl's Pebble database, under
// the key prefix 'g' (registered in package store):
//
//	g d <url key>                      Dataset: a fetched dataset URL and what was found in it
//	g l <dataset url key> <page key>   Link: a page that links to a dataset, with the anchor
//	                                   text and the ±20-word extended anchor text
//	g p <site>                         Site: a producer site's description and counts
//	g e <from site> 0 <to site> 0 <page key>
//	                                   Edge: a page of one site links to another site (the
//	                                   link map producer scores are computed from)
//
// Records are written as they are found, outside the frontier's batches: they are derived
// data (a crash loses at most what the crawl would find again on resume), and the crawl's
// page records stay the source of truth.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/store"
)

// Prefix is the catalog's key prefix in the crawl database.
const Prefix = 'g'

const (
	kindDataset = 'd'
	kindLink    = 'l'
	kindSite    = 'p'
	kindEdge    = 'e'
)

// Dataset is the record of one dataset URL. Its JSON form is what `sonda export --what
// datasets` writes, one per line.
type Dataset struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url,omitempty"`
	Name        string    `json:"name"` // file name from the URL
	Kind        string    `json:"url_kind"`
	FetchedAt   time.Time `json:"fetched_at"`
	Size        int64     `json:"size"`
	ContentType string    `json:"content_type,omitempty"`
	// Geographic is false when the file turned out to hold no geographic data (an archive
	// of documents): such records keep the crawl from fetching it again and count as
	// misses in the evaluation.
	Geographic bool         `json:"geographic"`
	Error      string       `json:"error,omitempty"`
	Metadata   *geo.Dataset `json:"metadata,omitempty"`
	BBox       geom.BBox    `json:"bbox_wgs84"`
	Thumbnail  string       `json:"thumbnail,omitempty"` // path under the data directory
	Links      []Link       `json:"links,omitempty"`     // filled by export from the link records
	Downloads  int          `json:"downloads"`
	// Gone says why the dataset's link was found broken (e.g. "http-404"), when a revisit
	// or `sonda geo recheck` found it so: the thesis's broken-link check (§3.8.1) removes
	// such files from search; the record stays, so the crawl does not fetch it as new.
	Gone      string    `json:"gone,omitempty"`
	CheckedAt time.Time `json:"checked_at,omitzero"` // last link check
}

// Searchable reports whether the dataset belongs in search: geographic, read without a
// fatal error, and not gone.
func (d *Dataset) Searchable() bool { return d.Geographic && d.Metadata != nil && d.Gone == "" }

// Link is a page linking to a dataset: the thesis's anchor and extended anchor text.
type Link struct {
	Page      string `json:"page"`
	PageTitle string `json:"page_title,omitempty"`
	Site      string `json:"site"`
	Anchor    string `json:"anchor,omitempty"`
	Window    string `json:"window,omitempty"` // ±20 words around the link
	GeoWords  int    `json:"geo_words"`        // lexicon hits on the page
}

// Site is a producer site: one whose pages link to datasets.
type Site struct {
	Site        string   `json:"site"`
	Home        string   `json:"home,omitempty"` // first producer page seen
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	Text        string   `json:"text,omitempty"` // page text, capped: the "expanded" search context
	Pages       []string `json:"pages,omitempty"`
	DatasetURLs []string `json:"dataset_urls,omitempty"`
}

// Catalog reads and writes the records. It is safe for concurrent use, and several
// Catalogs of one database share their listeners.
type Catalog struct{ db *pebble.DB }

// New returns the catalog of an open crawl database.
func New(db *store.DB) *Catalog { return &Catalog{db: db.Pebble()} }

// updateMu serializes read-modify-writes of dataset records (downloads, link checks,
// refetches) in the process.
var updateMu sync.Mutex

// listenerSet is the listeners of one database.
type listenerSet struct {
	mu   sync.Mutex
	fns  map[int]func(datasetKey store.URLKey)
	next int
}

// listeners holds each database's listeners (*pebble.DB → *listenerSet), so a listener
// hears of changes made through any Catalog of its database. An entry lives while it has
// listeners.
var listeners sync.Map

// OnChange registers fn to be told, after the write, of every dataset whose record or
// links change (PutDataset, PutLink, AddDownload, MarkGone) through any Catalog of this
// database: the dataset search index follows the catalog this way. fn runs on the
// writer's goroutine and must be quick. Calling the returned function unregisters it.
func (c *Catalog) OnChange(fn func(datasetKey store.URLKey)) (cancel func()) {
	for {
		v, _ := listeners.LoadOrStore(c.db, &listenerSet{fns: map[int]func(store.URLKey){}})
		ls := v.(*listenerSet)
		ls.mu.Lock()
		if ls.fns == nil { // emptied and being removed: start a new set
			ls.mu.Unlock()
			continue
		}
		id := ls.next
		ls.next++
		ls.fns[id] = fn
		ls.mu.Unlock()
		return func() {
			ls.mu.Lock()
			delete(ls.fns, id)
			if len(ls.fns) == 0 {
				ls.fns = nil
				listeners.CompareAndDelete(c.db, ls)
			}
			ls.mu.Unlock()
		}
	}
}

func (c *Catalog) changed(k store.URLKey) {
	v, ok := listeners.Load(c.db)
	if !ok {
		return
	}
	ls := v.(*listenerSet)
	ls.mu.Lock()
	fns := make([]func(store.URLKey), 0, len(ls.fns))
	for _, fn := range ls.fns {
		fns = append(fns, fn)
	}
	ls.mu.Unlock()
	for _, fn := range fns {
		fn(k)
	}
}

func key(kind byte, parts ...[]byte) []byte {
	k := []byte{Prefix, kind}
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func (c *Catalog) put(k []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("catalog: encode: %w", err)
	}
	return c.db.Set(k, b, pebble.NoSync)
}

func (c *Catalog) get(k []byte, v any) (bool, error) {
	b, closer, err := c.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("catalog: read: %w", err)
	}
	defer closer.Close()
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("catalog: decode %q: %w", k, err)
	}
	return true, nil
}

func (c *Catalog) scan(prefix []byte, fn func(k, v []byte) error) error {
	it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: store.PrefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// PutDataset writes a dataset record.
func (c *Catalog) PutDataset(urlKey store.URLKey, d *Dataset) error {
	links := d.Links
	d.Links = nil // links live in their own records
	defer func() { d.Links = links }()
	// A refetch makes a new record; the download count is sonda's own and carries over.
	updateMu.Lock()
	old := new(Dataset)
	if ok, _ := c.get(key(kindDataset, urlKey[:]), old); ok && old.Downloads > d.Downloads {
		d.Downloads = old.Downloads
	}
	err := c.put(key(kindDataset, urlKey[:]), d)
	updateMu.Unlock()
	if err != nil {
		return err
	}
	c.changed(urlKey)
	return nil
}

// AddDownload counts one download of a dataset through sonda (the thesis's download
// counter, a ranking factor) and returns the record; ok is false for an unknown dataset.
func (c *Catalog) AddDownload(urlKey store.URLKey) (d *Dataset, ok bool, err error) {
	return c.update(urlKey, func(d *Dataset) { d.Downloads++ })
}

// MarkGone records the outcome of a link check: why the link is broken ("" when it
// answered), checked at t.
func (c *Catalog) MarkGone(urlKey store.URLKey, why string, t time.Time) (d *Dataset, ok bool, err error) {
	return c.update(urlKey, func(d *Dataset) { d.Gone, d.CheckedAt = why, t.UTC() })
}

func (c *Catalog) update(urlKey store.URLKey, fn func(d *Dataset)) (*Dataset, bool, error) {
	updateMu.Lock()
	d := new(Dataset)
	ok, err := c.get(key(kindDataset, urlKey[:]), d)
	if err == nil && ok {
		fn(d)
		err = c.put(key(kindDataset, urlKey[:]), d)
	}
	updateMu.Unlock()
	if err != nil || !ok {
		return nil, ok, err
	}
	c.changed(urlKey)
	return d, true, nil
}

// Site reads a producer site's record.
func (c *Catalog) Site(site string) (*Site, bool, error) {
	s := new(Site)
	ok, err := c.get(key(kindSite, []byte(site)), s)
	if !ok || err != nil {
		return nil, ok, err
	}
	return s, true, nil
}

// Dataset reads a dataset record, with its links.
func (c *Catalog) Dataset(urlKey store.URLKey) (*Dataset, bool, error) {
	d := new(Dataset)
	ok, err := c.get(key(kindDataset, urlKey[:]), d)
	if !ok || err != nil {
		return nil, ok, err
	}
	d.Links, err = c.Links(urlKey)
	return d, true, err
}

// Datasets calls fn for every dataset record, links included, in key order.
func (c *Catalog) Datasets(fn func(*Dataset) error) error {
	return c.scan(key(kindDataset), func(k, v []byte) error {
		d := new(Dataset)
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("catalog: decode dataset: %w", err)
		}
		var uk store.URLKey
		copy(uk[:], k[2:])
		links, err := c.Links(uk)
		if err != nil {
			return err
		}
		d.Links = links
		return fn(d)
	})
}

// PutLink records that a page links to a dataset.
func (c *Catalog) PutLink(datasetKey, pageKey store.URLKey, l Link) error {
	if err := c.put(key(kindLink, datasetKey[:], pageKey[:]), l); err != nil {
		return err
	}
	c.changed(datasetKey)
	return nil
}

// Links returns the pages linking to a dataset.
func (c *Catalog) Links(datasetKey store.URLKey) ([]Link, error) {
	var out []Link
	err := c.scan(key(kindLink, datasetKey[:]), func(_, v []byte) error {
		var l Link
		if err := json.Unmarshal(v, &l); err != nil {
			return fmt.Errorf("catalog: decode link: %w", err)
		}
		out = append(out, l)
		return nil
	})
	return out, err
}

// UpdateSite merges what a producer page says into its site's record. Callers serialize
// updates of one site (the crawl's per-host politeness does for pages of one host).
func (c *Catalog) UpdateSite(site string, update func(s *Site)) error {
	s := &Site{Site: site}
	if _, err := c.get(key(kindSite, []byte(site)), s); err != nil {
		return err
	}
	update(s)
	return c.put(key(kindSite, []byte(site)), s)
}

// Sites calls fn for every producer site.
func (c *Catalog) Sites(fn func(*Site) error) error {
	return c.scan(key(kindSite), func(_, v []byte) error {
		s := new(Site)
		if err := json.Unmarshal(v, s); err != nil {
			return fmt.Errorf("catalog: decode site: %w", err)
		}
		return fn(s)
	})
}

// PutEdge records that a page of site from links to site to.
func (c *Catalog) PutEdge(from, to string, pageKey store.URLKey) error {
	k := key(kindEdge, []byte(from), []byte{0}, []byte(to), []byte{0}, pageKey[:])
	return c.db.Set(k, nil, pebble.NoSync)
}

// Edges calls fn for every link-map edge (one per page of from linking to to).
func (c *Catalog) Edges(fn func(from, to string) error) error {
	return c.scan(key(kindEdge), func(k, _ []byte) error {
		parts := bytes.SplitN(k[2:], []byte{0}, 3)
		if len(parts) != 3 {
			return fmt.Errorf("catalog: malformed edge key %q", k)
		}
		return fn(string(parts[0]), string(parts[1]))
	})
}
