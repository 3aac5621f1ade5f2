// Package topical builds a topical test web: a testweb.Web whose sites and pages are about
// themes (nuclear energy, geographic data, electricity markets, physics, cooking, sport...),
// with the topical locality real webs have, and ground-truth labels saying what each page
// is about. Focused-crawling strategies are compared on it (sonda eval focus, the focus
// benchmark).
//
// # Model
//
// Sites are of five kinds, in shares close to what a crawl of a topical neighbourhood
// meets:
//
//	topical (70%)    one theme; sections about it; most articles on theme, some not
//	blog (12%)       a personal site, posts on a main theme and others
//	news (8%)        sections on several themes, articles following their section
//	university (6%)  departments about different themes, reachable only through an
//	                 off-topic "departments" page: relevant regions behind irrelevant pages
//	portal (4%)      a directory: a category page per theme listing sites about it
//
// Every site has boilerplate pages (about, contact, privacy) about nothing. Site
// popularity follows a Zipf law. A page's out-links are navigation (home, sections),
// related articles of its site, and external links; an external link from a page about a
// theme goes to a site about the same theme with probability Config.Homophily, else to a
// site drawn by popularity alone. A share of topical sites (Config.Hidden) receives no
// same-theme links at all: they are found through portals and chance links only.
//
// Anchors are mostly the target's title, sometimes a site name, sometimes "read more";
// the words around a link talk about the target's theme half of the time. Titles are
// sometimes uninformative ("Annual report 2019"). Text mixes function words, the page's
// theme words (Zipf-weighted, with a per-page share of 12–40%), a little of another theme
// and general words; themes share words ("power", "fuel", "radiation"), so keyword
// relevance errs both ways, as it does on the real web.
//
// Nothing here is tuned to a crawling strategy: the shares and probabilities are plain
// round numbers describing a web, and the same generator serves every topic (Themes).
//
// # Ground truth
//
// Label gives the theme of every generated page; pages of the underlying testweb (home
// pages, their ordinary pages) are about nothing. A page is relevant to a topic when its
// label is the topic's theme. WriteLabels exports the labels as JSON lines.
package topical

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/sonda-search/sonda/testweb"
)

// Config describes a topical web. Zero fields take the defaults.
type Config struct {
	Seed      int64
	Sites     int     // hosts (default 1,000)
	MeanPages int     // average generated pages per site (default 100)
	Homophily float64 // share of a themed page's external links that stay on theme (default 0.5)
	Hidden    float64 // share of topical sites no same-theme site links to (default 0.2)
}

func (c Config) withDefaults() Config {
	if c.Sites <= 0 {
		c.Sites = 1000
	}
	if c.MeanPages <= 0 {
		c.MeanPages = 100
	}
	if c.Homophily <= 0 || c.Homophily > 1 {
		c.Homophily = 0.5
	}
	if c.Hidden < 0 || c.Hidden >= 1 {
		c.Hidden = 0
	} else if c.Hidden == 0 {
		c.Hidden = 0.2
	}
	return c
}

// Web is a topical test web: a testweb.Web plus the labels of its pages.
type Web struct {
	*testweb.Web
	cfg    Config
	sites  []*site
	pages  []*page
	labels map[string]string // canonical URL → theme
	byURL  map[string]*page
}

type siteKind uint8

const (
	kindTopical siteKind = iota
	kindBlog
	kindNews
	kindUniversity
	kindPortal
)

func (k siteKind) String() string {
	return [...]string{"topical", "blog", "news", "university", "portal"}[k]
}

type site struct {
	idx    int
	host   string
	name   string
	kind   siteKind
	theme  int // main theme (topical, blog); -1 otherwise
	pop    float64
	hidden bool
	front  *page
	pages  []*page
	public []*page            // pages other sites may link to
	navs   []*page            // public sections, in order
	byDir  map[string][]*page // articles per directory
	byTh   map[int][]*page    // public pages per theme
	entry  map[int]*page      // where a same-theme link lands: the front or the theme's section
}

type pageKind uint8

const (
	pageFront pageKind = iota
	pageSection
	pageArticle
	pageBoiler
	pageCategory // a portal's list of sites about a theme
	pageDepts    // a university's list of departments
)

