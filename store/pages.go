package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// URLKey identifies a URL in the database: the 16-byte hash of its normalized form
// (urlnorm.URL.Key).
type URLKey = [16]byte

// Page is the record of the latest fetch of one URL. Its JSON form is the line that
// `sonda export --what pages` writes; the first fields are a stable contract (see
// docs/architecture.md), the rest may grow.
type Page struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url"`    // where the URL leads: itself, or a redirect's target
	Status      int       `json:"status"`       // HTTP status; 0 when no response was received
	FetchedAt   time.Time `json:"fetched_at"`   // start of the fetch
	ContentType string    `json:"content_type"` // media type, sniffed when the server gave none
	Title       string    `json:"title"`
	Depth       int       `json:"depth"`  // link hops from a seed (redirect hops do not count)
	Parent      string    `json:"parent"` // the page the URL was discovered on ("" for seeds)
	Fingerprint string    `json:"fingerprint"`
	Changed     bool      `json:"changed"` // the fingerprint differs from the previous visit's

	Relevance *float64 `json:"relevance,omitempty"` // 0..1, when a topic is set
	Relevant  *bool    `json:"relevant,omitempty"`
	Topics    []string `json:"topics,omitempty"` // the topics the page is relevant to

	SimHash         string   `json:"simhash,omitempty"`           // 64-bit SimHash of the text, hex
	DuplicateOf     string   `json:"duplicate_of,omitempty"`      // first URL seen with the same text
	NearDuplicateOf string   `json:"near_duplicate_of,omitempty"` // a URL whose SimHash is within 3 bits
	RedirectChain   []string `json:"redirect_chain,omitempty"`    // hops that led here, oldest first
	Error           string   `json:"error,omitempty"`             // stable error kind, e.g. "timeout-first-byte"
	ErrorDetail     string   `json:"error_detail,omitempty"`
	Truncated       string   `json:"truncated,omitempty"`      // "length" or "time": the body was cut
	Skipped         string   `json:"skipped,omitempty"`        // "content-type": the body was not downloaded
	TextTruncated   bool     `json:"text_truncated,omitempty"` // the text was longer than the analyzers read (1 MiB): they saw its start
	Charset         string   `json:"charset,omitempty"`
	Lang            string   `json:"lang,omitempty"`
	Size            int64    `json:"size"`      // decoded body bytes kept
	WireSize        int64    `json:"wire_size"` // body bytes received
	FetchMillis     int64    `json:"fetch_ms"`
	Links           int      `json:"links"` // followable links found on the page
	NoIndex         bool     `json:"noindex,omitempty"`
	NoFollow        bool     `json:"nofollow,omitempty"`
	ETag            string   `json:"etag,omitempty"`
	LastModified    string   `json:"last_modified,omitempty"`
	Visits          int      `json:"visits"`
	WARC            string   `json:"warc,omitempty"` // file#offset of the response record

	// Rendering (render.mode): Rendered says the text, links and analyses come from the
	// DOM a browser built by running the page's scripts; RenderedLinks counts the links
	// only that DOM has; RenderError says why a render was tried and failed (the page
	// was then read from its raw HTML).
	Rendered      bool   `json:"rendered,omitempty"`
	RenderedLinks int    `json:"rendered_links,omitempty"`
	RenderError   string `json:"render_error,omitempty"`
	RenderedWARC  string `json:"rendered_warc,omitempty"` // file#offset of the conversion record with the rendered DOM
}

// Visit is one entry of a URL's visit history.
type Visit struct {
	At           time.Time `json:"at"`
	Status       int       `json:"status"`
	Changed      bool      `json:"changed"`
	Fingerprint  string    `json:"fingerprint,omitempty"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	CacheControl string    `json:"cache_control,omitempty"`
	Error        string    `json:"error,omitempty"`
}

const (
	prefixPage  = 'p'
	prefixVisit = 'v'
)

func pageKey(k URLKey) []byte { return RecordKey(prefixPage, k) }

// RecordKey is the key of the per-URL record of one kind: its prefix byte, then the URL key.
// Page records use it, and so do other packages' per-URL records (articles, feed sources),
// which EachRecord reads back.
func RecordKey(prefix byte, k URLKey) []byte {
	b := make([]byte, 1+len(k))
	b[0] = prefix
	copy(b[1:], k[:])
	return b
}

// Writer is what record writes go into: a Pebble batch the caller commits together with
// the frontier's changes, so a record and the queue update that produced it are atomic.
type Writer interface {
	Set(key, value []byte, o *pebble.WriteOptions) error
}

// PutPage writes (replaces) the page record for key into w.
func PutPage(w Writer, key URLKey, p *Page) error {
	v, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("store: encode page %s: %w", p.URL, err)
	}
	return w.Set(pageKey(key), v, nil)
}

// Page returns the record for key; ok is false when the URL has no record.
func (db *DB) Page(key URLKey) (p *Page, ok bool, err error) {
	v, closer, err := db.pdb.Get(pageKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: read page: %w", db.Explain(err))
	}
	defer closer.Close()
	p = new(Page)
	if err := json.Unmarshal(v, p); err != nil {
		return nil, false, fmt.Errorf("store: decode page record %x: %w", key, err)
	}
	return p, true, nil
}

// Pages calls fn for every page record, in key order (which is random with respect to
// URLs). It stops at the first error fn returns.
func (db *DB) Pages(fn func(*Page) error) error {
	return EachRecord(db, prefixPage, "page record", func(_ URLKey, p *Page) error { return fn(p) })
}

// EachRecord calls fn for every JSON record kept under prefix and a URL key (the layout of
// page records, and of other packages' per-URL records such as articles or feed sources),
// decoding each into a new T. what names the records in errors. Keys of another length
// under the prefix are not records of this kind and are skipped. It stops at the first
// error fn returns.
func EachRecord[T any](db *DB, prefix byte, what string, fn func(URLKey, *T) error) error {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return fmt.Errorf("store: iterate %ss: %w", what, err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var key URLKey
		if len(it.Key()) != 1+len(key) {
			continue
		}
		copy(key[:], it.Key()[1:])
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("store: iterate %ss: %w", what, db.Explain(err))
		}
		rec := new(T)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("store: %s %x is corrupt: %w", what, key, err)
		}
		if err := fn(key, rec); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("store: iterate %ss: %w", what, db.Explain(err))
	}
	return nil
}

func visitKey(k URLKey, at time.Time) []byte {
	b := make([]byte, 1+len(k)+8)
	b[0] = prefixVisit
	copy(b[1:], k[:])
	binary.BigEndian.PutUint64(b[1+len(k):], uint64(at.UnixNano()))
	return b
}

// AddVisit appends v to the visit history of key.
func AddVisit(w Writer, key URLKey, v Visit) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: encode visit: %w", err)
	}
	return w.Set(visitKey(key, v.At), b, nil)
}

// Visits returns the visit history of key, oldest first.
func (db *DB) Visits(key URLKey) ([]Visit, error) {
	lo := visitKey(key, time.Unix(0, 0))
	lo = lo[:1+len(key)]
	hi := append(append([]byte{}, lo...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("store: read visits: %w", err)
	}
	defer it.Close()
	var out []Visit
	for it.First(); it.Valid(); it.Next() {
		var v Visit
		if err := json.Unmarshal(it.Value(), &v); err != nil {
			return nil, fmt.Errorf("store: decode visit of %x: %w", key, err)
		}
		out = append(out, v)
	}
	return out, it.Error()
}
