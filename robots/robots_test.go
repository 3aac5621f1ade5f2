package robots

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

type check struct {
	agent, path string
	want        bool
}

func runChecks(t *testing.T, r *Robots, checks []check) {
	t.Helper()
	for _, c := range checks {
		if got := r.Allowed(c.agent, c.path); got != c.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", c.agent, c.path, got, c.want)
		}
	}
}

// TestRFC9309 walks the sections and examples of RFC 9309 in order.
func TestRFC9309(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		checks []check
	}{
		{
			name: "§5.1 simple example",
			body: "User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n" +
				"User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n" +
				"User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\n" +
				"User-Agent: quxbot\n\nEOF\n",
			checks: []check{
				{"otherbot", "/", true},
				{"otherbot", "/example/", false},
				{"otherbot", "/example/x.html", false},
				{"otherbot", "/img/a.gif", false},
				{"otherbot", "/img/a.gif?v=1", true}, // "$" anchors at the end of path+query
				{"otherbot", "/publications/", true},
				{"otherbot", "/publications/a.gif", true}, // /publications/ (14) beats *.gif$ (7)
				{"foobot", "/", false},
				{"foobot", "/other", false},
				{"foobot", "/example/page.html", true},
				{"foobot", "/example/allowed.gif", true},
				{"foobot", "/example/other.gif", false},
				{"barbot", "/example/page.html", false},
				{"barbot", "/example/other", true}, // the * group is not consulted
				{"bazbot", "/example/page.html", false},
				{"bazbot", "/img/a.gif", true},
				{"quxbot", "/example/page.html", true}, // empty group: allow all
				{"quxbot", "/img/a.gif", true},
			},
		},
		{
			name: "§5.2 longest match",
			body: "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
			checks: []check{
				{"foobot", "/example/page/disallowed.gif", false},
				{"foobot", "/example/page/allowed.gif", true},
				{"foobot", "/example/", true},
			},
		},
		{
			name: "§2.2.1 groups for the same token are merged",
			body: "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n",
			checks: []check{
				{"ExampleBot", "/foo", false},
				{"examplebot", "/bar", false},
				{"EXAMPLEBOT/1.2", "/baz", false},
				{"ExampleBot", "/qux", true},
				{"Other", "/foo", true},
			},
		},
		{
			name: "§2.2.1 no matching group falls back to *",
			body: "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n",
			checks: []check{
				{"ExampleBot", "/foo", false},
				{"ExampleBot", "/bar", false},
				{"ExampleBot", "/baz", true},
				{"BazBot", "/baz", false},
				{"BazBot", "/foo", true},
				{"", "/foo", false},
				{"*", "/foo", false},
			},
		},
		{
			name: "§2.2.1 several * groups merge too",
			body: "user-agent: *\ndisallow: /a\n\nuser-agent: x\ndisallow: /x\n\nuser-agent: *\ndisallow: /b\n",
			checks: []check{
				{"bot", "/a", false},
				{"bot", "/b", false},
				{"bot", "/x", true},
			},
		},
		{
			name: "§2.2.1 no * group and no match: no rules apply",
			body: "user-agent: a\ndisallow: /\n",
			checks: []check{
				{"a", "/x", false},
				{"b", "/x", true},
			},
		},
		{
			name:   "§2.2.1 no groups at all",
			body:   "# nothing but a comment\n\nsitemap: https://example.com/s.xml\n",
			checks: []check{{"a", "/", true}, {"a", "/x", true}},
		},
		{
			name: "§2.2.1 product token is the leading letters, _ and -",
			body: "user-agent: FooBot/1.2\ndisallow: /f\n\nuser-agent: Bar_Bot-X (compatible)\ndisallow: /b\n\nuser-agent: * and more\ndisallow: /s\n",
			checks: []check{
				{"foobot", "/f", false},
				{"FooBot/9.9 (+https://x)", "/f", false},
				{"foobot-news", "/f", true},
				{"bar_bot-x", "/b", false},
				{"bar", "/b", true},
				{"other", "/s", false}, // "* and more" is still the global group
			},
		},
		{
			name: "§2.2.2 longest match, allow wins ties",
			body: "user-agent: *\nallow: /a\ndisallow: /a\n" +
				"allow: /b.c\ndisallow: /*.c\n" + // same length, wildcard or not
				"allow: /page\ndisallow: /*.html\n" +
				"disallow: /folder\nallow: /folder/\n" +
				"allow: /$\ndisallow: /\n",
			checks: []check{
				{"x", "/a", true},
				{"x", "/b.c", true},
				{"x", "/x.c", false},
				{"x", "/page", true},
				{"x", "/page.html", false}, // /*.html (7) beats /page (5)
				{"x", "/folder", false},
				{"x", "/folder/x", true},
				{"x", "/", true},
				{"x", "/other", false},
			},
		},
		{
			name: "§2.2.2 matching is case sensitive, keys and agents are not",
			body: "USER-AGENT: SondaBot\nDisAllow: /Private\nALLOW: /Private/ok\n",
			checks: []check{
				{"sondabot", "/Private", false},
				{"SONDABOT", "/private", true},
				{"SondaBot", "/Private/ok", true},
			},
		},
		{
			name: "§2.2.2 empty disallow disallows nothing",
			body: "user-agent: *\ndisallow:\n\nuser-agent: b\ndisallow:\ndisallow: /x\n",
			checks: []check{
				{"a", "/", true},
				{"a", "/anything", true},
				{"b", "/y", true},
				{"b", "/x", false},
			},
		},
		{
			name: "§2.2.2 /robots.txt is always allowed",
			body: "user-agent: *\ndisallow: /\ndisallow: /robots.txt\n",
			checks: []check{
				{"a", "/robots.txt", true},
				{"a", "/robots.txt?x=1", true},
				{"a", "/robots.txt/x", false},
				{"a", "/robots.txtx", false},
				{"a", "/x", false},
			},
		},
		{
			name: "§2.2.2 rules outside any group are ignored",
			body: "disallow: /a\nallow: /b\ncrawl-delay: 5\nuser-agent: *\ndisallow: /c\n",
			checks: []check{
				{"x", "/a", true},
				{"x", "/c", false},
			},
		},
		{
			name: "§2.2.2 percent-encoding table",
			body: "user-agent: *\n" +
				"disallow: /foo/bar?baz=quz\n" +
				"disallow: /foo/bar?baz=https://foo.bar\n" +
				"disallow: /foo/bar/ツ\n" +
				"disallow: /q/%E3%83%84\n" +
				"disallow: /foo/bar/%62%61%7A\n" +
				"disallow: /lower/%2f\n" +
				"disallow: /space here\n",
			checks: []check{
				{"x", "/foo/bar?baz=quz", false},
				{"x", "/foo/bar?baz=https%3A%2F%2Ffoo.bar", false},
				{"x", "/foo/bar?baz=https://foo.bar", false},
				{"x", "/foo/bar?baz=https%3a%2f%2ffoo.bar", false},
				{"x", "/foo/bar?baz=http://foo.bar", true},
				{"x", "/foo/bar/%E3%83%84", false},
				{"x", "/foo/bar/%e3%83%84", false},
				{"x", "/foo/bar/ツ", false},
				{"x", "/q/ツ", false},
				{"x", "/q/%E3%83%84/more", false},
				{"x", "/foo/bar/baz", false},
				{"x", "/foo/bar/%62az", false},
				{"x", "/foo/bar/bax", true},
				{"x", "/lower/%2F", false},
				{"x", "/lower/", true}, // %2F is not "/" in a path
				{"x", "/space%20here", false},
				{"x", "/space here", false},
			},
		},
		{
			name: "§2.2.2 reserved characters keep their escapes in the path, not in the query",
			body: "user-agent: *\ndisallow: /a/b\ndisallow: /q?x=1&y\n",
			checks: []check{
				{"x", "/a%2Fb", true},
				{"x", "/a/b", false},
				{"x", "/q?x=1&y=2", false},
				{"x", "/q?x=1%26y=2", false},
				{"x", "/q?x%3D1&y", false},
				{"x", "/q?x%3D2&y", true},
			},
		},
		{
			name: "§2.2.3 special characters",
			body: "user-agent: *\n" +
				"allow: /this/path/exactly$\ndisallow: /this/\n" +
				"disallow: /w/*/exactly\n" +
				"disallow: /path/file-with-a-%2A.html\n" +
				"disallow: /path/foo-%24\n" +
				"disallow: /mid$dle\n",
			checks: []check{
				{"x", "/this/path/exactly", true},
				{"x", "/this/path/exactly/", false},
				{"x", "/this/path/exactly?q", false},
				{"x", "/w/a/b/exactly", false},
				{"x", "/w/exactly", true},
				{"x", "/path/file-with-a-*.html", false},
				{"x", "/path/file-with-a-%2A.html", false},
				{"x", "/path/file-with-a-x.html", true},
				{"x", "/path/foo-$", false},
				{"x", "/path/foo-%24", false},
				{"x", "/mid$dle", false},
				{"x", "/mid%24dle", false},
				{"x", "/mid", true},
			},
		},
		{
			name: "wildcards (Google's documented examples)",
			body: "user-agent: a\ndisallow: /fish*\n" +
				"user-agent: b\ndisallow: /*.php\n" +
				"user-agent: c\ndisallow: /*.php$\n" +
				"user-agent: d\ndisallow: /fish*.php\n" +
				"user-agent: e\ndisallow: /*\n" +
				"user-agent: f\ndisallow: /a**b***$\n",
			checks: []check{
				{"a", "/fish", false}, {"a", "/fish.html", false}, {"a", "/fishheads/x", false}, {"a", "/Fish", true}, {"a", "/catfish", true},
				{"b", "/index.php", false}, {"b", "/folder/filename.php?parameters", false}, {"b", "/any.php.file.html", false}, {"b", "/", true}, {"b", "/windows.PHP", true},
				{"c", "/filename.php", false}, {"c", "/folder/filename.php", false}, {"c", "/filename.php?parameters", true}, {"c", "/filename.php/", true}, {"c", "/filename.php5", true},
				{"d", "/fish.php", false}, {"d", "/fishheads/catfish.php?parameters", false}, {"d", "/Fish.PHP", true},
				{"e", "/", false}, {"e", "/x", false},
				{"f", "/ab", false}, {"f", "/axxbyy", false}, {"f", "/a", true},
			},
		},
		{
			name: "patterns not starting with / or * never match (as in Google's parser)",
			body: "user-agent: *\ndisallow: private\ndisallow: $\n",
			checks: []check{
				{"x", "/private", true},
				{"x", "private", true},
				{"x", "/", true},
			},
		},
		{
			name: "syntax tolerance: BOM, CRLF, CR, comments, spacing, missing colon, typos",
			body: "\xEF\xBB\xBFuser-agent: a\r\ndisallow: /crlf\r\n\r\n" +
				"user-agent: b\rdisallow: /cr\r" +
				"  user-agent :\tc  # comment\n\t disallow\t:  /c  # /d is commented\n" +
				"user-agent d\nDisallow /nocolon\nDisallow /two words\n" +
				"useragent: e\ndissallow: /e1\ndisalow: /e2\nuser agent: f\ndisallaw: /f\n",
			checks: []check{
				{"a", "/crlf", false},
				{"b", "/cr", false},
				{"c", "/c", false},
				{"c", "/d", true},
				{"d", "/nocolon", false},
				{"d", "/two", true},
				{"e", "/e1", false},
				{"e", "/e2", false},
				{"f", "/f", false},
			},
		},
		{
			name: "group boundaries",
			body: "user-agent: a\nuser-agent: b\ndisallow: /ab\n" +
				"user-agent: c\ndisallow: /c\nuser-agent: d\ndisallow: /d\n" +
				"user-agent: e\nsitemap: https://x/s.xml\ndisallow: /e\n" + // sitemap does not end the group
				"user-agent: f\nunknown: value\nuser-agent: g\ndisallow: /g\n", // nor do unknown records: f and g share a group
			checks: []check{
				{"a", "/ab", false}, {"b", "/ab", false},
				{"c", "/c", false}, {"c", "/d", true},
				{"d", "/d", false}, {"d", "/c", true},
				{"e", "/e", false},
				{"f", "/g", false},
				{"g", "/g", false},
			},
		},
		{
			name: "a specific group without rules still shadows *",
			body: "user-agent: *\ndisallow: /\n\nuser-agent: sonda\ncrawl-delay: 3\n",
			checks: []check{
				{"sonda", "/x", true},
				{"other", "/x", false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runChecks(t, Parse([]byte(tt.body)), tt.checks)
		})
	}
}