type page struct {
	site     *site
	path     string
	title    string
	theme    int // -1: about nothing
	other    int // a second theme the text mentions a little
	share    float64
	kind     pageKind
	seed     uint64
	links    []plink
	unlinked bool
	public   bool // may be the target of links from other sites
}

type plink struct {
	to     *page
	anchor string
	ctx    int // theme of the words around the link (body links) or of its description (lists)
	place  place
}

// place is where a link sits on its page.
type place uint8

const (
	placeNav  place = iota // the navigation bar
	placeList              // a list of links (section listings, related articles, directories)
	placeBody              // inside the prose, with words around it
)

// New builds a topical web. It does not listen; see testweb.Web.Start.
func New(cfg Config) *Web {
	cfg = cfg.withDefaults()
	// The host names are testweb's; build a bare web of the same size to learn them.
	hosts := testweb.New(testweb.Config{Seed: cfg.Seed, Hosts: cfg.Sites, PagesPerHost: 1, Disable: testweb.AllFeatures}).Hosts()
	w := &Web{cfg: cfg, labels: map[string]string{}, byURL: map[string]*page{}}
	g := &gen{w: w, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x70b1ca1))}
	g.sites(hosts)
	for _, s := range w.sites {
		g.buildSite(s)
	}
	g.index()
	for _, p := range w.pages {
		g.link(p)
	}
	byHost := map[string][]testweb.Page{}
	for _, p := range w.pages {
		url := p.url()
		if p.theme >= 0 {
			w.labels[url] = themes[p.theme].name
		}
		w.byURL[url] = p
		tp := testweb.Page{Path: p.path, Title: p.title, Unlinked: p.unlinked, Handler: w.handler(p)}
		for _, l := range p.links {
			tp.Links = append(tp.Links, l.to.href(p))
		}
		byHost[p.site.host] = append(byHost[p.site.host], tp)
	}
	w.Web = testweb.New(testweb.Config{Seed: cfg.Seed, Hosts: cfg.Sites, PagesPerHost: 1, LinksPerPage: 4,
		Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra:   func(host string, _ *rand.Rand) []testweb.Page { return byHost[host] }})
	return w
}

func (p *page) url() string { return "http://" + p.site.host + p.path }

// dir is the directory a page is in: its section.
func (p *page) dir() string { return p.path[:strings.LastIndex(p.path, "/")+1] }

// href is how page from links to p: a path on the same host, else an absolute URL.
func (p *page) href(from *page) string {
	if from.site == p.site {
		return p.path
	}
	return p.url()
}

// Themes lists the theme names, the possible labels.
func Themes() []string {
	out := make([]string, len(themes))
	for i, t := range themes {
		out[i] = t.name
	}
	return out
}

// Label returns the theme of the page at url (canonical form), "" for pages about nothing
// and for URLs the topical model did not generate.
func (w *Web) Label(url string) string { return w.labels[url] }

// Relevant reports whether the page at url is about topic.
func (w *Web) Relevant(url, topic string) bool { return w.labels[url] == topic }

// Pages returns the URLs of every generated page, sorted.
func (w *Web) Pages() []string {
	out := make([]string, 0, len(w.pages))
	for _, p := range w.pages {
		out = append(out, p.url())
	}
	sort.Strings(out)
	return out
}

// Count returns how many generated pages are about topic.
func (w *Web) Count(topic string) int {
	n := 0
	for _, l := range w.labels {
		if l == topic {
			n++
		}
	}
	return n
}

// Seeds returns start URLs for a crawl looking for topic, the way the seed 001 thesis chose
// its seeds: front pages of two well-known sites about the topic, one of a site about a
// neighbouring theme, and one of a portal. The choice depends on the web, not on any
// crawler.
func (w *Web) Seeds(topic string) []string {
	t := themeByName(topic)
	var on, near, portal []*site
	for _, s := range w.sites {
		switch {
		case s.kind == kindTopical && s.theme == t && !s.hidden:
			on = append(on, s)
		case s.kind == kindTopical && s.theme != t && s.theme >= 0 && sharesWords(s.theme, t):
			near = append(near, s)
		case s.kind == kindPortal:
			portal = append(portal, s)
		}
	}
	byPop := func(ss []*site) {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].pop > ss[j].pop })
	}
	byPop(on)
	byPop(near)
	byPop(portal)
	var out []string
	for _, group := range [][]*site{on[:min(2, len(on))], near[:min(1, len(near))], portal[:min(1, len(portal))]} {
		for _, s := range group {
			out = append(out, s.front.url())
		}
	}
	return out
}

