package testweb

import (
	"strconv"
	"strings"
	"time"
)

// Roles of hosts whose robots.txt is not the ordinary one.
const (
	roleRobots404      = "robots-404"      // robots.txt is 404: everything allowed, /private/ too
	roleRobots500      = "robots-500"      // robots.txt is 500: nothing may be fetched
	roleRobotsRedirect = "robots-redirect" // robots.txt redirects twice before the file
	roleRobotsBOM      = "robots-bom-crlf" // a UTF-8 BOM, CRLF line ends, lowercase keys, comments
	roleRobotsHuge     = "robots-huge"     // > 500 KiB; a rule after the cap must be ignored
	roleAgentGroup     = "robots-agent"    // a "sonda" group stricter (and in one way laxer) than "*"
	roleWildcards      = "robots-patterns" // "*", "$" and an Allow overriding a Disallow
	roleCrawlDelay     = "crawl-delay"     // Crawl-delay: Config.CrawlDelay
)

// agent is the product token sonda's crawler matches robots.txt groups with.
const agent = "sonda"

// robotsCap is how much of a robots.txt a crawler must parse (RFC 9309,
// 500 KiB); the huge robots.txt puts a rule after it.
const robotsCap = 500 << 10

type robotsRule struct {
	allow    bool
	pattern  string
	afterCap bool // written after robotsCap bytes of filler, so a crawler ignores it
}

type robotsGroup struct {
	agents     []string
	rules      []robotsRule
	crawlDelay time.Duration
}

// robotsFile is the model of one host's robots.txt: what is served and what
// it means for agent sonda.
type robotsFile struct {
	status  int // 200, 404 or 500
	groups  []robotsGroup
	sitemap string // URL of the Sitemap line, "" for none
	bom     bool   // starts with a UTF-8 byte order mark
	crlf    bool   // CRLF line ends, lowercase keys and comments
	huge    bool   // filler rules push afterCap rules beyond robotsCap
	hops    []string
	body    []byte      // rendered once by New
	sonda   robotsGroup // group(), computed once by New
}

// group is the group that applies to agent sonda, as RFC 9309 chooses it:
// the groups naming the agent merged, else the "*" groups merged.
func (f *robotsFile) group() robotsGroup {
	var own, star robotsGroup
	for _, g := range f.groups {
		for _, a := range g.agents {
			into := &star
			if strings.EqualFold(a, agent) {
				into = &own
			} else if a != "*" {
				continue
			}
			into.agents = append(into.agents, a)
			into.rules = append(into.rules, g.rules...)
			into.crawlDelay = max(into.crawlDelay, g.crawlDelay)
		}
	}
	if own.agents != nil {
		return own
	}
	return star
}

// allows reports whether sonda may fetch pathQuery: the longest matching
// rule wins, Allow wins ties, no match allows; 4xx allows all and 5xx
// forbids all. Rules beyond robotsCap do not count.
func (f *robotsFile) allows(pathQuery string) bool {
	switch {
	case f == nil || f.status >= 400 && f.status < 500:
		return true
	case f.status >= 500:
		return false
	}
	best, allow := -1, true
	for _, r := range f.sonda.rules {
		if r.afterCap || r.pattern == "" || !robotsMatch(r.pattern, pathQuery) {
			continue
		}
		if n := len(r.pattern); n > best || n == best && r.allow {
			best, allow = n, r.allow
		}
	}
	return allow
}

func (f *robotsFile) crawlDelay() time.Duration {
	if f == nil || f.status != 200 {
		return 0
	}
	return f.sonda.crawlDelay
}

