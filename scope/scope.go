package scope

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sonda-search/sonda/urlnorm"
)

// Follow policies.
const (
	FollowAny    = "any"
	FollowDomain = "domain"
	FollowHost   = "host"
)

// Rule names reported in Verdict.Rule. They are stable: logs, metrics and `sonda check url`
// output use them.
const (
	RuleInScope          = "in-scope"
	RuleInvalidURL       = "invalid-url"
	RuleScheme           = "scheme"
	RuleMaxURLLength     = "max-url-length"
	RuleMaxPathSegments  = "max-path-segments"
	RuleRepeatedSegments = "trap-repeated-segments"
	RuleMaxDepth         = "max-depth"
	RuleDenyHost         = "deny-host"
	RuleDenyDomain       = "deny-domain"
	RuleFollowHost       = "follow-host"
	RuleFollowDomain     = "follow-domain"
	RuleAllowHost        = "allow-host"
	RuleAllowDomain      = "allow-domain"
	RuleDenyRegex        = "deny-regex"
	RuleAllowRegex       = "allow-regex"
	RuleMaxPagesPerHost  = "max-pages-per-host"
	RuleQueryVariants    = "trap-query-variants"
)

// Rules configure a Scope. In numeric fields 0 means no limit; DefaultRules sets the
// recommended guards.
type Rules struct {
	// Follow is FollowDomain (also when empty), FollowHost or FollowAny.
	Follow string
	// AllowHosts and DenyHosts hold host names ("www.example.com", matching any port),
	// host:port ("localhost:8080", matching that host key only; host keys leave out default
	// ports, so "example.com:80" matches example.com on port 80 for http and 443 for https)
	// or "*.example.com" (example.com and all its subdomains). IDN names may be written in
	// Unicode, IPv6 addresses with or without brackets.
	AllowHosts, DenyHosts []string
	// AllowDomains and DenyDomains hold domains that match themselves and every subdomain:
	// "example.com" matches example.com and news.example.com.
	AllowDomains, DenyDomains []string
	// Allow and Deny hold Go regular expressions matched against the canonical URL string
	// (unanchored: use ^ and $ as needed).
	Allow, Deny []string
	// Schemes lists the schemes followed; empty means http and https.
	Schemes []string
	// MaxDepth is the most link hops from a seed (seeds are depth 0).
	MaxDepth int
	// MaxPagesPerHost is the most URLs admitted per host key; the crawler counts them and
	// asks CheckHostPages.
	MaxPagesPerHost int
	// MaxURLLength is the longest canonical URL, in bytes.
	MaxURLLength int
	// MaxPathSegments is the most path segments ("/a/b/" has three: a, b and "").
	MaxPathSegments int
	// MaxRepeatedSegments is how many times in a row a segment or a run of up to 16
	// segments may appear: with 3, /x/x/x and /a/b/a/b/a/b pass, /x/x/x/x does not.
	MaxRepeatedSegments int
	// MaxQueryVariants is the most distinct query strings per host and path (calendar and
	// session-id traps); see CheckVariants.
	MaxQueryVariants int
}

// DefaultRules follows the seeds' registrable domains over http and https, with URLs up to
// 2048 bytes, 32 path segments, runs repeated at most 3 times and 200 query variants per
// path; depth and pages per host are unlimited.
func DefaultRules() Rules {
	return Rules{
		Follow:              FollowDomain,
		Schemes:             []string{"http", "https"},
		MaxURLLength:        2048,
		MaxPathSegments:     32,
		MaxRepeatedSegments: 3,
		MaxQueryVariants:    200,
	}
}

// Verdict is the outcome of a scope check.
type Verdict struct {
	Allowed bool
	Rule    string // a Rule* constant: the rule that refused the URL, or RuleInScope
	Reason  string // human-readable detail
}

func (v Verdict) String() string {
	if v.Allowed {
		return "allow (" + v.Reason + ")"
	}
	return "deny " + v.Rule + ": " + v.Reason
}

func deny(rule, reason string) Verdict { return Verdict{Rule: rule, Reason: reason} }