func TestAllowedPathForms(t *testing.T) {
	r := Parse([]byte("user-agent: *\ndisallow: /$\ndisallow: /x\n"))
	runChecks(t, r, []check{
		{"a", "", false},         // empty means "/"
		{"a", "?q=1", true},      // "/?q=1"
		{"a", "x", false},        // a missing leading slash is added
		{"a", "/x#frag", false},  // fragment dropped
		{"a", "/#x", false},      // "/" exactly
		{"a", "/y#/x", true},     // the fragment cannot make a match
		{"a", "/X", true},        // case sensitive
		{"a", "/%78", false},     // %78 is "x"
		{"a", "/\x00\xff", true}, // garbage is escaped, not a crash
	})
	var nilRobots *Robots
	if !nilRobots.Allowed("a", "/x") {
		t.Error("nil *Robots must allow everything")
	}
	if !AllowAll().Allowed("a", "/x") {
		t.Error("AllowAll disallowed /x")
	}
	if DisallowAll().Allowed("a", "/x") || DisallowAll().Allowed("a", "/") {
		t.Error("DisallowAll allowed a path")
	}
	if !DisallowAll().Allowed("a", "/robots.txt") {
		t.Error("DisallowAll must still allow /robots.txt")
	}
}

// padTo appends comment lines to s until it is exactly n octets long.
func padTo(s string, n int) string {
	var b strings.Builder
	b.WriteString(s)
	for b.Len() < n {
		line := min(n-b.Len(), 80)
		b.WriteString(strings.Repeat("#", line-1) + "\n")
	}
	return b.String()
}

