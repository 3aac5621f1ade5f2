package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

var defaultNorm = New(DefaultOptions())

// parseTests are the normalization examples; the fuzz tests start from them too.
var parseTests = []struct {
	in, want string
}{
	// The examples the design requires.
	{"HTTP://Example.COM:80/a/./b/../c?utm_source=x&id=1#frag", "http://example.com/a/c?id=1"},
	{"https://bücher.de/", "https://xn--bcher-kva.de/"},
	{"http://example.com", "http://example.com/"},
	{"http://example.com/%7Euser/%e2%82%ac", "http://example.com/~user/%E2%82%AC"},
	// The FURB thesis: both name one page.
	{"http://www.furb.br", "http://www.furb.br/"},
	{"http://www.furb.br:80", "http://www.furb.br/"},

	// Scheme and host case, default ports.
	{"HTTPS://WWW.Example.Com:443/Path", "https://www.example.com/Path"},
	{"https://example.com:80/", "https://example.com:80/"},
	{"http://example.com:443/", "http://example.com:443/"},
	{"http://example.com:8080/", "http://example.com:8080/"},
	{"http://example.com:0080/", "http://example.com/"},
	{"http://example.com:08080/", "http://example.com:8080/"},
	{"http://example.com:/", "http://example.com/"},
	// Paths are case-sensitive.
	{"http://example.com/A/B/C.HTML", "http://example.com/A/B/C.HTML"},

	// Dot segments, literal and encoded.
	{"http://a.com/a/b/../../..", "http://a.com/"},
	{"http://a.com/a/b/..", "http://a.com/a/"},
	{"http://a.com/a/./b/.", "http://a.com/a/b/"},
	{"http://a.com/%2e%2E/b/.%2e/c", "http://a.com/c"},
	{"http://a.com/a/b/..%2f..", "http://a.com/a/b/..%2F.."},
	{"http://a.com//a//b", "http://a.com//a//b"},

	// Percent-encoding.
	{"http://a.com/%41%42%2d%5F%7e%30", "http://a.com/AB-_~0"},
	{"http://a.com/%2f%3a%3F%23", "http://a.com/%2F%3A%3F%23"},
	{"http://a.com/a b<c>\"d\"`{}", "http://a.com/a%20b%3Cc%3E%22d%22%60%7B%7D"},
	{"http://a.com/caf\u00e9", "http://a.com/caf%C3%A9"},
	{"http://a.com/\xff", "http://a.com/%EF%BF%BD"},
	{"http://a.com/%zz%%34%31", "http://a.com/%25zz%2541"},
	{"http://a.com/100%", "http://a.com/100%25"},
	{"http://a.com/?q=a b&r='x'", "http://a.com/?q=a%20b&r=%27x%27"},
	{"http://a.com/?q=%7e%c3%a9%2B+", "http://a.com/?q=~%C3%A9%2B+"},
	{"http://a.com/x^y|z[]", "http://a.com/x^y|z[]"},

	// Whitespace and controls.
	{"  \t http://a.com/x \n", "http://a.com/x"},
	{"ht\ttp://a.c\nom/p\ra/th", "http://a.com/pa/th"},
	{"\x00\x01http://a.com/\x1f", "http://a.com/"},
	{"http://a.com/a\x01b", "http://a.com/a%01b"},

	// Backslashes are slashes in http(s).
	{"http:\\\\a.com\\b\\c", "http://a.com/b/c"},
	{"http://a.com\\b\\..\\c", "http://a.com/c"},
	{"http://a.com/?a\\b", "http://a.com/?a\\b"},
	{"http:a.com/b", "http://a.com/b"},
	{"http:///a.com/b", "http://a.com/b"},

	// Userinfo is dropped.
	{"http://user:pass@example.com/x", "http://example.com/x"},
	{"http://user@example.com:8080/", "http://example.com:8080/"},
	{"http://a@b@example.com/", "http://example.com/"},
	{"http://@example.com/", "http://example.com/"},

	// Hosts: IDN, percent-encoded, trailing dot, IPv4 forms, IPv6.
	{"http://B%C3%BCcher.de/", "http://xn--bcher-kva.de/"},
	{"http://%41.com/", "http://a.com/"},
	{"http://XN--BCHER-KVA.de/", "http://xn--bcher-kva.de/"},
	{"http://example.com./", "http://example.com/"},
	{"http://example.com.:8080/", "http://example.com:8080/"},
	{"http://under_score.example.com/", "http://under_score.example.com/"},
	{"http://-dash-.example.com/", "http://-dash-.example.com/"},
	{"http://a.1b/", "http://a.1b/"},
	{"http://2130706433/", "http://127.0.0.1/"},
	{"http://0x7f.1/", "http://127.0.0.1/"},
	{"http://0177.0.0.1/", "http://127.0.0.1/"},
	{"http://127.0.0.1./", "http://127.0.0.1/"},
	{"http://[::1]/", "http://[::1]/"},
	{"http://[0:0:0:0:0:0:0:1]:80/", "http://[::1]/"},
	{"http://[2001:DB8::1]:8080/", "http://[2001:db8::1]:8080/"},

	// Query parameters: stripped ones go, the others keep their order; empty ones go.
	{"http://a.com/?b=2&utm_source=x&a=1&UTM_Medium=y", "http://a.com/?b=2&a=1"},
	{"http://a.com/?utm_source=x", "http://a.com/"},
	{"http://a.com/?", "http://a.com/"},
	{"http://a.com/?&&", "http://a.com/"},
	{"http://a.com/?a=1&&b=2&", "http://a.com/?a=1&b=2"},
	{"http://a.com/?gclid=1&fbclid=2&msclkid=3&dclid=4&yclid=5&x", "http://a.com/?x"},
	{"http://a.com/?mc_cid=1&mc_eid=2&_ga=3&_hsenc=4&_hsmi=5&igshid=6&x", "http://a.com/?x"},
	{"http://a.com/?JSESSIONID=1&PHPSESSID=2&sid=3&sessionid=4&ASPSESSIONIDQQ=5&x", "http://a.com/?x"},
	{"http://a.com/?utm%5Fsource=x&y", "http://a.com/?y"},
	{"http://a.com/?sidebar=1&sid", "http://a.com/?sidebar=1"},
	{"http://a.com/?b=1&a=2&a=1", "http://a.com/?b=1&a=2&a=1"},
	{"http://a.com/?x=1#utm_source", "http://a.com/?x=1"},
	// Session ids in path parameters.
	{"http://a.com/cart;jsessionid=0123ABC?x=1", "http://a.com/cart?x=1"},
	{"http://a.com/a;JSESSIONID=1;v=2/b", "http://a.com/a;v=2/b"},
	{"http://a.com/a;v=2;jsessionid=1", "http://a.com/a;v=2"},
	{"http://a.com/x/.;jsessionid=1/y", "http://a.com/x/y"},
	{"http://a.com/x/..;jsessionid=1", "http://a.com/"},
	{"http://a.com/;jsessionid=1", "http://a.com/"},

	// Fragments are removed.
	{"http://a.com/p#frag", "http://a.com/p"},
	{"http://a.com/p?q#", "http://a.com/p?q"},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		u, err := defaultNorm.Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if u.String() != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, u.String(), tt.want)
		}
		checkConsistent(t, defaultNorm, u)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"mailto:someone@example.com", ErrNotCrawlable},
		{"javascript:void(0)", ErrNotCrawlable},
		{"JavaScript:alert(1)", ErrNotCrawlable},
		{"java\tscript:alert(1)", ErrNotCrawlable},
		{"data:text/html,<p>hi</p>", ErrNotCrawlable},
		{"ftp://ftp.example.com/file", ErrNotCrawlable},
		{"tel:+5511999999999", ErrNotCrawlable},
		{"file:///etc/passwd", ErrNotCrawlable},
		{"ws://example.com/", ErrNotCrawlable},
		{"localhost:8080/x", ErrNotCrawlable},
		{"//example.com/x", ErrNotAbsolute},
		{"/relative/path", ErrNotAbsolute},
		{"example.com", ErrNotAbsolute},
		{"", ErrNotAbsolute},
		{"   ", ErrNotAbsolute},
		{"http://", ErrEmptyHost},
		{"http:///", ErrEmptyHost},
		{"http://?x", ErrEmptyHost},
		{"http://:80/", ErrEmptyHost},
		{"http://user:pass@/x", ErrEmptyHost},
		{"http://a.com:99999/", ErrInvalidPort},
		{"http://a.com:8o/", ErrInvalidPort},
		{"http://a.com:80:90/", ErrInvalidPort},
		{"http://a b.com/", ErrInvalidHost},
		{"http://a<b.com/", ErrInvalidHost},
		{"http://a..b/", ErrInvalidHost},
		{"http://.a.com/", ErrInvalidHost},
		{"http://a.com../", ErrInvalidHost},
		{"http://xn--abc.de/", ErrInvalidHost},
		{"http://256.256.256.256/", ErrInvalidHost},
		{"http://1.2.3.4.5/", ErrInvalidHost},
		{"http://a.0x/", ErrInvalidHost},
		{"http://[::1/", ErrInvalidHost},
		{"http://[:::1]/", ErrInvalidHost},
		{"http://" + strings.Repeat("a", MaxLength) + ".com/", ErrTooLong},
		{"http://a.com/" + strings.Repeat("%C3%A9", MaxLength/6+1), ErrTooLong},
		{"http://a.com/" + strings.Repeat("\u00e9", MaxLength/3), ErrTooLong}, // fits as input, not encoded
	}
	for _, tt := range tests {
		_, err := defaultNorm.Parse(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("Parse(%s) error = %v, want %v", quoteShort(tt.in), err, tt.want)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Input != tt.in {
			t.Errorf("Parse(%s) error %v is not an *Error carrying the input", quoteShort(tt.in), err)
		}
		if !strings.HasPrefix(err.Error(), "urlnorm: ") {
			t.Errorf("error %q does not name the package", err)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mailto:a@b.c", `urlnorm: "mailto:a@b.c": scheme "mailto": not crawlable (only http and https are)`},
		{"/x", `urlnorm: "/x": not an absolute URL (no scheme)`},
		{"http://a.com:99999/", `urlnorm: "http://a.com:99999/": invalid port`},
		{"http://a..b/", `urlnorm: "http://a..b/": invalid host: empty label in "a..b"`},
		{"http://a b/", `urlnorm: "http://a b/": invalid host: the host contains a forbidden domain code point " "`},
		{"ftp://a.com/" + strings.Repeat("x", 200),
			`urlnorm: "ftp://a.com/` + strings.Repeat("x", 88) + `"... (212 bytes): scheme "ftp": not crawlable (only http and https are)`},
	}
	for _, tt := range tests {
		_, err := defaultNorm.Parse(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	const base = "http://a.com/b/c/d;p?q=1#f"
	tests := []struct{ ref, want string }{
		// RFC 3986 section 5.4 examples, as WHATWG resolves them (fragments removed).
		{"g", "http://a.com/b/c/g"},
		{"./g", "http://a.com/b/c/g"},
		{"g/", "http://a.com/b/c/g/"},
		{"/g", "http://a.com/g"},
		{"//g", "http://g/"},
		{"?y", "http://a.com/b/c/d;p?y"},
		{"g?y", "http://a.com/b/c/g?y"},
		{"#s", "http://a.com/b/c/d;p?q=1"},
		{"g#s", "http://a.com/b/c/g"},
		{";x", "http://a.com/b/c/;x"},
		{"g;x", "http://a.com/b/c/g;x"},
		{"", "http://a.com/b/c/d;p?q=1"},
		{".", "http://a.com/b/c/"},
		{"./", "http://a.com/b/c/"},
		{"..", "http://a.com/b/"},
		{"../", "http://a.com/b/"},
		{"../g", "http://a.com/b/g"},
		{"../..", "http://a.com/"},
		{"../../g", "http://a.com/g"},
		{"../../../g", "http://a.com/g"},
		{"/./g", "http://a.com/g"},
		{"/../g", "http://a.com/g"},
		{"g.", "http://a.com/b/c/g."},
		{".g", "http://a.com/b/c/.g"},
		{"g..", "http://a.com/b/c/g.."},
		{"..g", "http://a.com/b/c/..g"},
		{"./../g", "http://a.com/b/g"},
		{"./g/.", "http://a.com/b/c/g/"},
		{"g/./h", "http://a.com/b/c/g/h"},
		{"g/../h", "http://a.com/b/c/h"},
		{"g;x=1/./y", "http://a.com/b/c/g;x=1/y"},
		{"g;x=1/../y", "http://a.com/b/c/y"},
		{"g?y/./x", "http://a.com/b/c/g?y/./x"},
		{"g#s/../x", "http://a.com/b/c/g"},
		// Absolute references and other schemes.
		{"https://Other.org:443/x", "https://other.org/x"},
		{"http:g", "http://a.com/b/c/g"}, // same scheme without slashes: relative
		{"https:g", "https://g/"},
		{"//user@other.org:8080/x?utm_source=1", "http://other.org:8080/x"},
		{"\\\\other.org\\x", "http://other.org/x"},
		{"  g  ", "http://a.com/b/c/g"},
		{"g h", "http://a.com/b/c/g%20h"},
		{"?utm_source=x&k=v", "http://a.com/b/c/d;p?k=v"},
		{"%7euser/", "http://a.com/b/c/~user/"},
		{"//bücher.de/", "http://xn--bcher-kva.de/"},
	}
	cases := make([]resolveCase, len(tests))
	for i, tt := range tests {
		cases[i] = resolveCase{base, tt.ref, tt.want}
	}
	checkResolve(t, defaultNorm, cases)

	for _, ref := range []string{"mailto:x@a.com", "javascript:void(0)", "data:,x", "ftp://a.com/"} {
		if _, err := defaultNorm.Resolve(base, ref); !errors.Is(err, ErrNotCrawlable) {
			t.Errorf("Resolve(%q) error = %v, want ErrNotCrawlable", ref, err)
		}
	}
	if _, err := defaultNorm.Resolve("/not/absolute", "g"); !errors.Is(err, ErrNotAbsolute) {
		t.Errorf("Resolve with a relative base: error = %v, want ErrNotAbsolute", err)
	}
	if _, err := defaultNorm.Resolve(base, "//:80/"); !errors.Is(err, ErrEmptyHost) {
		t.Errorf("Resolve(//:80/) error = %v, want ErrEmptyHost", err)
	}
	// A zero base makes ResolveURL a Parse.
	if u, err := defaultNorm.ResolveURL(URL{}, "http://a.com"); err != nil || u.String() != "http://a.com/" {
		t.Errorf("ResolveURL(zero, absolute) = %v, %v", u, err)
	}
	if _, err := defaultNorm.ResolveURL(URL{}, "g"); !errors.Is(err, ErrNotAbsolute) {
		t.Errorf("ResolveURL(zero, relative) error = %v, want ErrNotAbsolute", err)
	}
}

type resolveCase struct{ base, ref, want string }

func checkResolve(t *testing.T, n *Normalizer, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		got, err := n.Resolve(tt.base, tt.ref)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tt.base, tt.ref, got, err, tt.want)
		}
	}
}