// Scope is a compiled set of Rules plus the seeds Follow is relative to. It is safe for
// concurrent use.
type Scope struct {
	rules                     Rules
	follow                    string
	http, https               bool
	allowHosts, denyHosts     hostSet
	allowDomains, denyDomains domainSet
	allow, deny               regexps
	inScope                   Verdict

	seedMu sync.Mutex // serializes AddSeeds; Check reads seeds without it
	seeds  atomic.Pointer[seedSet]
}

// seedSet is immutable once published: AddSeeds copies it.
type seedSet struct {
	hosts   map[string]struct{} // host keys
	domains map[string]struct{} // domain keys
}

// Compile checks and compiles r for the given seeds. An invalid rule gives an error naming
// the rule and the offending entry.
func Compile(r Rules, seeds []urlnorm.URL) (*Scope, error) {
	s := &Scope{rules: r}
	s.rules.Schemes = append([]string(nil), r.Schemes...)
	switch strings.ToLower(r.Follow) {
	case "", FollowDomain:
		s.follow = FollowDomain
	case FollowHost:
		s.follow = FollowHost
	case FollowAny:
		s.follow = FollowAny
	default:
		return nil, fmt.Errorf("scope: follow %q: want %s, %s or %s", r.Follow, FollowDomain, FollowHost, FollowAny)
	}
	s.rules.Follow = s.follow
	s.inScope = Verdict{Allowed: true, Rule: RuleInScope, Reason: "in scope, follow " + s.follow}

	for _, lim := range []struct {
		name string
		v    int
	}{
		{RuleMaxDepth, r.MaxDepth}, {RuleMaxPagesPerHost, r.MaxPagesPerHost}, {RuleMaxURLLength, r.MaxURLLength},
		{RuleMaxPathSegments, r.MaxPathSegments}, {RuleRepeatedSegments, r.MaxRepeatedSegments},
		{RuleQueryVariants, r.MaxQueryVariants},
	} {
		if lim.v < 0 {
			return nil, fmt.Errorf("scope: %s %d: want 0 (no limit) or more", lim.name, lim.v)
		}
	}

	if len(r.Schemes) == 0 {
		s.http, s.https = true, true
	}
	for _, sch := range r.Schemes {
		switch strings.ToLower(strings.TrimSpace(sch)) {
		case "http":
			s.http = true
		case "https":
			s.https = true
		default:
			return nil, fmt.Errorf("scope: %s %q: only http and https can be crawled", RuleScheme, sch)
		}
	}

	var err error
	if s.allowHosts, err = compileHosts(RuleAllowHost, r.AllowHosts); err != nil {
		return nil, err
	}
	if s.denyHosts, err = compileHosts(RuleDenyHost, r.DenyHosts); err != nil {
		return nil, err
	}
	if s.allowDomains, err = compileDomains(RuleAllowDomain, r.AllowDomains); err != nil {
		return nil, err
	}
	if s.denyDomains, err = compileDomains(RuleDenyDomain, r.DenyDomains); err != nil {
		return nil, err
	}
	if s.allow, err = compileRegexps(RuleAllowRegex, r.Allow); err != nil {
		return nil, err
	}
	if s.deny, err = compileRegexps(RuleDenyRegex, r.Deny); err != nil {
		return nil, err
	}

	s.seeds.Store(&seedSet{hosts: map[string]struct{}{}, domains: map[string]struct{}{}})
	s.AddSeeds(seeds...)
	return s, nil
}

// Rules returns the rules s was compiled from, with Follow resolved.
func (s *Scope) Rules() Rules {
	r := s.rules
	r.Schemes = append([]string(nil), r.Schemes...)
	return r
}

// AddSeeds widens the follow scope with more seeds (their hosts and registrable domains).
// Checks running concurrently see either the old or the new set.
func (s *Scope) AddSeeds(seeds ...urlnorm.URL) {
	s.seedMu.Lock()
	defer s.seedMu.Unlock()
	old := s.seeds.Load()
	next := &seedSet{hosts: maps.Clone(old.hosts), domains: maps.Clone(old.domains)}
	for _, u := range seeds {
		if u.IsZero() {
			continue
		}
		next.hosts[u.HostKey()] = struct{}{}
		next.domains[u.DomainKey()] = struct{}{}
	}
	s.seeds.Store(next)
}

