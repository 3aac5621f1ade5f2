// Package render runs fetched pages in a headless Chromium so that sonda can read what
// their scripts build: article text filled in from a JSON API, links added by a router, a
// dataset list a data portal writes after load.
//
// A Renderer owns one browser process and a pool of tabs in it. It never lets the browser
// touch the network: every request a page makes (its scripts, styles, XHR and fetch calls,
// frames, redirects) is paused through the DevTools Fetch domain and answered by a Gate,
// the crawler's own fetch path with its robots.txt, SSRF, scope, politeness and size rules.
// The page itself is not fetched again: the browser is handed the response sonda already
// has. As a second line of defence the browser is started with a proxy that does not exist
// and a host resolver that resolves nothing, so a request the Fetch domain does not see
// (a WebSocket) fails instead of reaching the network.
//
// Each render is bounded: a navigation timeout, a quiet period that counts as network idle,
// a few scrolls for pages that load more on scroll, and a total deadline. Images, fonts and
// media are not loaded unless asked for. Downloads are denied, permission prompts refused,
// pop-ups blocked and dialogs dismissed; the profile is a fresh temporary directory removed
// when the Renderer closes. When the browser crashes, or grows past a memory bound, it is
// replaced; a render cut short by a crash is tried once more on the new browser.
//
// Detect (detect.go) says whether a page's raw HTML looks built by script, for crawls that
// render only when it pays.
package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sonda-search/sonda/fetch"
)

// Options configure a Renderer. Zero fields take the defaults in their comments.
type Options struct {
	// ExecPath is the Chromium binary. Default: $SONDA_CHROMIUM, else chromium,
	// chromium-browser or google-chrome on the PATH (see FindChromium).
	ExecPath string
	// Tabs is how many pages render at once, each in its own tab of the one browser.
	// Default 2.
	Tabs int
	// NavigationTimeout bounds loading the document up to its load event. Default 15s.
	NavigationTimeout time.Duration
	// Idle is how long the page must make no request for the network to count as idle.
	// Default 500ms.
	Idle time.Duration
	// Deadline bounds the whole render, scrolling included. Default 30s.
	Deadline time.Duration
	// Scrolls is how many times the page is scrolled to the bottom to make it load more
	// (infinite scroll); scrolling stops early when the page stops growing. Default 3;
	// negative: none.
	Scrolls int
	// LoadMedia lets images, fonts and media load. Off, they are refused: they cost
	// bandwidth and politeness and add nothing to text or links.
	LoadMedia bool
	// MemoryLimit is the resident memory (bytes) of the browser and its child processes
	// past which the browser is replaced once its renders finish (measured after its first
	// render, then at most every 30s). Default 1 GiB.
	MemoryLimit int64
	// Logger receives blocked requests and browser restarts. Default: discard.
	Logger *slog.Logger
	// Nice lowers the browser's CPU priority by this many steps below sonda's (capped at
	// nice 19), so that on a busy machine the crawl of pages that need no browser is not
	// slowed by the renders; 0 leaves it equal. Linux only; see lowerPriority.
	Nice int
	// Lazy starts the browser at the first Render instead of in New: a crawl that may
	// never need it (render.mode auto on static sites) then never pays for it, not even
	// the CPU of its start-up.
	Lazy bool
}

// Defaults of Options.
const (
	DefaultTabs              = 2
	DefaultNavigationTimeout = 15 * time.Second
	DefaultIdle              = 500 * time.Millisecond
	DefaultDeadline          = 30 * time.Second
	DefaultScrolls           = 3
	DefaultMemoryLimit       = 1 << 30
)

