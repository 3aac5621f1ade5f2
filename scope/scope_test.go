package scope

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sonda-search/sonda/urlnorm"
)

var norm = urlnorm.New(urlnorm.DefaultOptions())

func mustURL(t testing.TB, s string) urlnorm.URL {
	t.Helper()
	u, err := norm.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustURLs(t testing.TB, ss ...string) []urlnorm.URL {
	var us []urlnorm.URL
	for _, s := range ss {
		us = append(us, mustURL(t, s))
	}
	return us
}

// with returns DefaultRules changed by f.
func with(f func(*Rules)) Rules {
	r := DefaultRules()
	f(&r)
	return r
}

func TestCheck(t *testing.T) {
	seeds := []string{"http://www.example.com/", "https://bbc.co.uk/news"}
	tests := []struct {
		name  string
		rules Rules
		url   string
		depth int
		want  string // Rule of the verdict; RuleInScope means allowed
	}{
		// Follow.
		{"seed host", DefaultRules(), "http://www.example.com/a", 1, RuleInScope},
		{"seed domain, other host", DefaultRules(), "https://news.example.com/a", 1, RuleInScope},
		{"seed domain apex", DefaultRules(), "http://example.com/", 1, RuleInScope},
		{"public suffix aware", DefaultRules(), "http://www.bbc.co.uk/", 1, RuleInScope},
		{"other domain", DefaultRules(), "http://other.com/", 1, RuleFollowDomain},
		{"same suffix, other domain", DefaultRules(), "http://itv.co.uk/", 1, RuleFollowDomain},
		{"follow host: seed host other scheme", with(func(r *Rules) { r.Follow = FollowHost }), "https://www.example.com/x", 1, RuleInScope},
		{"follow host: sibling host", with(func(r *Rules) { r.Follow = FollowHost }), "http://example.com/", 1, RuleFollowHost},
		{"follow host: other port", with(func(r *Rules) { r.Follow = FollowHost }), "http://www.example.com:8080/", 1, RuleFollowHost},
		{"follow any", with(func(r *Rules) { r.Follow = FollowAny }), "http://other.com/", 1, RuleInScope},
		{"follow empty means domain", with(func(r *Rules) { r.Follow = "" }), "http://other.com/", 1, RuleFollowDomain},

		// Schemes.
		{"scheme refused", with(func(r *Rules) { r.Schemes = []string{"https"} }), "http://www.example.com/", 0, RuleScheme},
		{"scheme allowed", with(func(r *Rules) { r.Schemes = []string{"HTTPS"} }), "https://www.example.com/", 0, RuleInScope},

		// Traps and limits.
		{"5000-byte URL", DefaultRules(), "http://www.example.com/" + strings.Repeat("a", 5000), 1, RuleMaxURLLength},
		{"URL at the limit", with(func(r *Rules) { r.MaxURLLength = 30 }), "http://www.example.com/1234567", 1, RuleInScope},
		{"URL over the limit", with(func(r *Rules) { r.MaxURLLength = 30 }), "http://www.example.com/12345678", 1, RuleMaxURLLength},
		{"length unlimited", with(func(r *Rules) { r.MaxURLLength = 0 }), "http://www.example.com/" + strings.Repeat("a", 5000), 1, RuleInScope},
		{"33 segments", DefaultRules(), "http://www.example.com" + strings.Repeat("/s", 33), 1, RuleMaxPathSegments},
		{"32 segments", DefaultRules(), "http://www.example.com" + strings.Repeat("/s", 16) + strings.Repeat("/t", 16), 1, RuleRepeatedSegments},
		{"32 distinct segments", DefaultRules(), "http://www.example.com" + distinctSegments(32), 1, RuleInScope},
		{"a/b repeated 4 times", DefaultRules(), "http://www.example.com/a/b/a/b/a/b/a/b/", 1, RuleRepeatedSegments},
		{"x repeated 5 times", DefaultRules(), "http://www.example.com/x/x/x/x/x/", 1, RuleRepeatedSegments},
		{"x repeated 3 times", DefaultRules(), "http://www.example.com/x/x/x/", 1, RuleInScope},
		{"a/b repeated 3 times", DefaultRules(), "http://www.example.com/a/b/a/b/a/b", 1, RuleInScope},
		{"empty segments repeated", DefaultRules(), "http://www.example.com/a/////b", 1, RuleRepeatedSegments},
		{"repeats unlimited", with(func(r *Rules) { r.MaxRepeatedSegments = 0 }), "http://www.example.com/x/x/x/x/x/", 1, RuleInScope},
		{"dates are not repeats", DefaultRules(), "http://www.example.com/2024/01/01/2024/01/01/", 1, RuleInScope},
		{"depth at limit", with(func(r *Rules) { r.MaxDepth = 2 }), "http://www.example.com/", 2, RuleInScope},
		{"depth over limit", with(func(r *Rules) { r.MaxDepth = 2 }), "http://www.example.com/", 3, RuleMaxDepth},
		{"depth unlimited", DefaultRules(), "http://www.example.com/", 1000, RuleInScope},

		// Host and domain lists.
		{"deny host exact", with(func(r *Rules) { r.DenyHosts = []string{"WWW.Example.com"} }), "http://www.example.com/", 1, RuleDenyHost},
		{"deny host exact, other host", with(func(r *Rules) { r.DenyHosts = []string{"www.example.com"} }), "http://news.example.com/", 1, RuleInScope},
		{"deny host wildcard apex", with(func(r *Rules) { r.DenyHosts = []string{"*.example.com"} }), "http://example.com/", 1, RuleDenyHost},
		{"deny host wildcard sub", with(func(r *Rules) { r.DenyHosts = []string{"*.example.com"} }), "http://a.b.example.com/", 1, RuleDenyHost},
		{"deny host wildcard is no substring", with(func(r *Rules) { r.DenyHosts = []string{"*.ample.com"} }), "http://www.example.com/", 1, RuleInScope},
		{"deny host:port", with(func(r *Rules) { r.DenyHosts = []string{"www.example.com:8080"} }), "http://www.example.com:8080/", 1, RuleDenyHost},
		{"deny host:port, other port", with(func(r *Rules) { r.DenyHosts = []string{"www.example.com:8080"}; r.Follow = FollowAny }), "http://www.example.com:8081/", 1, RuleInScope},
		{"deny host:default port", with(func(r *Rules) { r.DenyHosts = []string{"www.example.com:80"} }), "https://www.example.com/", 1, RuleDenyHost},
		{"deny host:default port, other port", with(func(r *Rules) { r.DenyHosts = []string{"www.example.com:80"} }), "http://www.example.com:8080/", 1, RuleInScope},
		{"deny host IDN", with(func(r *Rules) { r.DenyHosts = []string{"Bücher.de."}; r.Follow = FollowAny }), "https://xn--bcher-kva.de/", 1, RuleDenyHost},
		{"deny domain", with(func(r *Rules) { r.DenyDomains = []string{"example.com"} }), "http://ads.example.com/", 1, RuleDenyDomain},
		{"deny subdomain only", with(func(r *Rules) { r.DenyDomains = []string{"ads.example.com"} }), "http://www.example.com/", 1, RuleInScope},
		{"deny subdomain", with(func(r *Rules) { r.DenyDomains = []string{"ads.example.com"} }), "http://x.ads.example.com/", 1, RuleDenyDomain},
		{"allow host miss", with(func(r *Rules) { r.AllowHosts = []string{"www.example.com"} }), "http://news.example.com/", 1, RuleAllowHost},
		{"allow host hit", with(func(r *Rules) { r.AllowHosts = []string{"www.example.com"} }), "https://www.example.com/", 1, RuleInScope},
		{"allow IPv6", with(func(r *Rules) { r.AllowHosts = []string{"::1"}; r.Follow = FollowAny }), "http://[::1]:8080/", 1, RuleInScope},
		{"allow IP", with(func(r *Rules) { r.AllowDomains = []string{"127.0.0.1"}; r.Follow = FollowAny }), "http://127.0.0.1:8080/", 1, RuleInScope},
		{"allow IP miss", with(func(r *Rules) { r.AllowDomains = []string{"0.0.1"}; r.Follow = FollowAny }), "http://127.0.0.1/", 1, RuleAllowDomain},
		{"allow domain miss", with(func(r *Rules) { r.AllowDomains = []string{"news.example.com"} }), "http://www.example.com/", 1, RuleAllowDomain},
		{"allow domain hit", with(func(r *Rules) { r.AllowDomains = []string{"*.example.com"} }), "http://www.example.com/", 1, RuleInScope},

		// Regular expressions, on the canonical form.
		{"deny regex", with(func(r *Rules) { r.Deny = []string{`\.pdf$`, `/private/`} }), "http://www.example.com/private/x", 1, RuleDenyRegex},
		{"deny regex sees canonical form", with(func(r *Rules) { r.Deny = []string{`^http://www\.example\.com/a/c$`} }), "HTTP://WWW.example.com:80/a/./b/../c#x", 1, RuleDenyRegex},
		{"allow regex miss", with(func(r *Rules) { r.Allow = []string{`/news/`, `/sport/`} }), "http://www.example.com/weather/", 1, RuleAllowRegex},
		{"allow regex hit", with(func(r *Rules) { r.Allow = []string{`/news/`, `/sport/`} }), "http://www.example.com/sport/", 1, RuleInScope},

		// Precedence: deny beats allow, allow-lists and follow all apply.
		{"deny host beats allow host", with(func(r *Rules) { r.AllowHosts = []string{"www.example.com"}; r.DenyHosts = []string{"www.example.com"} }), "http://www.example.com/", 1, RuleDenyHost},
		{"deny regex beats allow regex", with(func(r *Rules) { r.Allow = []string{`/news/`}; r.Deny = []string{`/news/old/`} }), "http://www.example.com/news/old/1", 1, RuleDenyRegex},
		{"deny domain beats allow domain", with(func(r *Rules) { r.AllowDomains = []string{"example.com"}; r.DenyDomains = []string{"example.com"} }), "http://www.example.com/", 1, RuleDenyDomain},
		{"allow lists combine: domain ok, regex miss", with(func(r *Rules) {
			r.Follow = FollowAny
			r.AllowDomains = []string{"example.com"}
			r.Allow = []string{`/news/`}
		}), "http://www.example.com/sport/", 1, RuleAllowRegex},
		{"allow lists combine: regex ok, domain miss", with(func(r *Rules) {
			r.Follow = FollowAny
			r.AllowDomains = []string{"example.com"}
			r.Allow = []string{`/news/`}
		}), "http://other.com/news/", 1, RuleAllowDomain},
		{"allow lists combine: both", with(func(r *Rules) {
			r.Follow = FollowAny
			r.AllowDomains = []string{"example.com"}
			r.Allow = []string{`/news/`}
		}), "http://www.example.com/news/", 1, RuleInScope},
		{"follow applies with allow lists", with(func(r *Rules) { r.AllowDomains = []string{"other.com"} }), "http://other.com/", 1, RuleFollowDomain},
		{"order: traps before deny", with(func(r *Rules) { r.DenyHosts = []string{"www.example.com"} }), "http://www.example.com/x/x/x/x/", 1, RuleRepeatedSegments},
		{"order: depth before follow", with(func(r *Rules) { r.MaxDepth = 1 }), "http://other.com/", 2, RuleMaxDepth},
	}
	for _, tt := range tests {
		s, err := Compile(tt.rules, mustURLs(t, seeds...))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		v := s.Check(mustURL(t, tt.url), tt.depth)
		if v.Rule != tt.want || v.Allowed != (tt.want == RuleInScope) {
			t.Errorf("%s: Check(%s) = %+v, want rule %s", tt.name, tt.url, v, tt.want)
		}
		if v.Reason == "" {
			t.Errorf("%s: verdict without reason", tt.name)
		}
	}
}

func distinctSegments(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "/s%d", i)
	}
	return b.String()
}