func TestMaxSize(t *testing.T) {
	head := "user-agent: *\ndisallow: /before\n"

	t.Run("rule after the cap is ignored", func(t *testing.T) {
		body := padTo(head, MaxSize+100) + "disallow: /after\n"
		r := Parse([]byte(body))
		if !r.Truncated() {
			t.Error("Truncated() = false for a body over MaxSize")
		}
		runChecks(t, r, []check{{"x", "/before", false}, {"x", "/after", true}})
	})

	t.Run("line cut by the cap is dropped", func(t *testing.T) {
		// The cap falls inside "allow: /before/secret": parsing the fragment
		// "allow: /bef" would allow /before.
		const cut = "allow: /bef"
		body := padTo(head, MaxSize-len(cut)) + "allow: /before/secret\n"
		r := Parse([]byte(body))
		if !r.Truncated() {
			t.Error("Truncated() = false")
		}
		runChecks(t, r, []check{{"x", "/before", false}, {"x", "/before/secret", false}})
		if got := r.Stats().Rules; got != 1 {
			t.Errorf("%d rules parsed, want 1", got)
		}
	})

	t.Run("exactly MaxSize is not truncated", func(t *testing.T) {
		body := padTo(head, MaxSize-len("disallow: /last\n")) + "disallow: /last\n"
		r := Parse([]byte(body))
		if len(body) != MaxSize || r.Truncated() {
			t.Errorf("len %d, Truncated() = %v; want %d, false", len(body), r.Truncated(), MaxSize)
		}
		runChecks(t, r, []check{{"x", "/last", false}})
	})

	t.Run("no newline before the cap leaves nothing", func(t *testing.T) {
		body := "user-agent: * disallow: /" + strings.Repeat("x", MaxSize)
		r := Parse([]byte(body))
		if !r.Truncated() || r.Stats().Lines != 0 {
			t.Errorf("Truncated=%v Lines=%d, want true and 0", r.Truncated(), r.Stats().Lines)
		}
	})
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"10", 10 * time.Second, true},
		{"0", 0, true},
		{"0.5", 500 * time.Millisecond, true},
		{".25", 250 * time.Millisecond, true},
		{"2.", 2 * time.Second, true},
		{"1.5 # comment", 1500 * time.Millisecond, true},
		{"99999999999999999999999", MaxCrawlDelay, true},
		{"86400", MaxCrawlDelay, true},
		{"-1", 0, false},
		{"+1", 0, false},
		{"abc", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"Inf", 0, false},
		{"NaN", 0, false},
		{"1.2.3", 0, false},
		{".", 0, false},
		{"", 0, false},
		{"5 seconds", 0, false},
	}
	for _, tt := range tests {
		r := Parse([]byte("user-agent: *\ncrawl-delay: " + tt.value + "\n"))
		got, ok := r.Group("x").CrawlDelay()
		if got != tt.want || ok != tt.ok {
			t.Errorf("crawl-delay %q = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.ok)
		}
	}

	r := Parse([]byte("user-agent: a\ncrawl-delay: 2\n\nuser-agent: b\nuser-agent: a\ncrawl-delay: 7\ncrawl-delay: 3\n\nuser-agent: c\ndisallow: /\n"))
	if d, ok := r.Group("a").CrawlDelay(); d != 7*time.Second || !ok {
		t.Errorf("merged crawl-delay for a = %v, %v; want the longest, 7s", d, ok)
	}
	if d, _ := r.Group("b").CrawlDelay(); d != 7*time.Second {
		t.Errorf("crawl-delay for b = %v, want 7s", d)
	}
	if _, ok := r.Group("c").CrawlDelay(); ok {
		t.Error("group c has no crawl-delay but reports one")
	}
	if _, ok := r.Group("nobody").CrawlDelay(); ok {
		t.Error("no matching group and no * group, yet a crawl-delay")
	}
}

