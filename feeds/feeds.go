// Package feeds owns discovery through feeds and sitemaps: it reads RSS, Atom and JSON
// feeds (with gofeed), XML sitemaps, sitemap indexes, news and image sitemaps, plain-text
// sitemaps and gzip-compressed ones, and it plugs them into the crawl.
//
// In the crawl (see Vertical) the package
//
//   - queues the Sitemap: lines of every robots.txt the crawler fetches (a RobotsListener);
//   - queues the feeds an HTML page names in <link rel=alternate> (an Analyzer);
//   - reads every feed and sitemap the crawler fetches and queues the URLs they list, so
//     pages linked from nowhere else are crawled (the Analyzer again; the crawl's scope and
//     link filters still decide);
//   - fetches feed and sitemap URLs whatever media type they are served with and up to the
//     sitemap protocol's 50 MiB (a RequestPolicy), and keeps a registry of them in the
//     crawl's database (key prefix f);
//   - revisits feeds and sitemaps on their own schedule, ahead of whatever RevisitPolicy
//     the crawl has for ordinary pages (a crawl.RevisitOverride): a feed that showed new entries is read again
//     after Interval, one that did not waits twice as long as last time, up to MaxInterval.
//
// Limits follow the sitemaps.org protocol: 50,000 URLs and 50 MiB (uncompressed) per file;
// beyond them a file is cut and marked Truncated. Malformed XML is an error that names the
// file and the position; what was read before it is kept.
package feeds

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Kind is what a document is, for this package.
type Kind string

// The kinds of document.
const (
	KindNone         Kind = ""
	KindFeed         Kind = "feed"          // RSS, Atom or JSON Feed
	KindSitemap      Kind = "sitemap"       // <urlset> or a plain-text list of URLs
	KindSitemapIndex Kind = "sitemap-index" // <sitemapindex>
)

// Limits bound what one file may make the crawler do.
type Limits struct {
	MaxEntries int   // URLs kept per file (default 50,000, the sitemap protocol's limit)
	MaxBytes   int64 // bytes read per file after decompression (default 50 MiB)
}

