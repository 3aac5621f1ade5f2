package crawl

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/render"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/warc"
)

// The rendering tests crawl testweb.ScriptWeb with the real Chromium. Without one they
// skip, except under CI=true, where a missing browser fails them.

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := render.FindChromium(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("rendering tests must run in CI: %v", err)
		}
		t.Skipf("skipping rendering test: %v", err)
	}
}

func startScriptWeb(t *testing.T) *testweb.ScriptWeb {
	t.Helper()
	w := &testweb.ScriptWeb{Articles: 7, Datasets: 3, StaticHosts: 2, StaticPages: 4}
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func scriptWebConfig(t testing.TB, w *testweb.ScriptWeb, mode string) config.Config {
	cfg := config.Default()
	cfg.Data = t.TempDir()
	cfg.Crawl.Seeds = w.Seeds()
	cfg.Crawl.Concurrency = 4
	cfg.Scope.Follow = "any"
	cfg.Scope.AllowDomains = []string{"test"}
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.Resolve = []string{w.Resolve()}
	cfg.Fetch.AcceptTypes = []string{"*/*"}
	cfg.Politeness.MinDelay = 0
	cfg.Render.Mode = mode
	cfg.Render.Idle = 200 * time.Millisecond
	cfg.Log.Level = "warn"
	return cfg
}

// docSink keeps what each crawled document said.
type docSink struct {
	mu      sync.Mutex
	docs    map[string]*Document
	metrics map[string]float64 // the crawl's metrics at its end (counters and gauges)
}

func (s *docSink) Name() string { return "test-docs" }
func (s *docSink) Consume(_ context.Context, d *Document) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs == nil {
		s.docs = map[string]*Document{}
	}
	s.docs[d.Item.URL] = d
	return nil
}

func (s *docSink) get(u string) *Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[u]
}

