package testweb

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A resource is one URL of the model: an ordinary page, a robots.txt, a
// redirect hop, an error, a stream... The server answers it with serve; the
// ground-truth walk reads links, location, nofollow and trap.
type resource struct {
	site  *site  // nil for a host the web does not serve
	url   string // canonical absolute URL
	uri   string // path and optional "?query", escaped as in url; site.res has it under the decoded path
	title string
	seed  uint64 // drives the generated text

	serve serveFunc

	links    []link
	nofollow bool      // a correct crawler fetches the page but follows none of its links
	location *resource // where a redirect points
	status   int       // status of redirects and error answers
	trap     *Trap     // set on trap entries, which the server answers through a trapRoute

	// Options of generated HTML pages.
	base       bool         // <base href> pointing at the site root
	absOnly    bool         // links only in absolute forms: the page has copies at other URLs
	extras     bool         // mailto:, javascript:, tel: and self links
	meta       [2]string    // <meta name=meta[0] content=meta[1]>, when meta[0] != ""
	xRobots    []string     // X-Robots-Tag header
	copyOf     *resource    // serve copyOf's text and links (duplicates)
	swapAt     int          // near-duplicate: the 1-based word that differs from copyOf's
	img        *resource    // an <img src> on the page
	text       []string     // fixed paragraphs (Config.Extra pages)
	ctype      []string     // Content-Type of raw bodies; nil omits the header
	raw        []byte       // fixed body (files, charset pages)
	handler    http.Handler // answers for Config.Extra pages with a Handler
	loc        []string     // Location header of redirects
	etag       []string
	hits       atomic.Int64 // requests so far, for answers that change after the first
	encoding   string       // Content-Encoding of compressed pages
	paragraphs int          // paragraphs without links, besides one per link
}

// serveFunc answers a request for res and returns the status it wrote, or 0
// when the client went away before a status was written.
type serveFunc func(w *Web, rw http.ResponseWriter, r *http.Request, res *resource) int

type link struct {
	to   *resource
	form linkForm
}

type site struct {
	idx    int
	name   string // "www.site07.test"
	origin string // "http://www.site07.test"
	res    map[string]*resource
	home   *resource
	pages  []*resource // ordinary pages, home first; each links to the next
	pool   []*resource // targets of random links: ordinary pages plus robots test pages
	hidden []*resource // pages listed only in the sitemap
	robots *robotsFile
	traps  []*trapRoute
	log    requestLog
	role   string
}

// Web is a synthetic web built by New. It is an http.Handler; Start serves
// it on loopback. All methods are safe for concurrent use.
type Web struct {
	cfg    Config
	seed   uint64
	sites  []*site
	byName map[string]*site
	byURL  map[string]*resource
	seeds  []*resource
	truth  truth

	retryAfter    []string      // Retry-After header value
	retryAfterDur time.Duration // the same, as a duration
	transient     []*resource   // answers that change after the first request; Reset rewinds them
	unknown       requestLog    // requests for hosts the web does not serve
	bombOnce      sync.Once     // builds bombMember on first use
	bombMember    []byte        // one gzip member of bombChunk zero bytes
	filler        []byte        // 64 KiB of HTML text for huge and endless bodies
	lastMod       []string      // Last-Modified of generated pages
	lastModT      time.Time

	mu   sync.Mutex
	srv  *http.Server
	addr string

	// handling counts the handlers running: a request is logged when its handler returns,
	// which for a client that gave up (a first-byte timeout) is when the server notices,
	// possibly after the crawl has ended (see settle).
	handling atomic.Int64
}

// Case is an awkward URL of the web and what a correct crawler records for it.
type Case struct {
	URL  string // canonical URL
	Kind string // what is awkward about it: "slow-first-byte", "gzip-bomb", "redirect-loop", ...
	// Want is what a correct crawler records: a fetch error kind
	// ("timeout-first-byte", "decompression-bomb", "decompress",
	// "too-many-redirects", "redirect-loop"), "http-NNN" for an error status,
	// "truncated" for bodies cut at the size or time limit, "skipped" for
	// non-HTML bodies an HTML crawler does not download, "robots-unavailable",
	// "noindex", "nofollow", "noindex,nofollow", "redirect", "duplicate",
	// "near-duplicate", or "ok" when the page must come out right despite
	// the awkwardness (then Title says what its title decodes to).
	Want    string
	Fetches int    // requests a correct crawler makes for URL (2 after a Retry-After, 1+Config.Retries after a timeout or 500, 0 when robots forbids)
	Title   string // title of a correctly decoded page ("" when there is none to check)
	Other   string // the original of a duplicate, the Location of a redirect
}