// Check applies the stateless rules to u, found depth link hops from a seed, in the order
// given in the package documentation.
func (s *Scope) Check(u urlnorm.URL, depth int) Verdict {
	if u.IsZero() {
		return deny(RuleInvalidURL, "no URL")
	}
	r := &s.rules
	if sch := u.Scheme(); sch == "http" && !s.http || sch == "https" && !s.https {
		return deny(RuleScheme, "scheme "+sch+" is not followed")
	}
	if n := len(u.String()); r.MaxURLLength > 0 && n > r.MaxURLLength {
		return deny(RuleMaxURLLength, "URL is "+strconv.Itoa(n)+" bytes, over the limit of "+strconv.Itoa(r.MaxURLLength))
	}
	path := u.Path()
	if r.MaxPathSegments > 0 {
		if n := strings.Count(path, "/"); n > r.MaxPathSegments {
			return deny(RuleMaxPathSegments, "path has "+strconv.Itoa(n)+" segments, over the limit of "+strconv.Itoa(r.MaxPathSegments))
		}
	}
	if r.MaxRepeatedSegments > 0 {
		if run, times := repeatedRun(path, r.MaxRepeatedSegments); times > 0 {
			return deny(RuleRepeatedSegments, "path segments "+strconv.Quote(run)+" repeat "+strconv.Itoa(times)+
				" times in a row, over the limit of "+strconv.Itoa(r.MaxRepeatedSegments))
		}
	}
	if r.MaxDepth > 0 && depth > r.MaxDepth {
		return deny(RuleMaxDepth, "depth "+strconv.Itoa(depth)+" is over the limit of "+strconv.Itoa(r.MaxDepth))
	}
	if p, ok := s.denyHosts.match(u); ok {
		return deny(RuleDenyHost, "host "+u.Host()+" matches "+strconv.Quote(p))
	}
	if p, ok := s.denyDomains.match(u); ok {
		return deny(RuleDenyDomain, "host "+u.Hostname()+" is in denied domain "+strconv.Quote(p))
	}
	switch s.follow {
	case FollowHost:
		if _, ok := s.seeds.Load().hosts[u.HostKey()]; !ok {
			return deny(RuleFollowHost, "host "+u.HostKey()+" is not a seed host")
		}
	case FollowDomain:
		if d := u.DomainKey(); !s.seeds.Load().hasDomain(d) {
			return deny(RuleFollowDomain, "domain "+d+" is not a seed domain")
		}
	}
	if !s.allowHosts.empty() {
		if _, ok := s.allowHosts.match(u); !ok {
			return deny(RuleAllowHost, "host "+u.Host()+" matches no allowed host")
		}
	}
	if len(s.allowDomains) > 0 {
		if _, ok := s.allowDomains.match(u); !ok {
			return deny(RuleAllowDomain, "host "+u.Hostname()+" is in no allowed domain")
		}
	}
	if p, ok := s.deny.match(u.String()); ok {
		return deny(RuleDenyRegex, "URL matches "+strconv.Quote(p))
	}
	if len(s.allow) > 0 {
		if _, ok := s.allow.match(u.String()); !ok {
			return deny(RuleAllowRegex, "URL matches no allowed pattern")
		}
	}
	return s.inScope
}

func (ss *seedSet) hasDomain(d string) bool {
	_, ok := ss.domains[d]
	return ok
}

// CheckHostPages applies MaxPagesPerHost: pages is how many URLs the crawler has already
// admitted for the URL's host key. It allows the URL while pages is below the limit.
func (s *Scope) CheckHostPages(pages int) Verdict {
	if max := s.rules.MaxPagesPerHost; max > 0 && pages >= max {
		return deny(RuleMaxPagesPerHost, "host already has "+strconv.Itoa(pages)+" pages, the limit is "+strconv.Itoa(max))
	}
	return s.inScope
}

// regexps is a list of patterns. (Joining them into one alternation was tried: Go runs the
// bigger program on its slower NFA instead of the backtracker and it got three times slower.)
type regexps []*regexp.Regexp

// match returns the first pattern that matches s.
func (r regexps) match(s string) (string, bool) {
	for _, re := range r {
		if re.MatchString(s) {
			return re.String(), true
		}
	}
	return "", false
}

func compileRegexps(rule string, patterns []string) (regexps, error) {
	var r regexps
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("scope: %s %q: %w", rule, p, err)
		}
		r = append(r, re)
	}
	return r, nil
}
