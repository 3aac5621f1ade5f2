package render

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/testweb"
)

// The tests render pages of testweb.ScriptWeb with the real Chromium. Without one they
// skip, except under CI=true, where a missing browser is a failure.

func chromium(t *testing.T) string {
	t.Helper()
	p, err := FindChromium()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("rendering tests must run in CI: %v", err)
		}
		t.Skipf("skipping rendering test: %v", err)
	}
	return p
}

// scriptWeb serves a ScriptWeb and returns it with a fetcher that reaches it.
func scriptWeb(t testing.TB) (*testweb.ScriptWeb, *fetch.Fetcher) {
	t.Helper()
	w := &testweb.ScriptWeb{}
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	m, err := fetch.ParseMapping(w.Resolve())
	if err != nil {
		t.Fatal(err)
	}
	f, err := fetch.New(fetch.Options{AllowPrivate: true, Resolve: []fetch.Mapping{m}})
	if err != nil {
		t.Fatal(err)
	}
	return w, f
}

func newRenderer(t *testing.T, o Options) *Renderer {
	t.Helper()
	o.ExecPath = chromium(t)
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// fetcherGate answers every request with a fetcher, recording the URLs asked for; before,
// when set, runs first and may refuse.
type fetcherGate struct {
	f      *fetch.Fetcher
	before func(Request) error
	mu     sync.Mutex
	asked  []string
}

func (g *fetcherGate) Fetch(ctx context.Context, r Request) (*fetch.Result, error) {
	g.mu.Lock()
	g.asked = append(g.asked, r.URL)
	g.mu.Unlock()
	if g.before != nil {
		if err := g.before(r); err != nil {
			return nil, err
		}
	}
	return g.f.Fetch(ctx, fetch.Request{URL: r.URL, AnyType: true}), nil
}

func (g *fetcherGate) saw(u string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range g.asked {
		if a == u {
			return true
		}
	}
	return false
}

func get(t testing.TB, f *fetch.Fetcher, u string) *fetch.Result {
	t.Helper()
	res := f.Fetch(context.Background(), fetch.Request{URL: u})
	if res.Err != nil || res.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, res.Status, res.Err)
	}
	return res
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRenderArticleFromJSONAPI(t *testing.T) {
	w, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1})
	page := get(t, f, "http://www.spa.test/article/3")
	if strings.Contains(string(page.UTF8), testweb.ArticlePhrase(3)) {
		t.Fatal("the raw shell already holds the article: the test proves nothing")
	}
	g := &fetcherGate{f: f}
	res, err := r.Render(testCtx(t), Page{Response: page, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	html := string(res.HTML)
	for _, want := range []string{testweb.ArticlePhrase(3), `href="/article/4"`, "<h1>River report 3</h1>"} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered DOM lacks %q:\n%s", want, html)
		}
	}
	if !g.saw("http://www.spa.test/static/app.js") || !g.saw("http://www.spa.test/api/article/3") {
		t.Errorf("the gate did not answer the script and the API call: %v", g.asked)
	}
	if n := w.Hits("www.spa.test", "/article/3"); n != 1 {
		t.Errorf("the page was requested %d times; the browser must be handed the response in hand", n)
	}
	if res.URL != "http://www.spa.test/article/3" || res.Requests != 2 {
		t.Errorf("URL %q, %d requests; want the page's URL and 2 (script, API)", res.URL, res.Requests)
	}
}

func TestInfiniteScrollLoadsEveryPage(t *testing.T) {
	w, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1, Scrolls: 5})
	res, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.spa.test/"), Gate: &fetcherGate{f: f}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range w.ArticleURLs() {
		if !strings.Contains(string(res.HTML), `href="`+strings.TrimPrefix(u, "http://www.spa.test")+`"`) {
			t.Errorf("link to %s missing after scrolling", u)
		}
	}
	if res.Scrolls < 2 {
		t.Errorf("%d scrolls grew the page, want ≥ 2 (three API pages)", res.Scrolls)
	}
}

