package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/testweb"
)

func TestHelpTeaches(t *testing.T) {
	out, _, code := run(t, nil, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"demo", "init", "crawl", "status", "export", "check", "testweb", "SONDA_"} {
		if !strings.Contains(out, want) {
			t.Errorf("sonda --help does not mention %q", want)
		}
	}
	out, _, _ = run(t, nil, "crawl", "--help")
	for _, want := range []string{"--seed", "--max-pages", "--duration", "--allow-private", "--min-delay", "--per-host", "--concurrency", "--link-strategy", "Examples"} {
		if !strings.Contains(out, want) {
			t.Errorf("sonda crawl --help does not mention %q", want)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	cases := []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"crawl", "--bogus"}, nil, "unknown flag"},
		{[]string{"crawl", "--data", t.TempDir()}, nil, "give seeds"},
		{[]string{"init", "--profile", "nope", t.TempDir()}, nil, "topic, news, geo"},
		{[]string{"status", "--data", t.TempDir()}, []string{"SONDA_FETCH_USERAGENT=x"}, "SONDA_FETCH_USERAGENT"},
		{[]string{"check", "robots", "--agent", "sonda", "/x"}, nil, "--rules"},
		{[]string{"export", "--data", filepath.Join(t.TempDir(), "none")}, nil, "no crawl"},
	}
	for _, c := range cases {
		_, stderr, code := run(t, c.env, c.args...)
		if c.want == "give seeds" {
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("sonda %v: exit %d, stderr %q; want an error saying %q", c.args, code, stderr, c.want)
			}
			continue
		}
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("sonda %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}

// TestStatusOfAForeignDirectory: status on a directory that is not a crawl's does not tell
// the user to crawl into it; on a new one it does.
func TestStatusOfAForeignDirectory(t *testing.T) {
	_, stderr, code := run(t, nil, "status", "--data", "/etc")
	if code == 0 || strings.Contains(stderr, "sonda crawl --data /etc") || !strings.Contains(stderr, "not a sonda data directory") {
		t.Errorf("status --data /etc: exit %d: %s", code, stderr)
	}
	fresh := filepath.Join(t.TempDir(), "new")
	if _, stderr, _ := run(t, nil, "status", "--data", fresh); !strings.Contains(stderr, "sonda crawl --data "+fresh) {
		t.Errorf("status on a new directory should suggest crawling there: %s", stderr)
	}
}

// TestInitDefaultsToAPlainCrawl: init without --profile writes a plain crawl (no topic) and
// names the profiles; the data directory it implies is where the root help says.
func TestInitDefaultsToAPlainCrawl(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mycrawl")
	out, stderr, code := run(t, nil, "init", dir)
	if code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sonda.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "default profile") || !strings.Contains(string(b), "\n  topics: []") {
		t.Errorf("init without --profile did not write a plain crawl:\n%s", b)
	}
	for _, p := range []string{"topic", "news", "geo"} {
		if !strings.Contains(out, p) {
			t.Errorf("init output does not name the %s profile: %s", p, out)
		}
	}
	// The root help's "Start here": data of `crawl -c mycrawl/sonda.yaml` is mycrawl/sonda-data.
	help, _, _ := run(t, nil, "--help")
	if !strings.Contains(help, "sonda crawl -c mycrawl/sonda.yaml") || !strings.Contains(help, "--data mycrawl/sonda-data") {
		t.Fatalf("the root help changed; update this test:\n%s", help)
	}
	_, stderr, _ = run(t, nil, "status", "-c", filepath.Join(dir, "sonda.yaml"))
	if !strings.Contains(stderr, filepath.Join(dir, "sonda-data")) {
		t.Errorf("status -c DIR/sonda.yaml does not look in DIR/sonda-data: %s", stderr)
	}
}

func TestInitWritesCommentedConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mycrawl")
	out, stderr, code := run(t, nil, "init", "--profile", "news", dir)
	if code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	path := filepath.Join(dir, "sonda.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "news profile") || !strings.Contains(string(b), "# Minimum pause") || !strings.Contains(out, "sonda crawl -c") {
		t.Fatalf("init output or file lacks the expected guidance:\n%s\n%s", out, b)
	}
	if _, stderr, code := run(t, nil, "init", dir); code != exitUsage || !strings.Contains(stderr, "--force") {
		t.Fatalf("init over an existing file: exit %d, %q", code, stderr)
	}
	// The written file is a valid configuration.
	if _, stderr, code := run(t, nil, "status", "-c", path, "--data", t.TempDir()); strings.Contains(stderr, "config:") {
		t.Fatalf("the generated config does not load: exit %d: %s", code, stderr)
	}
}

func TestCheckRobots(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "robots.txt")
	os.WriteFile(rules, []byte("User-agent: *\nDisallow: /private/\nAllow: /private/ok$\n\nUser-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n"), 0o644)
	cases := []struct {
		agent, url, want string
	}{
		{"sonda", "http://example.com/private/x", "disallow"},
		{"sonda", "http://example.com/private/ok", "allow"},
		{"sonda", "http://example.com/private/ok?q", "disallow"},
		{"sonda", "http://example.com/public", "allow"},
		{"sonda", "/private/y", "disallow"},
		{"FooBot/2.1", "https://example.com/anything", "disallow"},
		{"foobot", "https://example.com/foo/bar/ツ", "allow"},
		{"foobot", "https://example.com/robots.txt", "allow"},
	}
	for _, c := range cases {
		out, stderr, code := run(t, nil, "check", "robots", "--rules", rules, "--agent", c.agent, c.url)
		if code != 0 {
			t.Fatalf("check robots %s: exit %d: %s", c.url, code, stderr)
		}
		if got := strings.TrimSpace(out); got != c.want+" "+c.url {
			t.Errorf("agent %s, %s: got %q, want %q", c.agent, c.url, got, c.want+" "+c.url)
		}
	}
	// A URL longer than the normalizer takes, an empty URL and an empty agent are decided.
	long := "http://example.com/private/" + strings.Repeat("a", 16000)
	edge := []struct{ agent, url, want string }{
		{"sonda", long, "disallow"},
		{"FooBot", "", "disallow"},
		{"", "http://example.com/anything", "allow"},
		{"", "http://example.com/private/x", "disallow"},
	}
	for _, c := range edge {
		out, stderr, code := run(t, nil, "check", "robots", "--rules", rules, "--agent", c.agent, c.url)
		if code != 0 || !strings.HasPrefix(out, c.want+" ") {
			t.Errorf("agent %q, URL of %d bytes: exit %d, %q (%s), want %s", c.agent, len(c.url), code, out, stderr, c.want)
		}
	}
	// Several URLs: one line each, in order.
	out, _, _ := run(t, nil, "check", "robots", "--rules", rules, "--agent", "sonda", "http://a/private/1", "http://a/2")
	if out != "disallow http://a/private/1\nallow http://a/2\n" {
		t.Errorf("several URLs: got %q", out)
	}
}

