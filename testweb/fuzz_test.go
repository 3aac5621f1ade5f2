package testweb

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// cleanSegments turns fuzz input into path segments of a clean path.
func cleanSegments(s string) []string {
	var out []string
	for _, seg := range strings.Split(s, "/") {
		seg = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_:~", r) {
				return r
			}
			return -1
		}, seg)
		if seg != "" && seg != "." && seg != ".." {
			out = append(out, seg)
		}
	}
	return out
}

func FuzzRelative(f *testing.F) {
	f.Add("a/b", "a/c/d.html", "", false)
	f.Add("", "x.html", "page=2", false)
	f.Add("a/b/c", "", "", true)
	f.Add("news", "news", "", true)
	f.Add("a", "b:c/d", "q=1", false)
	f.Add("a/b", "a/b", "", false)
	f.Fuzz(func(t *testing.T, from, to, query string, dirTarget bool) {
		dir := "/"
		if segs := cleanSegments(from); len(segs) > 0 {
			dir = "/" + strings.Join(segs, "/") + "/"
		}
		target := "/" + strings.Join(cleanSegments(to), "/")
		if dirTarget && target != "/" {
			target += "/"
		}
		query = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '=' || r == '&' {
				return r
			}
			return -1
		}, query)
		full := target
		if query != "" {
			full += "?" + query
		}
		rel := relative(dir, full)
		base, err := url.Parse("http://h.test" + dir + "page.html")
		if err != nil {
			t.Fatal(err)
		}
		ref, err := url.Parse(rel)
		if err != nil {
			t.Fatalf("relative(%q, %q) = %q: %v", dir, full, rel, err)
		}
		got := base.ResolveReference(ref)
		if got.Host != "h.test" || got.Path != target || got.RawQuery != query {
			t.Fatalf("relative(%q, %q) = %q resolves to %q", dir, full, rel, got)
		}
	})
}

// refMatch is robotsMatch written with regular expressions.
func refMatch(pattern, s string) bool {
	expr := strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*")
	if strings.HasSuffix(expr, `\$`) {
		expr = strings.TrimSuffix(expr, `\$`) + "$"
	}
	return regexp.MustCompile("^(?s:" + expr + ")").MatchString(s)
}

func FuzzRobotsMatch(f *testing.F) {
	for _, c := range [][2]string{
		{"/private/", "/private/x.html"}, {"/*.cgi$", "/bin/run.cgi"}, {"/*.cgi$", "/bin/run.cgi?x=1"},
		{"/*/drafts/", "/news/drafts/a"}, {"*", ""}, {"$", ""}, {"/a*b*c$", "/aXbYc"}, {"/a$b", "/a$b"},
		{"**", "x"}, {"/a*", "/"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 256 || !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return // the regular-expression reference needs UTF-8
		}
		if got, want := robotsMatch(pattern, s), refMatch(pattern, s); got != want {
			t.Fatalf("robotsMatch(%q, %q) = %v, want %v", pattern, s, got, want)
		}
	})
}

// discardWriter is a ResponseWriter that only counts.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) WriteHeader(s int) {
	if d.status == 0 {
		d.status = s
	}
}
func (d *discardWriter) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += len(p)
	return len(p), nil
}
func (d *discardWriter) Flush() {}

func FuzzServeHTTP(f *testing.F) {
	w := New(Config{Seed: 1, Hosts: 12, Disable: Slow, BombSize: 1 << 20})
	for _, u := range append(w.Reachable()[:40], w.Traps()[0].Entry, w.Traps()[1].Entry, w.Traps()[2].Entry) {
		p, _ := url.Parse(u)
		f.Add("GET", p.Host, p.RequestURI())
	}
	f.Add("HEAD", "WWW.SITE01.TEST.:80", "/robots.txt")
	f.Add("GET", "[::1]:80", "/")
	f.Add("PUT", "www.site01.test", "/")
	f.Add("GET", "www.site01.test", "/calendar?month=9999-12")
	f.Add("GET", "www.site01.test", "/shop/item-3.html?sid=123&utm_x=1")
	f.Add("GET", "www.site01.test", "/deep/sub/sub/sub/")
	ok := map[int]bool{200: true, 301: true, 302: true, 304: true, 307: true, 308: true, 404: true, 405: true,
		410: true, 421: true, 429: true, 500: true, 503: true}
	f.Fuzz(func(t *testing.T, method, host, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || method == "" {
			return
		}
		req := (&http.Request{Method: method, Host: host, URL: u, RequestURI: target, Header: http.Header{}}).WithContext(context.Background())
		before := logSize(w)
		rw := &discardWriter{h: http.Header{}}
		w.ServeHTTP(rw, req)
		if !ok[rw.status] {
			t.Fatalf("%s %s %s: status %d", method, host, target, rw.status)
		}
		if got := logSize(w); got != before+1 {
			t.Fatalf("log grew from %d to %d", before, got)
		}
		if before > 10000 {
			w.Reset()
		}
	})
}

func logSize(w *Web) int {
	n := 0
	for _, l := range w.logs() {
		l.mu.Lock()
		n += len(l.entries)
		l.mu.Unlock()
	}
	return n
}
