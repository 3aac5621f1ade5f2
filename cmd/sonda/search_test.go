package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func TestEvalRetrievalCommand(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "testdata", "cranfield")
	if _, err := os.Stat(filepath.Join(dir, "cran.all.1400")); err != nil {
		t.Skipf("the Cranfield collection is not at %s: %v", dir, err)
	}
	out, stderr, code := run(t, nil, "eval", "retrieval", "--cranfield", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct {
		System string
		All    struct{ MAP, NDCG10 float64 }
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	if rows[1].All.MAP <= rows[0].All.MAP || rows[1].All.NDCG10 <= rows[0].All.NDCG10 {
		t.Errorf("sonda %+v does not beat the baseline %+v", rows[1], rows[0])
	}
}