func TestSitemaps(t *testing.T) {
	body := "Sitemap: https://example.com/first.xml\n" +
		"user-agent: *\nsitemap: http://example.com/in-group.xml\ndisallow: /x\n" +
		"site-map: https://example.com/typo.xml\n" +
		"sitemap: /relative.xml\nsitemap: ftp://example.com/s.xml\nsitemap:\n" +
		"SITEMAP: https://example.com/first.xml\n" +
		"sitemap: https://example.com/last.xml # comment\n"
	r := Parse([]byte(body))
	want := []string{
		"https://example.com/first.xml",
		"http://example.com/in-group.xml",
		"https://example.com/typo.xml",
		"https://example.com/last.xml",
	}
	if got := r.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("Sitemaps() = %q\nwant %q", got, want)
	}
	r.Sitemaps()[0] = "mutated"
	if r.Sitemaps()[0] == "mutated" {
		t.Error("Sitemaps() exposes internal storage")
	}
	if r.Allowed("a", "/x") {
		t.Error("sitemap line ended the group: /x allowed")
	}
}

func TestStats(t *testing.T) {
	body := "disallow: /orphan\r\n" + // 1
		"user-agent: a\r\n" + // 2
		"user-agent: /1.0\r\n" + // 3: no token
		"disallow: /x\r\n" + // 4
		"allow:\r\n" + // 5
		"nonsense line here\r\n" + // 6
		"host: example.com\r\n" + // 7
		"\r\n# comment\r\n" + // 8, 9
		"crawl-delay: soon\r\n" + // 10
		"user-agent: *\r\n" + // 11
		"sitemap: nope\r\n" // 12
	s := Parse([]byte(body)).Stats()
	if s.Lines != 12 || s.Groups != 2 || s.Rules != 2 || s.Ignored != 6 {
		t.Errorf("Stats = Lines %d Groups %d Rules %d Ignored %d; want 12 2 2 6", s.Lines, s.Groups, s.Rules, s.Ignored)
	}
	var lines []int
	for _, p := range s.Problems {
		lines = append(lines, p.Line)
	}
	if want := []int{1, 3, 6, 7, 10, 12}; !slices.Equal(lines, want) {
		t.Errorf("problem lines = %v, want %v (%v)", lines, want, s.Problems)
	}
	if got := s.Problems[0].String(); got != "robots: line 1: rule before any user-agent line" {
		t.Errorf("Problem.String() = %q", got)
	}

	many := Parse([]byte(strings.Repeat("junk\n", 500))).Stats()
	if many.Ignored != 500 || len(many.Problems) != maxProblems {
		t.Errorf("Ignored %d, %d problems kept; want 500 and %d", many.Ignored, len(many.Problems), maxProblems)
	}
}