// robotsMatch matches a robots.txt path pattern against a path and query:
// '*' is any run of characters, a final '$' anchors the end, otherwise the
// pattern is a prefix.
func robotsMatch(pattern, s string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// Iterative glob: on a mismatch, retry from the last '*' with one more
	// character swallowed by it.
	p, i := 0, 0
	star, mark := -1, 0
	for {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p == len(pattern) && (!anchored || i == len(s)):
			return true
		case p < len(pattern) && i < len(s) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0 && mark < len(s):
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
}

// render writes the file as served.
func (f *robotsFile) render(host string) []byte {
	if f.status != 200 {
		return []byte(strconv.Itoa(f.status) + " " + host + " robots.txt is unavailable\n")
	}
	key := func(k string) string {
		if f.crlf {
			return strings.ToLower(k)
		}
		return k
	}
	var lines []string
	lines = append(lines, "# robots.txt for "+host+" (sonda test web)")
	for _, g := range f.groups {
		for _, a := range g.agents {
			lines = append(lines, key("User-agent")+": "+a)
		}
		var late []robotsRule
		for _, r := range g.rules {
			if r.afterCap {
				late = append(late, r)
				continue
			}
			line := key("Disallow") + ": " + r.pattern
			if r.allow {
				line = key("Allow") + ": " + r.pattern
			}
			if f.crlf {
				line += "   # " + strings.TrimPrefix(r.pattern, "/")
			}
			lines = append(lines, line)
		}
		if g.crawlDelay > 0 {
			lines = append(lines, key("Crawl-delay")+": "+strconv.FormatFloat(g.crawlDelay.Seconds(), 'f', -1, 64))
		}
		if f.huge {
			size := 0
			for _, l := range lines {
				size += len(l) + 1
			}
			for n := 0; size < robotsCap+8<<10; n++ {
				l := "Disallow: /archive/filler-" + strconv.Itoa(100000+n) + "/"
				lines = append(lines, l)
				size += len(l) + 1
			}
		}
		for _, r := range late {
			lines = append(lines, key("Disallow")+": "+r.pattern)
		}
		lines = append(lines, "")
	}
	if f.sitemap != "" {
		lines = append(lines, key("Sitemap")+": "+f.sitemap)
	}
	eol := "\n"
	if f.crlf {
		eol = "\r\n"
	}
	body := strings.Join(lines, eol) + eol
	if f.bom {
		body = "\ufeff" + body
	}
	return []byte(body)
}

func disallow(p string) robotsRule { return robotsRule{pattern: p} }

// buildRobots gives every host its robots.txt, per its role, and adds the
// pages that exercise the rules (each linked from the host's pages).
func (b *builder) buildRobots() {
	w := b.w
	for _, s := range w.sites {
		f := &robotsFile{status: 200}
		s.robots = f
		star := robotsGroup{agents: []string{"*"}}
		if !w.cfg.has(Robots) {
			f.groups = []robotsGroup{star}
			f.body, f.sonda = f.render(s.name), f.group()
			b.add(s, "/robots.txt", "robots.txt", serveRobots)
			continue
		}
		star.rules = []robotsRule{disallow("/private/")}
		f.sitemap = s.origin + "/sitemap.xml"
		for range 1 + b.rng.IntN(2) {
			b.poolPage(s, "/private/"+b.slug()+".html")
		}
		switch s.role {
		case roleRobots404:
			f.status = 404
		case roleRobots500:
			f.status = 500
		case roleRobotsRedirect:
			f.hops = []string{"/robots-moved", "/policies/robots.txt"}
		case roleRobotsBOM:
			f.bom, f.crlf = true, true
		case roleRobotsHuge:
			f.huge = true
			star.rules = append(star.rules, robotsRule{pattern: "/after-cap/", afterCap: true})
			b.poolPage(s, "/after-cap/"+b.slug()+".html")
		case roleAgentGroup:
			// "*" forbids /beta/ but sonda's own group does not: a crawler
			// must use only the most specific group.
			star.rules = append(star.rules, disallow("/beta/"))
			own := robotsGroup{agents: []string{"Sonda", "othercrawler"},
				rules: []robotsRule{disallow("/private/"), disallow("/members/")}}
			f.groups = append(f.groups, own)
			b.poolPage(s, "/members/"+b.slug()+".html")
			b.poolPage(s, "/beta/"+b.slug()+".html")
		case roleWildcards:
			star.rules = append(star.rules,
				robotsRule{allow: true, pattern: "/private/public-note.html"},
				disallow("/*/drafts/"), disallow("/*.cgi$"))
			b.poolPage(s, "/private/public-note.html")
			b.poolPage(s, "/news/drafts/"+b.slug()+".html")
			b.poolPage(s, "/bin/run.cgi")
			b.poolPage(s, "/bin/run.cgi?mode=text")
		case roleCrawlDelay:
			star.crawlDelay = w.cfg.CrawlDelay
		}
		f.groups = append([]robotsGroup{star}, f.groups...)
		f.body, f.sonda = f.render(s.name), f.group()
		b.robotsResources(s, f)
		if f.status == 200 {
			b.sitemap(s)
		}
	}
}

// robotsResources adds /robots.txt, and the redirect hops to the file when
// it has moved.
func (b *builder) robotsResources(s *site, f *robotsFile) {
	switch f.status {
	case 200:
	default:
		b.status(s, "/robots.txt", f.status)
		return
	}
	uris := append([]string{"/robots.txt"}, f.hops...)
	file := b.add(s, uris[len(uris)-1], "robots.txt", serveRobots)
	for i := len(uris) - 2; i >= 0; i-- {
		file = b.redirect(s, uris[i], 301+i, file)
	}
}

// poolPage adds a page that random links of its host may point to, and
// makes sure one does.
func (b *builder) poolPage(s *site, uri string) *resource {
	p := b.page(s, uri)
	s.pool = append(s.pool, p)
	b.linkFrom(s, p)
	return p
}

// sitemap adds /sitemap.xml listing the ordinary pages and, on some hosts, a
// page listed nowhere else.
func (b *builder) sitemap(s *site) {
	b.add(s, "/sitemap.xml", "sitemap", serveSitemap)
	if b.rng.IntN(2) == 0 {
		s.hidden = append(s.hidden, b.page(s, "/hidden/"+b.slug()+".html"))
	}
}