func TestRefusedRequestsAndMedia(t *testing.T) {
	w, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1})
	g := &fetcherGate{f: f, before: func(q Request) error {
		if strings.Contains(q.URL, "/private/") || !strings.Contains(q.URL, ".test") {
			return errors.New("refused by the test gate")
		}
		return nil
	}}
	res, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.hostile.test/"), Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.HTML), "<p>leaked") {
		t.Errorf("a refused request reached the page:\n%s", res.HTML)
	}
	if !strings.Contains(string(res.HTML), `href="/after.html"`) {
		t.Errorf("the script's own link is missing:\n%s", res.HTML)
	}
	refused := 0
	for _, b := range res.Blocked {
		if b.Reason == "refused by the test gate" {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("blocked %v, want the 3 requests of the script refused by the gate", res.Blocked)
	}
	if n := w.UnknownHits(); n != 0 {
		t.Errorf("%d requests reached the server by IP address", n)
	}
	if w.Hits("www.hostile.test", "/private/data.json") != 0 {
		t.Error("the refused path was fetched")
	}
}

// TestCrashIsSurvived kills the browser with SIGKILL in the middle of a render: the render
// is tried again on a new browser and succeeds.
func TestCrashIsSurvived(t *testing.T) {
	_, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1})
	var once sync.Once
	g := &fetcherGate{f: f, before: func(q Request) error {
		killed := false
		once.Do(func() {
			if p, err := os.FindProcess(r.BrowserPID()); err == nil {
				p.Signal(syscall.SIGKILL)
				killed = true
			}
		})
		if killed {
			return errors.New("browser killed")
		}
		return nil
	}}
	pid := r.BrowserPID()
	res, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.spa.test/article/2"), Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Retried || !strings.Contains(string(res.HTML), testweb.ArticlePhrase(2)) {
		t.Errorf("retried %v; article in DOM %v", res.Retried, strings.Contains(string(res.HTML), testweb.ArticlePhrase(2)))
	}
	if s := r.Stats(); s.Crashes != 1 || s.Restarts != 1 || r.BrowserPID() == pid {
		t.Errorf("stats %+v, pid %d → %d: want one crash, one restart, a new process", s, pid, r.BrowserPID())
	}
}

// TestMemoryBoundRestarts: a browser over its bound is replaced after its render, and the
// next render runs on a new process.
func TestMemoryBoundRestarts(t *testing.T) {
	if treeRSS(os.Getpid()) == 0 {
		t.Skip("no /proc: the memory bound cannot be measured here")
	}
	_, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1, MemoryLimit: 1})
	pid := r.BrowserPID()
	for i := 1; i <= 2; i++ {
		if _, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.spa.test/article/1"), Gate: &fetcherGate{f: f}}); err != nil {
			t.Fatal(err)
		}
	}
	if s := r.Stats(); s.Restarts < 1 || s.Memory <= 1 || r.BrowserPID() == pid {
		t.Errorf("stats %+v: want a restart and a measured memory", s)
	}
}

func TestParallelTabs(t *testing.T) {
	w, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for id := 1; id <= 4; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.Render(testCtx(t), Page{Response: get(t, f, w.ArticleURLs()[id-1]), Gate: &fetcherGate{f: f}})
			if err == nil && !strings.Contains(string(res.HTML), testweb.ArticlePhrase(id)) {
				err = errors.New("article " + w.ArticleURLs()[id-1] + " missing its text")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestNeverIdlePage: a page that polls for ever is read as it is at the deadline.
func TestNeverIdlePage(t *testing.T) {
	_, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1, Deadline: 3 * time.Second})
	res, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.hostile.test/poll.html"), Gate: &fetcherGate{f: f}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeverIdle || !strings.Contains(string(res.HTML), "polled ") || res.Duration > 30*time.Second {
		t.Errorf("never idle %v after %v; DOM:\n%s", res.NeverIdle, res.Duration, res.HTML)
	}
}

// TestDialogsPopupsDownloads: dialogs are dismissed (the script goes on), the pop-up and
// the download are never requested.
func TestDialogsPopupsDownloads(t *testing.T) {
	w, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1})
	g := &fetcherGate{f: f}
	res, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.hostile.test/nasty.html"), Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.HTML), "survived the dialogs") {
		t.Errorf("the script did not run past its dialogs:\n%s", res.HTML)
	}
	for _, p := range []string{"/opened.html", "/file.bin"} {
		if n := w.Hits("www.hostile.test", p); n != 0 || g.saw("http://www.hostile.test"+p) {
			t.Errorf("%s was requested (%d hits)", p, n)
		}
	}
}
