package urlnorm

import (
	"errors"
	"strings"
	"testing"
)

// fuzzSeeds are inputs that exercise every branch of the scanner and of the library path.
var fuzzSeeds = []string{
	"HTTP://Example.COM:80/a/./b/../c?utm_source=x&id=1#frag",
	"https://bücher.de/",
	"http://example.com",
	"http://example.com/%7Euser/%e2%82%ac",
	"http://u:p@a.com:8080/x;jsessionid=1/y?b=2&a=1&&sid=3#f",
	"http://a.com/%zz%%34%31?%zz#%zz",
	"http:\\\\a.com\\b",
	"http:a.com",
	"http:///a.com",
	"http://0x7f.1/",
	"http://[::1]:80/",
	"http://a..b/",
	"http://a.com./",
	"http://xn--bcher-kva.de/",
	"http://a_b.com/",
	"http://a.com:99999/",
	"http://a b/",
	"http://a.com/\xff\x01 ü",
	"  http://a.com/\t\n",
	"mailto:x@y.z",
	"//a.com/x",
	"../x?y#z",
	"http://a.com/x/.;jsessionid=1/..;sid=2",
	"http://a.com/?utm_source=%&a=%41",
}

func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	other := New(Options{StripParams: []string{"a*", "sid"}, KeepFragment: true, SortQuery: true})
	f.Fuzz(func(t *testing.T, raw string) {
		for _, n := range []*Normalizer{defaultNorm, other} {
			u, err := n.Parse(raw)
			checkAgainstLibrary(t, n, raw, nil, u, err)
			if err != nil {
				continue
			}
			checkValid(t, n, u)
		}
	})
}

func FuzzResolve(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("http://a.com/b/c?q#f", s)
		f.Add(s, "../g?x#y")
	}
	f.Fuzz(func(t *testing.T, base, ref string) {
		n := defaultNorm
		b, err := n.Parse(base)
		if err != nil {
			return
		}
		u, err := n.ResolveURL(b, ref)
		checkAgainstLibrary(t, n, ref, &b, u, err)
		if err == nil {
			checkValid(t, n, u)
		}
	})
}

// checkAgainstLibrary checks that the result of the scanner-first path (u, err) is what the
// library path gives for the same input.
func checkAgainstLibrary(t *testing.T, n *Normalizer, raw string, base *URL, u URL, err error) {
	t.Helper()
	lu, lerr := n.normalizeWith(raw, base, false)
	if (err == nil) != (lerr == nil) {
		t.Fatalf("input %q (base %q): scanner gives %q, %v; library gives %q, %v", raw, base, u, err, lu, lerr)
	}
	if err == nil && u != lu {
		t.Fatalf("input %q (base %q): scanner gives %q (%+v), library %q (%+v)", raw, base, u, u, lu, lu)
	}
	if err != nil {
		for _, reason := range []error{ErrNotAbsolute, ErrNotCrawlable, ErrEmptyHost, ErrInvalidHost, ErrInvalidPort, ErrTooLong, ErrMalformed} {
			if errors.Is(err, reason) != errors.Is(lerr, reason) {
				t.Fatalf("input %q: scanner error %v, library error %v", raw, err, lerr)
			}
		}
	}
}

// checkValid checks what every successful result must satisfy.
func checkValid(t *testing.T, n *Normalizer, u URL) {
	t.Helper()
	s := u.String()
	again, err := n.Parse(s)
	if err != nil {
		t.Fatalf("%q does not re-parse: %v", s, err)
	}
	if again != u {
		t.Fatalf("not idempotent: %q re-parses to %q", s, again)
	}
	if u.Scheme() != "http" && u.Scheme() != "https" {
		t.Fatalf("%q: scheme %q", s, u.Scheme())
	}
	if u.HostKey() == "" || u.Hostname() == "" || u.DomainKey() == "" {
		t.Fatalf("%q: empty host key", s)
	}
	if len(s) > MaxLength {
		t.Fatalf("%q: longer than MaxLength", s)
	}
	if !strings.HasPrefix(u.Path(), "/") {
		t.Fatalf("%q: path %q", s, u.Path())
	}
	if !n.opts.KeepFragment && strings.Contains(s, "#") {
		t.Fatalf("%q: fragment kept", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			t.Fatalf("%q: unencoded byte %#x", s, s[i])
		}
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			t.Fatalf("%q: stray %%", s)
		}
	}
	checkConsistent(t, n, u)
}
