// Package index owns sonda's search index: a Bleve (scorch) index of documents of several
// kinds, kept up to date as the crawl fetches and re-fetches pages, and the search over it —
// query parsing (package query), language-aware analysis, BM25F ranking with field
// weights, the blend with link rank (package linkgraph) and topic relevance, snippets,
// facets, pagination and a result cache.
//
// # Documents
//
// A Doc has a Kind ("page" now; "article" and "dataset" from the extraction packages) and
// common fields (title, body — for a crawled page, its own text without the site's
// navigation, side boxes and page-wide header and footer —, headings, description, anchors of in-links, URL, host,
// language, content type, dates, topic relevance). Kind-specific values go in Doc.Fields, a
// typed map that is indexed without this package knowing the kind: strings and string lists
// become exact-match keywords named f_<name> and searchable text, times become date fields,
// numbers numeric fields, booleans boolean fields, a BBox (a WGS84 box: geographic
// datasets) the box the query language's bbox: filter intersects (see Doc.Fields and
// bbox.go). A time under
// "published" is the document's date for date filters and facets; otherwise the date is
// when it was fetched.
//
// # Analysis and fields
//
// Every text field exists once per language (title_en, body_pt, ...; see Languages) and a
// document fills the copies of its own language, analyzed by that language's analyzer
// (package text), so field statistics stay within one language and a query word is
// analyzed once per language present. Analysis happens here, before Bleve sees the
// document, which also gives the exact field lengths BM25 needs.
//
// # Ranking and search
//
// Bleve keeps the postings; sonda scores. Plain query words are scored by sonda's BM25F
// (bm25f.go) as one Bleve query per group of words, since Bleve 2.6's "bm25" departs from
// BM25 in ways that cost a tenth of the retrieval quality (see bm25f.go). Phrases, filters
// and the boolean structure are Bleve queries; disjunctions sum their clauses (sum.go)
// without Bleve's coordination factor. Pseudo-relevance feedback (feedback.go, RM3)
// rescores a query's matches with the words its best ten share. A search runs the query's searcher on one index
// snapshot and keeps the best results itself (collect.go), reading relevance and facets
// from doc values; the best Window results are then blended with the link prior and the
// topic relevance (see Ranking), and only the page shown is loaded, with its snippet.
// A collection split over several indexes (the nodes of a cluster) ranks as one index over
// all of it would, in three phases — statistics, query, fetch (shard.go).
//
// # Durability
//
// Put and Delete return once their documents are searchable; scorch persists each batch
// in the background, usually within a second, and Close waits for it (Options.SyncWrites
// makes every write wait for its fsync, about four times slower). The crawl does not wait
// for either: its Sink queues documents and writes them in large batches behind the crawl.
// What makes that safe is the Queue, a durable queue in the crawl database: the crawl
// adds a page to it in the very batch that commits the page's record (Sink.Journal), and
// the sink removes the entries of a batch once the index has persisted it (Index.Sync). A
// crash (kill -9, power cut) so never loses a page the store kept: the entries left are
// replayed from the store and the WARC files (Replay) when the data directory is opened
// next (package app), and since documents are indexed by URL, a page that was indexed
// after all is not indexed twice. The store is the source of truth: `sonda index rebuild`
// recreates the whole index from it. Every batch also carries the latest fetch time of its
// documents (Checkpoint), and an index that was not closed cleanly says so at the next
// Open (Stats.Unclean).
//
// Open creates an index atomically: it is built (mapping persisted) in a sibling folder
// and renamed into place, so a crash while creating it leaves no index rather than one that
// cannot be opened. An index whose creation never finished (left by an older sonda) is made
// anew; Stats.Created tells the caller to replay the crawl's records into it. The same
// holds for an index written by an older sonda in a format this one no longer reads: every
// index records its format (format.go), and one written by a newer sonda is refused
// untouched, with the way out in the error (ErrFormat).
//
// # Anchor text
//
// A page's document carries the anchor text of the links to it, from the link graph, as
// of when the document is written. Links found later would mean rewriting the whole
// document for each new one; the sink instead notes the documents whose anchors changed
// and rewrites a bounded number of them per batch (SinkOptions.RefreshShare, a quarter of
// the documents written), the rest when the crawl ends (Sink.Compact). A fetched page so
// costs the same whatever the size of the index, and anchor text is at most one crawl old.
package index

import (
	"fmt"
	"time"
)

// Kinds of documents sonda indexes. Kind is free-form (lowercase letters, digits, - and _);
// these are the ones sonda's packages use.
const (
	KindPage    = "page"
	KindArticle = "article"
	KindDataset = "dataset"
)

// Doc is one searchable document.
type Doc struct {
	ID          string    `json:"id"`   // unique; for pages, the canonical URL
	Kind        string    `json:"kind"` // "page" when empty
	URL         string    `json:"url"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	Headings    string    `json:"headings,omitempty"`
	Description string    `json:"description,omitempty"`
	Host        string    `json:"host"`
	Lang        string    `json:"lang,omitempty"`         // primary language subtag
	ContentType string    `json:"content_type,omitempty"` // media type
	Fetched     time.Time `json:"fetched"`
	Relevance   float64   `json:"relevance"` // topic relevance 0..1; -1 when no topic is set
	Relevant    bool      `json:"relevant"`
	Topics      []string  `json:"topics,omitempty"`
	InLinks     int       `json:"inlinks"` // distinct pages linking here (when indexed)
	Anchors     []string  `json:"anchors,omitempty"`
	// Fields are kind-specific values: string, []string, time.Time, bool, int, int64,
	// float32, float64 and BBox are indexed (see the package doc); other values are only
	// stored and come back from Document as JSON decodes them. Names are lowercase
	// letters, digits and _.
	Fields map[string]any `json:"fields,omitempty"`
}

// textBytes is the size of d's text fields: what its analysis holds in memory scales with it.
func (d *Doc) textBytes() int {
	n := len(d.Title) + len(d.Body) + len(d.Headings) + len(d.Description)
	for _, a := range d.Anchors {
		n += len(a)
	}
	return n
}

// Date is the document's date: Fields["published"] when it is a time, else Fetched.
func (d *Doc) Date() time.Time {
	if t, ok := d.Fields["published"].(time.Time); ok && !t.IsZero() {
		return t
	}
	return d.Fetched
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (d *Doc) validate() error {
	switch {
	case d.ID == "":
		return fmt.Errorf("index: document without an ID (URL %q): give it one, e.g. its canonical URL", d.URL)
	case len(d.ID) > 8<<10:
		return fmt.Errorf("index: document ID of %d bytes is longer than 8 KiB", len(d.ID))
	case d.Kind != "" && !validName(d.Kind):
		return fmt.Errorf("index: document %s: kind %q must be lowercase letters, digits, - or _", d.ID, d.Kind)
	}
	for name := range d.Fields {
		if !validName(name) || name[0] == '-' {
			return fmt.Errorf("index: document %s: field name %q must be lowercase letters, digits and _", d.ID, name)
		}
	}
	return nil
}