// Trap is an endless family of URLs a crawler must stop exploring.
type Trap struct {
	Kind       string // "calendar", "repeated-segments" or "session-id"
	Entry      string // the trap URL linked from a reachable page
	MaxFetches int    // Config.TrapLimit: a crawler whose trap guards work fetches at most this many of its URLs
}

type truth struct {
	reachable, disallowed, nofollowOnly, sitemapOnly, robots, sitemaps []string
	fetches                                                            map[string]int
	cases                                                              []Case
	traps                                                              []Trap
}

// New builds the web described by cfg. It does not listen; see Start.
func New(cfg Config) *Web {
	cfg = cfg.withDefaults()
	w := &Web{
		cfg:    cfg,
		seed:   uint64(cfg.Seed),
		byName: make(map[string]*site, cfg.Hosts),
		byURL:  make(map[string]*resource, cfg.Hosts*(cfg.PagesPerHost+4)),
	}
	w.retryAfterDur = cfg.RetryAfter.Truncate(time.Second)
	if w.retryAfterDur < cfg.RetryAfter {
		w.retryAfterDur += time.Second // Retry-After has whole seconds: round up
	}
	w.retryAfter = []string{fmt.Sprint(int64(w.retryAfterDur / time.Second))}
	w.lastModT = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(w.seed%100000) * time.Minute)
	w.lastMod = []string{w.lastModT.Format(http.TimeFormat)}
	w.filler = makeFiller()

	b := &builder{w: w, rng: rand.New(rand.NewPCG(w.seed, 0x7e57eb))}
	b.buildSites()
	b.assignRoles()
	b.buildPages()
	b.buildRobots()
	b.linkPages()
	for _, f := range features {
		if cfg.has(f.flag) {
			f.add(b)
		}
	}
	b.addExtras()
	w.truth = w.walk(b.cases)
	return w
}

// builder carries the state of New.
type builder struct {
	w      *Web
	rng    *rand.Rand
	serial int     // makes slugs unique
	normal []*site // hosts with an ordinary robots.txt, in a seeded order
	next   int     // next host of normal to place a feature on
	cases  []Case
}

// hostNames names n hosts: every site has a www host and every fourth
// one a blog host too, so hosts of one registrable domain exist.
func hostNames(n int) []string {
	names := make([]string, 0, n)
	for k := 0; len(names) < n; k++ {
		names = append(names, fmt.Sprintf("www.site%02d.test", k))
		if k%4 == 3 && len(names) < n {
			names = append(names, fmt.Sprintf("blog.site%02d.test", k))
		}
	}
	return names
}

func (b *builder) buildSites() {
	w := b.w
	for i, name := range hostNames(w.cfg.Hosts) {
		s := &site{idx: i, name: name, origin: "http://" + name, res: map[string]*resource{}}
		w.sites = append(w.sites, s)
		w.byName[name] = s
	}
}

// seedCount is how many home pages Seeds returns.
const seedCount = 3

// assignRoles gives the robots.txt edge cases and crawl delays to hosts that
// are not seeds, in a seeded order.
func (b *builder) assignRoles() {
	w := b.w
	var roles []string
	if w.cfg.has(RobotsEdgeCases) {
		roles = append(roles, roleRobots404, roleRobots500, roleRobotsRedirect, roleRobotsBOM,
			roleRobotsHuge, roleAgentGroup, roleWildcards)
	}
	if w.cfg.has(CrawlDelays) {
		roles = append(roles, roleCrawlDelay, roleCrawlDelay, roleCrawlDelay)
	}
	order := b.rng.Perm(len(w.sites))
	var rest []*site
	for _, i := range order {
		s := w.sites[i]
		if i >= seedCount && len(roles) > 0 {
			s.role, roles = roles[0], roles[1:]
			continue
		}
		rest = append(rest, s)
	}
	b.normal = rest
	for i := 0; i < min(seedCount, len(w.sites)); i++ {
		w.seeds = append(w.seeds, nil) // filled by buildPages
	}
}

