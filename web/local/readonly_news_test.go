package local

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/web"
)

// TestReadOnlyServeRefusesNewsWrites: a server that only reads its data directory (sonda
// serve --read-only) answers a request to add a topic or mark an article read with 503
// and a message saying why and where to do it, not with Pebble's "read-only" error as a
// 400 (a bad request it was not), and lists topics as before.
func TestReadOnlyServeRefusesNewsWrites(t *testing.T) {
	cfg := config.Default()
	cfg.Data = filepath.Join(t.TempDir(), "data")
	cfg.News.Enabled = true
	d, err := Open(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = Open(cfg, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	opts := d.WebOptions()
	opts.Token = browserToken
	h, err := web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, target string }{
		{"POST", "/api/topics?name=copa+do+mundo"},
		{"POST", "/api/topic/read?id=t1&article=a1"},
	} {
		req := httptest.NewRequest(c.method, c.target, nil)
		req.Header.Set("Authorization", "Bearer "+browserToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "--read-only") {
			t.Errorf("%s %s on a read-only server: %d %s; want 503 saying the server is read-only", c.method, c.target, rec.Code, rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/topics", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /api/topics on a read-only server: %d %s", rec.Code, rec.Body)
	}
}
