package testweb

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// Feature is a set of awkward cases the test web serves. Config.Disable turns
// features off, so the zero Config serves all of them.
type Feature uint32

const (
	// Robots: every host serves a robots.txt that disallows /private/, pages
	// link to private pages, robots.txt names a sitemap.xml and some pages
	// are listed only in the sitemap.
	Robots Feature = 1 << iota
	// RobotsEdgeCases: hosts whose robots.txt answers 404 or 500, redirects,
	// starts with a BOM and uses CRLF, exceeds the 500 KiB cap, has a group
	// for "sonda" stricter than "*", or uses "*", "$" and Allow overrides.
	// Needs Robots.
	RobotsEdgeCases
	// CrawlDelays: a few hosts declare Config.CrawlDelay in robots.txt.
	// Needs Robots.
	CrawlDelays
	// PageRobots: meta robots and X-Robots-Tag pages (noindex, nofollow,
	// none, a directive for sonda and one for another bot).
	PageRobots
	// Redirects: 301, 302, 307, 308, a chain of three, a cross-host hop, a
	// hop to a disallowed URL, a loop and a chain longer than MaxRedirects.
	Redirects
	// Errors: 404, 410, 500, 429 and 503 with Retry-After (first request
	// only), and a link to a host the web does not serve (421).
	Errors
	// Slow: first byte after SlowDelay, a dripping body, an endless body and
	// a HugeSize body.
	Slow
	// Traps: an endless calendar, endlessly repeated path segments and
	// session ids in every link.
	Traps
	// Charsets: undeclared and mislabelled encodings with accented titles.
	Charsets
	// Compression: gzip, deflate and br pages, a gzip bomb, corrupt gzip.
	Compression
	// Duplicates: byte-identical copies on the same and on another host, and
	// a near-duplicate that differs in one word.
	Duplicates
	// NonHTML: PDF, ZIP and PNG files; HTML without a Content-Type and HTML
	// labelled application/octet-stream (both need sniffing); malformed HTML.
	NonHTML

	// AllFeatures is every feature.
	AllFeatures Feature = 1<<iota - 1
)

// Config describes a test web. Zero fields take the documented defaults;
// everything the web contains is a function of Config, so two webs built from
// equal Configs serve the same bytes.
type Config struct {
	Seed int64 // drives every choice: names, text, links, roles of hosts

	Hosts        int // number of hosts served; default 60, at most 100000
	PagesPerHost int // average ordinary pages per host (each host varies from half to 1.5×); default 20
	LinksPerPage int // links on an ordinary page, about a quarter cross-host; default 10

	// Disable lists the features not served. The zero value serves all.
	Disable Feature

	SlowDelay    time.Duration // how long slow pages wait before the first byte; default 3s
	CrawlDelay   time.Duration // the Crawl-delay some hosts declare; default 200ms
	RetryAfter   time.Duration // Retry-After of the 429 and 503 pages, rounded up to whole seconds; default 1s
	MaxRedirects int           // redirects a crawler follows from one link; default 5 (RFC 9309's minimum for robots.txt)
	HugeSize     int64         // bytes in the huge page; default 50 MiB
	BombSize     int64         // decoded bytes in the gzip bomb; default 2 GiB
	TrapLimit    int           // most URLs a crawler with working trap guards may fetch from one trap; default 100
	// Retries is how many times the crawler under test tries a URL again after a failure
	// worth retrying (a timeout, a 500): the ground truth then expects 1+Retries requests
	// for those URLs. Default 0; sonda's politeness.max-retries is the value to pass.
	Retries int

	// HostileHosts puts each Slow case (the stall, the drip, the endless and the huge body)
	// on a host of its own, as a web of hostile hosts has them: by default they share one
	// host, whose politeness then adds their costs up.
	HostileHosts bool

	// Corpus and TextBytes give ordinary pages realistic prose for benchmarks: after
	// their generated text, paragraphs of Corpus (real text: see LoadCorpus), taken in
	// order from a place the page's seed picks, until the page has TextBytes of them.
	// Both zero (the default): generated text only.
	Corpus    []string
	TextBytes int

	// KeepHeaders records each request's full header in Request.Header.
	// Off by default: a long benchmark would keep every header map alive.
	KeepHeaders bool

	// Extra, when set, is called once per host, in host order, while New
	// builds the model. The pages it returns are added to the host and linked
	// from its home page; it is how later features (topical pages, files of
	// other formats) join the web without changing the generator.
	Extra func(host string, rng *rand.Rand) []Page
}

// Page is a page added by Config.Extra.
type Page struct {
	Path  string   // absolute path, optionally with a query: "/topics/solar.html"
	Title string   // for HTML pages; also the anchor text of links to the page
	Text  []string // paragraphs of an HTML page

	// Links are the page's out-links: absolute URLs or paths on the same
	// host. A link to a URL the web does not have becomes a 404 page.
	Links []string

	// Body, when set, is served verbatim with ContentType (default
	// "application/octet-stream") instead of a generated HTML page.
	Body        []byte
	ContentType string

	// Handler, when set, answers every request for the page instead (pages that
	// change over time, files served with special headers). The ground truth
	// still takes the page's links from Links.
	Handler http.Handler

	// Unlinked keeps the page off its home page's links: it is reachable only
	// through the Links of other pages (topical regions behind off-topic ones).
	Unlinked bool
}

// Bench is the configuration for throughput benchmarks: many hosts, plain
// pages and robots.txt files, no delays, traps, errors or slow answers.
func Bench(hosts int) Config {
	return Config{Hosts: hosts, Disable: AllFeatures &^ Robots}
}

const (
	maxHosts        = 100000
	maxPagesPerHost = 10000
	maxLinksPerPage = 500
)

func (c Config) withDefaults() Config {
	def := func(v *int, d, most int) {
		if *v <= 0 {
			*v = d
		}
		*v = min(*v, most)
	}
	def(&c.Hosts, 60, maxHosts)
	def(&c.PagesPerHost, 20, maxPagesPerHost)
	def(&c.LinksPerPage, 10, maxLinksPerPage)
	def(&c.MaxRedirects, 5, 100)
	def(&c.TrapLimit, 100, 1<<30)
	if c.SlowDelay <= 0 {
		c.SlowDelay = 3 * time.Second
	}
	if c.CrawlDelay <= 0 {
		c.CrawlDelay = 200 * time.Millisecond
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = time.Second
	}
	if c.HugeSize <= 0 {
		c.HugeSize = 50 << 20
	}
	if c.BombSize <= 0 {
		c.BombSize = 2 << 30
	}
	if c.Disable&Robots != 0 {
		c.Disable |= RobotsEdgeCases | CrawlDelays
	}
	return c
}

func (c Config) has(f Feature) bool { return c.Disable&f == 0 }
