package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/render"
	"github.com/sonda-search/sonda/testweb"
)

// TestCrawlRenderAutoSearch: `sonda crawl --render auto` on the script-built web, with the
// geo vertical on; then the SPA's articles are found by `sonda search` by words only their
// rendered text has, and the portal's GeoJSON files (linked only from script-built pages)
// are read and exported as datasets. Without chromium it skips, except under CI=true.
func TestCrawlRenderAutoSearch(t *testing.T) {
	if _, err := render.FindChromium(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("rendering tests must run in CI: %v", err)
		}
		t.Skipf("skipping rendering test: %v", err)
	}
	w := &testweb.ScriptWeb{Articles: 6, Datasets: 2, StaticHosts: 1, StaticPages: 2}
	addr, err := w.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	data := t.TempDir()
	args := []string{"crawl", "--data", data, "--allow-private", "--resolve", "*.test=" + addr, "--min-delay", "0",
		"--render", "auto", "--seed", "http://www.spa.test/", "--seed", "http://data.portal.test/"}
	env := append([]string{"SONDA_GEO_ENABLED=true", "SONDA_RENDER_IDLE=200ms"}, quickEnv...)
	out, stderr, code := run(t, env, args...)
	if code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "rendering (auto):") {
		t.Errorf("the summary does not report rendering:\n%s", out)
	}
	if out, _, _ := run(t, nil, "status", "--data", data); !strings.Contains(out, "render:    auto: ") {
		t.Errorf("sonda status does not report rendering:\n%s", out)
	}
	searchArticles := func(when string) {
		for _, id := range []int{1, 6} {
			phrase := strings.Fields(testweb.ArticlePhrase(id))[0] // rendered-article-N
			out, stderr, code := run(t, nil, "search", "--data", data, "--json", phrase)
			if code != 0 {
				t.Fatalf("search %s: exit %d: %s", when, code, stderr)
			}
			if !strings.Contains(out, "http://www.spa.test/article/"+strings.TrimPrefix(phrase, "rendered-article-")) {
				t.Errorf("search %q %s did not find its article:\n%s", phrase, when, out)
			}
		}
	}
	searchArticles("after the crawl")
	// A rebuilt index reads rendered pages from their conversion records, as the crawl
	// read them.
	if _, stderr, code := run(t, nil, "index", "rebuild", "--data", data); code != 0 {
		t.Fatalf("index rebuild: exit %d: %s", code, stderr)
	}
	searchArticles("after index rebuild")
	exp, stderr, code := run(t, nil, "export", "--data", data, "--what", "datasets")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	read := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(exp), "\n") {
		var d catalog.Dataset
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		read[d.URL] = d.Error == "" && d.Geographic && d.Metadata != nil
	}
	for _, u := range w.GeoFileURLs() {
		if strings.HasSuffix(u, ".geojson") && !read[u] {
			t.Errorf("GeoJSON %s not read as a dataset (export: %v)", u, read)
		}
	}
}