func crawlScriptWeb(t *testing.T, cfg config.Config, opts ...Option) (Summary, *docSink) {
	t.Helper()
	sink := &docSink{}
	c, err := New(cfg, append(opts, WithSinks(sink))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != "frontier empty" {
		t.Fatalf("crawl stopped: %s", sum.Reason)
	}
	mfs, err := c.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sink.metrics = map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				sink.metrics[mf.GetName()] += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sink.metrics[mf.GetName()] += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				sink.metrics[mf.GetName()] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, sink
}

// TestRenderModes crawls the script-built web with each render mode: never finds none of
// what scripts build; auto and always find every article, dataset page and geodata file,
// read each article's text, and refuse the hostile script's requests.
func TestRenderModes(t *testing.T) {
	needChromium(t)
	for _, mode := range []string{"never", "auto", "always"} {
		t.Run(mode, func(t *testing.T) {
			w := startScriptWeb(t)
			sum, docs := crawlScriptWeb(t, scriptWebConfig(t, w, mode))
			if mode == "never" {
				for _, u := range append(w.ArticleURLs(), w.DatasetURLs()...) {
					if docs.get(u) != nil {
						t.Errorf("%s was found without rendering", u)
					}
				}
				if sum.Render.Renders != 0 {
					t.Errorf("%d renders with render never", sum.Render.Renders)
				}
				return
			}
			for i, u := range w.ArticleURLs() {
				d := docs.get(u)
				if d == nil {
					t.Errorf("article %s not crawled", u)
					continue
				}
				if !strings.Contains(d.Text, testweb.ArticlePhrase(i+1)) || !d.Record.Rendered {
					t.Errorf("article %s: text %q (rendered %v) lacks its article", u, d.Text, d.Record.Rendered)
				}
				if n := w.Hits("www.spa.test", strings.TrimPrefix(u, "http://www.spa.test")); n != 1 {
					t.Errorf("%s requested %d times, want once (the browser is handed the response)", u, n)
				}
			}
			for _, u := range append(w.DatasetURLs(), w.GeoFileURLs()...) {
				if docs.get(u) == nil {
					t.Errorf("portal URL %s not crawled", u)
				}
			}
			// The SPA's script is fetched once for the crawl: the gate's cache.
			if n := w.Hits("www.spa.test", "/static/app.js"); n != 1 {
				t.Errorf("app.js fetched %d times, want 1", n)
			}
			// The hostile page: its script's link is followed, its private and disallowed
			// requests never leave sonda.
			if docs.get("http://www.hostile.test/after.html") == nil {
				t.Error("the hostile page's script-built link was not followed")
			}
			if n := w.UnknownHits(); n != 0 {
				t.Errorf("%d requests reached the server by private IP address", n)
			}
			if n := w.Hits("www.hostile.test", "/private/data.json"); n != 0 {
				t.Errorf("the robots-disallowed path was fetched %d times", n)
			}
			if sum.Render.Blocked["private-address"] < 2 || sum.Render.Blocked["robots-disallowed"] < 1 {
				t.Errorf("blocked %v, want ≥ 2 private-address and ≥ 1 robots-disallowed", sum.Render.Blocked)
			}
			if hr := sum.Render.Hosts["www.spa.test"]; hr == nil || hr.LinksAdded < int64(len(w.ArticleURLs())) {
				t.Errorf("links added on www.spa.test: %+v, want ≥ %d", hr, len(w.ArticleURLs()))
			}
			if mode == "auto" {
				rendered := 0
				for _, u := range w.StaticURLs() {
					if d := docs.get(u); d == nil {
						t.Errorf("static page %s not crawled", u)
					} else if d.Record.Rendered {
						rendered++
					}
				}
				if rendered*10 > len(w.StaticURLs()) {
					t.Errorf("auto rendered %d of %d static pages, want ≤ 10%%", rendered, len(w.StaticURLs()))
				}
				hr := sum.Render.Hosts["www.thin.test"]
				if hr == nil || !hr.Off || hr.Renders > learnAfter {
					t.Errorf("www.thin.test: %+v, want rendering turned off after %d renders that did not pay", hr, learnAfter)
				}
			}
		})
	}
}

// TestRenderedWARC: the WARC keeps the raw response of a rendered page and, in a
// conversion record that refers to it, the rendered DOM.
func TestRenderedWARC(t *testing.T) {
	needChromium(t)
	w := startScriptWeb(t)
	cfg := scriptWebConfig(t, w, "always")
	cfg.Crawl.Seeds = []string{"http://www.spa.test/article/2"}
	cfg.Scope.MaxDepth = 1
	_, docs := crawlScriptWeb(t, cfg)
	d := docs.get("http://www.spa.test/article/2")
	if d == nil || d.Record.RenderedWARC == "" {
		t.Fatalf("no rendered capture recorded: %+v", d)
	}
	for _, m := range []string{"sonda_render_pages_total", "sonda_render_duration_seconds", "sonda_render_browser_memory_bytes", "sonda_render_subrequests_total"} {
		if docs.metrics[m] <= 0 {
			t.Errorf("metric %s = %v, want > 0", m, docs.metrics[m])
		}
	}
	files, _ := filepath.Glob(filepath.Join(WARCDir(cfg.Data), "*.warc.gz"))
	responses := map[string]string{} // record id → target
	var conversions []*warc.Record
	for _, f := range files {
		r, err := warc.OpenFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch rec.Type() {
			case warc.TypeResponse:
				responses[rec.Header.Get(warc.FieldRecordID)] = rec.Header.Get(warc.FieldTargetURI)
				if rec.Header.Get(warc.FieldTargetURI) == "http://www.spa.test/article/2" && strings.Contains(string(rec.Payload()), testweb.ArticlePhrase(2)) {
					t.Error("the response record holds the rendered page, not the raw one")
				}
			case warc.TypeConversion:
				conversions = append(conversions, rec)
			}
		}
		r.Close()
	}
	found := false
	for _, c := range conversions {
		if c.Header.Get(warc.FieldTargetURI) != "http://www.spa.test/article/2" {
			continue
		}
		found = true
		if got := responses[c.Header.Get(warc.FieldRefersTo)]; got != "http://www.spa.test/article/2" {
			t.Errorf("conversion record refers to %q (%s), want the page's response record", c.Header.Get(warc.FieldRefersTo), got)
		}
		if !strings.Contains(string(c.Content), testweb.ArticlePhrase(2)) {
			t.Error("the conversion record lacks the rendered article")
		}
	}
	if !found {
		t.Errorf("no conversion record for the article among %d", len(conversions))
	}
	// The subresources are archived too, so the capture can be replayed.
	for _, want := range []string{"http://www.spa.test/static/app.js", "http://www.spa.test/api/article/2"} {
		ok := false
		for _, target := range responses {
			ok = ok || target == want
		}
		if !ok {
			t.Errorf("no response record for %s", want)
		}
	}
}