// featureSite is the host the next feature's pages go to: an ordinary host,
// preferring those that are not seeds, in turn.
func (b *builder) featureSite() *site {
	var pick []*site
	for _, s := range b.normal {
		if s.idx >= seedCount {
			pick = append(pick, s)
		}
	}
	if len(pick) == 0 {
		pick = b.normal
	}
	if len(pick) == 0 {
		pick = b.w.sites
	}
	s := pick[b.next%len(pick)]
	b.next++
	return s
}

// otherSite is a host other than s with an ordinary robots.txt, or nil.
func (b *builder) otherSite(s *site) *site {
	for range 4 * len(b.normal) {
		o := b.normal[b.rng.IntN(len(b.normal))]
		if o != s {
			return o
		}
	}
	return nil
}

func (b *builder) word() string { return vocabulary[20+b.rng.IntN(len(vocabulary)-20)] }

func (b *builder) slug() string {
	b.serial++
	return fmt.Sprintf("%s-%s-%d", b.word(), b.word(), b.serial)
}

func (b *builder) title(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		w := b.word()
		sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return sb.String()
}

// add registers a resource at uri (path, optionally "?query", unescaped
// ASCII) on s, or returns the one already there.
func (b *builder) add(s *site, uri, title string, serve serveFunc) *resource {
	if r := s.res[uri]; r != nil {
		return r
	}
	r := b.detached(s, uri, title, serve)
	s.res[uri] = r
	return r
}

// detached makes a resource the server does not look up by path: trap
// entries, and pages of hosts the web does not serve.
func (b *builder) detached(s *site, uri, title string, serve serveFunc) *resource {
	origin := "http://" + unknownHost
	if s != nil {
		origin = s.origin
	}
	r := &resource{site: s, url: origin + uri, uri: uri, title: title, serve: serve}
	r.seed = mix(b.w.seed, r.url)
	r.etag = []string{fmt.Sprintf(`"%016x"`, r.seed)}
	b.w.byURL[r.url] = r
	return r
}

// page adds an HTML page with generated text.
func (b *builder) page(s *site, uri string) *resource {
	return b.add(s, uri, b.title(3), servePage)
}

// pagePath invents the path of an ordinary page.
func (b *builder) pagePath(s *site) string {
	sec := sections[b.rng.IntN(len(sections))]
	switch b.rng.IntN(6) {
	case 0:
		return "/" + b.slug() + ".html"
	case 1:
		if s.res["/"+sec+"/"] == nil {
			return "/" + sec + "/"
		}
		fallthrough
	case 2, 3:
		return "/" + sec + "/" + b.slug() + ".html"
	default:
		return "/" + sec + "/" + b.word() + "/" + b.slug() + ".html"
	}
}

func (b *builder) buildPages() {
	w := b.w
	base := w.cfg.PagesPerHost
	for _, s := range w.sites {
		n := max(1, base/2+b.rng.IntN(base+1))
		s.home = b.page(s, "/")
		s.home.title = "Welcome to " + s.name
		s.home.extras = true
		s.pages = append(s.pages, s.home)
		for len(s.pages) < n {
			p := b.page(s, b.pagePath(s))
			p.base = b.rng.IntN(8) == 0
			p.extras = b.rng.IntN(4) == 0
			s.pages = append(s.pages, p)
		}
		s.pool = append(s.pool, s.pages[1:]...)
		if len(s.pool) == 0 {
			s.pool = append(s.pool, s.home)
		}
		if b.rng.IntN(3) == 0 { // a paginated list, reached through "?page=N" links
			b.listing(s)
		}
	}
	for i := range w.seeds {
		w.seeds[i] = w.sites[i].home
	}
}

// listing adds /list, /list?page=2 and /list?page=3: pages whose URLs differ
// only in the query, linked by query-only relative references.
func (b *builder) listing(s *site) {
	first := b.page(s, "/list")
	prev := first
	for n := 2; n <= 3; n++ {
		p := b.page(s, fmt.Sprintf("/list?page=%d", n))
		prev.links = append(prev.links, link{to: p, form: formQuery})
		prev = p
	}
	b.linkFrom(s, first)
	s.pool = append(s.pool, first)
}

