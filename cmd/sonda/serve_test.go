package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// httpDo sends a request and returns the status and body.
func httpDo(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// startServe starts `sonda serve` on data at a free loopback port with the environment
// plus env, its output in out; the process is killed when the test ends. It returns
// without waiting for the server to listen.
func startServe(t *testing.T, data string, env ...string) (cmd *exec.Cmd, base string, out *syncBuffer) {
	t.Helper()
	listen := freePort(t)
	cmd = exec.Command(sondaBin, "serve", "--data", data, "--addr", listen)
	cmd.Env = append(os.Environ(), env...)
	out = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, "http://" + listen, out
}

// waitFor polls until cond holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestServeCommand: sonda serve opens a crawled data directory, reports the finished crawl,
// refuses crawl control without the token, runs a crawl in its own process when asked,
// serves /metrics, and stops cleanly on SIGTERM. A second process cannot open the same
// directory and is told why.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	// www.site00.test/hidden.html is linked from nowhere: only a seed given to serve's
	// crawl leads there.
	hidden := "http://www.site00.test/hidden.html"
	web, addr := serveWeb(t, testweb.Config{Seed: 3, Hosts: 4, PagesPerHost: 6, Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra: func(host string, _ *rand.Rand) []testweb.Page {
			if host != "www.site00.test" {
				return nil
			}
			return []testweb.Page{{Path: "/hidden.html", Title: "Hidden", Text: []string{"reached from a seed only"}, Unlinked: true}}
		}})
	data := t.TempDir()
	if _, stderr, code := run(t, quickEnv, crawlArgs(web, addr, data)...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	if web.Counts()[hidden] != 0 {
		t.Fatal("the unlinked page was crawled without its seed")
	}
	const token = "serve-test-token-0123456789"
	cmd, base, out := startServe(t, data, append(quickEnv, "SONDA_SERVE_TOKEN="+token, "SONDA_FETCH_ALLOW_PRIVATE=true",
		"SONDA_FETCH_RESOLVE=*.test="+addr, "SONDA_POLITENESS_MIN_DELAY=0s", "SONDA_SEARCH_POSTINGS_CACHE=32MiB", "GOMEMLIMIT=")...)
	waitFor(t, 10*time.Second, "the server", func() bool { return strings.Contains(out.String(), "press Ctrl-C") })
	if strings.Contains(out.String(), token) || strings.Contains(out.String(), "generated") {
		t.Errorf("serve printed or generated a token although SONDA_SERVE_TOKEN was set:\n%s", out.String())
	}

	code, body := httpDo(t, "GET", base+"/api/crawl/status", "", "")
	if code != 200 || !strings.Contains(body, `"finished: frontier empty"`) {
		t.Fatalf("status of the earlier crawl: %d %s", code, body)
	}
	if code, _ := httpDo(t, "POST", base+"/api/crawl/start", "", `{}`); code != 401 {
		t.Fatalf("start without a token: %d", code)
	}
	// The other process cannot open the directory while serve has it.
	if _, stderr, code := run(t, nil, "serve", "--data", data, "--addr", "127.0.0.1:0"); code != exitUsage || !strings.Contains(stderr, "in use") {
		t.Errorf("second serve: exit %d: %s", code, stderr)
	}
	if code, body := httpDo(t, "POST", base+"/api/crawl/start", token, `{"seeds":["`+hidden+`"]}`); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	var st struct {
		State string `json:"state"`
		Pages int64  `json:"pages"`
	}
	waitFor(t, 30*time.Second, "the crawl to finish", func() bool {
		_, body := httpDo(t, "GET", base+"/api/crawl/status", "", "")
		json.Unmarshal([]byte(body), &st)
		return strings.HasPrefix(st.State, "finished")
	})
	if st.State != "finished: frontier empty" || st.Pages != 1 {
		t.Fatalf("crawl in serve: %+v; want the one new page fetched", st)
	}
	for u, n := range web.Counts() {
		if n != 1 && !strings.HasSuffix(u, "/robots.txt") {
			t.Errorf("%s requested %d times", u, n)
		}
	}
	if web.Counts()[hidden] != 1 {
		t.Errorf("the seed given to serve's crawl was not fetched")
	}

	// The page the crawl in serve fetched is searchable as soon as the crawl is finished,
	// and so are those `sonda crawl` indexed before.
	code, body = httpDo(t, "GET", base+"/api/search?q=seed+only", "", "")
	if code != 200 || !strings.Contains(body, `"url":"`+hidden+`"`) {
		t.Errorf("search for the page crawled in serve: %d %s", code, body)
	}
	if code, body = httpDo(t, "GET", base+"/api/search?q=www.site01.test", "", ""); code != 200 || strings.Contains(body, `"total":0`) {
		t.Errorf("search for pages crawled before: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", base+"/metrics", "", ""); code != 200 || !strings.Contains(body, "sonda_http_requests_total") {
		t.Errorf("metrics: %d", code)
	} else if got, want := goMemoryLimit(t, body), int64(384+128+256+32)<<20; got != want {
		// The search caches are bounded and long-lived: serve's limit counts them on top
		// of memory-limit (facet-cache 128 MiB, forward-cache 256, postings-cache 32).
		t.Errorf("serve's Go memory limit %d, want %d: memory-limit + the search caches' bounds", got, want)
	}
	if err := terminate(t, cmd, 15*time.Second); err != nil || !strings.Contains(out.String(), "server stopped") {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, out.String())
	}
}

// TestDemoNoServe: the demo without its server keeps the old behaviour scripts rely on:
// crawl, summary, ground-truth check, exit.
func TestDemoNoServe(t *testing.T) {
	t.Parallel()
	data := t.TempDir() + "/demo"
	out, stderr, code := run(t, nil, "demo", "--no-serve", "--hosts", "4", "--data", data)
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"crawl frontier empty", "0 problems; politeness: 0 violations", "a few records", "search (sonda search", "1. "} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "http://127.0.0.1") && strings.Contains(out, "serving") {
		t.Errorf("demo --no-serve served:\n%s", out)
	}
	// The demo's data directory is as private as a crawl's (it was 0755/0644).
	assertPrivate(t, data)
}