func TestResolveKeepsBasePortAndIPv6(t *testing.T) {
	checkResolve(t, defaultNorm, []resolveCase{
		{"http://a.com:8080/x/y", "z", "http://a.com:8080/x/z"},
		{"http://[::1]:8080/x/y", "../z?q", "http://[::1]:8080/z?q"},
		{"https://bücher.de/a/b", "c", "https://xn--bcher-kva.de/a/c"},
		{"http://127.1/a", "/b", "http://127.0.0.1/b"},
		{"http://a.com/", "..", "http://a.com/"},
		{"http://a.com/x?q=1", "", "http://a.com/x?q=1"},
		{"http://a.com/x?q=1", "?", "http://a.com/x"},
	})
}

func TestOptions(t *testing.T) {
	const in = "http://a.com/p;sid=1?z=1&utm_campaign=x&b=2&a=1&b=1#Frag%7e"
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"zero", Options{}, "http://a.com/p;sid=1?z=1&utm_campaign=x&b=2&a=1&b=1"},
		{"default", DefaultOptions(), "http://a.com/p?z=1&b=2&a=1&b=1"},
		{"keep fragment", Options{KeepFragment: true}, "http://a.com/p;sid=1?z=1&utm_campaign=x&b=2&a=1&b=1#Frag~"},
		{"sort", Options{SortQuery: true}, "http://a.com/p;sid=1?a=1&b=2&b=1&utm_campaign=x&z=1"},
		{"sort and strip", Options{SortQuery: true, StripParams: []string{"UTM_*", "z"}}, "http://a.com/p;sid=1?a=1&b=2&b=1"},
		{"strip all", Options{StripParams: []string{"*"}}, "http://a.com/p"},
		{"empty entries ignored", Options{StripParams: []string{"", "b"}}, "http://a.com/p;sid=1?z=1&utm_campaign=x&a=1"},
		{"encoded entry", Options{StripParams: []string{"utm%5Fcampaign"}}, "http://a.com/p;sid=1?z=1&b=2&a=1&b=1"},
		{"long name", Options{StripParams: []string{strings.Repeat("n", 70)}}, "http://a.com/p;sid=1?z=1&utm_campaign=x&b=2&a=1&b=1"},
	}
	for _, tt := range tests {
		n := New(tt.opts)
		u, err := n.Parse(in)
		if err != nil || u.String() != tt.want {
			t.Errorf("%s: Parse = %q, %v; want %q", tt.name, u.String(), err, tt.want)
			continue
		}
		checkConsistent(t, n, u)
	}

	long := strings.Repeat("n", 70)
	n := New(Options{StripParams: []string{long}})
	if u, _ := n.Parse("http://a.com/?" + strings.ToUpper(long) + "=1&k"); u.String() != "http://a.com/?k" {
		t.Errorf("long strip name: got %q", u.String())
	}
	// Options returns a copy.
	o := n.Options()
	o.StripParams[0] = "changed"
	if n.Options().StripParams[0] != long {
		t.Error("Options() exposes the Normalizer's slice")
	}
}