// Defaults of Limits.
const (
	DefaultMaxEntries = 50000
	DefaultMaxBytes   = 50 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// Entry is one URL a feed or sitemap lists.
type Entry struct {
	URL       string    `json:"url"`
	Title     string    `json:"title,omitempty"`     // feed item title, news:title
	Published time.Time `json:"published,omitzero"`  // feed item date, news:publication_date
	Modified  time.Time `json:"modified,omitzero"`   // feed item update, sitemap lastmod
	Source    string    `json:"source,omitempty"`    // news:publication/news:name
	Language  string    `json:"language,omitempty"`  // news:publication/news:language
	Keywords  []string  `json:"keywords,omitempty"`  // news:keywords
	Images    []string  `json:"images,omitempty"`    // image:loc
	Frequency string    `json:"frequency,omitempty"` // sitemap changefreq
}

// Document is a parsed feed or sitemap.
type Document struct {
	Kind    Kind    `json:"kind"`
	Title   string  `json:"title,omitempty"` // feed title
	Entries []Entry `json:"entries"`         // pages (feed items, sitemap URLs)
	// Sitemaps are the child sitemaps of a sitemap index.
	Sitemaps []Entry `json:"sitemaps,omitempty"`
	// Truncated says a limit cut the file: the entries are its first part.
	Truncated bool `json:"truncated,omitempty"`
}

// URLs returns every URL the document lists: child sitemaps first, then entries.
func (d *Document) URLs() []string {
	out := make([]string, 0, len(d.Sitemaps)+len(d.Entries))
	for _, s := range d.Sitemaps {
		out = append(out, s.URL)
	}
	for _, e := range d.Entries {
		out = append(out, e.URL)
	}
	return out
}

// ErrNotFeed means the body is neither a feed nor a sitemap.
var ErrNotFeed = errors.New("feeds: not a feed or sitemap")

// Parse reads a fetched body whose media type is mediaType (may be "") from pageURL
// (used to resolve relative URLs): a feed, a sitemap or a sitemap index, possibly gzipped.
// On malformed input it returns what it read before the error together with the error.
func Parse(body []byte, mediaType, pageURL string, lim Limits) (*Document, error) {
	lim = lim.withDefaults()
	compressed, gzipped := len(body), isGzip(body)
	if gzipped {
		mediaType = "" // it named the compressed file, not what is inside
	}
	body, truncated, bomb, err := decompress(body, lim.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("feeds: %s: %w", pageURL, err)
	}
	var doc *Document
	kind := Detect(mediaType, body)
	switch {
	case kind == KindNone:
		return nil, fmt.Errorf("%w: %s (%s)", ErrNotFeed, pageURL, describe(mediaType, body))
	case looksLikeXML(body):
		maxText := 0
		if kind != KindFeed {
			maxText = maxSitemapText
		}
		err = checkXMLShape(body, maxText)
	}
	switch {
	case err != nil:
	case kind == KindFeed:
		doc, err = parseFeed(body, pageURL, lim)
	default:
		if looksLikeXML(body) {
			doc, err = parseSitemap(bytes.NewReader(body), pageURL, lim)
		} else {
			doc, err = parseTextSitemap(body, pageURL, lim)
		}
	}
	if doc != nil {
		doc.Truncated = doc.Truncated || truncated
	}
	if bomb {
		// The expansion is the story, whatever the parser then made of the part read.
		err = fmt.Errorf("its gzip-compressed bytes expand more than %d times (a decompression bomb), so reading stopped after %d bytes (URLs read before it: %d): %w",
			maxExpansion, len(body), docEntries(doc), cmp.Or(err, errCutShort))
	} else if err != nil && truncated && gzipped {
		// The expansion is the story, whatever the XML parser then met in the part read.
		err = fmt.Errorf("its %d gzip-compressed bytes expand past the %d MiB read (more than %.0f times: a decompression bomb, or an oversized file), so it was cut there; in what was read: %w",
			compressed, lim.MaxBytes>>20, float64(lim.MaxBytes)/float64(max(compressed, 1)), err)
	} else if err != nil && truncated {
		err = fmt.Errorf("it is longer than the %d MiB read, so it was cut there; in what was read: %w", lim.MaxBytes>>20, err)
	}
	if err != nil {
		err = fmt.Errorf("feeds: %s: %w", pageURL, err)
	}
	return doc, err
}

func describe(mediaType string, body []byte) string {
	if mediaType == "" {
		mediaType = "no media type"
	}
	head := strings.TrimSpace(string(body[:min(len(body), 40)]))
	return fmt.Sprintf("%s, starts with %q", mediaType, head)
}

// isGzip reports the gzip magic number.
func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Decompression stops, as a bomb, once past expansionFloor bytes the output is more than
// maxExpansion times the compressed bytes consumed (the content coding's rule, with a
// higher ratio). Sitemaps compress well: 50,000 entries that differ only in a number
// with the same lastmod, changefreq and priority compress 56 times at gzip -9; a bomb's
// zeros 1,000 times, and reading one up to the 50 MiB limit held all 50 MiB of them.
const (
	maxExpansion   = 250
	expansionFloor = 1 << 20
)

var errCutShort = errors.New("the part read ends mid-document")

func docEntries(d *Document) int {
	if d == nil {
		return 0
	}
	return len(d.Entries) + len(d.Sitemaps)
}

// consumed counts the compressed bytes the decompressor has taken. It is an io.ByteReader,
// so gzip reads exactly what it uses (no read-ahead buffer).
type consumed struct {
	r *bytes.Reader
	n int64
}

func (c *consumed) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *consumed) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// decompress undoes gzip (sitemap.xml.gz files arrive compressed, not content-encoded),
// reading at most limit bytes of the result; truncated says there was more, bomb that
// it stopped early because the expansion passed maxExpansion.
func decompress(body []byte, limit int64) (out []byte, truncated, bomb bool, err error) {
	if !isGzip(body) {
		if int64(len(body)) > limit {
			return body[:limit], true, false, nil
		}
		return body, false, false, nil
	}
	src := &consumed{r: bytes.NewReader(body)}
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, false, false, fmt.Errorf("gzip: %w", err)
	}
	// One allocation when the trailer's size (ISIZE: the uncompressed length mod 2^32,
	// of the last member) is true; never more than the limit, whatever a bomb's trailer
	// claims, and at most twice the limit in all when it lies.
	hint := limit + 1
	if n := len(body); n >= 18 {
		hint = min(hint, int64(binary.LittleEndian.Uint32(body[n-4:]))+1)
	}
	expanding := func(n int64) bool { return n > expansionFloor && n > maxExpansion*src.n }
	out, err = readUpTo(zr, max(hint, 512), limit+1, expanding)
	if err == errExpanding {
		return out, true, true, nil
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, false, false, fmt.Errorf("gzip: %w", err)
	}
	if int64(len(out)) > limit {
		return out[:limit], true, false, nil
	}
	if err != nil { // cut short: keep what decompressed
		return out, true, false, nil
	}
	return out, false, false, nil
}

