package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoServes: sonda demo crawls its test web through the server's crawl control and
// then serves the UI over the result — the search API finds the crawled pages, the
// dashboard reports the finished crawl, the pages are served — until SIGTERM.
func TestDemoServes(t *testing.T) {
	t.Parallel()
	listen := freePort(t)
	cmd := exec.Command(sondaBin, "demo", "--hosts", "3", "--data", t.TempDir()+"/demo", "--addr", listen)
	cmd.Env = append(os.Environ(), "SONDA_LOG_LEVEL=warn")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, 60*time.Second, "the demo to crawl and serve", func() bool { return strings.Contains(out.String(), "explore the crawl at") })
	base := "http://" + listen
	if !strings.Contains(out.String(), "explore the crawl at "+base+"/") {
		t.Fatalf("the demo does not print the address it serves on (%s):\n%s", listen, out.String())
	}

	code, body := httpDo(t, "GET", base+"/api/search?q=site:www.site00.test", "", "")
	var res struct {
		Total int `json:"total"`
		Hits  []struct {
			URL string `json:"url"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil || res.Total == 0 ||
		!strings.HasPrefix(res.Hits[0].URL, "http://www.site00.test/") {
		t.Fatalf("search over the demo's crawl: %d %v %s", code, err, body)
	}
	if code, body := httpDo(t, "GET", base+"/api/crawl/status", "", ""); code != 200 || !strings.Contains(body, `"state":"finished`) {
		t.Errorf("crawl status after the demo's crawl: %d %s", code, body)
	}
	for _, path := range []string{"/", "/search?q=site:www.site01.test", "/dashboard"} {
		if code, _ := httpDo(t, "GET", base+path, "", ""); code != 200 {
			t.Errorf("GET %s: %d", path, code)
		}
	}
	// The demo's crawl has the geo and news verticals off: its header must not lead to
	// their pages, which would answer 503.
	if _, home := httpDo(t, "GET", base+"/", "", ""); strings.Contains(home, `href="/datasets"`) || strings.Contains(home, `href="/topics"`) {
		t.Errorf("the demo's header links to verticals that are off")
	}
	if err := terminate(t, cmd, 15*time.Second); err != nil {
		t.Fatalf("demo after SIGTERM: %v\n%s", err, out.String())
	}
}

// terminate sends cmd SIGTERM and returns how it exited; a process still running after
// timeout fails the test.
func terminate(t *testing.T, cmd *exec.Cmd, timeout time.Duration) error {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		cmd.Process.Kill()
		t.Fatalf("%s did not stop within %v of SIGTERM", cmd.Args[1], timeout)
		return nil
	}
}