// sharesWords reports whether two themes have at least three words in common.
func sharesWords(a, b int) bool {
	if b < 0 {
		return false
	}
	set := map[string]bool{}
	for _, w := range themes[a].words {
		set[w] = true
	}
	n := 0
	for _, w := range themes[b].words {
		if set[w] {
			n++
		}
	}
	return n >= 3
}

// Label is one line of WriteLabels.
type Label struct {
	URL   string `json:"url"`
	Theme string `json:"theme"` // "" for pages about nothing
	Kind  string `json:"kind"`  // front, section, article, boilerplate, category, departments
	Site  string `json:"site"`  // topical, blog, news, university, portal
}

// WriteLabels writes the ground truth as JSON lines, one per generated page, sorted by URL.
func (w *Web) WriteLabels(out io.Writer) error {
	enc := json.NewEncoder(out)
	for _, u := range w.Pages() {
		p := w.byURL[u]
		l := Label{URL: u, Kind: [...]string{"front", "section", "article", "boilerplate", "category", "departments"}[p.kind], Site: p.site.kind.String()}
		if p.theme >= 0 {
			l.Theme = themes[p.theme].name
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// gen carries the state of New.
type gen struct {
	w      *Web
	rng    *rand.Rand
	serial int
	// sites with public content about each theme, and their popularity
	onTheme [][]*site
}

func (g *gen) pick(words []string) string {
	// Zipf-like: rank r drawn with weight 1/(r+1).
	n := len(words)
	u := g.rng.Float64() * math.Log(float64(n)+1)
	r := int(math.Exp(u)) - 1
	return words[min(max(r, 0), n-1)]
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// themeWeights are the shares of themes among single-theme sites: the two target topics
// and their neighbours are common enough to crawl toward, rare enough to need finding.
func (g *gen) drawTheme() int {
	weights := make([]float64, len(themes))
	for i := range themes {
		weights[i] = 1
	}
	weights[themeByName(Nuclear)] = 1.3
	weights[themeByName(Geo)] = 1.3
	var total float64
	for _, x := range weights {
		total += x
	}
	u := g.rng.Float64() * total
	for i, x := range weights {
		if u < x {
			return i
		}
		u -= x
	}
	return len(themes) - 1
}

var siteSuffixes = fields(`Review Daily Today Hub Forum Journal Network Institute Watch World Post Digest Center Notes Matters Insider`)
var places = fields(`Northfield Riverton Lakeside Westbrook Eastport Hillcrest Fairview Brookdale Ashford Milltown Oakridge Stonebridge Clearwater Redwood Maplewood Kingsport`)

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sites assigns kinds, themes, names and popularity.
func (g *gen) sites(hosts []string) {
	for i, h := range hosts {
		s := &site{idx: i, host: h, theme: -1, byTh: map[int][]*page{}, entry: map[int]*page{}}
		u := g.rng.Float64()
		switch {
		case u < 0.70:
			s.kind = kindTopical
		case u < 0.82:
			s.kind = kindBlog
		case u < 0.90:
			s.kind = kindNews
		case u < 0.96:
			s.kind = kindUniversity
		default:
			s.kind = kindPortal
		}
		switch s.kind {
		case kindTopical, kindBlog:
			s.theme = g.drawTheme()
			t := themes[s.theme]
			s.name = capitalize(t.sites[g.rng.IntN(len(t.sites))]) + " " + siteSuffixes[g.rng.IntN(len(siteSuffixes))]
			if s.kind == kindBlog {
				s.name = capitalize(g.pick(general)) + " and " + capitalize(t.sites[g.rng.IntN(len(t.sites))]) + " blog"
			}
			s.hidden = s.kind == kindTopical && g.chance(g.w.cfg.Hidden)
		case kindNews:
			s.name = "The " + places[g.rng.IntN(len(places))] + " " + [...]string{"Herald", "Gazette", "Tribune", "Courier"}[g.rng.IntN(4)]
		case kindUniversity:
			s.name = "University of " + places[g.rng.IntN(len(places))]
		case kindPortal:
			s.name = capitalize(g.pick(general)) + " Web Directory"
		}
		// Zipf popularity over a random order of sites; portals are linked to more.
		s.pop = 1 / math.Pow(float64(1+g.rng.IntN(len(hosts))), 0.8)
		if s.kind == kindPortal {
			s.pop *= 3
		}
		g.w.sites = append(g.w.sites, s)
	}
}

func (g *gen) size() int {
	// Log-normal site sizes around MeanPages: many small sites, a few large ones.
	mean := float64(g.w.cfg.MeanPages)
	n := mean * math.Exp(g.rng.NormFloat64()*0.6-0.18)
	return max(8, min(int(n), 8*g.w.cfg.MeanPages))
}

func (g *gen) newPage(s *site, kind pageKind, theme int, path, title string) *page {
	g.serial++
	p := &page{site: s, path: path, title: title, theme: theme, other: g.rng.IntN(len(themes)), kind: kind,
		seed: g.rng.Uint64(), share: 0.12 + 0.28*g.rng.Float64(), public: true}
	s.pages = append(s.pages, p)
	g.w.pages = append(g.w.pages, p)
	return p
}

func (g *gen) slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() > 40 {
			break
		}
	}
	return strings.Trim(b.String(), "-") + "-" + strconv.Itoa(g.serial)
}

// articleTitle writes a title about theme t; one in five says nothing about it.
func (g *gen) articleTitle(t int) string {
	if t < 0 || g.chance(0.2) {
		switch g.rng.IntN(4) {
		case 0:
			return "Annual report " + strconv.Itoa(1995+g.rng.IntN(30))
		case 1:
			return "Interview with " + capitalize(g.pick(general)) + " " + places[g.rng.IntN(len(places))]
		case 2:
			return "Notes from " + [...]string{"January", "March", "May", "July", "September", "November"}[g.rng.IntN(6)]
		default:
			return "Update " + strconv.Itoa(1+g.rng.IntN(200))
		}
	}
	w := themes[t].words
	a, b, c := g.pick(w), g.pick(w), g.pick(w)
	switch g.rng.IntN(6) {
	case 0:
		return capitalize(a) + " and " + b
	case 1:
		return capitalize(a) + " " + b + ": " + c + " explained"
	case 2:
		return "How " + a + " " + b + " works"
	case 3:
		return "The future of " + a
	case 4:
		return capitalize(a) + " " + b + " in " + strconv.Itoa(1995+g.rng.IntN(30))
	default:
		return "Why " + a + " matters for " + b
	}
}

// buildSite creates a site's pages (links come later, once every site exists).
func (g *gen) buildSite(s *site) {
	s.front = g.newPage(s, pageFront, s.theme, "/start.html", s.name)
	if s.kind == kindPortal {
		s.front.theme = -1
	}
	for _, b := range []string{"About us", "Contact", "Privacy policy"} {
		g.newPage(s, pageBoiler, -1, "/"+g.slug(b)+".html", b+" | "+s.name)
	}
	n := g.size()
	switch s.kind {
	case kindTopical:
		secs := themes[s.theme].sections
		k := min(len(secs), 2+g.rng.IntN(4))
		for i := 0; i < k; i++ {
			g.section(s, secs[i], s.theme, n/k, 0.85)
		}
	case kindBlog:
		sec := g.newPage(s, pageSection, s.theme, "/posts/", "Posts | "+s.name)
		for i := 0; i < n/3+4; i++ {
			t := s.theme
			if g.chance(0.4) {
				t = g.rng.IntN(len(themes))
			}
			g.article(s, sec, "/posts/", t)
		}
	case kindNews:
		k := 4 + g.rng.IntN(4)
		for _, t := range g.rng.Perm(len(themes))[:k] {
			g.section(s, themes[t].name, t, n/k, 0.8)
		}
	case kindUniversity:
		depts := g.newPage(s, pageDepts, -1, "/departments/", "Departments | "+s.name)
		k := 3 + g.rng.IntN(4)
		first := g.drawTheme()
		ts := []int{first}
		for _, t := range g.rng.Perm(len(themes)) {
			if len(ts) < k && t != first {
				ts = append(ts, t)
			}
		}
		for _, t := range ts {
			name := capitalize(themes[t].sections[0])
			dept := g.newPage(s, pageSection, t, "/dept/"+themes[t].name+"/", "Department of "+name+" | "+s.name)
			dept.unlinked, dept.public = true, false
			dept.links = append(dept.links, plink{to: depts, anchor: "All departments", ctx: -1, place: placeNav})
			depts.links = append(depts.links, plink{to: dept, anchor: "Department of " + name, ctx: t, place: placeList})
			for j := 0; j < n/k; j++ {
				a := g.article(s, dept, "/dept/"+themes[t].name+"/", t)
				a.unlinked, a.public = true, false
			}
		}
	case kindPortal:
		for t := range themes {
			c := g.newPage(s, pageCategory, t, "/dir/"+themes[t].name+"/", capitalize(themes[t].name)+" sites | "+s.name)
			s.front.links = append(s.front.links, plink{to: c, anchor: capitalize(themes[t].name), ctx: t, place: placeList})
		}
	}
}

// section adds a section page and its articles; share of them are on the section's theme.
func (g *gen) section(s *site, name string, t, articles int, share float64) {
	dir := "/" + name + "/"
	sec := g.newPage(s, pageSection, t, dir, capitalize(strings.ReplaceAll(name, "-", " "))+" | "+s.name)
	for i := 0; i < max(articles, 3); i++ {
		at := t
		if !g.chance(share) {
			at = g.rng.IntN(len(themes))
			if g.chance(0.3) {
				at = -1
			}
		}
		g.article(s, sec, dir, at)
	}
}

func (g *gen) article(s *site, sec *page, dir string, t int) *page {
	title := g.articleTitle(t)
	a := g.newPage(s, pageArticle, t, dir+g.slug(title)+".html", title)
	sec.links = append(sec.links, plink{to: a, anchor: title, ctx: t, place: placeList})
	a.links = append(a.links, plink{to: sec, anchor: "Back to " + strings.SplitN(sec.title, " |", 2)[0], ctx: -1, place: placeNav})
	return a
}

// index records, per theme, the public pages of each site and the sites that have them.
func (g *gen) index() {
	g.onTheme = make([][]*site, len(themes))
	for _, s := range g.w.sites {
		s.byDir = map[string][]*page{}
		for _, p := range s.pages {
			if p.public {
				s.public = append(s.public, p)
				if p.kind == pageSection {
					s.navs = append(s.navs, p)
				}
			}
			if p.kind == pageArticle {
				s.byDir[p.dir()] = append(s.byDir[p.dir()], p)
			}
		}
		for _, p := range s.pages {
			if !p.public || p.theme < 0 || p.kind == pageCategory {
				continue
			}
			s.byTh[p.theme] = append(s.byTh[p.theme], p)
			if p.kind == pageSection && s.entry[p.theme] == nil {
				s.entry[p.theme] = p
			}
		}
		for t, ps := range s.byTh {
			if s.entry[t] == nil {
				s.entry[t] = s.front
			}
			// A site counts as being about a theme when it has a real share of pages on it.
			if len(ps) >= 5 && !s.hidden {
				g.onTheme[t] = append(g.onTheme[t], s)
			}
		}
	}
}

// bySite picks a site from ss with probability proportional to popularity.
func (g *gen) bySite(ss []*site) *site {
	var total float64
	for _, s := range ss {
		total += s.pop
	}
	u := g.rng.Float64() * total
	for _, s := range ss {
		if u < s.pop {
			return s
		}
		u -= s.pop
	}
	return ss[len(ss)-1]
}

// external picks the target of an external link from a page about theme t (-1: none).
func (g *gen) external(from *page, t int) *page {
	if t >= 0 && len(g.onTheme[t]) > 0 && g.chance(g.w.cfg.Homophily) {
		s := g.bySite(g.onTheme[t])
		if s != from.site {
			if g.chance(0.5) {
				return s.entry[t]
			}
			ps := s.byTh[t]
			return ps[g.rng.IntN(len(ps))]
		}
	}
	s := g.bySite(g.w.sites)
	if s == from.site || g.chance(0.6) {
		return s.front
	}
	return s.public[g.rng.IntN(len(s.public))]
}

// anchorFor is the text of a link to p from another page.
func (g *gen) anchorFor(p *page, external bool) string {
	u := g.rng.Float64()
	switch {
	case u < 0.2:
		return genericAnchors[g.rng.IntN(len(genericAnchors))]
	case external && u < 0.45:
		return p.site.name
	}
	return strings.SplitN(p.title, " |", 2)[0]
}

// link adds each page's navigation, related and external links.
func (g *gen) link(p *page) {
	s := p.site
	sections := s.navs
	nav := func() {
		if p != s.front {
			p.links = append(p.links, plink{to: s.front, anchor: "Home", ctx: -1, place: placeNav})
		}
		for i, q := range sections {
			if i < 4 && q != p {
				p.links = append(p.links, plink{to: q, anchor: strings.SplitN(q.title, " |", 2)[0], ctx: -1, place: placeNav})
			}
		}
	}
	switch p.kind {
	case pageFront:
		nav()
		if s.kind == kindUniversity {
			for _, q := range s.pages {
				if q.kind == pageDepts {
					p.links = append(p.links, plink{to: q, anchor: "Departments", ctx: -1, place: placeNav})
				}
			}
		}
		for i := 0; i < 6 && len(s.pages) > 4; i++ {
			q := s.pages[g.rng.IntN(len(s.pages))]
			if q.kind == pageArticle && q.public {
				p.links = append(p.links, plink{to: q, anchor: q.title, ctx: q.theme, place: placeList})
			}
		}
		for _, q := range s.pages[:4] { // the front page and the boilerplate come first
			if q.kind == pageBoiler {
				p.links = append(p.links, plink{to: q, anchor: strings.SplitN(q.title, " |", 2)[0], ctx: -1, place: placeNav})
			}
		}
		g.externals(p, 1+g.rng.IntN(3))
	case pageCategory:
		listed := g.onTheme[p.theme]
		for i := 0; i < 30 && len(listed) > 0; i++ {
			q := listed[g.rng.IntN(len(listed))]
			p.links = append(p.links, plink{to: q.front, anchor: q.name, ctx: q.theme, place: placeList})
		}
		// Directories list some sites nobody else links to: the way to hidden sites.
		for _, q := range g.w.sites {
			if q.hidden && q.theme == p.theme && g.chance(0.5) {
				p.links = append(p.links, plink{to: q.front, anchor: q.name, ctx: q.theme, place: placeList})
			}
		}
		p.links = append(p.links, plink{to: s.front, anchor: "Directory home", ctx: -1, place: placeNav})
	case pageSection, pageDepts, pageBoiler:
		if p.public {
			nav()
		}
		if p.kind == pageSection {
			g.externals(p, g.rng.IntN(2))
		}
	case pageArticle:
		if p.public {
			nav()
		} else {
			p.links = append(p.links, plink{to: s.front, anchor: "Home", ctx: -1, place: placeNav})
		}
		siblings := s.byDir[p.dir()]
		for i := 0; i < 4 && len(siblings) > 1; i++ {
			q := siblings[g.rng.IntN(len(siblings))]
			if q == p {
				continue
			}
			pl := placeList
			if g.chance(0.5) {
				pl = placeBody
			}
			p.links = append(p.links, plink{to: q, anchor: g.anchorFor(q, false), ctx: q.theme, place: pl})
		}
		g.externals(p, g.rng.IntN(4))
	}
}

func (g *gen) externals(p *page, n int) {
	for i := 0; i < n; i++ {
		t := p.theme
		if t >= 0 && g.chance(0.15) {
			t = p.other
		}
		q := g.external(p, t)
		ctx := q.theme
		if !g.chance(0.5) {
			ctx = p.theme
		}
		p.links = append(p.links, plink{to: q, anchor: g.anchorFor(q, true), ctx: ctx, place: placeBody})
	}
}

// handler serves a generated page, rendered anew on each request from its seed.
func (w *Web) handler(p *page) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write(render(nil, p))
	})
}

// Describe summarizes the web for logs and reports.
func (w *Web) Describe() string {
	kinds := map[siteKind]int{}
	for _, s := range w.sites {
		kinds[s.kind]++
	}
	return fmt.Sprintf("%d sites (%d topical, %d blogs, %d news, %d universities, %d portals), %d generated pages",
		len(w.sites), kinds[kindTopical], kinds[kindBlog], kinds[kindNews], kinds[kindUniversity], kinds[kindPortal], len(w.pages))
}