func TestKeepFragmentResolve(t *testing.T) {
	checkResolve(t, New(Options{KeepFragment: true}), []resolveCase{
		{"http://a.com/x?q#f", "#g", "http://a.com/x?q#g"},
		{"http://a.com/x?q#f", "", "http://a.com/x?q"},
		{"http://a.com/x?q#f", "y#h%41", "http://a.com/y#hA"},
		{"http://a.com/x#f", "#", "http://a.com/x"},
		{"http://a.com/x", "#a b<`>", "http://a.com/x#a%20b%3C%60%3E"},
	})
}

func TestAccessors(t *testing.T) {
	tests := []struct {
		in                                              string
		scheme, host, hostname, port, path, query, frag string
		pathQuery, hostPath, domain                     string
		ip                                              bool
	}{
		{"HTTPS://User:Pw@WWW.Example.CO.UK:8443/A/b?x=1#f", "https", "www.example.co.uk:8443", "www.example.co.uk", "8443",
			"/A/b", "x=1", "f", "/A/b?x=1", "www.example.co.uk:8443/A/b", "example.co.uk", false},
		{"http://example.com", "http", "example.com", "example.com", "", "/", "", "", "/", "example.com/", "example.com", false},
		{"http://[::1]:8080/p", "http", "[::1]:8080", "::1", "8080", "/p", "", "", "/p", "[::1]:8080/p", "::1", true},
		{"http://127.0.0.1/", "http", "127.0.0.1", "127.0.0.1", "", "/", "", "", "/", "127.0.0.1/", "127.0.0.1", true},
		{"http://localhost:3000/", "http", "localhost:3000", "localhost", "3000", "/", "", "", "/", "localhost:3000/", "localhost", false},
		{"http://foo.github.io/", "http", "foo.github.io", "foo.github.io", "", "/", "", "", "/", "foo.github.io/", "foo.github.io", false},
		{"http://co.uk/", "http", "co.uk", "co.uk", "", "/", "", "", "/", "co.uk/", "co.uk", false},
		{"http://a.b.1b/", "http", "a.b.1b", "a.b.1b", "", "/", "", "", "/", "a.b.1b/", "b.1b", false},
		{"http://bücher.de/", "http", "xn--bcher-kva.de", "xn--bcher-kva.de", "", "/", "", "", "/", "xn--bcher-kva.de/", "xn--bcher-kva.de", false},
	}
	n := New(Options{KeepFragment: true})
	for _, tt := range tests {
		u, err := n.Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		got := []string{u.Scheme(), u.Host(), u.Hostname(), u.Port(), u.Path(), u.RawQuery(), u.Fragment(), u.PathQuery(), u.HostPath(), u.DomainKey(), u.HostKey()}
		want := []string{tt.scheme, tt.host, tt.hostname, tt.port, tt.path, tt.query, tt.frag, tt.pathQuery, tt.hostPath, tt.domain, tt.host}
		names := []string{"Scheme", "Host", "Hostname", "Port", "Path", "RawQuery", "Fragment", "PathQuery", "HostPath", "DomainKey", "HostKey"}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("Parse(%q).%s() = %q, want %q", tt.in, names[i], got[i], want[i])
			}
		}
		if u.IsIP() != tt.ip {
			t.Errorf("Parse(%q).IsIP() = %v", tt.in, u.IsIP())
		}
		if u.IsZero() {
			t.Errorf("Parse(%q).IsZero()", tt.in)
		}
	}
	var zero URL
	if !zero.IsZero() || zero.Scheme() != "" || zero.String() != "" {
		t.Error("zero URL is not zero")
	}
}

