package robots

import (
	"os"
	"strings"
	"testing"
	"time"
)

// referenceMatch is the textbook position-set matcher (as in RFC 9309
// reference implementations): O(len(pattern)·len(path)), obviously right,
// too slow for the crawler. FuzzMatch holds the greedy matcher to it.
func referenceMatch(pat, s string) bool {
	anchored := strings.HasSuffix(pat, "$")
	if anchored {
		pat = pat[:len(pat)-1]
	}
	reach := make([]bool, len(s)+1) // reach[i]: the pattern so far matches s[:i]
	reach[0] = true
	for j := 0; j < len(pat); j++ {
		next := make([]bool, len(s)+1)
		if pat[j] == '*' {
			seen := false
			for i := range reach {
				seen = seen || reach[i]
				next[i] = seen
			}
		} else {
			for i := 0; i < len(s); i++ {
				next[i+1] = reach[i] && s[i] == pat[j]
			}
		}
		reach = next
	}
	if anchored {
		return reach[len(s)]
	}
	for _, ok := range reach {
		if ok {
			return true
		}
	}
	return false
}

func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"/", "/"},
		{"/fish*.php", "/fishheads/catfish.php?parameters"},
		{"/*.php$", "/filename.php"},
		{"/*.php$", "/filename.php5"},
		{"/a**b***$", "/axxbyy"},
		{"*", ""},
		{"$", ""},
		{"/a$b$", "/a$b"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/x?u=https://h", "/x?u=https%3A%2F%2Fh"},
		{"/*aa*aa*aa$", "/aaaaaaa"},
		{"/%zz", "/%25zz"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pat, path string) {
		cp := canonical(pat, true)
		cs := canonical(path, false)
		if canonical(cp, true) != cp || canonical(cs, false) != cs {
			t.Fatalf("canonical not idempotent: %q -> %q, %q -> %q", pat, cp, path, cs)
		}
		compiled := compilePattern(cp)
		got := compiled.matches(cs)
		if want := referenceMatch(cp, cs); got != want {
			t.Fatalf("pattern %q (canonical %q) vs path %q (canonical %q): matches = %v, reference = %v", pat, cp, path, cs, got, want)
		}
	})
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\nUser-Agent: foobot\nDisallow:/\nAllow:/example/page.html\n",
		"user-agent: ExampleBot\ndisallow: /foo\n\nuser-agent: ExampleBot\ndisallow: /baz\n",
		"\xEF\xBB\xBFuser-agent: a\r\ndisallow: /crlf\r\nuser-agent: b\rdisallow: /cr\r",
		"disallow: /orphan\nuser-agent: *\ncrawl-delay: 0.5\nsitemap: https://e.com/s.xml\nDisallow /nocolon\n",
		"user-agent: *\ndisallow: /\nallow: /$\nallow: /robots.txt$\ndisallow: /robots.txt\n",
		"user-agent: *\ndisallow: /*?*q=https://x\ndisallow: /ツ\n",
	}
	if typical, err := os.ReadFile("testdata/typical.txt"); err == nil {
		seeds = append(seeds, string(typical))
	}
	for _, s := range seeds {
		f.Add([]byte(s), "SondaBot/1.0", "/example/page.html?x=1")
	}
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		r := Parse(body)
		got := r.Allowed(agent, path)
		if again := r.Allowed(agent, path); again != got {
			t.Fatal("Allowed is not deterministic")
		}
		if other := Parse(body).Allowed(agent, path); other != got {
			t.Fatal("two parses of one body decide differently")
		}
		if g := r.Group(agent).Allowed(path); g != got {
			t.Fatal("Group(agent).Allowed differs from Allowed")
		}
		if canon := r.Allowed(agent, canonical(path, false)); canon != got {
			t.Fatalf("Allowed(%q) = %v but its canonical form decides %v", path, got, canon)
		}
		if !r.Allowed(agent, "/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		if s := r.Stats(); s.Ignored < len(s.Problems) || len(s.Problems) > maxProblems || s.Rules < 0 {
			t.Fatalf("inconsistent stats %+v", s)
		}
		if d, ok := r.Group(agent).CrawlDelay(); d < 0 || d > MaxCrawlDelay || (!ok && d != 0) {
			t.Fatalf("crawl-delay %v, %v out of range", d, ok)
		}

		back := roundTrip(t, FromFetch(Response{Status: 200, Body: body}, time.Unix(0, 0), nil, Policy{}))
		if back.Rules().Allowed(agent, path) != got {
			t.Fatal("entry reloaded from its encoding decides differently")
		}
	})
}

func FuzzEntryUnmarshal(f *testing.F) {
	for _, resp := range []Response{
		{Status: 200, Body: []byte("user-agent: *\ndisallow: /x\n")},
		{Status: 404},
		{Status: 503},
	} {
		data, _ := FromFetch(resp, time.Unix(1e9, 0), nil, Policy{}).MarshalBinary()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Entry
		if err := e.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := e.MarshalBinary()
		if err != nil {
			return // a decoded time MarshalBinary cannot write (odd zone offset)
		}
		var back Entry
		if err := back.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if back.Outcome != e.Outcome || back.Failures != e.Failures || back.Rules().Allowed("a", "/x") != e.Rules().Allowed("a", "/x") {
			t.Fatal("entry changed across a second round trip")
		}
	})
}

func FuzzDirectives(f *testing.F) {
	f.Add("robots", "noindex, nofollow", "sonda: none")
	f.Add("sonda", "unavailable_after: Friday, 25-Jun-27 15:00:00 GMT", "googlebot: noindex, sonda: unavailable_after: Fri, 25 Jun 2027 15:00:00 GMT")
	f.Add("robots", "max-snippet:0,,all", "::,:noindex")
	f.Fuzz(func(t *testing.T, name, content, header string) {
		m := MetaDirectives([]Meta{{Name: name, Content: content}}, "Sonda/1.0")
		h := HeaderDirectives([]string{header}, "Sonda/1.0")
		both := m.Merge(h)
		if both.NoIndex != (m.NoIndex || h.NoIndex) || both.NoFollow != (m.NoFollow || h.NoFollow) {
			t.Fatal("Merge lost a restriction")
		}
		if both.Indexable(time.Unix(0, 0)) && (m.NoIndex || h.NoIndex) {
			t.Fatal("noindex page reported indexable")
		}
	})
}
