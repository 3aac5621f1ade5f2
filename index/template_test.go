package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/parse"
)

func TestSiteTemplates(t *testing.T) {
	st := newSiteTemplates()
	for page := 1; page <= 5; page++ {
		blocks := []string{"Popular topics: wings, nozzles", fmt.Sprint("Abstract ", page), "Popular topics: wings, nozzles"}
		got := st.observe("a.test", blocks)
		want := page > templatePages // on templatePages earlier pages (twice on one page is once)
		if got[0] != want || got[2] != want || got[1] {
			t.Errorf("page %d: template %v, want the repeated block %v and the page's own false", page, got, want)
		}
	}
	// Another site has its own template.
	if got := st.observe("b.test", []string{"Popular topics: wings, nozzles"}); got[0] {
		t.Error("a block of a.test's template counted on b.test")
	}
	// Bounded: hosts and blocks per host.
	for i := range templateHosts + 10 {
		st.observe(fmt.Sprintf("h%d.test", i), []string{"x"})
	}
	if len(st.hosts) > templateHosts {
		t.Errorf("%d hosts remembered, at most %d", len(st.hosts), templateHosts)
	}
	for i := range templateBlocks + 10 {
		st.observe("big.test", []string{fmt.Sprint("block ", i)})
	}
	if n := len(st.hosts["big.test"].seen); n > templateBlocks {
		t.Errorf("%d blocks remembered for one host, at most %d", n, templateBlocks)
	}
}

// TestPageTextLeavesOutSiteTemplate: a CMS page of plain <div>s loses its menu and
// related links (link dense) at once, and its "popular topics" box once the site's
// earlier pages have shown it is the site's.
func TestPageTextLeavesOutSiteTemplate(t *testing.T) {
	st := newSiteTemplates()
	page := func(n int) *parse.Page {
		html := fmt.Sprintf(`<div class="menu"><a href="/">Home</a> | <a href="/list">Browse</a></div>
<div id="content"><h2>Abstract %d</h2><div class="text">Text of abstract %d about shock waves.</div>
<div class="related"><ul><li><a href="/doc/%d">Title of another abstract</a></li></ul></div></div>
<div id="sidebar"><h3>Popular topics</h3><p>Boundary layers · Heat transfer</p></div>`, n, n, n+7)
		p, err := parse.Parse([]byte(html), fmt.Sprintf("http://portal.test/doc/%d", n), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for n := 1; n <= templatePages+1; n++ {
		got := pageText(page(n), st, "portal.test")
		want := []string{fmt.Sprint("Abstract ", n), fmt.Sprintf("Text of abstract %d about shock waves.", n)}
		if n <= templatePages {
			want = append(want, "Popular topics", "Boundary layers · Heat transfer")
		}
		if !slices.Equal(strings.Split(got, "\n"), want) {
			t.Errorf("page %d: %q, want %q", n, got, want)
		}
	}
}
