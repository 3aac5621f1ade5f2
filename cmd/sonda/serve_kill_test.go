package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// TestKill9ServeIndexCatchesUp kills `sonda serve` with SIGKILL while a crawl it runs is
// indexing, with the index's batches held back so the index has lost pages the store has.
// The next `sonda serve` on the directory catches the index up before serving: its search
// counts every page the store recorded.
func TestKill9ServeIndexCatchesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a real server")
	}
	t.Parallel()
	web, addr := serveWeb(t, testweb.Config{Seed: 9, Hosts: 12, PagesPerHost: 20, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	const token = "serve-kill-token-0123456789"
	env := append(quickEnv, "SONDA_SERVE_TOKEN="+token, "SONDA_FETCH_ALLOW_PRIVATE=true",
		"SONDA_FETCH_RESOLVE=*.test="+addr, "SONDA_POLITENESS_MIN_DELAY=100ms",
		"SONDA_SEARCH_BATCH_SIZE=100000", "SONDA_SEARCH_BATCH_DELAY=1h")
	serve := func() (*exec.Cmd, string, *syncBuffer) {
		cmd, base, out := startServe(t, data, env...)
		waitFor(t, 30*time.Second, "the server", func() bool {
			if cmd.ProcessState != nil || strings.Contains(out.String(), "Error") {
				t.Fatalf("serve: %s", out.String())
			}
			return strings.Contains(out.String(), "press Ctrl-C")
		})
		return cmd, base, out
	}

	cmd, base, _ := serve()
	seeds, _ := json.Marshal(map[string][]string{"seeds": web.Seeds()})
	if code, body := httpDo(t, "POST", base+"/api/crawl/start", token, string(seeds)); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	var st struct {
		State string `json:"state"`
		Pages int64  `json:"pages"`
	}
	waitFor(t, 30*time.Second, "pages fetched", func() bool {
		_, body := httpDo(t, "GET", base+"/api/crawl/status", "", "")
		json.Unmarshal([]byte(body), &st)
		return st.Pages >= 30
	})
	if st.State != "running" {
		t.Fatalf("the crawl is %q before the kill; the test needs it running", st.State)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	pages := exportedHTMLPages(t, data)
	_, base, log := serve()
	var res struct{ Total int }
	if code, body := httpDo(t, "GET", base+"/api/search?q=type:page", "", ""); code != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("search: %d %s", code, body)
	}
	if pages < 30 || res.Total != pages {
		t.Errorf("after the kill the reopened server's index has %d documents, the store %d pages", res.Total, pages)
	}
	if !strings.Contains(log.String(), "re-indexing the pages queued for it") {
		t.Errorf("the reopened server did not say it catches the index up:\n%s", log.String())
	}
}
