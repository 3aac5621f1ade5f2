package robots

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func readTypical(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/typical.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// maxRobots builds a file of about MaxSize: one "*" group with thousands of
// literal and wildcard rules, the worst a site can make us hold per host.
func maxRobots() []byte {
	var b strings.Builder
	b.WriteString("user-agent: *\n")
	for i := 0; b.Len() < MaxSize-64; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "disallow: /section-%d/archive/%d/\n", i%97, i)
		case 1:
			fmt.Fprintf(&b, "allow: /section-%d/archive/%d/public\n", i%97, i)
		case 2:
			fmt.Fprintf(&b, "disallow: /*?*param%d=\n", i)
		default:
			fmt.Fprintf(&b, "disallow: /files/*.ext%d$\n", i)
		}
	}
	return []byte(b.String())
}

// TestTypicalFile pins a few decisions on the benchmark file, so the
// benchmarks measure a file that parses as intended.
func TestTypicalFile(t *testing.T) {
	r := Parse(readTypical(t))
	if s := r.Stats(); s.Ignored != 0 || s.Groups != 9 {
		t.Errorf("typical.txt: %d groups, %d ignored lines (%v)", s.Groups, s.Ignored, s.Problems)
	}
	runChecks(t, r, []check{
		{"SondaBot/0.1", "/news/2026/03/some-story", true},
		{"SondaBot/0.1", "/live/now", false},
		{"SondaBot/0.1", "/clip.mp4", false},
		{"OtherBot", "/news/drafts/x", false},
		{"OtherBot", "/news/story?utm_source=x", false},
		{"OtherBot", "/sitemap-news.xml", true},
		{"OtherBot", "/feed.xml", false},
		{"GPTBot", "/news/", false},
		{"Googlebot", "/news/drafts/x", true},
	})
	if d, ok := r.Group("sondabot").CrawlDelay(); !ok || d.Seconds() != 2.5 {
		t.Errorf("crawl-delay = %v, %v", d, ok)
	}
	if n := len(r.Sitemaps()); n != 13 {
		t.Errorf("%d sitemaps, want 13", n)
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"typical-5KB", readTypical(b)},
		{"max-500KiB", maxRobots()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(bc.body)
			}
		})
	}
}

func BenchmarkAllowed(b *testing.B) {
	typical := Parse(readTypical(b))
	typicalPaths := []string{
		"/news/2026/03/01/some-long-story-slug-about-things",
		"/sport/football/results?sort=date&page=2",
		"/live/blog/123",
		"/search?q=vertical+search",
		"/culture/caf%C3%A9-review",
		"/opinion/ツ-column",
	}
	b.Run("typical", func(b *testing.B) {
		g := typical.Group("SondaBot/0.1")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			g.Allowed(typicalPaths[i%len(typicalPaths)])
			i++
		}
	})
	b.Run("typical-star-group", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			typical.Allowed("OtherBot/2.0", typicalPaths[i%len(typicalPaths)])
			i++
		}
	})

	many := Parse(maxRobots())
	b.Run(fmt.Sprintf("many-rules-%d", len(many.Group("x").Rules())), func(b *testing.B) {
		// No rule matches, so every rule is tried.
		g := many.Group("x")
		b.ReportAllocs()
		for b.Loop() {
			g.Allowed("/unmatched/path/with/some/depth.html")
		}
	})

	// Patterns built to make a backtracking matcher explode: many stars
	// that each can match at thousands of places, and a tail that never
	// matches, against a long path of the same octet.
	longPath := "/" + strings.Repeat("a", 8000)
	for _, bc := range []struct{ name, pattern string }{
		{"pathological-100-stars", "/*" + strings.Repeat("a*", 100) + "b"},
		{"pathological-anchored", "/*" + strings.Repeat("a*", 100) + "b$"},
		{"pathological-long-segment", "/*" + strings.Repeat("a", 60) + "b"},
	} {
		g := Parse([]byte("user-agent: *\ndisallow: " + bc.pattern + "\n")).Group("x")
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(longPath)))
			for b.Loop() {
				if !g.Allowed(longPath) {
					b.Fatal("pattern unexpectedly matched")
				}
			}
		})
	}
}
