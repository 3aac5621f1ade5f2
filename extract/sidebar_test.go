package extract

import (
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"
)

func TestSideContainer(t *testing.T) {
	tests := []struct {
		html string
		want bool
	}{
		{`<aside>x</aside>`, true},
		{`<footer>x</footer>`, true},
		{`<div id="sidebar">x</div>`, true},
		{`<div class="section sidebar">x</div>`, true},
		{`<div id="sidebar-wrapper">x</div>`, true},
		{`<div class="Sidebar2">x</div>`, true},
		{`<div id="footer-2-1">x</div>`, true},
		{`<div class="side-bar">x</div>`, true},
		{`<div class="has-sidebar">x</div>`, false}, // a layout wrapper beside a sidebar
		{`<div id="contentwithsidebar">x</div>`, false},
		{`<div class="post-footer-line">x</div>`, false},
		{`<div class="widget">x</div>`, false}, // Blogger's posts are a widget too
		{`<div class="post">x</div>`, false},
	}
	for _, tt := range tests {
		if got := sideContainer(firstInBody(t, tt.html)); got != tt.want {
			t.Errorf("sideContainer(%s) = %v, want %v", tt.html, got, tt.want)
		}
	}
}

func TestBodySides(t *testing.T) {
	const title = "Dude Craft: Not a Photograph"
	post := `<div class="post"><h3>Not a Photograph</h3><p>Mind blown.</p></div>`
	about := `<p>I am the creator and writer of this blog, a maker, writer and ukulele player living in Durham with four dogs.</p><p>Write to me any time about crafts, drawings and the things you make.</p>`
	long := func(day string) string {
		return "<p>The council of the small town met on " + day + " evening and voted, after a debate of three hours that ran well past midnight, to close the old stone bridge over the river for repairs until the spring, to send the traffic over the ford and to ask the county for money.</p>"
	}
	para := "<p>The council met on Tuesday and voted to close the old bridge for repairs until the spring.</p>"
	tests := []struct {
		name, html, title string
		want              int // side containers returned
	}{
		{"a body from the sidebar", post + `<div id="sidebar"><div class="widget">` + about + `</div></div>`, title, 1},
		{"a body from the footer", post + `<footer>` + about + `</footer>`, title, 1},
		{"without a title nothing tells the sidebar from the post", post + `<div id="sidebar">` + about + `</div>`, "", 0},
		{"a body beside the sidebar", `<div class="post">` + about + `</div><div id="sidebar"><p>Archive</p></div>`, title, 0},
		{"a layout wrapper named after its sidebar holds the headline", `<div class="sidebar1" id="layout">` + post + about + `</div>`, title, 0},
		{"and so does a post marked up as an aside", `<aside class="blogPost"><h3>Not a Photograph</h3>` + about + `</aside>`, title, 0},
		{"inside the wrapper the sidebar is found", `<div class="sidebar1" id="layout">` + post + `<div id="sidebar-right">` + about + `</div></div>`, title, 1},
		{"a body mostly in the sidebar", post + para + `<div id="sidebar">` + about + `</div>`, title, 1},
		{"a layout wrapper named after its sidebar holds the page's <main>", `<div class="container_wrap sidebar_right"><main>` + about + `</main><aside><p>Archive</p></aside></div>`, title, 0},
		{"and role=main", `<div class="sidebar-right" id="main"><div role="main">` + about + `</div></div>`, title, 0},
		{"a layout wrapper holding the article's prose", `<div class="sidebar-and-content-body">` + long("Monday") + long("Tuesday") + long("Friday") + `</div>`, title, 0},
		{"a sidebar holding two long paragraphs of the body", post + `<div id="sidebar">` + long("Monday") + long("Tuesday") + about + `</div>`, title, 1},
		{"a sidebar holding little of the body", `<div class="post">` + strings.Repeat(para, 6) + `</div><aside>` + about + `</aside>`, title, 0},
	}
	for _, tt := range tests {
		doc := parsePage(t, "<html><body>"+tt.html+"</body></html>")
		// The body the extractors took: the about box and the prose, where there is some.
		var bs []Block
		for _, b := range blocks(doc, nil) {
			if strings.Contains(b.Text, "ukulele") || strings.Contains(b.Text, "crafts") || strings.Contains(b.Text, "council") {
				bs = append(bs, b)
			}
		}
		if got := len(bodySides(doc, bs, tt.title)); got != tt.want {
			t.Errorf("%s: %d side containers, want %d", tt.name, got, tt.want)
		}
	}
}

func TestNamesTitle(t *testing.T) {
	tests := []struct {
		heading, title string
		want           bool
	}{
		{"Not a Photograph", "Dude Craft: Not a Photograph", true},
		{"Dude Craft: Not a Photograph", "Not a Photograph", true},
		{"Fireplace Grooves", "Fireplace Grooves", true},
		{"Archive", "Archive", true},
		{"Craft", "Dude Craft: Not a Photograph", false}, // one word of a longer title
		{"About me", "Dude Craft: Not a Photograph", false},
		{"The Style Scout", "THE STYLE SCOUT - London Street Fashion: In the pink...", false}, // the blog's name in its sidebar: under half the title
		{"a Photograph Not", "Not a Photograph", false},
	}
	for _, tt := range tests {
		if got := namesTitle(Words(tt.heading), Words(tt.title)); got != tt.want {
			t.Errorf("namesTitle(%q, %q) = %v, want %v", tt.heading, tt.title, got, tt.want)
		}
	}
}

// firstInBody is the first element of the page whose body is html.
func firstInBody(t *testing.T, html string) *nethtml.Node {
	t.Helper()
	var el *nethtml.Node
	eachElement(parsePage(t, "<body>"+html), func(n *nethtml.Node) bool {
		if el == nil && n.Parent != nil && n.Parent.Data == "body" {
			el = n
		}
		return el == nil
	})
	return el
}

func parsePage(t *testing.T, page string) *nethtml.Node {
	t.Helper()
	doc, err := nethtml.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Dragnet's R570 is a blog post of five links under a headline. go-trafilatura and
// Readability both took the sidebar's "About me" box for the article and agreed on it
// (F1 0); read without the sidebar, the page gives the post.
func TestBodyReadsPastTheSidebar(t *testing.T) {
	a, err := mustNew(t, Options{}).Extract(dragnetPage(t, "R570"), "")
	if err != nil {
		t.Fatal(err)
	}
	text := a.Text()
	if !strings.Contains(text, "18 hilarious London Tube prank signs") || strings.Contains(text, "Location: New York") {
		t.Errorf("body (from %s) is not the post:\n%s", a.Sources["body"], text)
	}
}
