package testweb

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusProse: with a corpus, every ordinary page carries at least TextBytes of its
// paragraphs, pages start at different places, and equal configurations serve equal bytes.
func TestCorpusProse(t *testing.T) {
	dir := t.TempDir()
	var paras []string
	for i := range 40 {
		paras = append(paras, strings.Repeat(string(rune('a'+i%26))+"word ", 30))
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Join(paras, "\n\nshort\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus, err := LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) != 40 {
		t.Fatalf("%d paragraphs, want 40 (short lines left out)", len(corpus))
	}
	cfg := Config{Seed: 3, Hosts: 2, PagesPerHost: 5, Disable: AllFeatures, Corpus: corpus, TextBytes: 2000}
	body := func(w *Web, u string) string {
		rw := httptest.NewRecorder()
		w.ServeHTTP(rw, httptest.NewRequest(http.MethodGet, u, nil))
		return rw.Body.String()
	}
	a, b := New(cfg), New(cfg)
	firsts := map[string]bool{}
	for _, u := range a.Reachable() {
		page := body(a, u)
		if page != body(b, u) {
			t.Fatalf("%s differs between two webs of one configuration", u)
		}
		n, first := 0, ""
		for _, p := range corpus {
			if strings.Contains(page, "<p>"+p+"</p>") {
				n += len(p)
				if first == "" {
					first = p
				}
			}
		}
		if n < cfg.TextBytes {
			t.Errorf("%s has %d bytes of corpus prose, want at least %d", u, n, cfg.TextBytes)
		}
		firsts[first] = true
	}
	if len(firsts) < 3 {
		t.Errorf("pages start their prose at %d places; want them spread over the corpus", len(firsts))
	}
}