// linkFrom links to target from a random ordinary page of s.
func (b *builder) linkFrom(s *site, target *resource) {
	from := s.pages[b.rng.IntN(len(s.pages))]
	from.links = append(from.links, link{to: target, form: b.form(from, target)})
}

// linkPages gives ordinary pages their links: home pages link to the first
// pages of their host and to the next two hosts' home pages (so every host is
// reachable from any seed even if one host's robots.txt forbids everything),
// each page links to the next one of its host (so every page is reachable),
// and the rest are random, a quarter of them cross-host.
func (b *builder) linkPages() {
	w := b.w
	for si, s := range w.sites {
		for i, p := range s.pages {
			// Links added earlier (to robots test pages) go after the
			// structural ones, which lead the page's <nav>.
			earlier := p.links
			p.links = nil
			add := func(t *resource) {
				p.links = append(p.links, link{to: t, form: b.form(p, t)})
			}
			if i == 0 {
				for _, t := range s.pages[1:min(6, len(s.pages))] {
					add(t)
				}
				for d := 1; d <= 2; d++ {
					if o := w.sites[(si+d)%len(w.sites)]; o != s {
						add(o.home)
					}
				}
			} else {
				add(s.home)
				if i+1 < len(s.pages) {
					add(s.pages[i+1])
				}
			}
			p.links = append(p.links, earlier...)
			for len(p.links) < w.cfg.LinksPerPage {
				pool := s.pool
				if len(w.sites) > 1 && b.rng.IntN(4) == 0 {
					pool = w.sites[b.rng.IntN(len(w.sites))].pool
				}
				add(pool[b.rng.IntN(len(pool))])
			}
		}
	}
}

// addExtras adds the pages of Config.Extra.
func (b *builder) addExtras() {
	w := b.w
	if w.cfg.Extra == nil {
		return
	}
	// Links are resolved once every host's pages exist, so a page may link to an Extra
	// page of a host that comes after its own.
	type pending struct {
		s     *site
		r     *resource
		links []string
	}
	var added []pending
	for _, s := range w.sites {
		rng := rand.New(rand.NewPCG(mix(w.seed, s.name), 0xe7))
		for _, p := range w.cfg.Extra(s.name, rng) {
			key, uri, ok := splitPath(p.Path)
			if !ok || s.res[key] != nil {
				continue
			}
			r := b.detached(s, uri, p.Title, servePage)
			s.res[key] = r
			r.text = p.Text
			if p.Body != nil {
				r.serve, r.raw = serveRaw, p.Body
				r.ctype = []string{orDefault(p.ContentType, "application/octet-stream")}
			}
			if p.Handler != nil {
				r.serve, r.handler = serveHandler, p.Handler
			}
			if !p.Unlinked {
				s.home.links = append(s.home.links, link{to: r, form: formRootRelative})
			}
			added = append(added, pending{s, r, p.Links})
		}
	}
	for _, a := range added {
		for _, l := range a.links {
			t := b.resolveExtra(a.s, l)
			a.r.links = append(a.r.links, link{to: t, form: b.form(a.r, t)})
		}
	}
}

// resolveExtra finds the resource an Extra page links to; an unknown URL on
// a served host becomes a 404 page.
func (b *builder) resolveExtra(s *site, ref string) *resource {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		u = &url.URL{Path: "/"}
	}
	target := s
	if u.Host != "" {
		if o := b.w.byName[canonicalHost(u.Host)]; o != nil {
			target = o
		}
	}
	key, _, ok := splitPath(u.RequestURI())
	if !ok {
		key = "/"
	}
	if r := target.res[key]; r != nil {
		return r
	}
	return b.status(target, key, http.StatusNotFound)
}

// splitPath turns a path with an optional query into the server's lookup key
// (decoded path, raw query) and the escaped form used in URLs.
func splitPath(p string) (key, uri string, ok bool) {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
		return "", "", false
	}
	key, uri = u.Path, u.EscapedPath()
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
		uri += "?" + u.RawQuery
	}
	return key, uri, true
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// mix hashes s into seed (FNV-1a, then a SplitMix64 finaliser so close
// inputs give unrelated outputs).
func mix(seed uint64, s string) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}
