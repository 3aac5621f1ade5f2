package robots

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// MaxSize is how many octets of a robots.txt body are parsed: 500 KiB, the
// minimum RFC 9309 §2.5 allows. Content after it is ignored.
const MaxSize = 500 << 10

// MaxLineLength is how many octets of a line are read; the rest of a longer line is
// ignored, so an overlong rule is matched as its prefix. It is Google's limit (eight times
// 2083, the longest URL old browsers accepted, less the terminating NUL of its buffer): no
// real rule is that long, and a file of one endless line costs no more than MaxSize.
const MaxLineLength = 2083*8 - 1

// MaxCrawlDelay bounds the crawl-delay a file can ask for. Larger values are
// clamped to it: the politeness layer applies its own ceiling, this one only
// keeps absurd values ("crawl-delay: 1e300") from overflowing time.Duration.
const MaxCrawlDelay = 24 * time.Hour

// maxProblems bounds Stats.Problems so a hostile file cannot make the
// diagnostics larger than the rules.
const maxProblems = 50

// Stats describes what the parser saw, so operators can tell why a file
// does not do what its author meant.
type Stats struct {
	Lines    int       // lines read, blank and comment lines included
	Groups   int       // groups (runs of user-agent lines and the records after them)
	Rules    int       // allow and disallow lines inside a group, empty ones included
	Ignored  int       // non-blank lines that were not usable records (see Problems)
	Problems []Problem // the first 50 ignored lines and why
}

// Problem is one line the parser could not use.
type Problem struct {
	Line   int // 1-based line number
	Reason string
}

func (p Problem) String() string { return fmt.Sprintf("robots: line %d: %s", p.Line, p.Reason) }

type keyKind uint8

const (
	keyUnknown keyKind = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keyCrawlDelay
	keySitemap
)

// keyKinds lists the accepted record names, lower case. Besides the RFC 9309
// names it takes the misspellings Google's parser accepts (matched whole, not
// as prefixes as Google does, so "disallowed:" is not a disallow line) and
// the common non-standard records crawl-delay and sitemap.
var keyKinds = map[string]keyKind{
	"user-agent":  keyUserAgent,
	"useragent":   keyUserAgent,
	"user agent":  keyUserAgent,
	"allow":       keyAllow,
	"disallow":    keyDisallow,
	"dissallow":   keyDisallow,
	"dissalow":    keyDisallow,
	"disalow":     keyDisallow,
	"diasllow":    keyDisallow,
	"disallaw":    keyDisallow,
	"crawl-delay": keyCrawlDelay,
	"crawldelay":  keyCrawlDelay,
	"sitemap":     keySitemap,
	"site-map":    keySitemap,
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Parse parses a robots.txt body. It never fails: RFC 9309 §2.3.1.5 asks for
// every parseable rule to be used, so unusable lines are skipped and counted
// in Stats. Only the first MaxSize octets are read; when the body is longer,
// the line the cut falls in is dropped too (a half rule could allow more than
// its author meant) and Truncated reports it.
func Parse(body []byte) *Robots {
	return parse(body, false)
}

// parse is Parse for a body that may already have been cut to MaxSize
// (truncated set), as Entry stores it.
func parse(body []byte, truncated bool) *Robots {
	body, truncated = clip(body, truncated)
	body = bytes.TrimPrefix(body, utf8BOM)

	p := parser{r: &Robots{truncated: truncated, groups: make(map[string]*ruleSet)}}
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		if i < 0 {
			i = len(body)
		}
		line := body[:i]
		body = body[min(i+1, len(body)):]
		// A lone CR ends a line too; CR LF ends just one.
		for {
			j := bytes.IndexByte(line, '\r')
			if j < 0 {
				p.line(line)
				break
			}
			p.line(line[:j])
			if line = line[j+1:]; len(line) == 0 {
				break
			}
		}
	}
	for _, s := range p.r.groups {
		s.finish()
	}
	p.r.global = p.r.groups["*"]
	delete(p.r.groups, "*")
	return p.r
}

// clip returns the part of body that is parsed and whether that is less than
// the whole file. When the file is cut, the line the cut falls in is dropped.
// Clipping a clipped body changes nothing, so an Entry can store the clipped
// body with the flag and parse it again to the same rules.
func clip(body []byte, truncated bool) ([]byte, bool) {
	if len(body) > MaxSize {
		body, truncated = body[:MaxSize], true
	}
	if truncated {
		body = body[:bytes.LastIndexAny(body, "\r\n")+1]
	}
	return body, truncated
}

type parser struct {
	r   *Robots
	num int // current line number

	// The group being read. A group is a run of user-agent lines and the
	// records after it; targets holds the merged rule sets its user-agent
	// lines name (none when no line named a usable token).
	inGroup bool
	targets []*ruleSet
	// inRules is set by a group member (allow, disallow, crawl-delay): the
	// next user-agent line then starts a new group. Records that are no
	// group member (sitemap, unknown names) leave it alone: they neither end
	// a group nor split the user-agent lines around them (RFC 9309 §2.1 and
	// §2.2.4), so "User-agent: a / Sitemap: … / User-agent: b / Disallow: /"
	// is one group for a and b.
	inRules bool

	sitemapSeen map[string]bool
}