func (o *Options) normalize() error {
	if o.Tabs < 0 || o.NavigationTimeout < 0 || o.Idle < 0 || o.Deadline < 0 || o.MemoryLimit < 0 || o.Nice < 0 {
		return errors.New("render: negative option (tabs, timeouts, the memory limit and nice must be ≥ 0)")
	}
	if o.Tabs == 0 {
		o.Tabs = DefaultTabs
	}
	if o.NavigationTimeout == 0 {
		o.NavigationTimeout = DefaultNavigationTimeout
	}
	if o.Idle == 0 {
		o.Idle = DefaultIdle
	}
	if o.Deadline == 0 {
		o.Deadline = DefaultDeadline
	}
	if o.Scrolls == 0 {
		o.Scrolls = DefaultScrolls
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ExecPath == "" {
		p, err := FindChromium()
		if err != nil {
			return err
		}
		o.ExecPath = p
	}
	return nil
}

// FindChromium returns the browser to use: $SONDA_CHROMIUM, else the first of chromium,
// chromium-browser and google-chrome on the PATH. Its error says how to install one.
func FindChromium() (string, error) {
	if p := os.Getenv("SONDA_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("render: chromium not found: install it (Debian/Ubuntu: apt-get install -y chromium) or set SONDA_CHROMIUM to a Chromium or Chrome binary")
}

// Request is one request a rendered page makes, as the Gate sees it.
type Request struct {
	URL    string
	Method string
	// Type is the DevTools resource type: Script, Stylesheet, XHR, Fetch, Document (a
	// frame, or a navigation of the page), Other...
	Type string
}

// Gate answers the requests a page makes. Its error refuses the request (the page sees a
// network failure); the error's text is the reason recorded in Result.Blocked. The Gate
// is called from several goroutines at once.
type Gate interface {
	Fetch(ctx context.Context, r Request) (*fetch.Result, error)
}

// Page is a page to render: the response sonda fetched for it, and the gate its requests
// go through.
type Page struct {
	Response *fetch.Result // a 2xx HTML response, body decoded (UTF8 set)
	Gate     Gate
}

// Blocked is a request the render refused.
type Blocked struct {
	URL, Type, Reason string
}

// Result is a rendered page.
type Result struct {
	// HTML is the document after its scripts ran: the serialized DOM, UTF-8, with its
	// doctype when it has one.
	HTML []byte
	// URL is the document's location after its scripts ran (a client-side router may
	// change it with the history API).
	URL string
	// Navigations are URLs the page tried to load in place of itself (location = ...);
	// they were refused and are worth crawling like links.
	Navigations []string
	// Requests is how many of the page's requests the gate answered.
	Requests int
	Blocked  []Blocked
	Scrolls  int // scrolls that made the page grow
	Duration time.Duration
	// NeverIdle is set when the page still made requests at the deadline: the DOM was
	// read as it was then.
	NeverIdle bool
	// Retried is set when a browser crash cut the first attempt short.
	Retried bool
}

// Stats are a Renderer's counters since New.
type Stats struct {
	Renders, Failures, Restarts, Crashes int64
	// Memory is the browser's resident memory (bytes, all its processes) when last
	// measured; 0 when it cannot be measured on this system.
	Memory int64
	Tabs   int
}

// Renderer renders pages in a pool of tabs of one headless Chromium. It is safe for
// concurrent use; at most Options.Tabs renders run at once, the others wait.
type Renderer struct {
	opts  Options
	slots chan struct{}

	mu      sync.Mutex
	cur     *instance
	started bool // a browser was started once: later starts are restarts
	closed  bool

	renders, failures, restarts, crashes, memory atomic.Int64
}

// New checks opts and starts the browser, so a missing or broken Chromium is reported at
// once rather than at the first script-built page. With Options.Lazy it only checks that
// the browser binary exists and can be run.
func New(opts Options) (*Renderer, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	r := &Renderer{opts: opts, slots: make(chan struct{}, opts.Tabs)}
	if opts.Lazy {
		if _, err := exec.LookPath(opts.ExecPath); err != nil {
			return nil, fmt.Errorf("render: browser %s: %w (install chromium, or set SONDA_CHROMIUM)", opts.ExecPath, err)
		}
		return r, nil
	}
	inst, err := r.start()
	if err != nil {
		return nil, err
	}
	r.cur, r.started = inst, true
	return r, nil
}

// Stats returns the counters.
func (r *Renderer) Stats() Stats {
	return Stats{Renders: r.renders.Load(), Failures: r.failures.Load(), Restarts: r.restarts.Load(),
		Crashes: r.crashes.Load(), Memory: r.memory.Load(), Tabs: r.opts.Tabs}
}

// BrowserPID is the process id of the current browser, 0 when none runs.
func (r *Renderer) BrowserPID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return 0
	}
	return r.cur.pid
}

