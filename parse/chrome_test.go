package parse

import (
	"strings"
	"testing"
)

// TestChrome: text in the site's navigation, banner, footer and side boxes is marked as
// chrome and left out of MainText; headers and footers of an article or section are the
// page's own; a page without chrome, or with nothing else, keeps all its text.
func TestChrome(t *testing.T) {
	tests := []struct {
		name, html string
		chrome     []string // blocks marked chrome
		main       string
	}{
		{
			name: "landmarks",
			html: `<body><header><a href="/">Site</a> <p>Tagline</p></header>
				<nav><ul><li><a href="/a">Home</a><li><a href="/b">News</a></ul></nav>
				<main><h1>Floods</h1><p>The river rose.</p></main>
				<aside><p>Latest: 5 new posts</p></aside>
				<footer><p>© 2024 Site · v1.2</p></footer></body>`,
			chrome: []string{"Site", "Tagline", "Home", "News", "Latest: 5 new posts", "© 2024 Site · v1.2"},
			main:   "Floods\nThe river rose.",
		},
		{
			name: "article header and footer are content",
			html: `<article><header><h1>Floods</h1><p>By Ana</p></header><p>The river rose.</p>
				<footer>Filed under weather</footer></article><footer>Site footer</footer>`,
			chrome: []string{"Site footer"},
			main:   "Floods\nBy Ana\nThe river rose.\nFiled under weather",
		},
		{
			name:   "section header is content, nav inside it is not",
			html:   `<section><header>Part 1<nav>Contents</nav></header><p>Text<br>more</p></section>`,
			chrome: []string{"Contents"},
			main:   "Part 1\nText\nmore",
		},
		{
			name: "no chrome",
			html: `<h1>Title</h1><p>Body text.</p>`,
			main: "Title\nBody text.",
		},
		{
			name:   "only chrome",
			html:   `<nav>Home News</nav><footer>Contact</footer>`,
			chrome: []string{"Home News", "Contact"},
			main:   "Home News\nContact",
		},
		{
			name:   "text after a closed nav",
			html:   `<div><nav><ul><li>Home</ul></nav>Plain text<p>para</p></div>`,
			chrome: []string{"Home"},
			main:   "Plain text\npara",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg, err := Parse([]byte(tt.html), "http://example.test/", Options{})
			if err != nil {
				t.Fatal(err)
			}
			var chrome []string
			for _, b := range pg.Blocks {
				if b.Chrome {
					chrome = append(chrome, b.Text)
				}
			}
			if strings.Join(chrome, "|") != strings.Join(tt.chrome, "|") {
				t.Errorf("chrome blocks %q, want %q", chrome, tt.chrome)
			}
			if got := pg.MainText(); got != tt.main {
				t.Errorf("MainText %q, want %q", got, tt.main)
			}
		})
	}
}

// TestMainTextOneAllocation: a page with chrome has its main text built in one
// allocation, however many blocks it has.
func TestMainTextOneAllocation(t *testing.T) {
	var b strings.Builder
	b.WriteString("<body><nav><a href=/a>Home</a></nav><main>")
	for i := range 400 {
		b.WriteString("<p>Paragraph " + strings.Repeat("of the page's own text ", 1+i%7) + "</p>")
	}
	b.WriteString("</main><footer>Site footer</footer></body>")
	pg, err := Parse([]byte(b.String()), "http://example.test/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if main := pg.MainText(); strings.Contains(main, "Home") || !strings.HasPrefix(main, "Paragraph") {
		t.Fatalf("MainText %.80q: the navigation is in it", main)
	}
	if n := testing.AllocsPerRun(20, func() { pg.MainText() }); n != 1 {
		t.Errorf("%v allocations for MainText, want 1", n)
	}
}
