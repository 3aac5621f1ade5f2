package local

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
)

// TestSeed002ThroughTheAPI reproduces, through the HTTP API, what seed 002's web search
// showed for a small fixture graph: results ordered by in-link count (countLinks) when the
// ranking is in-links only, each with its count and last update date, and for any result
// the connectivity view listing all its in-links and out-links.
func TestSeed002ThroughTheAPI(t *testing.T) {
	cfg := config.Default()
	cfg.Data = t.TempDir()
	d, base := serve(t, cfg)

	// a → b, a → c, b → c, d → c, c → a, d → b: in-links c 3, b 2, a 1, d 0.
	page := func(p string) string { return "http://fixture.test/" + p }
	graph := map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": {"a"}, "d": {"c", "b"}}
	ctx := context.Background()
	fetched := time.Date(2006, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, src := range []string{"a", "b", "c", "d"} {
		var links []linkgraph.Link
		for _, dst := range graph[src] {
			links = append(links, linkgraph.Link{URL: page(dst), Anchor: "to " + dst})
		}
		if _, err := d.Graph.SetLinks(page(src), links); err != nil {
			t.Fatal(err)
		}
		if err := d.Index.Put(ctx, index.Doc{ID: page(src), URL: page(src), Title: "sistemas de busca " + src,
			Body: "sistemas de busca na web", Host: "fixture.test", Lang: "pt", Fetched: fetched, Relevance: -1}); err != nil {
			t.Fatal(err)
		}
	}
	// The in-link prior is relative to the mean in-degree of the last PageRank run, which
	// the server runs in the background; run it now.
	if _, err := d.Graph.ComputePageRank(ctx); err != nil {
		t.Fatal(err)
	}
	r := index.DefaultRanking()
	r.Link, r.Relevance, r.LinkSignal = 1, 0, "inlinks"
	if err := d.Index.SetRanking(r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Index.SetRanking(index.DefaultRanking()) })

	var res struct {
		Hits []struct {
			URL     string    `json:"url"`
			InLinks int       `json:"in_links"`
			Fetched time.Time `json:"fetched"`
			Rank    int       `json:"rank"`
		} `json:"hits"`
	}
	getJSON(t, base+"/api/search?q="+url.QueryEscape("+sistemas +busca"), &res)
	var order []string
	for i, h := range res.Hits {
		order = append(order, h.URL)
		if want := []int{3, 2, 1, 0}[min(i, 3)]; h.InLinks != want || !h.Fetched.Equal(fetched) || h.Rank != i+1 {
			t.Errorf("hit %d: %s with %d in-links, updated %v, rank %d; want %d in-links", i+1, h.URL, h.InLinks, h.Fetched, h.Rank, want)
		}
	}
	if want := []string{page("c"), page("b"), page("a"), page("d")}; !slices.Equal(order, want) {
		t.Errorf("order %v; want by in-link count %v", order, want)
	}

	var rel struct {
		In, Out []struct{ URL, Anchor string }
	}
	getJSON(t, base+"/api/relations?url="+url.QueryEscape(page("c")), &rel)
	var in, out []string
	for _, e := range rel.In {
		in = append(in, e.URL)
	}
	for _, e := range rel.Out {
		out = append(out, e.URL)
	}
	slices.Sort(in)
	if !slices.Equal(in, []string{page("a"), page("b"), page("d")}) || !slices.Equal(out, []string{page("a")}) || rel.Out[0].Anchor != "to a" {
		t.Errorf("relations of c: in %v, out %+v", in, rel.Out)
	}
	// The same page typed differently finds the same relations.
	getJSON(t, base+"/api/relations?url="+url.QueryEscape("HTTP://Fixture.test/x/../c#top"), &rel)
	if len(rel.In) != 3 {
		t.Errorf("a non-canonical address of c found %d in-links", len(rel.In))
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", u, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}
