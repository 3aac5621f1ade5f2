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

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
)

// TestServeCluster: `sonda serve --nats` serves the search UI and API over two nodes'
// indexes (real Bleve indexes on disk, served by cluster/search on an embedded NATS
// server): the API answers as one index over both nodes' pages would, and when a node
// stops, the API and the results page say which one is missing instead of failing.
func TestServeCluster(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
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
	one, err := index.Open(filepath.Join(dir, "one"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { one.Close() })
	if err := one.Put(ctx, all...); err != nil {
		t.Fatal(err)
	}

	listen := freePort(t)
	cmd := exec.Command(sondaBin, "serve", "--nats", ns.ClientURL(), "--cluster", "test", "--addr", listen)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SONDA_SERVE_TOKEN=cluster-test-token-0123456789")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + listen

	type apiResult struct {
		Total   uint64   `json:"total"`
		Partial bool     `json:"partial"`
		Missing []string `json:"missing_shards"`
		Hits    []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
			Title string  `json:"title"`
		} `json:"hits"`
	}
	get := func(q string) (int, apiResult, string) {
		code, body := httpDo(t, "GET", base+"/api/search?q="+url.QueryEscape(q), "", "")
		var r apiResult
		if code == 200 {
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				t.Fatalf("%q: %v: %s", q, err, body)
			}
		}
		return code, r, body
	}
	waitFor(t, 30*time.Second, "sonda serve --nats to answer over both nodes", func() bool {
		code, body := httpDo0(base + "/api/search?q=bridge")
		var r apiResult
		return code == 200 && json.Unmarshal([]byte(body), &r) == nil && r.Total > 0 && !r.Partial
	})
	for _, q := range []string{"bridge", "river OR canal", `"water stone" tide`, "title:harbour", "site:n2-1.example tide"} {
		code, got, body := get(q)
		want, err := one.Search(ctx, index.Request{Query: q})
		if err != nil || code != 200 {
			t.Fatalf("%q: %d %s / %v\nserve: %s", q, code, body, err, out.String())
		}
		if got.Total != want.Total || len(got.Hits) != len(want.Hits) || got.Partial {
			t.Fatalf("%q: total %d, %d hits, partial %v; one index %d, %d hits", q, got.Total, len(got.Hits), got.Partial, want.Total, len(want.Hits))
		}
		// Same score at every rank, the same documents above the last rank's score
		// (documents with exactly equal scores may come in another order).
		gotIDs := map[string]bool{}
		for i, h := range want.Hits {
			gotIDs[got.Hits[i].ID] = true
			if math.Abs(got.Hits[i].Score-h.Score) > 1e-9*max(1, h.Score) {
				t.Errorf("%q rank %d: %s %.17g, one index %s %.17g", q, i+1, got.Hits[i].ID, got.Hits[i].Score, h.ID, h.Score)
			}
		}
		for _, h := range want.Hits {
			if h.Score > want.Hits[len(want.Hits)-1].Score && !gotIDs[h.ID] {
				t.Errorf("%q: %s (score %.17g) is not among the cluster's results", q, h.ID, h.Score)
			}
		}
	}

	nodes[1].Close() // node-2 stops
	code, got, body := get("bridge")
	if code != 200 || !got.Partial || len(got.Missing) != 1 || got.Missing[0] != "node-2" || got.Total == 0 {
		t.Errorf("node-2 down: %d partial %v missing %v total %d: %s", code, got.Partial, got.Missing, got.Total, body)
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