// Close stops the browser and removes its profile.
func (r *Renderer) Close() error {
	r.mu.Lock()
	inst := r.cur
	r.cur, r.closed = nil, true
	r.mu.Unlock()
	if inst != nil {
		inst.retire()
	}
	return nil
}

// ErrClosed is returned by Render after Close.
var ErrClosed = errors.New("render: renderer closed")

// Render runs p in a tab and returns the document its scripts built. A crash of the
// browser during the render replaces the browser and renders p once more.
func (r *Renderer) Render(ctx context.Context, p Page) (*Result, error) {
	if p.Response == nil || p.Response.UTF8 == nil {
		return nil, errors.New("render: page has no decoded body")
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.slots }()
	retried := false
	for attempt := 0; ; attempt++ {
		inst, err := r.instance()
		if err != nil {
			r.failures.Add(1)
			return nil, err
		}
		res, err := inst.render(ctx, p, &r.opts)
		if err == nil {
			res.Retried = retried
			r.renders.Add(1)
			r.checkMemory(inst)
			return res, nil
		}
		if ctx.Err() != nil {
			r.failures.Add(1)
			return nil, err
		}
		if inst.dead() {
			r.crashes.Add(1)
			r.opts.Logger.Warn("render: the browser died; starting a new one", "url", p.Response.FinalURL, "error", err)
			r.replace(inst)
			if attempt == 0 {
				retried = true
				continue
			}
		}
		r.failures.Add(1)
		return nil, err
	}
}

// instance returns the current browser, starting one if the last was retired.
func (r *Renderer) instance() (*instance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.cur != nil && !r.cur.dead() {
		r.cur.users.Add(1)
		return r.cur, nil
	}
	if r.cur != nil {
		go r.cur.retire()
		r.cur = nil
	}
	inst, err := r.start()
	if err != nil {
		return nil, err
	}
	if r.started {
		r.restarts.Add(1)
	}
	r.started = true
	r.cur = inst
	inst.users.Add(1)
	return inst, nil
}

// replace retires inst if it is still the current browser; the next render starts another.
func (r *Renderer) replace(inst *instance) {
	r.mu.Lock()
	if r.cur == inst {
		r.cur = nil
	}
	r.mu.Unlock()
	go inst.retire()
}

// memoryEvery is how often a browser's memory is measured at most. Reading the PSS of
// Chromium's processes makes the kernel walk their (large) address spaces: measured after
// every render it took a fifth of the CPU of a crawl in render.mode auto (0.1 s each),
// at the crawler's priority.
const memoryEvery = 30 * time.Second

// checkMemory measures the browser after a render (its first, then at most every
// memoryEvery) and retires it past the memory bound: renders in progress finish on it,
// new ones go to a fresh browser.
func (r *Renderer) checkMemory(inst *instance) {
	now := time.Now().UnixNano()
	last := inst.measured.Load()
	if last != 0 && now-last < int64(memoryEvery) || !inst.measured.CompareAndSwap(last, now) {
		return
	}
	m := treeRSS(inst.pid)
	r.memory.Store(m)
	if m > r.opts.MemoryLimit {
		r.opts.Logger.Info("render: browser over its memory bound; replacing it", "rss", m, "limit", r.opts.MemoryLimit)
		r.replace(inst)
	}
}

// instance is one browser process with its tabs.
type instance struct {
	ctx    context.Context // the browser's chromedp context
	cancel context.CancelFunc
	dir    string
	pid    int

	users    sync.WaitGroup // renders using it; retire waits for them
	measured atomic.Int64   // when its memory was last measured (unix ns; 0: never)

	cpuMu  sync.Mutex // guards tree and treeAt (CPUTime)
	tree   []int      // its processes, as last listed
	treeAt time.Time

	mu   sync.Mutex
	free []*tab
	once sync.Once
}

