package testweb

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// client reaches the web's hosts through its listener, as the crawler does
// with Resolve.
func client(addr string) *http.Client {
	d := &net.Dialer{}
	return &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			DisableCompression: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func start(t *testing.T, cfg Config) (*Web, *http.Client) {
	t.Helper()
	w := New(cfg)
	addr, err := w.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if got, want := w.Resolve(), "*.test="+addr; got != want {
		t.Errorf("Resolve() = %q, want %q", got, want)
	}
	return w, client(addr)
}

func caseOf(t *testing.T, w *Web, kind string) Case {
	t.Helper()
	for _, c := range w.BadCases() {
		if c.Kind == kind {
			return c
		}
	}
	t.Fatalf("no case %q", kind)
	return Case{}
}

// allocated returns the bytes allocated by the process while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestHugeBodyIsStreamed(t *testing.T) {
	w, c := start(t, Config{Seed: 1})
	u := caseOf(t, w, "huge-body").URL
	var n int64
	alloc := allocated(func() {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err = io.Copy(io.Discard, resp.Body)
		if err != nil {
			t.Fatal(err)
		}
	})
	if n != 50<<20 {
		t.Errorf("huge body is %d bytes, want %d", n, 50<<20)
	}
	if alloc > 4<<20 {
		t.Errorf("serving and reading 50 MiB allocated %d bytes: the body is not streamed", alloc)
	}
}