func (p *parser) problem(format string, args ...any) {
	p.r.stats.Ignored++
	if len(p.r.stats.Problems) < maxProblems {
		p.r.stats.Problems = append(p.r.stats.Problems, Problem{Line: p.num, Reason: fmt.Sprintf(format, args...)})
	}
}

func (p *parser) line(line []byte) {
	p.num++
	p.r.stats.Lines++
	if len(line) > MaxLineLength {
		// Google's practice: an overlong line is read as its first MaxLineLength octets.
		line = line[:MaxLineLength]
	}
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	key, value, ok := splitRecord(line)
	if !ok {
		p.problem("not a key: value record")
		return
	}
	var lower [16]byte
	kind := keyUnknown
	if len(key) <= len(lower) {
		for i, c := range key {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		kind = keyKinds[string(lower[:len(key)])]
	}

	switch kind {
	case keyUserAgent:
		p.userAgent(value)
	case keyAllow, keyDisallow:
		p.rule(kind == keyAllow, value)
	case keyCrawlDelay:
		p.crawlDelay(value)
	case keySitemap:
		p.sitemap(value)
	default:
		p.problem("unknown record %q", truncate(key))
	}
}

// splitRecord splits "key: value". Like Google's parser it also accepts a
// missing colon when the line is exactly two whitespace-separated words
// ("Disallow /tmp"), a common mistake whose meaning is not in doubt.
func splitRecord(line []byte) (key, value []byte, ok bool) {
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		key, value = bytes.TrimSpace(line[:i]), bytes.TrimSpace(line[i+1:])
		return key, value, len(key) > 0
	}
	i := bytes.IndexAny(line, " \t")
	if i < 0 {
		return nil, nil, false
	}
	key, value = line[:i], bytes.TrimLeft(line[i:], " \t")
	if bytes.ContainsAny(value, " \t") {
		return nil, nil, false
	}
	return key, value, true
}

func (p *parser) userAgent(value []byte) {
	if p.inRules || !p.inGroup {
		p.r.stats.Groups++
		p.targets = p.targets[:0]
		p.inGroup, p.inRules = true, false
	}
	var tok string
	switch {
	// As in Google's parser, "* anything" still names every crawler.
	case len(value) > 0 && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t'):
		tok = "*"
	default:
		tok = strings.ToLower(string(value[:tokenLen(string(value))]))
	}
	if tok == "" {
		p.problem("user-agent %q has no product token", truncate(value))
		return
	}
	s := p.r.groups[tok]
	if s == nil {
		s = &ruleSet{}
		p.r.groups[tok] = s
	}
	for _, t := range p.targets {
		if t == s {
			return
		}
	}
	p.targets = append(p.targets, s)
}

func (p *parser) rule(allow bool, value []byte) {
	if !p.inGroup {
		p.problem("rule before any user-agent line")
		return
	}
	p.inRules = true
	p.r.stats.Rules++
	if len(value) == 0 {
		return // "Disallow:" (or "Allow:") with no path matches nothing
	}
	if len(p.targets) == 0 {
		return
	}
	v := string(value)
	p.targets[0].add(allow, v)
	compiled := p.targets[0].rules[len(p.targets[0].rules)-1]
	for _, t := range p.targets[1:] {
		t.rules = append(t.rules, compiled)
	}
}

func (p *parser) crawlDelay(value []byte) {
	if !p.inGroup {
		p.problem("crawl-delay before any user-agent line")
		return
	}
	p.inRules = true
	d, ok := parseDelay(string(value))
	if !ok {
		p.problem("crawl-delay %q is not a non-negative number of seconds", truncate(value))
		return
	}
	for _, t := range p.targets {
		if !t.hasDelay || d > t.delay {
			t.delay, t.hasDelay = d, true
		}
	}
}

// parseDelay accepts plain decimal seconds ("10", "0.5", ".5", "2."). Forms
// strconv.ParseFloat would also take ("1e3", "0x10", "Inf", "NaN", "+1")
// are refused: no server means them as a delay.
func parseDelay(s string) (time.Duration, bool) {
	var whole, frac float64
	digits, dot := 0, false
	scale := 1.0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && !dot:
			dot = true
		case '0' <= c && c <= '9':
			digits++
			if dot {
				scale /= 10
				frac += float64(c-'0') * scale
			} else {
				whole = whole*10 + float64(c-'0')
			}
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	secs := whole + frac
	if math.IsInf(secs, 0) || secs >= MaxCrawlDelay.Seconds() {
		return MaxCrawlDelay, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

func (p *parser) sitemap(value []byte) {
	v := string(value)
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.problem("sitemap %q is not an absolute http(s) URL", truncate(value))
		return
	}
	if p.sitemapSeen == nil {
		p.sitemapSeen = make(map[string]bool)
	}
	if !p.sitemapSeen[v] {
		p.sitemapSeen[v] = true
		p.r.sitemaps = append(p.r.sitemaps, v)
	}
}

// truncate shortens a value quoted in a Problem.
func truncate(b []byte) string {
	const max = 60
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