// start launches a browser with a fresh profile.
func (r *Renderer) start() (*instance, error) {
	dir, err := os.MkdirTemp("", "sonda-render-")
	if err != nil {
		return nil, fmt.Errorf("render: profile directory: %w", err)
	}
	var opts []chromedp.ExecAllocatorOption
	if f := lowerPriority(r.opts.Nice, r.opts.Logger); f != nil {
		opts = append(opts, chromedp.ModifyCmdFunc(f))
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts,
		chromedp.ExecPath(r.opts.ExecPath), chromedp.UserDataDir(dir),
		chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		// The sandbox needs user namespaces or a setuid helper, which containers and CI
		// runners often lack; the browser never reaches the network itself (see below).
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1024),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("deny-permission-prompts", true),
		chromedp.Flag("block-new-web-contents", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints,InterestFeedContentSuggestions"),
		// Every request is answered through the Fetch domain. Anything it does not see
		// (WebSockets) goes to a proxy that is not there, and no name resolves.
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
	)...)
	ctx, cancel := chromedp.NewContext(alloc)
	inst := &instance{ctx: ctx, dir: dir}
	inst.cancel = func() {
		cancel()
		cancelAlloc()
	}
	startCtx, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	// Run on the browser context itself starts the process; a timeout on a context
	// derived from it bounds the wait without tying the browser's life to it.
	if err := chromedp.Do(ctx, chromedp.Func(func(context.Context, *chromedp.Target) error { return nil })); err != nil {
		inst.cancel()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("render: start %s: %w", r.opts.ExecPath, err)
	}
	if _, err := chromedp.CallBrowser(startCtx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}); err != nil {
		inst.cancel()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("render: deny downloads: %w", err)
	}
	if p := chromedp.FromContext(ctx).Browser.Process(); p != nil {
		inst.pid = p.Pid
	}
	// The browser context's own tab stays on about:blank: closing it would close the
	// browser, and the pool closes tabs whose render failed. Pool tabs open on demand.
	return inst, nil
}

func (in *instance) dead() bool { return in.ctx.Err() != nil }

// retire stops the browser once its renders are done and removes its profile.
func (in *instance) retire() {
	in.once.Do(func() {
		in.users.Wait()
		in.cancel()
		os.RemoveAll(in.dir)
	})
}

// render renders p in a free tab of in, opening one if none is free.
func (in *instance) render(ctx context.Context, p Page, o *Options) (*Result, error) {
	defer in.users.Done()
	in.mu.Lock()
	var t *tab
	if n := len(in.free); n > 0 {
		t, in.free = in.free[n-1], in.free[:n-1]
	}
	in.mu.Unlock()
	if t == nil {
		var err error
		if t, err = newTab(in.ctx); err != nil {
			return nil, err
		}
	}
	res, err := t.render(ctx, p, o)
	if err == nil {
		// Leave the page, so its timers and requests stop and its memory goes, before
		// the tab waits for the next render.
		bctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
		if e := chromedp.Do(bctx, chromedp.Navigate("about:blank")); e != nil {
			t.close()
			t = nil
		}
		cancel()
	}
	if err != nil {
		// A tab whose render failed may be stuck on the page: close it, the pool
		// opens another when needed.
		t.close()
		return nil, err
	}
	if t == nil {
		return res, nil
	}
	in.mu.Lock()
	in.free = append(in.free, t)
	in.mu.Unlock()
	return res, nil
}

// tab is one browser tab; it renders one page at a time.
type tab struct {
	ctx    context.Context
	cancel context.CancelFunc // closes the tab
	frame  cdp.FrameID        // the main frame: its id is the target's

	mu  sync.Mutex
	cur *session // the render in progress, nil between renders
}

func newTab(browserCtx context.Context) (*tab, error) {
	ctx, cancel := chromedp.NewContext(browserCtx)
	t := &tab{ctx: ctx, cancel: cancel}
	if err := chromedp.Listen(ctx, t.event); err != nil {
		cancel()
		return nil, fmt.Errorf("render: open tab: %w", err)
	}
	t.frame = cdp.FrameID(chromedp.FromContext(ctx).Target.TargetID)
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Call(callCtx, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*", RequestStage: cdpfetch.RequestStageRequest}}})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("render: intercept requests: %w", err)
	}
	return t, nil
}