// TestScopeFlag: --scope chooses what a crawl follows, as scope.follow (and scope.allow for
// a regular expression) do; a bad value is a usage error that names the choices.
func TestScopeFlag(t *testing.T) {
	urls := []string{"http://www.example.com/a", "http://blog.example.com/b", "http://other.org/c", "http://other.org/docs/d"}
	for _, c := range []struct {
		scope string
		want  []bool // per URL: followed
	}{
		{"", []bool{true, true, false, false}},
		{"seeds", []bool{true, false, false, false}},
		{"domain", []bool{true, true, false, false}},
		{"any", []bool{true, true, true, true}},
		{`^http://other\.org/docs/`, []bool{false, false, false, true}},
	} {
		args := []string{"check", "url", "--json", "--seed", "http://www.example.com/"}
		if c.scope != "" {
			args = append(args, "--scope", c.scope)
		}
		out, stderr, _ := run(t, nil, append(args, urls...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(urls) {
			t.Fatalf("--scope %q: %d lines: %s %s", c.scope, len(lines), out, stderr)
		}
		for i, l := range lines {
			if got := strings.Contains(l, `"allowed":true`); got != c.want[i] {
				t.Errorf("--scope %q: %s followed = %v, want %v (%s)", c.scope, urls[i], got, c.want[i], l)
			}
		}
	}
	_, stderr, code := run(t, nil, "check", "url", "--scope", "every(where", "http://a/")
	if code != 2 || !strings.Contains(stderr, "seeds, domain or any") {
		t.Errorf("a bad --scope: exit %d, %s", code, stderr)
	}
}

func TestCheckURL(t *testing.T) {
	out, stderr, code := run(t, nil, "check", "url", "--seed", "http://example.com/",
		"HTTP://Example.COM:80/a/./b/../c?utm_source=x&id=1#frag", "http://other.org/", "mailto:x@y.z")
	if code != 1 {
		t.Fatalf("exit %d (want 1: not all allowed): %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want one line per URL, got:\n%s", out)
	}
	for i, want := range [][]string{
		{"http://example.com/a/c?id=1", "example.com", "allow"},
		{"http://other.org/", "other.org", "deny (follow-domain"},
		{"mailto:x@y.z", "invalid", "not crawlable"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	out, _, code = run(t, nil, "check", "url", "--json", "--seed", "http://example.com/", "http://www.example.com/x")
	var row struct {
		Normalized, HostKey, DomainKey string `json:"-"`
		Allowed                        bool   `json:"allowed"`
		N                              string `json:"normalized"`
		D                              string `json:"domain_key"`
	}
	if err := json.Unmarshal([]byte(out), &row); err != nil || code != 0 || !row.Allowed || row.D != "example.com" {
		t.Fatalf("--json: exit %d, %q (%v)", code, out, err)
	}
}

// serveWeb starts a small test web for CLI crawls.
func serveWeb(t *testing.T, cfg testweb.Config) (*testweb.Web, string) {
	t.Helper()
	web := testweb.New(cfg)
	addr, err := web.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	return web, addr
}

func crawlArgs(web *testweb.Web, addr, data string) []string {
	args := []string{"crawl", "--data", data, "--allow-private", "--resolve", "*.test=" + addr, "--min-delay", "0"}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	return args
}

var quickEnv = []string{"SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=warn"}

func TestCrawlStatusExport(t *testing.T) {
	web, addr := serveWeb(t, testweb.Config{Seed: 3, Hosts: 5, PagesPerHost: 8, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	out, stderr, code := run(t, quickEnv, crawlArgs(web, addr, data)...)
	if code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "crawl frontier empty") || !strings.Contains(out, "pages fetched") {
		t.Fatalf("crawl summary missing:\n%s", out)
	}
	out, _, code = run(t, nil, "status", "--data", data)
	if code != 0 || !strings.Contains(out, "finished: frontier empty") || !strings.Contains(out, "0 queued") {
		t.Fatalf("status: exit %d:\n%s", code, out)
	}
	out, stderr, code = run(t, nil, "export", "--data", data, "--what", "pages")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	required := []string{"url", "final_url", "status", "fetched_at", "content_type", "title", "depth", "parent", "fingerprint", "changed"}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("export line %d is not JSON: %v", n+1, err)
		}
		for _, f := range required {
			if _, ok := rec[f]; !ok {
				t.Fatalf("export record lacks %q: %s", f, sc.Text())
			}
		}
		n++
	}
	if want := len(web.Reachable()) + len(web.Disallowed()); n < len(web.Reachable()) || n > want {
		t.Fatalf("export wrote %d records, want between %d and %d", n, len(web.Reachable()), want)
	}
	// A second run resumes the finished crawl: nothing is fetched again.
	before := len(web.Requests())
	if _, stderr, code := run(t, quickEnv, crawlArgs(web, addr, data)...); code != 0 {
		t.Fatalf("second crawl: exit %d: %s", code, stderr)
	}
	if after := len(web.Requests()); after != before {
		t.Fatalf("resuming a finished crawl made %d requests", after-before)
	}
}

// TestSIGTERMStopsCleanly: SIGTERM ends a crawl promptly with a summary, leaves a
// resumable state, and the resumed crawl finishes the job.
func TestSIGTERMStopsCleanly(t *testing.T) {
	web, addr := serveWeb(t, testweb.Config{Seed: 5, Hosts: 10, PagesPerHost: 30, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	metrics := freePort(t)
	cmd := exec.Command(sondaBin, append(crawlArgs(web, addr, data), "--min-delay", "200ms", "--metrics-addr", metrics)...)
	cmd.Env = append(append(os.Environ(), quickEnv...), "GOMEMLIMIT=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// While it runs: metrics are served, and they count.
	body := waitMetrics(t, "http://"+metrics+"/metrics")
	for _, m := range []string{"sonda_pages_fetched_total", "sonda_frontier_queued", "sonda_fetch_duration_seconds"} {
		if !strings.Contains(body, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	// A crawl's Go memory limit is memory-limit alone (sonda serve adds its search caches').
	if got := goMemoryLimit(t, body); got != 384<<20 {
		t.Errorf("crawl's Go memory limit %d, want memory-limit's 384 MiB", got)
	}
	// While it runs: status reads the snapshot the crawl keeps writing.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _, _ := run(t, nil, "status", "--data", data)
		if strings.Contains(st, "state:     running") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never said running:\n%s", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("crawl after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("crawl did not stop within 10s of SIGTERM")
	}
	if !strings.Contains(out.String(), "interrupted") || !strings.Contains(out.String(), "resume") {
		t.Fatalf("no interrupted summary / resume hint:\n%s", out.String())
	}
	st, _, _ := run(t, nil, "status", "--data", data)
	if !strings.Contains(st, "finished: interrupted") {
		t.Fatalf("status after SIGTERM:\n%s", st)
	}
	if _, stderr, code := run(t, quickEnv, crawlArgs(web, addr, data)...); code != 0 {
		t.Fatalf("resumed crawl: exit %d: %s", code, stderr)
	}
	for _, p := range web.CheckFetches() {
		t.Errorf("after stop and resume: %s", p)
	}
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// goMemoryLimit is the Go memory limit a sonda process reports in its metrics
// (go_gc_gomemlimit_bytes).
func goMemoryLimit(t *testing.T, metrics string) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go_gc_gomemlimit_bytes (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		t.Fatal("the metrics lack go_gc_gomemlimit_bytes")
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(v)
}

func waitMetrics(t *testing.T, url string) string {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if regexp.MustCompile(`(?m)^sonda_pages_fetched_total [1-9]`).Match(b) {
				return string(b)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no metrics counting fetched pages at %s", url)
	return ""
}

func TestProgressLinesWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := progressPrinter(&buf)
	for i := 0; i < 25; i++ {
		p(crawlProgressSample(i))
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(buf.String(), "\r") {
		t.Fatalf("want one plain line per 10 s off a terminal, got %q", buf.String())
	}
	if !strings.Contains(lines[0], "pages/s") || !strings.Contains(lines[0], "queued") {
		t.Fatalf("progress line lacks figures: %q", lines[0])
	}
}

func crawlProgressSample(i int) crawl.Progress {
	return crawl.Progress{Elapsed: time.Duration(i) * time.Second, Pages: int64(i * 10), PagesPerSec: 10, Queued: 5, Hosts: 2}
}

// TestSecondSignalStopsAtOnce: the first SIGTERM lets a fetch in flight finish
// (crawl.stop-grace); a second one ends the process without waiting for it.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	started := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/slow">slow</a></body></html>`)
		case "/slow":
			select {
			case started <- struct{}{}:
			default:
			}
			select { // far longer than the test waits
			case <-time.After(time.Minute):
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	data := t.TempDir()
	cmd := exec.Command(sondaBin, "crawl", "--data", data, "--allow-private", "--min-delay", "0", "--seed", srv.URL+"/")
	cmd.Env = append(os.Environ(), "SONDA_LOG_LEVEL=info", "SONDA_CRAWL_STOP_GRACE=1m", "SONDA_FETCH_FIRST_BYTE_TIMEOUT=2m")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done // the output is written until the process is waited for
		t.Fatalf("the crawl never requested /slow:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the crawl stopped (%v) without letting /slow finish:\n%s", err, out.String())
	case <-time.After(time.Second):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("a second SIGTERM did not stop the crawl:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "interrupt again to stop at once") {
		t.Errorf("the first signal did not say how to stop at once:\n%s", out.String())
	}
}