func TestVerdictText(t *testing.T) {
	s, err := Compile(with(func(r *Rules) { r.DenyHosts = []string{"*.Example.com"}; r.MaxDepth = 1 }), mustURLs(t, "http://example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url   string
		depth int
		want  string
	}{
		{"http://www.example.com/", 0, `deny deny-host: host www.example.com matches "*.Example.com"`},
		{"http://www.example.com/", 2, `deny max-depth: depth 2 is over the limit of 1`},
		{"http://other.org/", 0, `deny follow-domain: domain other.org is not a seed domain`},
		{"http://other.org/a/b/a/b/a/b/a/b/a/b", 0, `deny trap-repeated-segments: path segments "a/b" repeat 5 times in a row, over the limit of 3`},
	}
	for _, tt := range tests {
		if got := s.Check(mustURL(t, tt.url), tt.depth).String(); got != tt.want {
			t.Errorf("Check(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
	s, _ = Compile(DefaultRules(), mustURLs(t, "http://example.com/"))
	if got := s.Check(mustURL(t, "http://example.com/x"), 0).String(); got != "allow (in scope, follow domain)" {
		t.Errorf("allowed verdict text %q", got)
	}
	if v := s.Check(urlnorm.URL{}, 0); v.Allowed || v.Rule != RuleInvalidURL {
		t.Errorf("zero URL: %+v", v)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		rules Rules
		want  string
	}{
		{with(func(r *Rules) { r.Follow = "everything" }), `scope: follow "everything": want domain, host or any`},
		{with(func(r *Rules) { r.Deny = []string{`ok`, `([`} }), "scope: deny-regex \"([\": error parsing regexp: missing closing ]: `[`"},
		{with(func(r *Rules) { r.Allow = []string{`a**`} }), "scope: allow-regex \"a**\": error parsing regexp: invalid nested repetition operator: `**`"},
		{with(func(r *Rules) { r.DenyHosts = []string{"a b.com"} }), `scope: deny-host "a b.com": invalid host: the host contains a forbidden domain code point " "`},
		{with(func(r *Rules) { r.AllowHosts = []string{"example.com/path"} }), `scope: allow-host "example.com/path": not a host name`},
		{with(func(r *Rules) { r.AllowHosts = []string{""} }), `scope: allow-host "": empty host`},
		{with(func(r *Rules) { r.AllowHosts = []string{"*.example.com:80"} }), `scope: allow-host "*.example.com:80": a wildcard pattern cannot have a port`},
		{with(func(r *Rules) { r.AllowHosts = []string{"a.*.com"} }), `scope: allow-host "a.*.com": not a host name`},
		{with(func(r *Rules) { r.DenyDomains = []string{"example.com:8080"} }), `scope: deny-domain "example.com:8080": a domain cannot have a port`},
		{with(func(r *Rules) { r.AllowDomains = []string{"a..com"} }), `scope: allow-domain "a..com": invalid host: empty label in "a..com"`},
		{with(func(r *Rules) { r.Schemes = []string{"https", "ftp"} }), `scope: scheme "ftp": only http and https can be crawled`},
		{with(func(r *Rules) { r.MaxDepth = -1 }), `scope: max-depth -1: want 0 (no limit) or more`},
		{with(func(r *Rules) { r.MaxQueryVariants = -5 }), `scope: trap-query-variants -5: want 0 (no limit) or more`},
	}
	for _, tt := range tests {
		_, err := Compile(tt.rules, nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Compile error = %v, want %q", err, tt.want)
		}
	}
}

func TestZeroRules(t *testing.T) {
	// The zero Rules: follow the seed domains, no limits, http and https.
	s, err := Compile(Rules{}, mustURLs(t, "http://example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://example.com/x/x/x/x/x/x" + strings.Repeat("/y", 100), "http://www.example.com/"} {
		if v := s.Check(mustURL(t, u), 1000); !v.Allowed {
			t.Errorf("zero rules refuse %s: %v", u, v)
		}
	}
	if v := s.Check(mustURL(t, "http://other.com/"), 0); v.Allowed {
		t.Error("zero rules follow any domain")
	}
	if r := s.Rules(); r.Follow != FollowDomain {
		t.Errorf("Rules().Follow = %q", r.Follow)
	}
}

func TestNoSeeds(t *testing.T) {
	s, err := Compile(DefaultRules(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Check(mustURL(t, "http://example.com/"), 0); v.Rule != RuleFollowDomain {
		t.Errorf("without seeds: %v", v)
	}
}

func TestAddSeeds(t *testing.T) {
	for _, follow := range []string{FollowDomain, FollowHost} {
		s, err := Compile(with(func(r *Rules) { r.Follow = follow }), mustURLs(t, "http://a.example.com/"))
		if err != nil {
			t.Fatal(err)
		}
		later := mustURL(t, "https://b.other.org/start")
		if v := s.Check(later, 1); v.Allowed {
			t.Fatalf("follow %s: %s allowed before it is a seed", follow, later)
		}
		s.AddSeeds(later, urlnorm.URL{})
		for _, u := range []string{"https://b.other.org/x", "http://a.example.com/y"} {
			if v := s.Check(mustURL(t, u), 1); !v.Allowed {
				t.Errorf("follow %s: %s refused after AddSeeds: %v", follow, u, v)
			}
		}
		wantSibling := follow == FollowDomain
		if v := s.Check(mustURL(t, "http://c.other.org/"), 1); v.Allowed != wantSibling {
			t.Errorf("follow %s: sibling host verdict %v", follow, v)
		}
	}
}

func TestConcurrentAddSeedsAndCheck(t *testing.T) {
	s, err := Compile(DefaultRules(), mustURLs(t, "http://example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	u := mustURL(t, "http://www.example.com/page")
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if w == 0 {
					s.AddSeeds(mustURL(t, fmt.Sprintf("http://site%d.org/", i)))
				} else if v := s.Check(u, 1); !v.Allowed {
					t.Errorf("check during AddSeeds: %v", v)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := s.Check(mustURL(t, "http://www.site199.org/"), 1); !v.Allowed {
		t.Errorf("last added seed not followed: %v", v)
	}
}

func TestCheckHostPages(t *testing.T) {
	s, _ := Compile(with(func(r *Rules) { r.MaxPagesPerHost = 10 }), nil)
	for pages, want := range map[int]bool{0: true, 9: true, 10: false, 11: false} {
		if v := s.CheckHostPages(pages); v.Allowed != want || !want && v.Rule != RuleMaxPagesPerHost {
			t.Errorf("CheckHostPages(%d) = %v", pages, v)
		}
	}
	s, _ = Compile(DefaultRules(), nil)
	if v := s.CheckHostPages(1 << 40); !v.Allowed {
		t.Errorf("unlimited pages per host: %v", v)
	}
}

func TestRepeatedRun(t *testing.T) {
	tests := []struct {
		path  string
		limit int
		run   string
		times int
	}{
		{"/", 3, "", 0},
		{"/x/x/x", 3, "", 0},
		{"/x/x/x/x", 3, "x", 4},
		{"/x/x/x/x/x/", 3, "x", 5},
		{"/a/x/x/x/x/b", 3, "x", 4},
		{"/a/b/a/b/a/b", 3, "", 0},
		{"/a/b/a/b/a/b/a/b/", 3, "a/b", 4},
		{"/p/a/b/c/a/b/c/a/b/c/a/b/c/q", 3, "a/b/c", 4},
		{"/a/b/a/b/a/c", 2, "", 0},
		{"/a/b/a/b/a/c", 1, "a/b", 2},
		{"/x/x", 1, "x", 2},
		{"/x/y", 1, "", 0},
		{"/a/b/c/d", 1, "", 0},
	}
	for _, tt := range tests {
		run, times := repeatedRun(tt.path, tt.limit)
		if tt.times == 0 && times != 0 || tt.times != 0 && (run != tt.run || times != tt.times) {
			t.Errorf("repeatedRun(%q, %d) = %q, %d; want %q, %d", tt.path, tt.limit, run, times, tt.run, tt.times)
		}
	}
	// Long paths stay cheap and runs longer than maxRunSegments are not looked for.
	long := strings.Repeat(distinctSegments(maxRunSegments+1), 5)
	if _, times := repeatedRun(long, 3); times != 0 {
		t.Errorf("run of %d segments detected", maxRunSegments+1)
	}
	if _, times := repeatedRun(strings.Repeat(distinctSegments(maxRunSegments), 5), 3); times != 5 {
		t.Errorf("run of %d segments repeated 5 times: got %d", maxRunSegments, times)
	}
}

func TestCheckVariants(t *testing.T) {
	s, err := Compile(DefaultRules(), mustURLs(t, "http://cal.example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewMemoryVariants(100)
	// An endless calendar: every month links to the next one.
	allowed := 0
	for i := range 300 {
		u := mustURL(t, fmt.Sprintf("http://cal.example.com/cal?month=%d-%02d", 2024+i/12, i%12+1))
		if v := s.Check(u, i); !v.Allowed {
			t.Fatalf("month %d refused by Check: %v", i, v)
		}
		v, err := s.CheckVariants(u, c)
		if err != nil {
			t.Fatal(err)
		}
		if v.Allowed {
			allowed++
		} else if v.Rule != RuleQueryVariants {
			t.Fatalf("month %d: %v", i, v)
		}
	}
	if allowed != 200 {
		t.Errorf("%d calendar pages allowed, want 200", allowed)
	}
	// A query seen before counts once; other paths and query-less URLs are unaffected.
	for _, u := range []string{"http://cal.example.com/cal?month=2024-01", "http://cal.example.com/other?month=2099-01", "http://cal.example.com/cal"} {
		if v, _ := s.CheckVariants(mustURL(t, u), c); !v.Allowed {
			t.Errorf("CheckVariants(%s) = %v", u, v)
		}
	}
	// http and https of a host share the count.
	if v, _ := s.CheckVariants(mustURL(t, "https://cal.example.com/cal?month=3000-01"), c); v.Allowed {
		t.Error("https variant of a trapped path allowed")
	}

	// With the guard off the counter is never asked.
	off, _ := Compile(with(func(r *Rules) { r.MaxQueryVariants = 0 }), nil)
	if v, err := off.CheckVariants(mustURL(t, "http://a.com/?x"), failingCounter{}); err != nil || !v.Allowed {
		t.Errorf("guard off: %v, %v", v, err)
	}
	if _, err := s.CheckVariants(mustURL(t, "http://a.com/?x"), failingCounter{}); !errors.Is(err, errCounter) {
		t.Errorf("counter error not returned: %v", err)
	}
}

var errCounter = errors.New("disk full")

type failingCounter struct{}

func (failingCounter) AddVariant(string, uint64, int) (int, error) { return 0, errCounter }

func TestMemoryVariantsBounds(t *testing.T) {
	m := NewMemoryVariants(2)
	for v := range uint64(50) {
		n, _ := m.AddVariant("a", v, 5)
		if want := min(int(v)+1, 6); n != want {
			t.Fatalf("variant %d: distinct = %d, want %d", v, n, want)
		}
	}
	if got := len(m.paths["a"]); got != 6 {
		t.Errorf("%d variants stored for one path, want limit+1 = 6", got)
	}
	if n, _ := m.AddVariant("a", 3, 5); n != 4 {
		t.Errorf("known variant of a trapped path: rank %d, want 4", n)
	}
	if n, _ := m.AddVariant("a", 5, 5); n != 6 {
		t.Errorf("the variant over the limit: rank %d, want 6", n)
	}
	m.AddVariant("b", 1, 5)
	m.AddVariant("c", 1, 5) // evicts "a", the oldest
	if len(m.paths) != 2 || m.paths["a"] != nil {
		t.Errorf("paths after eviction: %v", len(m.paths))
	}
	if n, _ := m.AddVariant("a", 99, 5); n != 1 {
		t.Errorf("forgotten path counts from %d", n)
	}
	if _, err := m.AddVariant("a", 1, -1); err == nil {
		t.Error("negative limit accepted")
	}
}