// close closes the tab (canceling a context made by NewContext closes its target).
func (t *tab) close() { t.cancel() }

// event runs in the tab's message loop: it must not block or call the browser.
func (t *tab) event(ev any) {
	switch e := ev.(type) {
	case *cdpfetch.EventRequestPaused:
		t.mu.Lock()
		s := t.cur
		if s != nil {
			s.started()
		}
		t.mu.Unlock()
		go t.answer(s, e)
	case *page.EventJavascriptDialogOpening:
		go chromedp.Call(t.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// session is one render's state, shared by the goroutines that answer its requests.
type session struct {
	ctx      context.Context
	page     Page
	opts     *Options
	mainDone atomic.Bool

	mu          sync.Mutex
	pending     int
	last        time.Time // last request start or end
	asked       int       // requests paused so far
	requests    int
	blocked     []Blocked
	navigations []string
}

func (s *session) started() {
	s.mu.Lock()
	s.asked++
	s.pending++
	s.last = time.Now()
	s.mu.Unlock()
}

// touch restarts the quiet period.
func (s *session) touch() {
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
}

func (s *session) ended() {
	s.mu.Lock()
	s.pending--
	s.last = time.Now()
	s.mu.Unlock()
}

func (s *session) block(r Request, reason string) {
	s.mu.Lock()
	s.blocked = append(s.blocked, Blocked{URL: r.URL, Type: r.Type, Reason: reason})
	s.mu.Unlock()
	s.opts.Logger.Info("render: request blocked", "page", s.page.Response.FinalURL, "url", r.URL, "type", r.Type, "reason", reason)
}

// mediaTypes are refused unless Options.LoadMedia; the rest of the list never loads:
// beacons, reports and prefetches are side effects, not content.
var (
	mediaTypes = []network.ResourceType{network.ResourceTypeImage, network.ResourceTypeFont, network.ResourceTypeMedia, network.ResourceTypeTextTrack}
	neverTypes = []network.ResourceType{network.ResourceTypePing, network.ResourceTypeCSPViolationReport, network.ResourceTypePrefetch,
		network.ResourceTypeManifest, network.ResourceTypeSignedExchange, network.ResourceTypeWebSocket, network.ResourceTypeFedCM}
)

// answer decides one paused request: the page's own document from the response in hand,
// everything else through the gate.
func (t *tab) answer(s *session, e *cdpfetch.EventRequestPaused) {
	ctx := t.ctx
	fail := func(reason network.ErrorReason) {
		_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: reason})
	}
	if s == nil { // a leftover of an earlier page
		fail(network.ErrorReasonAborted)
		return
	}
	defer s.ended()
	req := Request{URL: e.Request.URL, Method: e.Request.Method, Type: string(e.ResourceType)}
	if e.Request.URLFragment != "" {
		req.URL += e.Request.URLFragment
	}
	mainDoc := e.FrameID == t.frame && e.ResourceType == network.ResourceTypeDocument
	switch {
	case mainDoc && s.mainDone.CompareAndSwap(false, true):
		res := s.page.Response
		_, _ = chromedp.Call(ctx, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{
			RequestID: e.RequestID, ResponseCode: int64(res.Status), ResponseHeaders: headers(res, "text/html; charset=utf-8"), Body: res.UTF8})
		return
	case mainDoc:
		// The page tries to replace itself (location = ..., a form, a meta refresh):
		// the target is worth crawling, but not in this render.
		s.mu.Lock()
		s.navigations = append(s.navigations, req.URL)
		s.mu.Unlock()
		fail(network.ErrorReasonAborted)
		return
	case req.Method != http.MethodGet && req.Method != http.MethodHead:
		// A crawler reads; it does not post forms or call write APIs.
		s.block(req, "method "+req.Method)
		fail(network.ErrorReasonBlockedByClient)
		return
	case slices.Contains(neverTypes, e.ResourceType), !s.opts.LoadMedia && slices.Contains(mediaTypes, e.ResourceType):
		s.mu.Lock()
		s.blocked = append(s.blocked, Blocked{URL: req.URL, Type: req.Type, Reason: "resource type"})
		s.mu.Unlock()
		fail(network.ErrorReasonBlockedByClient)
		return
	case e.ResourceType == network.ResourceTypeOther && strings.HasSuffix(e.Request.URL, "/favicon.ico"):
		// The browser asks for it on its own; it is an image.
		s.mu.Lock()
		s.blocked = append(s.blocked, Blocked{URL: req.URL, Type: req.Type, Reason: "resource type"})
		s.mu.Unlock()
		fail(network.ErrorReasonBlockedByClient)
		return
	case !strings.HasPrefix(req.URL, "http://") && !strings.HasPrefix(req.URL, "https://"):
		s.block(req, "scheme")
		fail(network.ErrorReasonBlockedByClient)
		return
	}
	res, err := s.page.Gate.Fetch(s.ctx, req)
	if err == nil && res == nil {
		err = errors.New("gate gave no response")
	}
	if err == nil && res.Err != nil {
		err = res.Err
	}
	if err != nil {
		s.block(req, err.Error())
		fail(network.ErrorReasonBlockedByClient)
		return
	}
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	_, _ = chromedp.Call(ctx, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{
		RequestID: e.RequestID, ResponseCode: int64(res.Status), ResponseHeaders: headers(res, ""), Body: res.Body})
}

// hopHeaders describe the wire message, not the decoded body the browser is handed.
var hopHeaders = map[string]bool{"Content-Encoding": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Keep-Alive": true}

// headers are res's response headers for the browser; contentType, when set, replaces
// Content-Type (the document is handed over as UTF-8).
func headers(res *fetch.Result, contentType string) []*cdpfetch.HeaderEntry {
	names := make([]string, 0, len(res.Header))
	for n := range res.Header {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*cdpfetch.HeaderEntry
	for _, n := range names {
		if hopHeaders[n] || contentType != "" && n == "Content-Type" {
			continue
		}
		for _, v := range res.Header[n] {
			out = append(out, &cdpfetch.HeaderEntry{Name: n, Value: v})
		}
	}
	if contentType != "" {
		out = append(out, &cdpfetch.HeaderEntry{Name: "Content-Type", Value: contentType})
	}
	if res.Location != "" && res.Header.Get("Location") == "" {
		out = append(out, &cdpfetch.HeaderEntry{Name: "Location", Value: res.Location})
	}
	return out
}

// snapshotJS serializes the document as the browser holds it now.
const snapshotJS = `(() => {
  const dt = document.doctype ? "<!DOCTYPE " + document.doctype.name + ">\n" : "";
  return {html: dt + document.documentElement.outerHTML, url: location.href};
})()`

type snapshot struct {
	HTML string `json:"html"`
	URL  string `json:"url"`
}

// scrollJS scrolls to the bottom and returns the page's height before scrolling.
const scrollJS = `(() => { const h = document.documentElement.scrollHeight; window.scrollTo(0, h); return h; })()`

// render loads p in the tab, waits for the network to go idle, scrolls, and takes the DOM.
func (t *tab) render(outer context.Context, p Page, o *Options) (*Result, error) {
	started := time.Now()
	ctx, cancel := context.WithTimeout(outer, o.Deadline)
	defer cancel()
	s := &session{ctx: ctx, page: p, opts: o, last: time.Now()}
	t.mu.Lock()
	t.cur = s
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.cur = nil
		t.mu.Unlock()
	}()
	// Tab actions run on a context derived from the tab's, so the tab outlives them;
	// the render's own deadline (or the caller's context, for the last read) bounds them.
	runUntil := func(bound context.Context, limit time.Duration, a chromedp.Action[chromedp.Void]) error {
		actx, acancel := context.WithTimeout(t.ctx, limit)
		defer acancel()
		stop := context.AfterFunc(bound, acancel)
		defer stop()
		return chromedp.Do(actx, a)
	}
	run := func(limit time.Duration, a chromedp.Action[chromedp.Void]) error { return runUntil(ctx, limit, a) }
	nav := min(o.NavigationTimeout, o.Deadline)
	if err := run(nav, chromedp.Navigate(p.Response.FinalURL)); err != nil {
		return nil, fmt.Errorf("render: load %s: %w", p.Response.FinalURL, err)
	}
	if !s.mainDone.Load() {
		return nil, fmt.Errorf("render: load %s: the browser did not ask for the page", p.Response.FinalURL)
	}
	s.touch() // scripts run until load and after: the quiet period starts no earlier
	// A page that never goes quiet (polling, a stream) is read as it is at the deadline.
	unquiet := s.waitIdle(ctx, o.Idle, run) != nil
	scrolls := 0
	for i := 0; i < o.Scrolls && !unquiet; i++ {
		var before, after float64
		s.touch() // the quiet period starts now: the scroll handler runs after this
		if err := run(nav, chromedp.Func(func(c context.Context, tt *chromedp.Target) error {
			var err error
			before, err = chromedp.Evaluate[float64](scrollJS)(c, tt)
			return err
		})); err != nil {
			return nil, fmt.Errorf("render: scroll %s: %w", p.Response.FinalURL, err)
		}
		if s.waitIdle(ctx, o.Idle, run) != nil {
			unquiet = true
			break
		}
		if err := run(nav, chromedp.Func(func(c context.Context, tt *chromedp.Target) error {
			var err error
			after, err = chromedp.Evaluate[float64](`document.documentElement.scrollHeight`)(c, tt)
			return err
		})); err != nil {
			return nil, fmt.Errorf("render: scroll %s: %w", p.Response.FinalURL, err)
		}
		if after <= before {
			break
		}
		scrolls++
	}
	if outer.Err() != nil {
		return nil, outer.Err()
	}
	var snap snapshot
	if err := runUntil(outer, nav, chromedp.Func(func(c context.Context, tt *chromedp.Target) error {
		var err error
		snap, err = chromedp.Evaluate[snapshot](snapshotJS)(c, tt)
		return err
	})); err != nil {
		return nil, fmt.Errorf("render: read the DOM of %s: %w", p.Response.FinalURL, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Result{HTML: []byte(snap.HTML), URL: snap.URL, Navigations: s.navigations, Requests: s.requests,
		Blocked: s.blocked, Scrolls: scrolls, Duration: time.Since(started), NeverIdle: unquiet}, nil
}

// idleJS resolves when the page's main thread has nothing left to do (or after 5s of
// constant work): scripts still handling a response or building the DOM finish first.
const idleJS = `new Promise(r => (window.requestIdleCallback || ((f) => setTimeout(f, 50)))(() => r(true), {timeout: 5000}))`

// waitIdle waits until the page is done: no request pending for quiet, then the main
// thread idle, then no new request for a short settle time (a request a script started
// just before going idle takes a moment to reach us). Requests are all answered by this
// process, so pending counts are exact; what cannot be known is whether a script will ask
// for more later, hence the quiet periods. A loaded machine slows all of this down rather
// than cutting it short.
func (s *session) waitIdle(ctx context.Context, quiet time.Duration, run func(time.Duration, chromedp.Action[chromedp.Void]) error) error {
	settle := min(quiet/2, 100*time.Millisecond)
	for {
		if err := s.waitQuiet(ctx, quiet); err != nil {
			return err
		}
		s.mu.Lock()
		asked := s.asked
		s.mu.Unlock()
		if err := run(10*time.Second, chromedp.Func(func(c context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](idleJS, chromedp.EvalAwaitPromise)(c, t)
			return err
		})); err != nil && ctx.Err() != nil {
			return fmt.Errorf("render: %s: %w", s.page.Response.FinalURL, ctx.Err())
		}
		s.touch()
		if err := s.waitQuiet(ctx, settle); err != nil {
			return err
		}
		s.mu.Lock()
		done := s.asked == asked
		s.mu.Unlock()
		if done {
			return nil
		}
	}
}

// waitQuiet waits until no request has been pending for quiet.
func (s *session) waitQuiet(ctx context.Context, quiet time.Duration) error {
	tick := time.NewTicker(min(quiet/4, 50*time.Millisecond) + time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		idle := s.pending == 0 && time.Since(s.last) >= quiet
		s.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("render: %s: network never went idle before the deadline: %w", s.page.Response.FinalURL, ctx.Err())
		case <-tick.C:
		}
	}
}
