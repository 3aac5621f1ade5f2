package local

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
	"github.com/sonda-search/sonda/geo/geoweb"
	"github.com/sonda-search/sonda/internal/shareddata"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/web"
)

// geoServer crawls the geo test web through the server's runner (geo.enabled, as
// `sonda init --profile geo` sets it) and serves the UI over the result.
func geoServer(t *testing.T) (*Data, string, *geoweb.Web) {
	t.Helper()
	gw, err := geoweb.New(shareddata.Dir(t, "geo"), testweb.Config{Seed: 3, Hosts: 6, PagesPerHost: 4, Disable: testweb.AllFeatures &^ testweb.Robots})
	if err != nil {
		t.Fatal(err)
	}
	w := testweb.New(gw.Config)
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	cfg := crawlConfig(t, w, 0)
	cfg.Geo.Enabled = true
	cfg.Fetch.FirstByteTimeout, cfg.Fetch.BodyTimeout = 20*time.Second, 30*time.Second // no slow pages; a loaded CI machine
	cfg.Politeness.DelayFactor = 0
	d, base := serve(t, cfg)
	if err := d.Runner.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	wait(t, d.Runner)
	return d, base, gw
}

// TestBrowserDatasets: on the crawled geo test web, the datasets page finds Boston's data
// first with its thumbnail, type, size, date, downloads and producer; a box drawn on the map
// with the keyboard, then one dragged with the pointer, searches the datasets inside it;
// downloads go through the counting redirect; the page works at phone width; and nothing
// breaks the strict CSP (the tab fails the test on any console error).
func TestBrowserDatasets(t *testing.T) {
	d, base, gw := geoServer(t)
	ctx := tab(t)

	do(t, ctx, chromedp.Navigate(base+"/datasets?q=Boston"), chromedp.WaitVisible(chromedp.CSS(".datasets-list")))
	first := eval[string](t, ctx, `document.querySelector('.dataset .hit-url').textContent`)
	covers := false
	for _, ds := range gw.Datasets {
		covers = covers || ds.Covers == "Boston" && strings.HasPrefix(ds.URL, first)
	}
	if !covers {
		t.Errorf("first result for Boston: %s", first)
	}
	for _, sel := range []string{".dataset .type", ".dataset .size", ".dataset time", ".dataset .downloads", ".dataset .producer a", "#dataset-places"} {
		if eval[string](t, ctx, `(document.querySelector('`+sel+`') || {textContent: ''}).textContent.trim()`) == "" {
			t.Errorf("the first result shows no %s", sel)
		}
	}
	// Thumbnails load lazily: the first at once, the others once scrolled to.
	poll(t, ctx, "the first thumbnail", `(i => i !== null && i.complete && i.naturalWidth === 256)(document.querySelector('img.thumb'))`, 10*time.Second)
	eval[chromedp.Void](t, ctx, `document.querySelectorAll('img.thumb').forEach(i => i.loading = 'eager')`)
	poll(t, ctx, "every thumbnail", `Array.from(document.querySelectorAll('img.thumb')).every(i => i.complete && i.naturalWidth === 256)`, 10*time.Second)
	poll(t, ctx, "the basemap", `document.querySelector('.map-frame img').complete && document.querySelector('.map-frame img').naturalWidth > 0`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#map-overlay .res').length`); n == 0 {
		t.Error("the results' boxes are not drawn on the map")
	}

	// The download link is the counting redirect to the dataset itself.
	href := eval[string](t, ctx, `document.querySelector('.dataset .hit-title a').href`)
	u, err := url.Parse(href)
	if err != nil || u.Path != "/download" {
		t.Fatalf("download link %q", href)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(href)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	id := u.Query().Get("id")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != geosearch.URLOf(id) {
		t.Errorf("download: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	rec, _, _ := catalog.New(d.DB).Dataset(geosearch.KeyOf(geosearch.URLOf(id)))
	if rec == nil || rec.Downloads != 1 {
		t.Errorf("the download was not counted: %+v", rec)
	}
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".datasets-list")))
	if got := eval[string](t, ctx, `document.querySelector('.dataset[data-id="`+id+`"] .downloads').textContent`); got != "1" {
		t.Errorf("downloads shown after one download: %q", got)
	}

	// Keyboard: focus the map, move the default box over the Atlantic towards Boston
	// (arrows move 5°, Alt+arrows 1°), shrink it with Shift, and press Enter.
	do(t, ctx, chromedp.Navigate(base+"/datasets"), chromedp.WaitVisible(chromedp.CSS("#map-frame")), chromedp.Focus(chromedp.CSS("#map-frame")))
	alt, shift := chromedp.KeyModifiers(chromedp.ModifierAlt), chromedp.KeyModifiers(chromedp.ModifierShift)
	shiftAlt := chromedp.KeyModifiers(chromedp.ModifierShift | chromedp.ModifierAlt)
	press := func(key string, n int, opts ...chromedp.KeyOption) {
		for range n {
			do(t, ctx, chromedp.KeyEvent(key, opts...))
		}
	}
	press(kLeft, 10)       // (-20,-10,20,10) → (-70,-10,-30,10)
	press(kLeft, 2, alt)   // → (-72,-10,-32,10)
	press(kUp, 10)         // → (-72,40,-32,60)
	press(kUp, 1, alt)     // → (-72,41,-32,61)
	press(kLeft, 7, shift) // east edge to -67
	press(kLeft, 2, shiftAlt)
	press(kDown, 3, shift) // north edge to 46
	press(kDown, 2, shiftAlt)
	if got := eval[string](t, ctx, `document.querySelector('#bbox').value`); got != "-72,41,-69,44" {
		t.Fatalf("the keyboard drew %q", got)
	}
	do(t, ctx, chromedp.KeyEvent(kEnter))
	poll(t, ctx, "the box's results", `location.search.includes('bbox=') && document.querySelector('.datasets-list') !== null`, 10*time.Second)
	names := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.dataset .hit-url')).map(e => e.textContent)`)
	if !containsPrefix(names, "http://www.site00.test/dados/shp/boston_tracts_shp.zip") || containsPrefix(names, "http://www.site01.test/data/nybb_16a.zip") {
		t.Errorf("box around Boston: %v", names)
	}
	if got := eval[string](t, ctx, `document.querySelector('#map-status').textContent`); !strings.Contains(got, "west -72") {
		t.Errorf("map status %q", got)
	}

	// Pointer: drag a box around New York City on the map, then search it.
	do(t, ctx, chromedp.Navigate(base+"/datasets"), chromedp.WaitVisible(chromedp.CSS("#map-frame")))
	type rect struct{ X, Y, W, H float64 }
	r := eval[rect](t, ctx, `(() => { const b = document.querySelector('#map-frame').getBoundingClientRect(); return {X: b.left, Y: b.top, W: b.width, H: b.height}; })()`)
	at := func(lon, lat float64) (float64, float64) { return r.X + (lon+180)/360*r.W, r.Y + (90-lat)/180*r.H }
	x0, y0 := at(-76, 42)
	x1, y1 := at(-72, 39)
	do(t, ctx, chromedp.MouseEvent(chromedp.MousePressed, x0, y0, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, (x0+x1)/2, (y0+y1)/2, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, x1, y1, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	box := eval[string](t, ctx, `document.querySelector('#bbox').value`)
	do(t, ctx, chromedp.Click(chromedp.CSS("#map-search")))
	poll(t, ctx, "the dragged box's results", `location.search.includes('bbox=') && document.querySelector('.datasets-list') !== null`, 10*time.Second)
	names = eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.dataset .hit-url')).map(e => e.textContent)`)
	if !containsPrefix(names, "http://www.site01.test/data/nybb_16a.zip") || containsPrefix(names, "http://www.site00.test/dados/shp/boston_tracts_shp.zip") {
		t.Errorf("dragged box %s: %v", box, names)
	}

	// Phone width: nothing wider than the screen, the map still there.
	do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile), chromedp.Navigate(base+"/datasets?q=Boston"),
		chromedp.WaitVisible(chromedp.CSS(".datasets-list")))
	if !eval[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth + 1 && document.querySelector('#map-frame').getBoundingClientRect().width > 300`) {
		t.Error("the datasets page overflows a phone's width")
	}
	do(t, ctx, chromedp.ResetViewport())
}

const (
	kLeft  = kb.ArrowLeft
	kUp    = kb.ArrowUp
	kDown  = kb.ArrowDown
	kEnter = kb.Enter
)

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