// killingRenderer kills the browser with SIGKILL during the third render, once its page
// has asked for its first subresource.
type killingRenderer struct {
	*render.Renderer
	n      atomic.Int64
	killed atomic.Bool
}

func (k *killingRenderer) Render(ctx context.Context, p render.Page) (*render.Result, error) {
	if k.n.Add(1) == 3 {
		p.Gate = &killGate{Gate: p.Gate, k: k}
	}
	return k.Renderer.Render(ctx, p)
}

type killGate struct {
	render.Gate
	k *killingRenderer
}

func (g *killGate) Fetch(ctx context.Context, r render.Request) (*fetch.Result, error) {
	if g.k.killed.CompareAndSwap(false, true) {
		if p, err := os.FindProcess(g.k.BrowserPID()); err == nil {
			p.Signal(syscall.SIGKILL)
		}
		return nil, errors.New("killed the browser")
	}
	return g.Gate.Fetch(ctx, r)
}

// TestBrowserCrashMidCrawl: a kill -9 of Chromium in the middle of a render is survived:
// the page is rendered again, the crawl finishes and every article is read.
func TestBrowserCrashMidCrawl(t *testing.T) {
	needChromium(t)
	w := startScriptWeb(t)
	cfg := scriptWebConfig(t, w, "always")
	cfg.Crawl.Seeds = []string{"http://www.spa.test/"}
	r, err := render.New(RenderOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	k := &killingRenderer{Renderer: r}
	sum, docs := crawlScriptWeb(t, cfg, WithRenderer(k))
	if !k.killed.Load() {
		t.Fatal("the browser was never killed")
	}
	for i, u := range w.ArticleURLs() {
		if d := docs.get(u); d == nil || !strings.Contains(d.Text, testweb.ArticlePhrase(i+1)) {
			t.Errorf("article %s lost after the crash", u)
		}
	}
	if sum.Render.Crashes != 1 || sum.Render.Restarts != 1 || sum.Render.Failures != 0 {
		t.Errorf("render figures %+v: want 1 crash, 1 restart, no failure", sum.Render)
	}
}

// TestSubresourcePoliteness: the gate spaces its requests to a host by the crawl's
// min-delay, counting from the page's own fetch.
func TestSubresourcePoliteness(t *testing.T) {
	needChromium(t)
	w := startScriptWeb(t)
	cfg := scriptWebConfig(t, w, "always")
	cfg.Crawl.Seeds = []string{"http://www.spa.test/article/5"}
	// Only the page is crawled (its links are denied); its script and API call are not
	// pages, so the deny rule leaves them alone.
	cfg.Scope.Deny = []string{`^http://www\.spa\.test/($|article/[0-46-9])`}
	cfg.Politeness.MinDelay = 300 * time.Millisecond
	crawlScriptWeb(t, cfg)
	times := w.Times("www.spa.test")
	if len(times) < 4 { // robots.txt, the page, app.js, the API
		t.Fatalf("%d requests to www.spa.test, want ≥ 4", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 300*time.Millisecond {
			t.Errorf("requests %d and %d to www.spa.test %v apart, under min-delay 300ms", i-1, i, gap)
		}
	}
}

func TestProgressLineShowsRendering(t *testing.T) {
	p := Progress{Pages: 10, Render: &RenderSummary{Mode: "auto", Renders: 3, P50Ms: 900, P99Ms: 1400, LinksAdded: 12, Restarts: 1, MemoryBytes: 400 << 20}}
	want := "rendered 3 (p50 900ms p99 1400ms, +12 links, 1 restarts, browser 400.0 MiB)"
	if got := p.String(); !strings.Contains(got, want) {
		t.Errorf("progress line %q lacks %q", got, want)
	}
	if got := (Progress{Pages: 10}).String(); strings.Contains(got, "rendered") {
		t.Errorf("progress line without rendering mentions it: %q", got)
	}
}
