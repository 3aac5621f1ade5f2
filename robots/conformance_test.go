package robots

import (
	"strings"
	"testing"
)

// conformanceCase is one decision the RFC or Google's documented practice fixes: the file,
// the crawler's user agent, the URL as a crawler would hold it (absolute or a bare path),
// and whether fetching it is allowed.
type conformanceCase struct {
	name  string
	body  string
	agent string
	url   string
	want  bool
}

// decide is what `sonda check robots` and the crawler do with a file and a URL.
func decide(body, agent, rawURL string) bool {
	return Parse([]byte(body)).Allowed(agent, PathQueryOf(rawURL))
}

func runConformance(t *testing.T, cases []conformanceCase) {
	t.Helper()
	for _, c := range cases {
		if got := decide(c.body, c.agent, c.url); got != c.want {
			t.Errorf("%s: agent %q, URL %.80q: allowed = %v, want %v", c.name, c.agent, c.url, got, c.want)
		}
	}
}

// TestRFC9309Conformance restates, case by case, what RFC 9309 requires of a parser and a
// matcher. Each group of cases names the section it comes from.
func TestRFC9309Conformance(t *testing.T) {
	const fooDisallowAll = "user-agent: FooBot\ndisallow: /\n"
	groups := "allow: /before/any/group/\n\n" +
		"user-agent: FooBot\ndisallow: /\nallow: /x/\n" +
		"user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\n" +
		"allow: /w/\n" + // after a rule: still BarBot's group
		"user-agent: BazBot\n\n" +
		"user-agent: FooBot\nallow: /z/\ndisallow: /\n"
	runConformance(t, []conformanceCase{
		// §2.1: records are "name: value"; a line whose name is no record is no rule.
		{"§2.1 record", fooDisallowAll, "FooBot", "http://h.example/x/y", false},
		{"§2.1 unknown names are not rules", "foo: FooBot\nbar: /\n", "FooBot", "http://h.example/x/y", true},

		// §2.1: a group is its user-agent lines and the rules up to the next user-agent line
		// that follows a rule; groups naming one agent are merged; rules outside a group are
		// ignored.
		{"§2.1 group FooBot own allow", groups, "FooBot", "http://h.example/x/b", true},
		{"§2.1 group FooBot merged allow", groups, "FooBot", "http://h.example/z/d", true},
		{"§2.1 group FooBot other's allow", groups, "FooBot", "http://h.example/y/c", false},
		{"§2.1 group BarBot own allow", groups, "BarBot", "http://h.example/y/c", true},
		{"§2.1 group BarBot rule after blank lines", groups, "BarBot", "http://h.example/w/a", true},
		{"§2.1 group BarBot other's allow", groups, "BarBot", "http://h.example/z/d", false},
		{"§2.1 group BazBot joined FooBot's last group", groups, "BazBot", "http://h.example/z/d", true},
		{"§2.1 rule before any group ignored (Foo)", groups, "FooBot", "http://h.example/before/any/group/", false},
		{"§2.1 rule before any group ignored (Bar)", groups, "BarBot", "http://h.example/before/any/group/", false},
		{"§2.1 rule before any group ignored (Baz)", groups, "BazBot", "http://h.example/before/any/group/", false},

		// §2.1, §2.2.4: records that are not group rules (sitemap, unknown names) neither end
		// a group nor start one: the user-agent lines around them share one group.
		{"§2.2.4 sitemap between user-agents (other)", "User-agent: BarBot\nSitemap: https://h.example/sitemap\nUser-agent: *\nDisallow: /\n", "FooBot", "http://h.example/", false},
		{"§2.2.4 sitemap between user-agents (named)", "User-agent: BarBot\nSitemap: https://h.example/sitemap\nUser-agent: *\nDisallow: /\n", "BarBot", "http://h.example/", false},
		{"§2.2.4 unknown line between user-agents (named)", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "FooBot", "http://h.example/", false},
		{"§2.2.4 unknown line between user-agents (other)", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "BarBot", "http://h.example/", false},
		{"§2.2.4 sitemap inside a group", "User-agent: FooBot\nDisallow: /a\nSitemap: https://h.example/s.xml\nDisallow: /b\n", "FooBot", "http://h.example/b", false},
		{"§2.2.4 crawl-delay inside a group", "User-agent: FooBot\nCrawl-delay: 3\nDisallow: /b\n", "FooBot", "http://h.example/b", false},

		// §2.1: record names are case-insensitive.
		{"§2.1 upper-case names allow", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "http://h.example/x/y", true},
		{"§2.1 upper-case names disallow", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "http://h.example/a/b", false},
		{"§2.1 mixed-case names allow", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "http://h.example/x/y", true},
		{"§2.1 mixed-case names disallow", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "http://h.example/a/b", false},

		// §2.2.1: the product token is compared case-insensitively; the value of a
		// user-agent line counts up to its first character that is not a letter, "-" or "_".
		{"§2.2.1 value upper, agent mixed", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "Foo", "http://h.example/x/y", true},
		{"§2.2.1 value upper, agent mixed, disallow", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "Foo", "http://h.example/a/b", false},
		{"§2.2.1 value lower, agent lower", "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n", "foo", "http://h.example/x/y", true},
		{"§2.2.1 value camel, agent lower", "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n", "foo", "http://h.example/a/b", false},
		{"§2.2.1 value with version", "User-Agent: FooBot/2.1\nDisallow: /\n", "foobot", "http://h.example/a", false},
		{"§2.2.1 value with hyphen and underscore", "User-Agent: Foo-Bot_X\nDisallow: /\n", "foo-bot_x", "http://h.example/a", false},
		{"§2.2.1 hyphenated token is its own", "User-Agent: Foo\nDisallow: /\n", "Foo-Bot", "http://h.example/a", true},
		{"§2.2.1 agent string with version", "User-Agent: FooBot\nDisallow: /\n", "FooBot/1.2 (+https://x.example)", "http://h.example/a", false},

		// §2.2.1: no matching group and a "*" group: the "*" group; neither: allowed.
		{"§2.2.1 empty file", "", "FooBot", "http://h.example/x/y", true},
		{"§2.2.1 specific beats *", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", "FooBot", "http://h.example/x/y", false},
		{"§2.2.1 * for others", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", "BarBot", "http://h.example/x/y", true},
		{"§2.2.1 no group applies", "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n", "QuxBot", "http://h.example/x/y", true},
		{"§2.2.1 named group wins, * ignored", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://h.example/x/page", true},
		{"§2.2.1 named group wins, own rule", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://h.example/y/page", false},

		// §2.2.2: paths are compared case-sensitively.
		{"§2.2.2 case-sensitive match", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://h.example/x/y", false},
		{"§2.2.2 case-sensitive miss", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://h.example/x/y", true},

		// §2.2.2: the longest match decides; on equal length allow wins.
		{"§2.2.2 longer disallow", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", "http://h.example/x/page.html", false},
		{"§2.2.2 longer allow", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://h.example/x/page.html", true},
		{"§2.2.2 only the shorter matches", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://h.example/x/", false},
		{"§2.2.2 empty values match nothing", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", "http://h.example/x/page.html", true},
		{"§2.2.2 equal allow wins (/)", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", "http://h.example/x/page.html", true},
		{"§2.2.2 /x vs /x/ on /x", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://h.example/x", false},
		{"§2.2.2 /x vs /x/ on /x/", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://h.example/x/", true},
		{"§2.2.2 equal allow wins (page)", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", "http://h.example/x/page.html", true},
		{"§2.2.2 wildcard counts its octets", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://h.example/page.html", false},
		{"§2.2.2 wildcard rule not matching", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://h.example/page", true},
		{"§2.2.2 longer allow prefix", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://h.example/x/page.html", true},
		{"§2.2.2 wildcard elsewhere", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://h.example/x/y.html", false},

		// §2.2.2: octets outside US-ASCII and reserved characters are compared
		// percent-encoded, so spellings of one URI compare equal.
		{"§2.2.2 query gen-delims raw vs raw", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "http://h.example/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true},
		{"§2.2.2 query raw rule, encoded URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "http://h.example/foo/bar?qux=taz&baz=http%3A%2F%2Ffoo.bar%3Ftar%26par", true},
		{"§2.2.2 query encoded rule, encoded URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http%3A%2F%2Ffoo.bar%3Ftar%26par\n", "FooBot", "http://h.example/foo/bar?qux=taz&baz=http%3A%2F%2Ffoo.bar%3Ftar%26par", true},
		{"§2.2.2 query encoded rule, raw URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http%3A%2F%2Ffoo.bar%3Ftar%26par\n", "FooBot", "http://h.example/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true},
		{"§2.2.2 UTF-8 rule, encoded URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://h.example/foo/bar/%E3%83%84", true},
		{"§2.2.2 UTF-8 rule, UTF-8 URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://h.example/foo/bar/ツ", true},
		{"§2.2.2 encoded rule, encoded URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://h.example/foo/bar/%E3%83%84", true},
		{"§2.2.2 encoded rule, UTF-8 URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://h.example/foo/bar/ツ", true},
		{"§2.2.2 lower-case escape in rule", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n", "FooBot", "http://h.example/foo/bar/%E3%83%84", true},
		{"§2.2.2 lower-case escape in URL", "User-agent: FooBot\nDisallow: /\nAllow: /a%AAb\n", "FooBot", "http://h.example/a%aab", true},
		{"§2.2.2 encoded unreserved rule, raw URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://h.example/foo/bar/baz", true},
		{"§2.2.2 encoded unreserved rule, encoded URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://h.example/foo/bar/%62%61%7A", true},
		{"§2.2.2 raw rule, encoded unreserved URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/baz\n", "FooBot", "http://h.example/foo/bar/%62%61%7A", true},
		{"§2.2.2 encoded slash in a path is not a slash", "User-agent: FooBot\nDisallow: /a/b\n", "FooBot", "http://h.example/a%2Fb", true},

		// §2.2.3: "*" and "$" are operators; written "%2A" and "%24" they are the characters.
		{"§2.2.3 %2A is a literal star (raw URL)", "User-agent: FooBot\nDisallow: /path/file-with-%2A.html\n", "FooBot", "http://h.example/path/file-with-*.html", false},
		{"§2.2.3 %2A is a literal star (encoded URL)", "User-agent: FooBot\nDisallow: /path/file-with-%2A.html\n", "FooBot", "http://h.example/path/file-with-%2A.html", false},
		{"§2.2.3 %2A is no wildcard", "User-agent: FooBot\nDisallow: /path/file-with-%2A.html\n", "FooBot", "http://h.example/path/file-with-x.html", true},
		{"§2.2.3 %24 is a literal dollar (raw URL)", "User-agent: FooBot\nDisallow: /path/price%24.html\n", "FooBot", "http://h.example/path/price$.html", false},
		{"§2.2.3 %24 is a literal dollar (encoded URL)", "User-agent: FooBot\nDisallow: /path/price%24.html\n", "FooBot", "http://h.example/path/price%24.html", false},
		{"§2.2.3 %24 is no anchor", "User-agent: FooBot\nDisallow: /path/price%24.html\n", "FooBot", "http://h.example/path/price", true},
		{"§2.2.3 both literals", "User-agent: FooBot\nDisallow: /buy/%2A%24\n", "FooBot", "http://h.example/buy/*$", false},
		{"§2.2.3 both literals encoded", "User-agent: FooBot\nDisallow: /buy/%2A%24\n", "FooBot", "http://h.example/buy/%2A%24", false},
		{"§2.2.3 both literals, no wildcard", "User-agent: FooBot\nDisallow: /buy/%2A%24\n", "FooBot", "http://h.example/buy/anything", true},
		{"§2.2.3 star", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://h.example/foo/bar/quz", false},
		{"§2.2.3 star no match", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://h.example/foo/quz", true},
		{"§2.2.3 star double slash", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://h.example/foo//quz", true},
		{"§2.2.3 star other dir", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://h.example/foo/bax/quz", true},
		{"§2.2.3 anchor exact", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://h.example/foo/bar", false},
		{"§2.2.3 anchor longer allow", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://h.example/foo/bar/qux", true},
		{"§2.2.3 anchor slash", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://h.example/foo/bar/", true},
		{"§2.2.3 anchor deeper", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://h.example/foo/bar/baz", true},
		{"§2.2.3 comment line and comment tail", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://h.example/foo/bar", true},
		{"§2.2.3 rule cut at its comment", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://h.example/foo/quz", false},

		// §2.2.2: /robots.txt itself is always allowed.
		{"§2.2.2 robots.txt allowed", fooDisallowAll, "FooBot", "http://h.example/robots.txt", true},

		// §2.2: line ends may be LF, CR or CR LF, mixed; the last line needs no end.
		{"§2.2 CR LF", "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n", "bar", "http://h.example/x", false},
		{"§2.2 CR alone", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r", "bar", "http://h.example/x", false},
		{"§2.2 mixed, no final end", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", "bar", "http://h.example/x", false},
		{"§2.2 a user-agent after a rule ends the group", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n", "foo", "http://h.example/x", true},

		// §2.2: a UTF-8 byte order mark before the first record is skipped.
		{"§2.2 BOM", "\xEF\xBB\xBFUser-Agent: foo\nDisallow: /x\n", "foo", "http://h.example/x", false},
		{"§2.2 BOM in the middle is garbage", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /x\n", "foo", "http://h.example/x", true},
	})
}

// TestGooglePractice restates what Google documents its crawler doing where the RFC leaves
// room, or beyond it.
func TestGooglePractice(t *testing.T) {
	const fooDisallowAll = "user-agent: FooBot\ndisallow: /\n"
	doc := func(allow string) string { return "user-agent: FooBot\ndisallow: /\nallow: " + allow + "\n" }
	var cases []conformanceCase
	add := func(name, body string, want bool, urls ...string) {
		for _, u := range urls {
			cases = append(cases, conformanceCase{name, body, "FooBot", u, want})
		}
	}
	// Path matching examples of Google's robots.txt documentation.
	add("google doc /fish", doc("/fish"), true, "/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.html?id=anything")
	add("google doc /fish no", doc("/fish"), false, "/bar", "/Fish.asp", "/catfish", "/?id=fish")
	add("google doc /fish*", doc("/fish*"), true, "/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.html?id=anything")
	add("google doc /fish* no", doc("/fish*"), false, "/bar", "/Fish.bar", "/catfish", "/?id=fish")
	add("google doc /fish/", doc("/fish/"), true, "/fish/", "/fish/salmon", "/fish/?salmon", "/fish/salmon.html", "/fish/?id=anything")
	add("google doc /fish/ no", doc("/fish/"), false, "/bar", "/fish", "/fish.html", "/Fish/Salmon.html")
	add("google doc /*.php", doc("/*.php"), true, "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "//folder/any.php.file.html", "/filename.php/", "/index?f=filename.php/")
	add("google doc /*.php no", doc("/*.php"), false, "/bar", "/php/", "/index?php", "/windows.PHP")
	add("google doc /*.php$", doc("/*.php$"), true, "/filename.php", "/folder/filename.php")
	add("google doc /*.php$ no", doc("/*.php$"), false, "/bar", "/filename.php?parameters", "/filename.php/", "/filename.php5", "/php/", "/filename?php", "/aaaphpaaa", "//windows.PHP")
	add("google doc /fish*.php", doc("/fish*.php"), true, "/fish.php", "/fishheads/catfish.php?parameters")
	add("google doc /fish*.php no", doc("/fish*.php"), false, "/bar", "/Fish.PHP")
	add("google precedence /p", "user-agent: FooBot\nallow: /p\ndisallow: /\n", true, "http://example.com/page")
	add("google precedence equal", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", true, "http://example.com/folder/page")
	add("google precedence wildcard", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", false, "http://example.com/page.htm")
	add("google precedence /$", "user-agent: FooBot\nallow: /$\ndisallow: /\n", true, "http://example.com/")
	add("google precedence /$ page", "user-agent: FooBot\nallow: /$\ndisallow: /\n", false, "http://example.com/page.html")

	// A missing colon is assumed when a line is two words ("disallow /").
	add("google missing colon", "user-agent FooBot\ndisallow /\n", false, "http://h.example/x/y")

	// "index.html" allowed at the end of an allow pattern allows its directory too.
	const index = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n"
	cases = append(cases,
		conformanceCase{"google index.html: directory", index, "foobot", "http://foo.com/allowed-slash/", true},
		conformanceCase{"google index.html: not a prefix", index, "foobot", "http://foo.com/allowed-slash/index.htm", false},
		conformanceCase{"google index.html: itself", index, "foobot", "http://foo.com/allowed-slash/index.html", true},
		conformanceCase{"google index.html: other", index, "foobot", "http://foo.com/anyother-url", false},
		conformanceCase{"google index.html: directory is exact", index, "foobot", "http://foo.com/allowed-slash/other", false},
	)

	// Only one group applies: the most specific one for the agent.
	multi := "user-agent: googlebot-news\nDisallow: /bar/\n\nuser-agent: *\nDisallow: /baz/\n\n\nuser-agent: googlebot\nDisallow: /foo/\n"
	cases = append(cases,
		conformanceCase{"google one group: news bar", multi, "googlebot-news", "http://h.example/bar/", false},
		conformanceCase{"google one group: news foo", multi, "googlebot-news", "http://h.example/foo/", true},
		conformanceCase{"google one group: news baz", multi, "googlebot-news", "http://h.example/baz/", true},
		conformanceCase{"google one group: bot foo", multi, "googlebot", "http://h.example/foo/", false},
		conformanceCase{"google one group: bot baz", multi, "googlebot", "http://h.example/baz/", true},
	)

	// A user-agent value counts up to its first space: "Foo Bar" names Foo. The crawler's
	// own name must be a product token: "Foo Bar" is none, so only "*" speaks to it.
	upToSpace := "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n"
	cases = append(cases,
		conformanceCase{"google value up to space", upToSpace, "Foo", "http://h.example/x/y", true},
		conformanceCase{"google agent with a space is no token", upToSpace, "Foo Bar", "http://h.example/x/y", false},
		conformanceCase{"google agent with a star is no token", upToSpace, "Foo*", "http://h.example/x/y", false},
	)

	// Empty inputs: an empty file allows all; an empty agent is matched by no named group;
	// an empty URL is the root path.
	cases = append(cases,
		conformanceCase{"google empty file", "", "FooBot", "", true},
		conformanceCase{"google empty agent", fooDisallowAll, "", "", true},
		conformanceCase{"google empty URL", fooDisallowAll, "FooBot", "", false},
		conformanceCase{"google all empty", "", "", "", true},
	)

	// Lines are cut after 2083×8 octets, so an overlong rule is matched as its cut prefix.
	const lineMax = 2083 * 8
	long := "/x/" + strings.Repeat("a", lineMax-3-len("disallow: ")+1-3)
	cut := "user-agent: FooBot\ndisallow: " + long + "/qux\n"
	cases = append(cases,
		conformanceCase{"google long line: no match", cut, "FooBot", "http://h.example/fux", true},
		conformanceCase{"google long line: cut rule matches", cut, "FooBot", "http://h.example" + long + "/fux", false},
	)
	longA := "/x/" + strings.Repeat("a", lineMax-3-len("allow: ")+1-3)
	longB := "/x/" + strings.Repeat("b", lineMax-3-len("allow: ")+1-3)
	cutAllow := "user-agent: FooBot\ndisallow: /\nallow: " + longA + "/qux\nallow: " + longB + "/qux\n"
	cases = append(cases,
		conformanceCase{"google long allow: root", cutAllow, "FooBot", "http://h.example/", false},
		conformanceCase{"google long allow: whole", cutAllow, "FooBot", "http://h.example" + longA + "/qux", true},
		conformanceCase{"google long allow: cut", cutAllow, "FooBot", "http://h.example" + longB + "/fux", true},
	)

	// Common misspellings of disallow are read as disallow.
	add("google misspelling", "user-agent: FooBot\ndissallow: /a\ndissalow: /b\ndisalow: /c\ndiasllow: /d\ndisallaw: /e\n", false, "/a", "/b", "/c", "/d", "/e")
	runConformance(t, cases)
}

func TestPathQueryOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "/"},
		{"http://www.example.com", "/"},
		{"http://www.example.com/", "/"},
		{"http://www.example.com/a", "/a"},
		{"http://www.example.com/a/", "/a/"},
		{"http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/"},
		{"http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"HTTPS://user:pw@www.example.com:8080/a?b", "/a?b"},
		{"example.com", "/"},
		{"example.com/", "/"},
		{"example.com/a", "/a"},
		{"example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"a", "/"},
		{"a/", "/"},
		{"/a", "/a"},
		{"a/b", "/b"},
		{"example.com?a", "/?a"},
		{"example.com/a;b#c", "/a;b"},
		{"//a/b/c", "/b/c"},
		{"/a?b#c", "/a?b"},
	} {
		if got := PathQueryOf(c.in); got != c.want {
			t.Errorf("PathQueryOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
