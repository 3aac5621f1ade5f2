package robots

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// Robots is a parsed robots.txt file. It is immutable once built and safe
// for concurrent use. A nil *Robots allows everything, like a site without a
// robots.txt file.
type Robots struct {
	groups    map[string]*ruleSet // merged groups by lower-case product token
	global    *ruleSet            // merged "*" groups; nil when the file has none
	sitemaps  []string
	truncated bool
	stats     Stats
}

// ruleSet is the merged content of every group naming one product token.
type ruleSet struct {
	rules    []rule // most specific first; allow before disallow on equal length
	delay    time.Duration
	hasDelay bool
}

type rule struct {
	allow    bool
	priority int    // octets in the canonical pattern, "*" and "$" included
	text     string // canonical pattern, kept for sorting and diagnostics
	pattern
}

// AllowAll returns rules that allow every path, the meaning of an
// unavailable (4xx) robots.txt.
func AllowAll() *Robots { return allowAll }

// DisallowAll returns rules that disallow every path except /robots.txt,
// the meaning of an unreachable (5xx, network error) robots.txt.
func DisallowAll() *Robots { return disallowAll }

var (
	allowAll    = &Robots{}
	disallowAll = func() *Robots {
		r := &Robots{global: &ruleSet{}}
		r.global.add(false, "/")
		return r
	}()
)

// Allowed reports whether the crawler identified by agent may fetch
// pathQuery, the URL's path and query as sent on the request line
// ("/a/b?c=d"; see PathQuery). It is the one decision function the crawler
// and `sonda check robots` share. agent may be a bare product token
// ("SondaBot") or a User-Agent string that starts with one ("SondaBot/1.2").
func (r *Robots) Allowed(agent, pathQuery string) bool {
	return r.Group(agent).Allowed(pathQuery)
}

// Group returns the rules that apply to agent: the merge of every group
// whose user-agent line names agent's product token, or failing that the
// merge of the "*" groups, or failing that an empty group that allows
// everything. A group that names the token but has no rules still wins over
// "*" (RFC 9309 §2.2.1; Google's parser agrees).
func (r *Robots) Group(agent string) Group {
	if r == nil {
		return Group{}
	}
	tok := agentToken(agent)
	if tok == "" {
		return Group{r.global}
	}
	var s *ruleSet
	var ok bool
	if len(tok) <= 64 {
		// Lower-case on the stack: this runs for every URL decision, and a
		// map index with string(bytes) does not allocate.
		var buf [64]byte
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		s, ok = r.groups[string(buf[:len(tok)])]
	} else {
		s, ok = r.groups[strings.ToLower(tok)]
	}
	if ok {
		return Group{s}
	}
	return Group{r.global}
}

// Sitemaps returns the absolute http(s) URLs of the file's sitemap lines, in
// file order without duplicates. Sitemap lines belong to no group.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// Truncated reports whether the file was longer than MaxSize, so that only
// its first MaxSize octets (up to the last complete line) were parsed.
func (r *Robots) Truncated() bool { return r != nil && r.truncated }

// Stats returns what the parser saw, for diagnostics.
func (r *Robots) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	s := r.stats
	s.Problems = slices.Clone(s.Problems)
	return s
}

// Group is the set of rules that applies to one crawler. The zero Group
// allows everything and has no crawl delay.
type Group struct {
	set *ruleSet
}

// Allowed reports whether pathQuery may be fetched: the longest matching
// rule decides, an allow rule wins a tie with a disallow rule, no match means
// allowed, and /robots.txt itself is always allowed (RFC 9309 §2.2.2).
// pathQuery is canonicalized first (see the package documentation), so any
// mix of escaped and raw octets may be passed; an empty pathQuery means "/",
// and anything from a "#" on is ignored.
func (g Group) Allowed(pathQuery string) bool {
	if g.set == nil || len(g.set.rules) == 0 {
		return true
	}
	s := canonical(pathQuery, false)
	if s == "" || s[0] != '/' {
		s = "/" + s
	}
	if p, _, _ := strings.Cut(s, "?"); p == "/robots.txt" {
		return true
	}
	// Rules are sorted by priority with allow first on ties, so the first
	// match is the decision.
	for i := range g.set.rules {
		if r := &g.set.rules[i]; r.matches(s) {
			return r.allow
		}
	}
	return true
}

// CrawlDelay returns the group's crawl-delay and whether it set one. When
// merged groups set different delays the longest one is kept.
func (g Group) CrawlDelay() (time.Duration, bool) {
	if g.set == nil {
		return 0, false
	}
	return g.set.delay, g.set.hasDelay
}

