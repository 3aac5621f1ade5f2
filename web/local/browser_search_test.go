package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/web"
)

// scriptTitle is the title of a crawled page that tries to run code in the UI.
const scriptTitle = `<script>window.pwned=1</script> solar`

// solarWeb is a test web in which every host has three pages about solar energy, linked
// from its home page and to the next host's first solar page (so they have in-links with
// anchor text), and host site00 has a page whose title is a script tag.
func solarWeb(t testing.TB, hosts int) *testweb.Web {
	t.Helper()
	n := 0
	w := testweb.New(testweb.Config{Seed: 9, Hosts: hosts, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra: func(host string, _ *rand.Rand) []testweb.Page {
			next := fmt.Sprintf("http://www.site%02d.test/solar/0.html", (n+1)%hosts)
			var pages []testweb.Page
			for i := range 3 {
				pages = append(pages, testweb.Page{Path: fmt.Sprintf("/solar/%d.html", i),
					Title: fmt.Sprintf("Solar energy report %d of %s", i, host),
					Text:  []string{"Solar panels turn sunlight into electricity.", fmt.Sprintf("Report %d on solar energy from %s.", i, host)},
					Links: []string{next}})
			}
			if n == 0 {
				pages = append(pages, testweb.Page{Path: "/solar/script.html", Title: scriptTitle,
					Text: []string{"A page whose title is markup; solar energy too."}, Links: []string{next}})
			}
			n++
			return pages
		}})
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// crawledServer crawls w into a fresh data directory through the server's own runner
// (which indexes and records links as it goes, as sonda serve does) and serves the result.
func crawledServer(t *testing.T, w *testweb.Web) (*Data, string) {
	t.Helper()
	cfg := crawlConfig(t, w, 0)
	d, base := serve(t, cfg)
	if err := d.Runner.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	wait(t, d.Runner)
	return d, base
}

// TestBrowserSearch walks the UI as a user would, over a real crawl indexed in Bleve with
// its link graph in Pebble: search from the home page, see ranked results with their
// date and in-links, page through them, open a cached document with the query
// highlighted, open a page's relations, filter by a facet; a crawled title that is a
// script tag shows as text and runs nothing; a malformed query is explained.
func TestBrowserSearch(t *testing.T) {
	w := solarWeb(t, 6)
	d, base := crawledServer(t, w)
	if n := d.Index.Stats().Documents; n < 19 {
		t.Fatalf("%d documents indexed; the crawl should have indexed the 19 solar pages and more", n)
	}
	ctx := tab(t)

	// Search from the home page, with the keyboard.
	do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "sunlight electricity\r"), chromedp.WaitVisible(chromedp.CSS("ol.hits")))
	summary := eval[string](t, ctx, `document.querySelector('#results-heading').textContent`)
	if !strings.Contains(summary, "Results 1–10 of 18") {
		t.Fatalf("results heading %q; want the 18 solar reports", summary)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('ol.hits > li.hit').length`); n != 10 {
		t.Fatalf("%d hits on page 1", n)
	}
	meta := eval[string](t, ctx, `document.querySelector('li.hit .meta').textContent`)
	for _, want := range []string{"#1", "score", "updated " + time.Now().UTC().Format("2006-01-02"), "in-link"} {
		if !strings.Contains(meta, want) {
			t.Errorf("first hit's details %q lack %q", meta, want)
		}
	}

	// The script title is text, visible, and ran nothing.
	do(t, ctx, chromedp.Navigate(base+"/search?q=markup"), chromedp.WaitVisible(chromedp.CSS("ol.hits")))
	titles := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.hit-title a')).map(a => a.textContent)`)
	if len(titles) != 1 || titles[0] != scriptTitle {
		t.Errorf("titles %q; want the script title shown as text", titles)
	}
	if eval[bool](t, ctx, `window.pwned !== undefined`) || eval[int](t, ctx, `document.querySelectorAll('.hit-title script').length`) != 0 {
		t.Fatal("a crawled title became a script element")
	}
	if !eval[bool](t, ctx, `(() => { const r = document.querySelector('.hit-title a').getBoundingClientRect(); return r.width > 0 && r.height > 0 })()`) {
		t.Error("the script title is not visible")
	}
	do(t, ctx, chromedp.Click(chromedp.CSS("a.cached")), chromedp.WaitVisible(chromedp.CSS("#doc-title")))
	if got := eval[string](t, ctx, `document.querySelector('#doc-title').textContent`); got != scriptTitle || eval[bool](t, ctx, `window.pwned !== undefined`) {
		t.Errorf("document view title %q (or it ran)", got)
	}

	// Paginate.
	do(t, ctx, chromedp.Navigate(base+"/search?q=sunlight+electricity"), chromedp.WaitVisible(chromedp.CSS("a[rel=next]")),
		chromedp.Click(chromedp.CSS("a[rel=next]")), chromedp.WaitVisible(chromedp.CSS(`ol.hits[start="11"]`)))
	if n := eval[int](t, ctx, `document.querySelectorAll('ol.hits > li.hit').length`); n != 8 {
		t.Errorf("%d hits on page 2; want 8", n)
	}
	if cur := eval[string](t, ctx, `document.querySelector('.pager a[aria-current=page]').textContent`); cur != "2" {
		t.Errorf("current page %q", cur)
	}
	if !strings.Contains(eval[string](t, ctx, `document.querySelector('li.hit .rank').textContent`), "#11") {
		t.Error("page 2 does not start at rank 11")
	}

	// Open a document: cached text with the query words highlighted.
	do(t, ctx, chromedp.Click(chromedp.CSS("li.hit a.cached")), chromedp.WaitVisible(chromedp.CSS("#doc-body")))
	marks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#doc-body mark')).map(m => m.textContent.toLowerCase())`)
	if len(marks) < 2 || !contains(marks, "sunlight") || !contains(marks, "electricity") {
		t.Errorf("highlighted words %q; want sunlight and electricity", marks)
	}

	// Relations of a solar page: in-links from the previous host's solar pages.
	target := "http://www.site01.test/solar/0.html"
	do(t, ctx, chromedp.Navigate(base+"/search?q="+strings.ReplaceAll(`"report 0 of www.site01.test"`, " ", "+")),
		chromedp.WaitVisible(chromedp.CSS("a.inlinks")), chromedp.Click(chromedp.CSS("a.inlinks")), chromedp.WaitVisible(chromedp.CSS("#in-links")))
	in := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#in-links li a')).map(a => a.textContent)`)
	if !contains(in, "http://www.site00.test/solar/0.html") || !contains(in, "http://www.site01.test/") {
		t.Errorf("in-links of %s: %q", target, in)
	}
	out := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#out-links li a')).map(a => a.textContent)`)
	if !contains(out, "http://www.site02.test/solar/0.html") {
		t.Errorf("out-links of %s: %q", target, out)
	}
	anchors := eval[string](t, ctx, `document.querySelector('#in-links').textContent`)
	if !strings.Contains(anchors, "Solar energy report 0 of www.site01.test") {
		t.Errorf("in-link anchors not shown: %q", anchors)
	}

	// A site facet filters the results to that host, and offers its removal.
	do(t, ctx, chromedp.Navigate(base+"/search?q=solar"), chromedp.WaitVisible(chromedp.CSS(`.facet[data-facet="site"] a`)),
		chromedp.Click(chromedp.CSS(`.facet[data-facet="site"] a`)), chromedp.WaitVisible(chromedp.CSS(`.facet a.active`)))
	hosts := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('li.hit .host')).map(h => h.textContent)`)
	for _, h := range hosts {
		if h != hosts[0] {
			t.Errorf("facet filter left hosts %q", hosts)
			break
		}
	}

	// A malformed query is explained, with the place marked.
	do(t, ctx, chromedp.Navigate(base+"/search?q=solar+(energy"), chromedp.WaitVisible(chromedp.CSS("#query-error")))
	if msg := eval[string](t, ctx, `document.querySelector('#query-error').textContent`); msg == "" {
		t.Error("no message for a malformed query")
	}
}

// TestBrowserKeyboardAndPhone: the skip link comes first in the tab order and moves focus to
// the content; on a phone-sized screen nothing scrolls sideways.
func TestBrowserKeyboardAndPhone(t *testing.T) {
	w := solarWeb(t, 3)
	_, base := crawledServer(t, w)
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/search?q=solar"), chromedp.WaitVisible(chromedp.CSS("ol.hits")), chromedp.KeyEvent("\t"))
	if cls := eval[string](t, ctx, `document.activeElement.className`); cls != "skip" {
		t.Fatalf("first Tab focuses %q; want the skip link", cls)
	}
	if !eval[bool](t, ctx, `document.activeElement.getBoundingClientRect().top >= 0`) {
		t.Error("the focused skip link is off screen")
	}
	do(t, ctx, chromedp.KeyEvent("\r"))
	poll(t, ctx, "focus on the content", `document.activeElement.id === 'main'`, 5*time.Second)
	do(t, ctx, chromedp.KeyEvent("\t"))
	if tag := eval[string](t, ctx, `document.activeElement.tagName + ' ' + (document.activeElement.closest('ol.hits') ? 'hit' : '')`); tag != "A hit" {
		t.Errorf("after the skip link, Tab goes to %q; want the first result", tag)
	}
	if !eval[bool](t, ctx, `getComputedStyle(document.activeElement).outlineStyle !== 'none'`) {
		t.Error("the focused link has no visible outline")
	}
	for _, path := range []string{"/", "/search?q=solar", "/dashboard", "/relations?url=http://www.site01.test/solar/0.html", "/doc?id=http://www.site00.test/solar/0.html&q=solar"} {
		do(t, ctx, chromedp.EmulateViewport(375, 740, chromedp.EmulateScale(2)), chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS("main")))
		if wide := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`); wide {
			t.Errorf("%s scrolls sideways on a 375px screen (%d px wide)", path, eval[int](t, ctx, `document.documentElement.scrollWidth`))
		}
	}
}