func TestGzipBombIsStreamed(t *testing.T) {
	for _, size := range []int64{64 << 20, 2 << 30} {
		w, c := start(t, Config{Seed: 1, BombSize: size})
		u := caseOf(t, w, "gzip-bomb").URL
		var wire, decoded int64
		alloc := allocated(func() {
			resp, err := c.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("bomb has Content-Encoding %q", resp.Header.Get("Content-Encoding"))
			}
			if size > 64<<20 {
				wire, err = io.Copy(io.Discard, resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			counted := &countingReader{r: resp.Body}
			z, err := gzip.NewReader(counted)
			if err != nil {
				t.Fatal(err)
			}
			decoded, err = io.Copy(io.Discard, z)
			if err != nil {
				t.Fatal(err)
			}
			wire = counted.n
		})
		if size <= 64<<20 && decoded != size {
			t.Errorf("bomb of %d decodes to %d bytes", size, decoded)
		}
		if wire > size/500 {
			t.Errorf("bomb of %d bytes is %d bytes on the wire", size, wire)
		}
		if alloc > 4<<20 {
			t.Errorf("bomb of %d bytes: %d bytes allocated", size, alloc)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestStreamsEndWhenClientLeaves checks that endless, dripping and slow
// answers stop, and are logged, once the client gives up.
func TestStreamsEndWhenClientLeaves(t *testing.T) {
	w, c := start(t, Config{Seed: 1, SlowDelay: time.Second})
	for _, tc := range []struct {
		kind       string
		read       int64
		wantStatus int
	}{
		{"endless-body", 1 << 20, 200},
		{"slow-drip", 8, 200},
		{"slow-first-byte", 0, 0},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			u := caseOf(t, w, tc.kind).URL
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			began := time.Now()
			resp, err := c.Do(req)
			if tc.read == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("slow page answered within 100ms of a %v delay", time.Second)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				n, _ := io.CopyN(io.Discard, resp.Body, tc.read)
				if n != tc.read {
					t.Errorf("read %d bytes, want %d", n, tc.read)
				}
				cancel()
				resp.Body.Close()
			}
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				for _, r := range w.Requests() {
					if r.URL == u {
						if r.Status != tc.wantStatus {
							t.Errorf("logged status %d, want %d", r.Status, tc.wantStatus)
						}
						if d := r.End.Sub(began); d > time.Second {
							t.Errorf("handler ran %v after the client left", d)
						}
						return
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Error("request not logged: the handler did not end")
		})
	}
}

func get(t *testing.T, w http.Handler, method, target, host string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, req)
	return rec
}

func TestAnswers(t *testing.T) {
	w := New(Config{Seed: 1})
	home := w.Seeds()[0]
	etag := get(t, w, "GET", home, "").Header().Get("Etag")
	var page string // an ordinary page
	for _, p := range w.sites[0].pages[1:] {
		if !strings.Contains(p.uri, "?") {
			page = p.url
			break
		}
	}
	for _, tc := range []struct {
		name, method, target, host string
		header                     []string
		status                     int
		contains                   string
	}{
		{"home", "GET", home, "", nil, 200, "<title>Welcome to www.site00.test</title>"},
		{"host with port and case", "GET", "/", "WWW.Site00.test:8080", nil, 200, "Welcome"},
		{"head", "HEAD", home, "", nil, 200, ""},
		{"utm ignored", "GET", page + "?utm_source=x&utm_medium=y", "", nil, 200, "<h1>"},
		{"unknown path", "GET", "http://www.site00.test/no/such/page", "", nil, 404, "404"},
		{"unknown host", "GET", "http://www.elsewhere.test/", "", nil, 421, "does not serve"},
		{"index for IP", "GET", "/", "127.0.0.1:1234", nil, 200, "www.site00.test"},
		{"method", "POST", home, "", nil, 405, ""},
		{"if-none-match", "GET", home, "", []string{"If-None-Match", etag}, 304, ""},
		{"if-none-match other", "GET", home, "", []string{"If-None-Match", `"nope"`}, 200, ""},
		{"if-modified-since", "GET", home, "", []string{"If-Modified-Since", "Sat, 01 Jan 2028 00:00:00 GMT"}, 304, ""},
		{"modified since", "GET", home, "", []string{"If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, 200, ""},
		{"robots", "GET", "http://www.site00.test/robots.txt", "", nil, 200, "Disallow: /private/"},
		{"sitemap", "GET", "http://www.site00.test/sitemap.xml", "", nil, 200, "<loc>http://www.site00.test/</loc>"},
		{"calendar", "GET", "http://" + w.sites[0].name + "/calendar?month=2024-13", "", nil, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, w, tc.method, tc.target, tc.host, tc.header...)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if !strings.Contains(rec.Body.String(), tc.contains) {
				t.Errorf("body lacks %q:\n%.300s", tc.contains, rec.Body.String())
			}
			if tc.method == "HEAD" && rec.Body.Len() != 0 {
				t.Errorf("HEAD answered with %d body bytes", rec.Body.Len())
			}
		})
	}
	counts := w.Counts()
	if counts[home] < 8 {
		t.Errorf("Counts()[%s] = %d", home, counts[home])
	}
	if counts[page] != 1 {
		t.Errorf("request with utm_* parameters not counted under the canonical URL: %d", counts[page])
	}
}

func TestRetryAfterThenOK(t *testing.T) {
	w := New(Config{Seed: 1, RetryAfter: 1500 * time.Millisecond})
	for _, kind := range []string{"429-retry-after", "503-retry-after"} {
		u := caseOf(t, w, kind).URL
		want := 429
		if kind[0] == '5' {
			want = 503
		}
		for round := range 2 {
			first := get(t, w, "GET", u, "")
			if first.Code != want || first.Header().Get("Retry-After") != "2" {
				t.Errorf("%s round %d: first answer %d Retry-After %q, want %d and 2", kind, round, first.Code, first.Header().Get("Retry-After"), want)
			}
			if second := get(t, w, "GET", u, ""); second.Code != 200 {
				t.Errorf("%s round %d: second answer %d", kind, round, second.Code)
			}
			w.Reset()
		}
	}
	if n := len(w.Requests()); n != 0 {
		t.Errorf("%d requests logged after Reset", n)
	}
}

func TestTraps(t *testing.T) {
	w := New(Config{Seed: 1})
	for _, tr := range w.Traps() {
		t.Run(tr.Kind, func(t *testing.T) {
			if tr.MaxFetches != 100 {
				t.Errorf("MaxFetches %d", tr.MaxFetches)
			}
			// Follow the first trap link 50 times: every step is a new
			// URL of the same trap.
			u, seen := tr.Entry, map[string]bool{}
			for range 50 {
				if got, ok := w.TrapOf(u); !ok || got != tr {
					t.Fatalf("TrapOf(%s) = %v, %v", u, got, ok)
				}
				if seen[u] {
					t.Fatalf("trap came back to %s", u)
				}
				seen[u] = true
				resp := refGet(w, u, time.Second)
				if resp.status != 200 {
					t.Fatalf("%s: status %d", u, resp.status)
				}
				base, _ := urlParse(u)
				links, _ := refLinks(base, resp.body)
				next := ""
				for _, l := range links {
					if _, ok := w.TrapOf(l); ok && !seen[l] {
						next = l
						break
					}
				}
				if next == "" {
					t.Fatalf("%s leads nowhere new: %v", u, links)
				}
				u = next
			}
		})
	}
	if _, ok := w.TrapOf(w.Seeds()[0]); ok {
		t.Error("a seed is a trap")
	}
}

func TestExtraPages(t *testing.T) {
	cfg := fast(Config{Seed: 1, Hosts: 5})
	cfg.Extra = func(host string, rng *rand.Rand) []Page {
		if host != "www.site01.test" {
			return nil
		}
		return []Page{
			{Path: "/topics/solar.html", Title: "Solar power", Text: []string{"Photovoltaic panels on roofs."},
				Links: []string{"/topics/wind.html", "http://www.site02.test/", "/topics/gone.html"}},
			{Path: "/topics/wind.html", Title: "Wind power", Text: []string{"Turbines offshore."}},
			{Path: "/data/stations.csv", Body: []byte("id,name\n1,a\n"), ContentType: "text/csv"},
			{Path: "/topics/solar.html", Title: "a duplicate path, ignored"},
			{Path: "relative/path", Title: "not a path, ignored"},
		}
	}
	w := New(cfg)
	reach := map[string]bool{}
	for _, u := range w.Reachable() {
		reach[u] = true
	}
	for _, u := range []string{"http://www.site01.test/topics/solar.html", "http://www.site01.test/topics/wind.html",
		"http://www.site01.test/data/stations.csv", "http://www.site01.test/topics/gone.html"} {
		if !reach[u] {
			t.Errorf("%s not reachable", u)
		}
	}
	if rec := get(t, w, "GET", "http://www.site01.test/topics/solar.html", ""); !strings.Contains(rec.Body.String(), "Photovoltaic panels") {
		t.Errorf("extra page body: %.300s", rec.Body.String())
	}
	if rec := get(t, w, "GET", "http://www.site01.test/data/stations.csv", ""); rec.Header().Get("Content-Type") != "text/csv" || rec.Body.String() != "id,name\n1,a\n" {
		t.Errorf("extra file: %q %q", rec.Header().Get("Content-Type"), rec.Body.String())
	}
	if rec := get(t, w, "GET", "http://www.site01.test/topics/gone.html", ""); rec.Code != 404 {
		t.Errorf("link to a missing extra page answers %d", rec.Code)
	}
	w.Reset()
	c := crawl(t, w)
	checkCrawl(t, w, c)
}

func TestExtraHandlerAndUnlinked(t *testing.T) {
	cfg := fast(Config{Seed: 1, Hosts: 3})
	var calls atomic.Int64
	cfg.Extra = func(host string, rng *rand.Rand) []Page {
		if host != "www.site01.test" {
			return nil
		}
		return []Page{
			{Path: "/door.html", Title: "Door", Text: []string{"A way in."}, Links: []string{"/behind.html"}},
			{Path: "/behind.html", Unlinked: true, Links: []string{"/deeper.html"},
				Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					n := calls.Add(1)
					rw.Header().Set("Content-Type", "text/html")
					fmt.Fprintf(rw, `<html><title>visit %d</title><a href="/deeper.html">deeper</a></html>`, n)
				})},
			{Path: "/deeper.html", Title: "Deeper", Unlinked: true},
			{Path: "/orphan.html", Title: "Orphan", Unlinked: true},
		}
	}
	w := New(cfg)
	reach := map[string]bool{}
	for _, u := range w.Reachable() {
		reach[u] = true
	}
	for u, want := range map[string]bool{"http://www.site01.test/door.html": true, "http://www.site01.test/behind.html": true,
		"http://www.site01.test/deeper.html": true, "http://www.site01.test/orphan.html": false} {
		if reach[u] != want {
			t.Errorf("%s reachable = %v, want %v", u, reach[u], want)
		}
	}
	home := get(t, w, "GET", "http://www.site01.test/", "").Body.String()
	if !strings.Contains(home, "door.html") || strings.Contains(home, "behind.html") || strings.Contains(home, "orphan.html") {
		t.Errorf("home links: unlinked pages must not be linked from home")
	}
	for i := 1; i <= 2; i++ {
		rec := get(t, w, "GET", "http://www.site01.test/behind.html", "")
		if !strings.Contains(rec.Body.String(), fmt.Sprintf("visit %d", i)) {
			t.Fatalf("handler page, request %d: %q", i, rec.Body.String())
		}
	}
	if got := w.Counts()["http://www.site01.test/behind.html"]; got != 2 {
		t.Errorf("handler page logged %d times, want 2", got)
	}
	for _, r := range w.Requests() {
		if r.Path == "/behind.html" && r.Status != 200 {
			t.Errorf("handler page logged with status %d", r.Status)
		}
	}
}

