package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/testweb"
)

// TestKill9WhileIndexLags kills a real `sonda crawl` with SIGKILL while the search index is
// behind it, then runs the crawl again to the end. Every page the store keeps must then be
// searchable exactly once: the pages the index had not persisted wait in its durable
// queue and are indexed when the directory is opened again; pages indexed before the kill
// are not duplicated. Two lags: the index held back entirely (one huge batch that never
// comes), and small batches written all along, so the kill falls between batches.
func TestKill9WhileIndexLags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real crawl processes")
	}
	t.Parallel()
	for _, lag := range []struct {
		name    string
		env     []string
		backlog bool // wait until status.json reports the index behind
		// minDelay paces each host so that the crawl outlives the moment the test waits
		// for: status.json is rewritten every 2 s, so with the index held back the
		// crawl (15 pages a host) must run well past 4 s even on a fast machine.
		minDelay string
	}{
		{"held-back", []string{"SONDA_SEARCH_BATCH_SIZE=100000", "SONDA_SEARCH_BATCH_DELAY=1h"}, true, "400ms"},
		{"small-batches", []string{"SONDA_SEARCH_BATCH_SIZE=4", "SONDA_SEARCH_BATCH_DELAY=30ms"}, false, "100ms"},
	} {
		t.Run(lag.name, func(t *testing.T) { killWhileIndexLags(t, lag.env, lag.backlog, lag.minDelay) })
	}
}

func killWhileIndexLags(t *testing.T, lagEnv []string, backlog bool, minDelay string) {
	web, addr := serveWeb(t, testweb.Config{Seed: 31, Hosts: 8, PagesPerHost: 15, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	args := append(crawlArgs(web, addr, data), "--min-delay", minDelay, "--concurrency", "4", "--index", "async")
	cmd := exec.Command(sondaBin, args...)
	cmd.Env = append(append(os.Environ(), quickEnv...), lagEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Kill once pages were fetched (and, held back, status.json shows the index behind).
	var st crawl.Status
	waitFor(t, 60*time.Second, "pages fetched with the index behind", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("the crawl ended (%v) before the test could kill it:\n%s", err, stderr.String())
		default:
		}
		if !backlog {
			return len(web.Requests()) >= 40
		}
		st, _ = crawl.ReadStatus(data)
		return st.Pages >= 30 && st.Backlogs["index"].Documents > 0
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	t.Logf("killed after %d requests", len(web.Requests()))

	out, errOut, code := run(t, append(quickEnv, "SONDA_LOG_LEVEL=info"), append(crawlArgs(web, addr, data), "--index", "async")...)
	if code != 0 {
		t.Fatalf("resumed crawl: exit %d: %s", code, errOut)
	}
	if backlog && !strings.Contains(errOut, "re-indexing the pages queued for it") {
		t.Errorf("the resumed crawl did not say it catches the index up:\n%s%s", out, errOut)
	}

	stored := exportedHTMLURLs(t, data)
	found := map[string]int{}
	total := 0
	for page := 1; ; page++ {
		out, errOut, code := run(t, nil, "search", "--data", data, "--json", "--per-page", "100", "--page", fmt.Sprint(page), "type:page")
		if code != 0 {
			t.Fatalf("search: exit %d: %s", code, errOut)
		}
		var res struct {
			Total int
			Hits  []struct{ URL string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("search output: %v\n%s", err, out)
		}
		total = res.Total
		for _, h := range res.Hits {
			found[h.URL]++
		}
		if len(res.Hits) < 100 {
			break
		}
	}
	for u, n := range found {
		if n > 1 {
			t.Errorf("%s is in the index %d times", u, n)
		}
		if !stored[u] {
			t.Errorf("%s is in the index, not in the store", u)
		}
	}
	for u := range stored {
		if found[u] == 0 {
			t.Errorf("%s is in the store, not in the index", u)
		}
	}
	if len(stored) < 100 || total != len(stored) {
		t.Errorf("the index has %d documents, the store %d pages", total, len(stored))
	}
}

// exportedHTMLURLs are the URLs of the HTML pages the store of data keeps.
func exportedHTMLURLs(t *testing.T, data string) map[string]bool {
	t.Helper()
	out, stderr, code := run(t, nil, "export", "--data", data, "--what", "pages")
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	urls := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var p struct {
			URL         string `json:"url"`
			Status      int    `json:"status"`
			ContentType string `json:"content_type"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(fmt.Errorf("export line %q: %w", line, err))
		}
		if p.Status == 200 && p.ContentType == "text/html" {
			urls[p.URL] = true
		}
	}
	return urls
}