// Rules returns the group's rules in the order they are tried, for
// diagnostics (`sonda check robots` can show which line decided).
func (g Group) Rules() []Rule {
	if g.set == nil {
		return nil
	}
	out := make([]Rule, len(g.set.rules))
	for i, r := range g.set.rules {
		out[i] = Rule{Allow: r.allow, Pattern: r.text}
	}
	return out
}

// Rule is one allow or disallow line of a group, its pattern in the
// canonical form it is matched in.
type Rule struct {
	Allow   bool
	Pattern string
}

// add compiles value and appends it; the caller sorts once parsing is done. An allow
// pattern ending in "/index.html" also allows its directory itself ("/a/index.html" allows
// "/a/" too), as Google's crawler does: the two name one page on nearly every server.
func (s *ruleSet) add(allow bool, value string) {
	canon := canonical(value, true)
	s.rules = append(s.rules, rule{allow: allow, priority: len(canon), text: canon, pattern: compilePattern(canon)})
	if dir, ok := strings.CutSuffix(strings.TrimSuffix(canon, "$"), "/index.html"); allow && ok {
		dir += "/$"
		s.rules = append(s.rules, rule{allow: true, priority: len(dir), text: dir, pattern: compilePattern(dir)})
	}
}

// finish orders the rules for first-match evaluation and drops exact
// duplicates (RFC 9309 allows deduplication; merged groups often repeat).
func (s *ruleSet) finish() {
	slices.SortStableFunc(s.rules, func(a, b rule) int {
		if a.priority != b.priority {
			return b.priority - a.priority
		}
		if a.allow != b.allow {
			if a.allow {
				return -1
			}
			return 1
		}
		return strings.Compare(a.text, b.text)
	})
	s.rules = slices.CompactFunc(s.rules, func(a, b rule) bool {
		return a.allow == b.allow && a.text == b.text
	})
	s.rules = slices.Clip(s.rules)
}

// ProductToken returns the lower-case product token robots.txt groups are
// matched against: the leading run of letters, "_" and "-" of userAgent
// after leading spaces ("FooBot/1.2 (+https://x)" -> "foobot"). An agent
// without one ("*", "", "/1.0") gets "", which only "*" groups serve.
func ProductToken(userAgent string) string {
	s := strings.TrimLeft(userAgent, " \t")
	n := tokenLen(s)
	s = s[:n]
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// agentToken returns the product token the crawler identified by agent answers to: agent
// is a bare token ("SondaBot") or a User-Agent string that starts with one followed by a
// version ("SondaBot/1.2 (+https://…)"). Anything else ("Foo Bar", "Foo*", " Foo") is no
// product token (RFC 9309 §2.2.1), so it gets "" and only "*" groups speak to it.
func agentToken(agent string) string {
	n := tokenLen(agent)
	if n < len(agent) && agent[n] != '/' {
		return ""
	}
	return agent[:n]
}

// tokenLen returns the length of the product-token prefix of s
// (RFC 9309 §2.2.1: letters, "_" and "-").
func tokenLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return i
		}
	}
	return len(s)
}

// PathQueryOf returns the path and query of rawURL, the part robots.txt rules are matched
// against, without parsing or normalizing it, so it takes URLs of any length and shape: an
// absolute URL, one without a scheme ("example.com/a?b"), "//host/path", or a bare path.
// The fragment is dropped, and a URL without a path gives "/" (so "" gives "/").
func PathQueryOf(rawURL string) string {
	s, _, _ := strings.Cut(rawURL, "#")
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && !strings.ContainsAny(s[:i], "/?;") {
		start = i + 3
	} else if strings.HasPrefix(s, "//") {
		start = 2
	}
	i := strings.IndexAny(s[start:], "/?;")
	if i < 0 {
		return "/"
	}
	// Whatever comes before the first "/", "?" or ";" is a host name ("a/b" is "/b").
	if p := s[start+i:]; p[0] == '/' {
		return p
	} else {
		return "/" + p
	}
}

// PathQuery returns the part of u that robots.txt rules are matched
// against: the escaped path ("/" when empty) and, when present, "?" and the
// raw query. The fragment is left out.
func PathQuery(u *url.URL) string {
	if u == nil {
		return "/"
	}
	p := u.EscapedPath()
	if u.Opaque != "" {
		p = u.Opaque
	}
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}