// TestServeFocusedCrawl: a crawl started in serve with a topic is a focused crawl, as
// `sonda crawl --topic` is: its pages are judged and the dashboard's status has a harvest
// rate.
func TestServeFocusedCrawl(t *testing.T) {
	t.Parallel()
	web, addr := serveWeb(t, testweb.Config{Seed: 4, Hosts: 3, PagesPerHost: 5, Disable: testweb.AllFeatures &^ testweb.Robots})
	const token = "serve-focus-token-0123456789"
	cmd, base, out := startServe(t, t.TempDir(), append(quickEnv, "SONDA_SERVE_TOKEN="+token, "SONDA_FETCH_ALLOW_PRIVATE=true",
		"SONDA_FETCH_RESOLVE=*.test="+addr, "SONDA_POLITENESS_MIN_DELAY=0s", "SONDA_FOCUS_TOPICS=nuclear")...)
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	waitFor(t, 10*time.Second, "the server", func() bool { return strings.Contains(out.String(), "press Ctrl-C") })
	seeds, _ := json.Marshal(map[string][]string{"seeds": web.Seeds()})
	if code, body := httpDo(t, "POST", base+"/api/crawl/start", token, string(seeds)); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	var st struct {
		State       string   `json:"state"`
		Judged      int64    `json:"judged"`
		HarvestRate *float64 `json:"harvest_rate"`
	}
	waitFor(t, 30*time.Second, "the crawl to finish", func() bool {
		_, body := httpDo(t, "GET", base+"/api/crawl/status", "", "")
		json.Unmarshal([]byte(body), &st)
		return strings.HasPrefix(st.State, "finished")
	})
	if st.State != "finished: frontier empty" || st.Judged == 0 || st.HarvestRate == nil {
		t.Fatalf("focused crawl in serve: %+v\n%s", st, out.String())
	}
}