func TestSitemaps(t *testing.T) {
	w := New(Config{Seed: 1})
	listed := map[string]bool{}
	for _, sm := range w.Sitemaps() {
		p, _ := url.Parse(sm)
		// (A moved robots.txt names it at the end of its redirects.)
		if body := strings.ToLower(string(w.byName[p.Host].robots.body)); !strings.Contains(body, "sitemap: "+sm) {
			t.Errorf("robots.txt of %s does not name %s", p.Host, sm)
		}
		rec := get(t, w, "GET", sm, "")
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/xml; charset=utf-8" {
			t.Errorf("%s: %d %s", sm, rec.Code, rec.Header().Get("Content-Type"))
		}
		for _, m := range regexp.MustCompile(`<loc>([^<]+)</loc>`).FindAllStringSubmatch(rec.Body.String(), -1) {
			listed[m[1]] = true
		}
	}
	if len(w.SitemapOnly()) == 0 {
		t.Fatal("no sitemap-only pages")
	}
	for _, u := range w.SitemapOnly() {
		if !listed[u] {
			t.Errorf("%s is not in a sitemap", u)
		}
		if rec := get(t, w, "GET", u, ""); rec.Code != 200 {
			t.Errorf("%s answers %d", u, rec.Code)
		}
	}
}

func TestKeepHeaders(t *testing.T) {
	for _, keep := range []bool{false, true} {
		w := New(Config{Seed: 1, Hosts: 3, KeepHeaders: keep})
		get(t, w, "GET", w.Seeds()[0], "", "User-Agent", "sonda/test", "X-Probe", "1")
		r := w.Requests()[0]
		if r.UserAgent != "sonda/test" {
			t.Errorf("UserAgent %q", r.UserAgent)
		}
		if got := r.Header.Get("X-Probe") == "1"; got != keep {
			t.Errorf("KeepHeaders %v: header kept %v", keep, got)
		}
	}
}

func TestRestart(t *testing.T) {
	w := New(Config{Seed: 1, Hosts: 3})
	for range 2 {
		addr, err := w.Start()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Start(); err == nil {
			t.Error("second Start while serving succeeded")
		}
		resp, err := client(addr).Get(w.Seeds()[0])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if err := w.Close(); err != nil {
			t.Error(err)
		}
		if w.Addr() != "" {
			t.Errorf("Addr() = %q after Close", w.Addr())
		}
	}
	if n := len(w.Requests()); n != 2 {
		t.Errorf("%d requests logged, want 2", n)
	}
}
