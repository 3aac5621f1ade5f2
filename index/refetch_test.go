package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/testweb"
)

// revisitPaths fetches the pages whose path ends with one of its suffixes again every
// interval, and no other page.
type revisitPaths struct {
	suffixes []string
	interval time.Duration
}

func (r revisitPaths) NextVisit(d *crawl.Document, now time.Time) time.Time {
	for _, s := range r.suffixes {
		if strings.HasSuffix(d.URL.String(), s) {
			return now.Add(r.interval)
		}
	}
	return time.Time{}
}

// TestRefetchKeepsTheIndexInStep is incremental indexing end to end: a crawl with a
// revisit policy fetches two pages again and again while they change on the server, and
// the on-disk index follows each change without a rebuild — new words replace old ones, a
// page that turns noindex leaves the index, a page that answers 410 Gone leaves it, and
// the anchor text a changing page gives the page it links to follows its links (and goes
// when the linking page is gone).
func TestRefetchKeepsTheIndexInStep(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a test web")
	}
	var version, hiddenVersion atomic.Int32
	var host atomic.Pointer[string]
	changing := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch version.Load() {
		case 0:
			fmt.Fprint(rw, `<html><head><title>Quokka census</title></head><body><p>The quokka census counts every quokka on the island.</p><a href="/target.html">burrow survey</a></body></html>`)
		case 1:
			fmt.Fprint(rw, `<html><head><title>Numbat census</title></head><body><p>The numbat census counts every numbat in the woodland.</p><a href="/target.html">termite mound</a></body></html>`)
		default:
			http.Error(rw, "gone", http.StatusGone)
		}
	})
	hidden := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		robots := ""
		if hiddenVersion.Load() > 0 {
			robots = `<meta name="robots" content="noindex">`
		}
		fmt.Fprintf(rw, `<html><head><title>Wombat notes</title>%s</head><body><p>Notes on the wombat and its burrows.</p></body></html>`, robots)
	})
	web := testweb.New(testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 4, Disable: testweb.AllFeatures,
		Extra: func(h string, _ *rand.Rand) []testweb.Page {
			if !host.CompareAndSwap(nil, &h) {
				return nil
			}
			return []testweb.Page{
				{Path: "/changing.html", Title: "Census", Handler: changing, Links: []string{"/target.html"}},
				{Path: "/hidden.html", Title: "Notes", Handler: hidden},
				{Path: "/target.html", Title: "Target page", Text: []string{"A page others link to."}, Unlinked: true},
			}
		}})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	site := "http://" + *host.Load()
	changingURL, hiddenURL, targetURL := site+"/changing.html", site+"/hidden.html", site+"/target.html"

	cfg := web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Concurrency = 4
	cfg.Politeness.MinDelay = 5 * time.Millisecond
	cfg.Log.Level = "error"
	db, g, ix, is := openSearch(t, cfg.Data, index.SinkOptions{BatchSize: 8, Delay: 20 * time.Millisecond})
	c, err := crawl.New(cfg, crawl.WithStore(db), crawl.WithSinks(linkgraph.NewSink(g, is.Touch), is),
		crawl.WithRevisitPolicy(revisitPaths{suffixes: []string{"/changing.html", "/hidden.html"}, interval: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	crawled := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, nil, nil)
		crawled <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-crawled; err != nil {
			t.Errorf("crawl: %v", err)
		}
		c.Close()
		is.Close()
	})

	// hits returns the IDs a query finds.
	hits := func(q string) []string {
		r, err := ix.Search(context.Background(), index.Request{Query: q, PerPage: 50})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var ids []string
		for _, h := range r.Hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	doc := func(id string) (index.Doc, bool) {
		d, ok, err := ix.Document(context.Background(), id)
		if err != nil {
			t.Fatalf("document %s: %v", id, err)
		}
		return d, ok
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s: %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	anchorsOf := func(id string) []string {
		d, _ := doc(id)
		return d.Anchors
	}

	waitFor("the first versions are indexed", func() bool {
		return slices.Contains(hits("quokka"), changingURL) && slices.Contains(hits("wombat"), hiddenURL) &&
			slices.Contains(anchorsOf(targetURL), "burrow survey")
	})
	if slices.Contains(hits("numbat"), changingURL) {
		t.Fatal("found by words it has not had yet")
	}

	// The page changes: the index has its new words and title, not the old ones, and the
	// page it links to has the new anchor text instead of the old.
	version.Store(1)
	waitFor("the new version replaces the old", func() bool {
		d, _ := doc(changingURL)
		return d.Title == "Numbat census" && slices.Contains(hits("numbat"), changingURL) && !slices.Contains(hits("quokka"), changingURL)
	})
	waitFor("the target's anchor text follows the link", func() bool {
		a := anchorsOf(targetURL)
		return slices.Contains(a, "termite mound") && !slices.Contains(a, "burrow survey")
	})
	if !slices.Contains(hits("termite mound"), targetURL) {
		t.Error("the target is not found by the new anchor text")
	}

	// noindex on a later fetch removes the page.
	hiddenVersion.Store(1)
	waitFor("a page that turned noindex leaves the index", func() bool {
		_, in := doc(hiddenURL)
		return !in && !slices.Contains(hits("wombat"), hiddenURL)
	})

	// 410 Gone removes the page, and with it the anchor text it gave its link target.
	version.Store(2)
	waitFor("a page that answers 410 leaves the index", func() bool {
		_, in := doc(changingURL)
		return !in && len(hits("numbat")) == 0
	})
	waitFor("the gone page's anchor text leaves its target", func() bool {
		return !slices.Contains(anchorsOf(targetURL), "termite mound")
	})
	if _, in := doc(targetURL); !in {
		t.Error("the target page left the index with the page linking to it")
	}
}
