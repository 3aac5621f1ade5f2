package crawl

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/store"
)

// TestLargeBodiesBounded crawls eight 3 MiB pages with eight workers and room for two
// large bodies (fetch.large-body-memory twice fetch.max-body): every page is fetched
// whole, never more than two bodies past 1 MiB are held at once, and every admission is
// given back (a page that kept its share would stop the crawl after two pages).
func TestLargeBodiesBounded(t *testing.T) {
	words := strings.Fields("reactor core fuel rods uranium heat water steam turbine pressure temperature night inspectors logs")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>")
			for i := range 8 {
				fmt.Fprintf(w, `<a href="/big/%d">big %d</a> `, i, i)
			}
			fmt.Fprint(w, "</body></html>")
		case strings.HasPrefix(r.URL.Path, "/big/"):
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			rng := rand.New(rand.NewSource(int64(len(r.URL.Path))))
			var b strings.Builder
			for sent := 0; sent < 3<<20; sent += b.Len() { // chunked: the size is learnt as it comes
				b.Reset()
				for b.Len() < 64<<10 {
					b.WriteString(words[rng.Intn(len(words))])
					b.WriteByte(' ')
				}
				if _, err := fmt.Fprint(w, b.String()); err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	cfg := config.Default()
	cfg.Data = t.TempDir()
	cfg.Crawl.Seeds = []string{srv.URL + "/"}
	cfg.Crawl.Concurrency = 8
	cfg.Politeness.PerHost = 8
	cfg.Politeness.MinDelay = 0
	cfg.Fetch.AllowPrivate = true
	cfg.Fetch.MaxBody = 4 << 20
	cfg.Fetch.LargeBodyMemory = 8 << 20
	cfg.Log.Level = "warn"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole := 0
	if err := c.db.Pages(func(p *store.Page) error {
		if strings.Contains(p.URL, "/big/") && p.Status == 200 && p.Truncated == "" && p.Size >= 3<<20 {
			whole++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if whole != 8 || sum.Reason != "frontier empty" {
		t.Errorf("%d of 8 large pages fetched whole; the crawl ended by %q", whole, sum.Reason)
	}
	if peak := c.large.peak.Load(); peak != 4<<20 && peak != 8<<20 {
		t.Errorf("at most %d bytes of large bodies were admitted at once, want one or two bodies' 4 MiB", peak)
	}
	if held := c.large.held.Load(); held != 0 {
		t.Errorf("%d bytes are still admitted after the crawl", held)
	}
}