var errExpanding = errors.New("expands too much")

// readUpTo reads r to its end or to max bytes, whichever comes first, into a buffer of
// size first that grows by doubling up to max; it stops with errExpanding once stop
// says so of the bytes read.
func readUpTo(r io.Reader, first, max int64, stop func(int64) bool) ([]byte, error) {
	out := make([]byte, 0, min(first, max))
	for int64(len(out)) < max {
		if len(out) == cap(out) {
			out = append(make([]byte, 0, min(2*int64(cap(out)), max)), out...)
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if stop(int64(len(out))) {
			return out, errExpanding
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Detect tells what body is from its first element (and, for JSON Feed, its version
// field), helped by mediaType only when the content says nothing. A gzipped body is
// looked into.
func Detect(mediaType string, body []byte) Kind {
	if isGzip(body) {
		head, _, _, err := decompress(body[:min(len(body), 64<<10)], 4096)
		if err != nil && len(head) == 0 {
			return KindNone
		}
		body = head
	}
	head := body[:min(len(body), 4096)]
	switch root := rootElement(head); root {
	case "rss", "rdf", "feed", "channel":
		return KindFeed
	case "urlset":
		return KindSitemap
	case "sitemapindex":
		return KindSitemapIndex
	case "":
		trimmed := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
		if bytes.HasPrefix(trimmed, []byte("{")) && bytes.Contains(head, []byte("jsonfeed.org/version")) {
			return KindFeed
		}
		if isTextSitemap(trimmed, mediaType) {
			return KindSitemap
		}
	}
	return KindNone
}

// isTextSitemap accepts a plain-text sitemap: text/plain whose first line is an http(s) URL.
func isTextSitemap(head []byte, mediaType string) bool {
	if mediaType != "text/plain" && mediaType != "" {
		return false
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSpace(line)
	return (bytes.HasPrefix(line, []byte("http://")) || bytes.HasPrefix(line, []byte("https://"))) && !bytes.ContainsAny(line, " <>\"")
}

func looksLikeXML(b []byte) bool {
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))
	return len(b) > 0 && b[0] == '<'
}

// rootElement returns the local name of the first element in head, lowercased, skipping
// the XML declaration, comments, processing instructions and the doctype. "" when the
// text does not start like XML.
func rootElement(head []byte) string {
	b := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		if len(b) < 2 || b[0] != '<' {
			return ""
		}
		switch {
		case bytes.HasPrefix(b, []byte("<?")):
			i := bytes.Index(b, []byte("?>"))
			if i < 0 {
				return ""
			}
			b = b[i+2:]
		case bytes.HasPrefix(b, []byte("<!--")):
			i := bytes.Index(b, []byte("-->"))
			if i < 0 {
				return ""
			}
			b = b[i+3:]
		case bytes.HasPrefix(b, []byte("<!")):
			i := bytes.IndexByte(b, '>')
			if i < 0 {
				return ""
			}
			b = b[i+1:]
		default:
			end := bytes.IndexAny(b[1:], " \t\r\n>/")
			if end < 0 {
				return ""
			}
			name := string(b[1 : 1+end])
			if i := strings.IndexByte(name, ':'); i >= 0 {
				name = name[i+1:]
			}
			return strings.ToLower(name)
		}
	}
}

// parseTextSitemap reads one URL per line (sitemaps.org's text format).
func parseTextSitemap(body []byte, pageURL string, lim Limits) (*Document, error) {
	doc := &Document{Kind: KindSitemap}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://") || strings.ContainsAny(line, " \t") {
			continue // the format allows only absolute URLs, one per line
		}
		u := resolve(pageURL, line)
		if u == "" {
			continue
		}
		if len(doc.Entries) >= lim.MaxEntries {
			doc.Truncated = true
			break
		}
		doc.Entries = append(doc.Entries, Entry{URL: u})
	}
	if err := sc.Err(); err != nil {
		return doc, fmt.Errorf("text sitemap: %w", err)
	}
	return doc, nil
}