func TestGroupRules(t *testing.T) {
	r := Parse([]byte("user-agent: *\ndisallow: /a\nallow: /a\ndisallow: /abc\ndisallow: /a\nallow: /ツ\n"))
	got := r.Group("x").Rules()
	want := []Rule{
		{Allow: true, Pattern: "/%E3%83%84"},
		{Allow: false, Pattern: "/abc"},
		{Allow: true, Pattern: "/a"},
		{Allow: false, Pattern: "/a"}, // the duplicate disallow: /a is dropped
	}
	if !slices.Equal(got, want) {
		t.Errorf("Rules() = %+v\nwant %+v", got, want)
	}
	if (Group{}).Rules() != nil {
		t.Error("zero Group has rules")
	}
}

func TestProductToken(t *testing.T) {
	tests := map[string]string{
		"FooBot/1.2":                      "foobot",
		"sonda":                           "sonda",
		"  Sonda-Search_Bot/0.1 (+https)": "sonda-search_bot",
		"Mozilla/5.0 (compatible; X/1)":   "mozilla",
		"*":                               "",
		"":                                "",
		"/1.0":                            "",
		"Bot2":                            "bot",
		"ÜberBot":                         "",
	}
	for in, want := range tests {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathQuery(t *testing.T) {
	tests := map[string]string{
		"https://example.com":                  "/",
		"https://example.com/":                 "/",
		"https://example.com/a/b?c=d#frag":     "/a/b?c=d",
		"https://example.com/a%2Fb?":           "/a%2Fb?",
		"https://example.com/caf%C3%A9?q=ツ":    "/caf%C3%A9?q=ツ",
		"https://example.com/?":                "/?",
		"https://example.com/sp%20ace?x=a+b#f": "/sp%20ace?x=a+b",
	}
	for in, want := range tests {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := PathQuery(u); got != want {
			t.Errorf("PathQuery(%q) = %q, want %q", in, got, want)
		}
	}
	if PathQuery(nil) != "/" {
		t.Error("PathQuery(nil) != /")
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		in      string
		pattern bool
		want    string
	}{
		{"/plain/path?q=1", false, "/plain/path?q=1"},
		{"/p?q%3D1%26r%3a%2f", false, "/p?q=1&r:/"},
		{"/p%3D?q", false, "/p%3D?q"},
		{"/p?a%3Fb?c", false, "/p?a?b?c"},
		{"/p?a%23b%2A%24", true, "/p?a%23b%2A%24"},
		{"/foo/bar/%62%61%7A", false, "/foo/bar/baz"},
		{"/%7e%2d%2E%5F", false, "/~-._"},
		{"/%2f%3a", false, "/%2F%3A"},
		{"/ツ", false, "/%E3%83%84"},
		{"/a b\t\x7f", false, "/a%20b%09%7F"},
		{`/"<>\^` + "`{|}", false, "/%22%3C%3E%5C%5E%60%7B%7C%7D"},
		{"/100%", false, "/100%25"},
		{"/%zz%4", false, "/%25zz%254"},
		{"/a*b$", false, "/a%2Ab%24"},
		{"/a*b$", true, "/a*b$"},
		{"/a$b$", true, "/a%24b$"},
		{"/x?u=https%3A%2F%2Fh%2Fp%3Fq%40", false, "/x?u=https://h/p?q@"},
		{"/a:b@c", false, "/a:b@c"},
		{"/q?a=1&b=2+3;c", false, "/q?a=1&b=2+3;c"},
		{"/q;a=1&b?c", false, "/q;a=1&b?c"},
		{"/a#b?c", false, "/a"},
		{"/ツ#b", false, "/%E3%83%84"},
		{"/a#b", true, "/a#b"},
	}
	for _, tt := range tests {
		got := canonical(tt.in, tt.pattern)
		if got != tt.want {
			t.Errorf("canonical(%q, %v) = %q, want %q", tt.in, tt.pattern, got, tt.want)
		}
		if again := canonical(got, tt.pattern); again != got {
			t.Errorf("canonical is not idempotent on %q: %q", got, again)
		}
	}
}

func TestCanonicalDoesNotAllocateWhenUnchanged(t *testing.T) {
	s := "/some/ordinary/path.html?id=42&page=3"
	if n := testing.AllocsPerRun(100, func() { _ = canonical(s, false) }); n != 0 {
		t.Errorf("canonical allocated %v times on an already canonical path", n)
	}
	r := Parse([]byte("user-agent: sondabot\ndisallow: /private\nallow: /*.html$\n"))
	g := r.Group("sondabot")
	if n := testing.AllocsPerRun(100, func() { _ = g.Allowed(s) }); n != 0 {
		t.Errorf("Group.Allowed allocated %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.Allowed("sondabot", s) }); n != 0 {
		t.Errorf("Robots.Allowed allocated %v times for a lower-case agent", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.Allowed("SondaBot/1.0 (+https://sonda.example/bot)", s) }); n != 0 {
		t.Errorf("Robots.Allowed allocated %v times for a mixed-case User-Agent", n)
	}
}
