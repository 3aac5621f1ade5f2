package robots

import (
	"os"
	"strconv"
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

// FuzzParseAgainstModel writes a robots.txt from a model (one group for the agent, its
// rules, and lines that are no rules scattered between them: sitemaps, unknown records,
// comments, blank lines, other agents' groups) and holds Parse+Allowed to the decision the
// model gives by the RFC's definition: the longest matching canonical pattern, allow on a
// tie, with referenceMatch as the matcher.
func FuzzParseAgainstModel(f *testing.F) {
	f.Add([]byte("\x01/a\x00\x02/a/b\x00\x05/*.php$\x00"), "/a/b/c.php")
	f.Add([]byte("\x03/x\x00\x04sitemap\x00\x00/\x00"), "/x/y")
	f.Add([]byte("\x01/foo/bar?baz=https://foo.bar\x00\x02/\x00"), "/foo/bar?baz=https%3A%2F%2Ffoo.bar")
	f.Add([]byte("\x01/d/index.html\x00\x02/\x00"), "/d/")
	f.Fuzz(func(t *testing.T, spec []byte, path string) {
		type modelRule struct {
			allow bool
			value string
		}
		var rules []modelRule
		var file strings.Builder
		file.WriteString("User-agent: other\nDisallow: /other-only\n\nUSER-AGENT: FuzzBot/1.0\n")
		for _, field := range strings.Split(string(spec), "\x00") {
			if field == "" {
				continue
			}
			op, value := field[0], field[1:]
			if strings.ContainsAny(value, "\r\n#") || len(value) > 200 {
				continue // one line per record; comments are written apart
			}
			value = strings.TrimSpace(value)
			switch op % 6 {
			case 0, 1:
				rules = append(rules, modelRule{true, value})
				file.WriteString("Allow: " + value + "\n")
			case 2, 3:
				rules = append(rules, modelRule{false, value})
				file.WriteString("disallow:" + value + "   # a comment\n")
			case 4:
				// Records that are no group member must not end the group.
				file.WriteString("Sitemap: https://h.example/" + strconv.Itoa(len(value)) + ".xml\nX-Unknown: " + value + "\n\n# comment\n")
			case 5:
				// A second group for the same agent is merged into the first.
				file.WriteString("User-agent: nobody\nDisallow: /nobody\nuser-agent: fuzzbot\n")
			}
		}
		r := Parse([]byte(file.String()))
		got := r.Allowed("FuzzBot", path)

		s := canonical(path, false)
		if s == "" || s[0] != '/' {
			s = "/" + s
		}
		want, best := true, -1
		if p, _, _ := strings.Cut(s, "?"); p != "/robots.txt" {
			for _, mr := range rules {
				if mr.value == "" {
					continue
				}
				pats := []string{canonical(mr.value, true)}
				if dir, ok := strings.CutSuffix(strings.TrimSuffix(pats[0], "$"), "/index.html"); ok && mr.allow {
					pats = append(pats, dir+"/$")
				}
				for _, pat := range pats {
					if !referenceMatch(pat, s) {
						continue
					}
					if n := len(pat); n > best || n == best && mr.allow {
						best, want = n, mr.allow
					}
				}
			}
		}
		if got != want {
			t.Fatalf("file:\n%s\npath %q (canonical %q): Allowed = %v, model says %v", file.String(), path, s, got, want)
		}
	})
}
