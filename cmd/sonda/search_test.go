package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// TestCrawlSearchRebuild: sonda crawl indexes as it goes; sonda search finds the pages,
// in text and JSON, and explains a malformed query with its position; sonda index
// rebuild makes the same index again from the store and the WARC files.
func TestCrawlSearchRebuild(t *testing.T) {
	web, addr := serveWeb(t, testweb.Config{Seed: 4, Hosts: 4, PagesPerHost: 8, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	if _, stderr, code := run(t, quickEnv, crawlArgs(web, addr, data)...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "index", "index_meta.json")); err != nil {
		t.Fatalf("the crawl made no index: %v", err)
	}
	home := web.Seeds()[0]
	host := strings.TrimSuffix(strings.TrimPrefix(home, "http://"), "/")
	search := func(args ...string) (result struct {
		Total uint64
		Hits  []struct {
			URL, Snippet string
			Score        float64
			InLinks      int
		}
	}) {
		t.Helper()
		out, stderr, code := run(t, nil, append([]string{"search", "--data", data, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("search %v: exit %d: %s", args, code, stderr)
		}
		if err := json.Unmarshal([]byte(out), &result); err != nil {
			t.Fatalf("search %v: %v\n%s", args, err, out)
		}
		return result
	}
	r := search("site:"+host, "--per-page", "100")
	if r.Total < 5 || int(r.Total) != len(r.Hits) {
		t.Fatalf("site:%s found %d pages, listed %d", host, r.Total, len(r.Hits))
	}
	// A filter-only query has no text score: PageRank orders it, and the home page, which
	// every page of its site links to, is near the top.
	homeAt := -1
	for i, h := range r.Hits {
		if h.URL == home {
			homeAt = i
		}
		if i > 0 && h.Score > r.Hits[i-1].Score {
			t.Errorf("site:%s: scores not descending at %d", host, i)
		}
	}
	if homeAt < 0 || homeAt > 5 || r.Hits[homeAt].InLinks < 3 {
		t.Errorf("site:%s: home page at %d (in-links %v)", host, homeAt, r.Hits)
	}
	before := search("type:page", "--per-page", "100").Total

	// Text output, and a malformed query.
	out, _, code := run(t, nil, "search", "--data", data, "site:"+host)
	if code != 0 || !strings.Contains(out, home) || !strings.Contains(out, "results for") {
		t.Errorf("text output: exit %d\n%s", code, out)
	}
	_, stderr, code := run(t, nil, "search", "--data", data, `reactor "fuel`)
	if code != exitUsage || !strings.Contains(stderr, "never closed") || !strings.Contains(stderr, "        ^") {
		t.Errorf("malformed query: exit %d: %s", code, stderr)
	}

	// Rebuild.
	if _, stderr, code := run(t, nil, "index", "rebuild", "--data", data); code != 0 {
		t.Fatalf("rebuild: exit %d: %s", code, stderr)
	}
	if after := search("type:page", "--per-page", "100").Total; after != before {
		t.Errorf("rebuilt index has %d documents, the crawl's %d", after, before)
	}
}

// evalRow is a row of `sonda eval retrieval --json`.
type evalRow struct {
	System    string
	All, Test struct{ MAP, NDCG10 float64 }
	Pages     int
}

func TestEvalRetrievalCommand(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "testdata", "cranfield")
	if _, err := os.Stat(filepath.Join(dir, "cran.all.1400")); err != nil {
		t.Skipf("the Cranfield collection is not at %s: %v", dir, err)
	}
	if testing.Short() {
		t.Skip("-short: crawls and serves the Cranfield collection in two site templates (about a minute)")
	}
	out, stderr, code := run(t, nil, "eval", "retrieval", "--cranfield", dir, "--end-to-end", "--site", "archive,portal", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []evalRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 6 {
		t.Fatalf("want BM25, sonda, and for each site template end to end with and without links: %v\n%s", err, out)
	}
	base, direct := rows[0], rows[1]
	if direct.All.MAP <= base.All.MAP || direct.All.NDCG10 <= base.All.NDCG10 {
		t.Errorf("sonda %+v does not beat the baseline %+v", direct, base)
	}
	for _, pair := range [][2]int{{2, 3}, {4, 5}} {
		e2e, noLinks := rows[pair[0]], rows[pair[1]]
		t.Run(e2e.System, func(t *testing.T) { checkEndToEnd(t, base, e2e, noLinks) })
	}
}

// checkEndToEnd holds one site template's end-to-end rows to issue 13's goal.
func checkEndToEnd(t *testing.T, base, e2e, noLinks evalRow) {
	t.Helper()
	// Issue 13: the question as a user asks it, through crawl, serve and the API, beats
	// plain BM25 over the same texts by the 1.10 times its nDCG@10 on the queries
	// no ranking choice was tuned on, on both site templates (the even half: 1.16 and 1.13
	// times measured; on the archive template 1.13 with the site's navigation and footer
	// indexed as each page's text, 1.10 also without pseudo-relevance feedback, 1.01 when a
	// question's results were cut to the few pages holding every word; on the portal
	// template 0.99 with its menus, related lists and "popular topics" box indexed), and
	// the link rank, blended in although these sites' links say nothing about relevance,
	// costs nothing there beyond noise.
	if e2e.Pages < 1400 || e2e.Test.NDCG10 < 1.10*base.Test.NDCG10 || e2e.Test.MAP < base.Test.MAP {
		t.Errorf("end to end (%d pages) %+v not clearly above plain BM25 %+v on the held-out queries", e2e.Pages, e2e.Test, base.Test)
	}
	if e2e.Test.NDCG10 < noLinks.Test.NDCG10-0.005 {
		t.Errorf("the link rank costs %.4f nDCG@10 on a site whose links say nothing (%+v with, %+v without)", noLinks.Test.NDCG10-e2e.Test.NDCG10, e2e.Test, noLinks.Test)
	}
}

// TestKill9IndexCatchesUp kills crawls with SIGKILL while they index, resumes them until
// the crawl finishes, and checks that the index ends up with every page the store has:
// what the killed processes had queued or not yet persisted is caught up from the store and
// the WARC files when the next crawl opens the index.
func TestKill9IndexCatchesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real crawl processes")
	}
	web, addr := serveWeb(t, testweb.Config{Seed: 9, Hosts: 12, PagesPerHost: 20, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	// 40 ms a host keeps each host's 20 pages busy for about a second, so the first kill
	// (after 400 ms) always lands mid-crawl, however fast the machine.
	args := append(crawlArgs(web, addr, data), "--min-delay", "40ms")
	env := append(os.Environ(), append(quickEnv, "SONDA_SEARCH_BATCH_DELAY=2s")...)
	kills := 0
	for attempt := 0; attempt < 40; attempt++ {
		cmd := exec.Command(sondaBin, args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		wait := 400 * time.Millisecond
		if kills >= 3 {
			wait = time.Minute
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("crawl failed: %v\n%s", err, stderr.String())
			}
			if kills == 0 {
				t.Fatal("the crawl finished before it could be killed")
			}
			pages := exportedHTMLPages(t, data)
			res, stderr2, code := run(t, nil, "search", "--data", data, "--json", "type:page")
			var r struct{ Total int }
			if code != 0 || json.Unmarshal([]byte(res), &r) != nil {
				t.Fatalf("search: exit %d: %s", code, stderr2)
			}
			if r.Total != pages {
				t.Errorf("after %d kills the index has %d documents, the store %d pages", kills, r.Total, pages)
			}
			return
		case <-time.After(wait):
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			kills++
		}
	}
	t.Fatal("the crawl did not finish")
}

// exportedHTMLPages counts the HTML pages fetched with status 200 that `sonda export`
// lists for the data directory: what the search index should hold.
func exportedHTMLPages(t *testing.T, data string) int {
	t.Helper()
	return len(exportedHTMLURLs(t, data))
}
