package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
)

// TestServeCluster: `sonda serve --nats` serves the search UI and API over two nodes'
// indexes (real Bleve indexes on disk, served by cluster/search on an embedded NATS
// server): the API answers as one index over both nodes' pages would, and when a node
// stops, the API and the results page say which one is missing instead of failing.
func TestServeCluster(t *testing.T) {
	ns, err := cluster.StartServer(cluster.ServerOptions{Addr: "127.0.0.1:0", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	dir := t.TempDir()
	var all []index.Doc
	var nodes []*search.Server
	for n := 1; n <= 2; n++ {
		var docs []index.Doc
		for i := range 40 {
			host := fmt.Sprintf("n%d-%d.example", n, i%4)
			words := []string{"river", "bridge", "harbour", "lighthouse", "canal"}
			// Lengths and counts vary, so that few scores tie (ties may come in either order).
			body := strings.Repeat(words[(i+n)%5]+" ", 1+i%3) + words[i%5] + " water stone " + strings.Repeat("tide ", i%4) +
				strings.Repeat("sand ", (i*7+n*3)%11)
			docs = append(docs, index.Doc{ID: fmt.Sprintf("https://%s/p%d", host, i), URL: fmt.Sprintf("https://%s/p%d", host, i),
				Title: fmt.Sprintf("%s page %d%s", words[i%5], i, strings.Repeat(" more", (i*5+n)%7)), Body: body, Host: host, Lang: "en", Relevance: -1,
				Fetched: time.Date(2025, 3, 1+i%20, 0, 0, 0, 0, time.UTC)})
		}
		all = append(all, docs...)
		ix, err := index.Open(filepath.Join(dir, fmt.Sprint("node", n)), index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		if err := ix.Put(ctx, docs...); err != nil {
			t.Fatal(err)
		}
		s, err := search.Listen(nc, "test", fmt.Sprint("node-", n), ix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		nodes = append(nodes, s)
	}
	// The default ranking, pseudo-relevance feedback included (the gatherer applies it as
	// one index does: index.GatherFeedback).
	one, err := index.Open(filepath.Join(dir, "one"), index.Options{Ranking: index.DefaultRanking()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { one.Close() })
	if err := one.Put(ctx, all...); err != nil {
		t.Fatal(err)
	}

	base := startServeNATS(t, ns.URL(), "test", "bridge")
	for _, q := range []string{"bridge", "river OR canal", `"water stone" tide`, "title:harbour", "site:n2-1.example tide"} {
		want, err := one.Search(ctx, index.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		sameAsOneIndex(t, q, want, apiSearch(t, base, q))
	}

	nodes[1].Close() // node-2 stops
	got := apiSearch(t, base, "bridge")
	if !got.Partial || len(got.Missing) != 1 || got.Missing[0] != "node-2" || got.Total == 0 {
		t.Errorf("node-2 down: partial %v missing %v total %d", got.Partial, got.Missing, got.Total)
	}
	for _, h := range got.Hits {
		if !strings.Contains(h.ID, "://n1-") {
			t.Errorf("node-2 down, yet its page %s is a result", h.ID)
		}
	}
	code, page := httpDo(t, "GET", base+"/search?q=bridge", "", "")
	if code != 200 || !strings.Contains(page, `id="partial"`) || !strings.Contains(page, "node-2") {
		t.Errorf("results page with node-2 down: %d, no partial-answer notice naming node-2", code)
	}
}

// apiResult is what the tests read of /api/search.
type apiResult struct {
	Total   uint64   `json:"total"`
	Partial bool     `json:"partial"`
	Missing []string `json:"missing_shards"`
	Hits    []struct {
		ID      string  `json:"id"`
		Score   float64 `json:"score"`
		Title   string  `json:"title"`
		InLinks int     `json:"in_links"`
	} `json:"hits"`
}

// startServeNATS starts `sonda serve --nats natsURL --cluster name` and waits until it answers
// the query probe with results and no node missing.
func startServeNATS(t *testing.T, natsURL, name, probe string) (base string) {
	t.Helper()
	listen := freePort(t)
	cmd := exec.Command(sondaBin, "serve", "--nats", natsURL, "--cluster", name, "--addr", listen)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SONDA_SERVE_TOKEN=cluster-test-token-0123456789")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base = "http://" + listen
	if probe == "" { // only the server: no node may be up yet
		waitFor(t, 30*time.Second, "sonda serve --nats to answer", func() bool {
			code, _ := httpDo0(base + "/dashboard")
			return code == 200
		})
		return base
	}
	waitFor(t, 30*time.Second, "sonda serve --nats to answer over every node", func() bool {
		code, body := httpDo0(base + "/api/search?q=" + url.QueryEscape(probe))
		var r apiResult
		return code == 200 && json.Unmarshal([]byte(body), &r) == nil && !r.Partial && r.Total > 0
	})
	return base
}

// apiSearch asks /api/search for q.
func apiSearch(t *testing.T, base, q string) apiResult {
	t.Helper()
	code, body := httpDo(t, "GET", base+"/api/search?q="+url.QueryEscape(q), "", "")
	var r apiResult
	if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
		t.Fatalf("%q: %d %s", q, code, body)
	}
	return r
}

// sameAsOneIndex checks that the cluster's answer got is one index's want: same total,
// the same score at every rank, the same documents above the last rank's score (documents
// with exactly equal scores may come in another order), the same in-link counts.
func sameAsOneIndex(t *testing.T, q string, want *index.Result, got apiResult) {
	t.Helper()
	if got.Total != want.Total || len(got.Hits) != len(want.Hits) || got.Partial {
		t.Errorf("%q: total %d, %d hits, partial %v; one index %d, %d hits", q, got.Total, len(got.Hits), got.Partial, want.Total, len(want.Hits))
		return
	}
	gotIDs := map[string]int{}
	for i, h := range want.Hits {
		gotIDs[got.Hits[i].ID] = got.Hits[i].InLinks
		if math.Abs(got.Hits[i].Score-h.Score) > 1e-9*max(1, h.Score) {
			t.Errorf("%q rank %d: %s %.17g, one index %s %.17g", q, i+1, got.Hits[i].ID, got.Hits[i].Score, h.ID, h.Score)
		}
	}
	for _, h := range want.Hits {
		n, ok := gotIDs[h.ID]
		switch {
		case !ok && h.Score > want.Hits[len(want.Hits)-1].Score:
			t.Errorf("%q: %s (score %.17g) is not among the cluster's results", q, h.ID, h.Score)
		case ok && n != h.InLinks:
			t.Errorf("%q: %s has %d in-links, one index %d", q, h.ID, n, h.InLinks)
		}
	}
}

// httpDo0 is httpDo for polling: a connection error is status 0.
func httpDo0(u string) (int, string) {
	res, err := http.Get(u)
	if err != nil {
		return 0, ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
