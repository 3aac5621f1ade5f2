package feeds

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// Source is a feed or sitemap the crawl knows: where it was found, what its last read
// gave, and when it is read next.
type Source struct {
	URL        string        `json:"url"`
	Kind       Kind          `json:"kind"` // as found (a feed link, a Sitemap: line) or as read
	Via        string        `json:"via"`  // "robots", "link", "index" (a sitemap index), "content" (read as one)
	Discovered time.Time     `json:"discovered"`
	Fetched    time.Time     `json:"fetched,omitzero"`
	Entries    int           `json:"entries"`            // URLs listed at the last read
	Digest     uint64        `json:"digest,omitempty"`   // of the listed URLs, to see change
	Newest     time.Time     `json:"newest,omitzero"`    // latest entry date at the last read
	Changed    bool          `json:"changed"`            // the last read listed something new
	Interval   time.Duration `json:"interval,omitempty"` // wait before the next read
	Reads      int           `json:"reads"`
	Truncated  bool          `json:"truncated,omitempty"`
	Error      string        `json:"error,omitempty"` // why the last read failed
}

const prefixSource = 'f'

func sourceKey(k store.URLKey) []byte { return store.RecordKey(prefixSource, k) }

// Registry is the set of feeds and sitemaps of a crawl, kept under key prefix f of the
// crawl database and in memory (a crawl knows thousands of them, not millions), so the
// request and revisit hooks ask it without reading the disk.
type Registry struct {
	db *store.DB

	mu      sync.RWMutex
	sources map[store.URLKey]*Source
	perHost map[string]int
}

// OpenRegistry loads the registry of db.
func OpenRegistry(db *store.DB) (*Registry, error) {
	r := &Registry{db: db, sources: map[store.URLKey]*Source{}, perHost: map[string]int{}}
	err := store.EachRecord(db, prefixSource, "feed registry entry", func(k store.URLKey, s *Source) error {
		r.sources[k] = s
		r.perHost[urlnorm.HostOf(s.URL)]++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("feeds: read registry: %w", err)
	}
	return r, nil
}

// Get returns a copy of the source with key k.
func (r *Registry) Get(k store.URLKey) (Source, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.sources[k]
	if !ok {
		return Source{}, false
	}
	return *s, true
}

// Known reports whether k is a feed or sitemap of the registry.
func (r *Registry) Known(k store.URLKey) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.sources[k]
	return ok
}

// Add registers a newly found source (unless known, or its host has maxPerHost already)
// and writes it at once: it must be in the registry before the URL is fetched. added
// says it was new.
func (r *Registry) Add(k store.URLKey, s Source, maxPerHost int) (added bool, err error) {
	r.mu.Lock()
	if _, ok := r.sources[k]; ok {
		r.mu.Unlock()
		return false, nil
	}
	host := urlnorm.HostOf(s.URL)
	if maxPerHost > 0 && r.perHost[host] >= maxPerHost {
		r.mu.Unlock()
		return false, nil
	}
	cp := s
	r.sources[k] = &cp
	r.perHost[host]++
	r.mu.Unlock()
	v, err := json.Marshal(&s)
	if err != nil {
		return true, err
	}
	if err := r.db.Pebble().Set(sourceKey(k), v, pebble.NoSync); err != nil {
		return true, fmt.Errorf("feeds: register %s: %w", s.URL, err)
	}
	return true, nil
}

// update changes a source in memory and returns the write that stores it, to be committed
// with the page record of the read (crawl.Document.CommitWith).
func (r *Registry) update(k store.URLKey, url string, change func(s *Source)) func(store.Writer) error {
	r.mu.Lock()
	s, ok := r.sources[k]
	if !ok {
		s = &Source{URL: url, Discovered: time.Now().UTC()}
		r.sources[k] = s
		r.perHost[urlnorm.HostOf(url)]++
	}
	change(s)
	v, err := json.Marshal(s)
	r.mu.Unlock()
	return func(w store.Writer) error {
		if err != nil {
			return err
		}
		return w.Set(sourceKey(k), v, nil)
	}
}

// Sources returns every source, sorted by URL.
func (r *Registry) Sources() []Source {
	r.mu.RLock()
	out := make([]Source, 0, len(r.sources))
	for _, s := range r.sources {
		out = append(out, *s)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}