func TestHostOf(t *testing.T) {
	n := New(Options{})
	for _, raw := range []string{"http://Example.COM/a?b#c", "https://example.com:8443", "http://[::1]:8080/x",
		"http://user:pw@example.com/p@q", "http://example.com?q=a/b", "http://example.com#frag/x"} {
		u, err := n.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := HostOf(u.String()); got != u.Host() {
			t.Errorf("HostOf(%q) = %q, want URL.Host %q", u.String(), got, u.Host())
		}
	}
	// Where net/url accepts the string, the host is its Host in lowercase.
	for _, raw := range []string{"http://www.example.org/a", "https://Example.org:8443?q", "http://h#f", "http://h",
		"http://user:pw@h.example/x", "http://[::1]:80/", "http:///path"} {
		p, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := HostOf(raw), strings.ToLower(p.Host); got != want {
			t.Errorf("HostOf(%q) = %q, want %q (net/url)", raw, got, want)
		}
	}
	for raw, want := range map[string]string{
		"http://Example.COM/a":           "example.com",
		"http://user:p@ss@example.com/x": "example.com",
		"http://example.com/p@q":         "example.com",
		"https://a.example:81?x":         "a.example:81",
		"/relative/path":                 "",
		"mailto:someone@example.com":     "",
		"":                               "",
	} {
		if got := HostOf(raw); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestHostKeySharedAcrossSchemes(t *testing.T) {
	a, _ := defaultNorm.Parse("http://Example.com:80/a")
	b, _ := defaultNorm.Parse("https://example.com:443/b")
	c, _ := defaultNorm.Parse("https://example.com:8443/b")
	if a.HostKey() != "example.com" || b.HostKey() != "example.com" || c.HostKey() != "example.com:8443" {
		t.Errorf("host keys %q %q %q", a.HostKey(), b.HostKey(), c.HostKey())
	}
}

func TestKey(t *testing.T) {
	a, _ := defaultNorm.Parse("HTTP://Example.com:80/a?utm_source=x")
	b, _ := defaultNorm.Parse("http://example.com/a#top")
	c, _ := defaultNorm.Parse("http://example.com/A")
	if a.Key() != b.Key() {
		t.Error("equivalent URLs have different keys")
	}
	if a.Key() == c.Key() {
		t.Error("different URLs share a key")
	}
	// The key is a published format (stored on disk): pin it.
	if got := b.Key().String(); got != "5bd48fa66118084cc32779267a31116d" {
		t.Errorf("Key().String() = %q", got)
	}
}

// checkConsistent checks the invariants every URL must keep: it re-parses to itself and the
// accessors reassemble String.
func checkConsistent(t *testing.T, n *Normalizer, u URL) {
	t.Helper()
	again, err := n.Parse(u.String())
	if err != nil {
		t.Errorf("re-parse of %q: %v", u, err)
		return
	}
	if again != u {
		t.Errorf("not idempotent: %q re-parses to %q (%+v vs %+v)", u, again, u, again)
	}
	s := u.Scheme() + "://" + u.Host() + u.PathQuery()
	if f := u.Fragment(); f != "" {
		s += "#" + f
	}
	if s != u.String() {
		t.Errorf("parts of %q reassemble to %q", u, s)
	}
	if u.HostKey() == "" || u.DomainKey() == "" {
		t.Errorf("%q has an empty host or domain key", u)
	}
}

func TestConcurrentUse(t *testing.T) {
	inputs := []string{"http://a.com/x?utm_source=1&b", "https://bücher.de/", "http://[::1]:8080/", "http:\\\\a.com\\b"}
	want := make([]string, len(inputs))
	for i, in := range inputs {
		u, err := defaultNorm.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = u.String()
	}
	done := make(chan bool)
	for range 4 {
		go func() {
			ok := true
			for i := range 200 {
				u, err := defaultNorm.Parse(inputs[i%len(inputs)])
				ok = ok && err == nil && u.String() == want[i%len(inputs)]
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("concurrent Parse gave a different result")
		}
	}
}
