package local

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/web"
)

// The browser tests drive Debian's chromium through the DevTools protocol against the real
// server: real crawls on loopback test webs, the real index, link graph and store on disk.
// One browser serves the whole test binary; each test has its own tab.

const browserToken = "browser-test-token-0123456789"

var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// chromiumPath finds the browser: $SONDA_CHROMIUM, else chromium on the PATH.
func chromiumPath() string {
	if p := os.Getenv("SONDA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	path := chromiumPath()
	if path == "" {
		browser.err = fmt.Errorf("chromium not found: install it (apt-get install -y chromium) or set SONDA_CHROMIUM to a Chromium or Chrome binary")
		return
	}
	dir, err := os.MkdirTemp("", "sonda-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true))
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	browser.ctx = ctx
	browser.cancel = func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		browser.err = fmt.Errorf("start %s: %w", path, err)
	}
}

// tab opens a browser tab for the test. Console errors and uncaught exceptions fail the
// test: with a strict CSP, a blocked script or style shows up there first.
func tab(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser tests must run in CI: %v", browser.err)
		}
		t.Skipf("skipping browser test: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	problems := watchConsole(ctx)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		for _, p := range problems() {
			t.Errorf("browser console: %s", p)
		}
	})
	return ctx
}

// watchConsole collects the console errors and uncaught exceptions of a tab; the returned
// function gives them, waiting for the collection to end once ctx is done.
func watchConsole(ctx context.Context) func() []string {
	var mu sync.Mutex
	var problems []string
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			// Failed requests are logged by the network source; the tests check statuses
			// themselves (some are meant to fail, such as a wrong token).
			if m.IsException() || m.Type == "error" && m.Source != "network" {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		if ctx.Err() != nil {
			<-done
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// TestBrowserReportsCSPViolations keeps the console check honest: a page that breaks the
// server's policy (an inline script, an inline style) is reported.
func TestBrowserReportsCSPViolations(t *testing.T) {
	ctx := tab(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'")
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><p style="color:red">x</p><script>window.ran = true</script>`)
	}))
	defer srv.Close()
	inner, cancel := chromedp.NewContext(ctx)
	defer cancel()
	do(t, inner, chromedp.Navigate("about:blank"))
	problems := watchConsole(inner)
	do(t, inner, chromedp.Navigate(srv.URL))
	if eval[bool](t, inner, `window.ran === true`) {
		t.Fatal("the inline script ran despite the policy")
	}
	deadline := time.Now().Add(30 * time.Second) // bounds a broken page only
	for len(problems()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if p := problems(); len(p) < 2 || !strings.Contains(strings.Join(p, "\n"), "Content Security Policy") {
		t.Errorf("CSP violations not reported: %q", p)
	}
}

// serve opens cfg.Data and serves the UI over it on loopback.
func serve(t *testing.T, cfg config.Config) (*Data, string) {
	t.Helper()
	return serveWith(t, cfg, Options{})
}

func serveWith(t *testing.T, cfg config.Config, o Options) (*Data, string) {
	t.Helper()
	d, err := Open(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	opts := d.WebOptions()
	opts.Token = browserToken
	h, err := web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	return d, srv.URL
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// poll waits until js is true. It evaluates from the test rather than with chromedp.Poll,
// whose in-page polling dies with the page when the condition awaits a navigation (a form
// submitted by a key press); errors while the next page loads are retried.
func poll(t *testing.T, ctx context.Context, what, js string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s: last result %v, error %v", timeout, what, ok, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func figure(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	return eval[string](t, ctx, `document.querySelector('[data-figure="`+name+`"]').textContent`)
}

func count(s string) int64 {
	n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n
}

// brokenLinksWeb is a small test web whose every host has a page with two links to pages
// that do not exist (404s: errors for the dashboard to show).
func brokenLinksWeb(t *testing.T, hosts int) *testweb.Web {
	t.Helper()
	w := testweb.New(testweb.Config{Seed: 5, Hosts: hosts, PagesPerHost: 6, Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra: func(string, *rand.Rand) []testweb.Page {
			return []testweb.Page{{Path: "/links.html", Title: "Links", Text: []string{"Old links."}, Links: []string{"/gone-1.html", "/gone-2.html"}}}
		}})
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestBrowserDashboard: the crawl is started from the dashboard's form, and the figures
// and charts update while it runs, without a reload; the errors by kind are the crawl's.
func TestBrowserDashboard(t *testing.T) {
	w := brokenLinksWeb(t, 5)
	cfg := crawlConfig(t, w, 250*time.Millisecond) // a crawl of a few seconds, to watch
	d, base := serve(t, cfg)
	ctx := tab(t)

	do(t, ctx, chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible(chromedp.CSS("#crawl-control")))
	eval[chromedp.Void](t, ctx, `window.__sameDocument = true`)
	if got := figure(t, ctx, "state"); got != "idle" {
		t.Errorf("state before the crawl: %q", got)
	}
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#token"), "wrong-token-wrong-token"), chromedp.Click(chromedp.CSS("#start")))
	poll(t, ctx, "the refusal", `document.querySelector('#control-message').classList.contains('error')`, 5*time.Second)
	do(t, ctx, chromedp.SetValue(chromedp.CSS("#token"), browserToken), chromedp.Click(chromedp.CSS("#start")))
	poll(t, ctx, "the crawl to run", `document.querySelector('[data-figure="state"]').textContent === 'running'`, 10*time.Second)
	poll(t, ctx, "a first count", `parseInt(document.querySelector('[data-figure="pages"]').textContent.replace(/,/g, '')) > 0`, 10*time.Second)
	first := count(figure(t, ctx, "pages"))
	poll(t, ctx, "the page count to grow", `parseInt(document.querySelector('[data-figure="pages"]').textContent.replace(/,/g, '')) > `+strconv.FormatInt(first, 10), 15*time.Second)
	poll(t, ctx, "the charts", `document.querySelector('#chart-pps path.series') !== null && document.querySelectorAll('#chart-hosts rect.bar').length > 0 && document.querySelectorAll('#chart-queue path.series').length === 1`, 10*time.Second)
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Fatal("the dashboard reloaded instead of updating in place")
	}
	poll(t, ctx, "the crawl to finish", `document.querySelector('[data-figure="state"]').textContent === 'finished: frontier empty'`, 60*time.Second)
	hosts := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#chart-hosts text.label')).map(e => e.textContent)`)
	if len(hosts) == 0 || !strings.HasSuffix(hosts[0], ".test") {
		t.Errorf("top-hosts chart labels: %v", hosts)
	}
	if msg := eval[string](t, ctx, `document.querySelector('#control-message').textContent`); msg != "Crawl started." {
		t.Errorf("control message %q", msg)
	}
	if h := figure(t, ctx, "harvest_rate"); h != "no topic" {
		t.Errorf("harvest rate without a topic: %q", h)
	}
	// Each host's two broken links are 404s; the figure and the bars are the crawl's errors.
	errs := d.Runner.Status().Errors
	if errs["http-404"] != 10 {
		t.Fatalf("the crawl counted errors %v; want 10 http-404", errs)
	}
	var total int64
	for _, n := range errs {
		total += n
	}
	poll(t, ctx, "the error count", `document.querySelector('[data-figure="errors"]').textContent === '`+strconv.FormatInt(total, 10)+`'`, 5*time.Second)
	kinds := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#chart-errors text.label')).map(e => e.textContent)`)
	if len(kinds) != len(errs) || !slices.Contains(kinds, "http-404") || eval[int](t, ctx, `document.querySelectorAll('#chart-errors rect.bar').length`) != len(errs) {
		t.Errorf("errors-by-kind chart labels %q; want a bar for each kind of %v", kinds, errs)
	}
}

// TestBrowserDashboardHarvest: with a topic (here a stand-in analyzer that judges every
// page), the dashboard shows the harvest rate and draws its chart.
func TestBrowserDashboardHarvest(t *testing.T) {
	w := smallWeb(t, 3)
	cfg := crawlConfig(t, w, 150*time.Millisecond)
	d, base := serveWith(t, cfg, Options{CrawlOptions: func(*config.Config, *store.DB) ([]crawl.Option, error) {
		return []crawl.Option{crawl.WithAnalyzers(topicAnalyzer{})}, nil
	}})
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/dashboard"), chromedp.WaitReady(chromedp.CSS("#chart-pps")))
	if !eval[bool](t, ctx, `document.querySelector('#harvest-figure').hidden`) {
		t.Error("a harvest chart before any topic judgement")
	}
	if err := d.Runner.Start(context.Background(), web.CrawlRequest{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the harvest rate", `/%$/.test(document.querySelector('[data-figure="harvest_rate"]').textContent) && !document.querySelector('#harvest-figure').hidden && document.querySelector('#chart-harvest path.series') !== null`, 20*time.Second)
	wait(t, d.Runner)
	st := d.Runner.Status()
	poll(t, ctx, "the final figure", fmt.Sprintf(`Math.abs(parseFloat(document.querySelector('[data-figure="harvest_rate"]').textContent) - %f) < 0.051`, 100**st.HarvestRate), 10*time.Second)
}
