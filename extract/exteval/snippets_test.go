package exteval

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/extract"
)

func TestCountSnippets(t *testing.T) {
	want := Snippets{With: []string{"the  first\nsentence", "absent words"}, Without: []string{"Impressum", "Newsletter"}}
	for _, c := range []struct {
		body string
		want SnippetCounts
	}{
		{"The body: the first sentence, then Impressum.", SnippetCounts{Found: 1, Missed: 1, Leaked: 1, Avoided: 1}},
		{"the first   sentence and absent words", SnippetCounts{Found: 2, Avoided: 2}},
		// An empty body finds nothing and leaks nothing.
		{"", SnippetCounts{Missed: 2, Avoided: 2}},
	} {
		if got := CountSnippets(c.body, want); got != c.want {
			t.Errorf("CountSnippets(%q) = %+v, want %+v", c.body, got, c.want)
		}
	}
	p, r := SnippetCounts{Found: 3, Missed: 1, Leaked: 1, Avoided: 5}.scores()
	if p != 0.75 || r != 0.75 {
		t.Errorf("precision, recall = %v, %v; want 0.75, 0.75", p, r)
	}
}

// writeSnippetSet lays out a folder like go-trafilatura's module: pages in
// test-files/comparison and test-files/mock, their strings in scripts/comparison/data.go.
func writeSnippetSet(t *testing.T, data string, pages map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"scripts/comparison", "test-files/comparison", "test-files/mock"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts/comparison/data.go"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, html := range pages {
		if err := os.WriteFile(filepath.Join(dir, "test-files", name), []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const snippetData = `package main

var comparisonData = map[string]ComparisonEntry{
	"https://example.org/story": {
		File:    "story.html",
		With:    []string{"The council voted on Tuesday", "a new bridge"},
		Without: []string{"Subscribe to our newsletter"},
	},
	"https://example.org/other": {
		File:    "other.html",
		Title:   "ignored",
		With:    []string{"Nothing of this is on the page"},
		Without: []string{"Impressum"},
	},
}
`

// TestSnippetSet reads a go-trafilatura-like set and scores a real extraction of it: the
// story's strings are found, its footer left out; the page without its strings counts
// them missed.
func TestSnippetSet(t *testing.T) {
	story := `<html><head><title>Bridge</title></head><body><nav><a href="/">Home</a></nav><article><h1>Bridge</h1>` +
		strings.Repeat(`<p>The council voted on Tuesday to build a new bridge over the river, after years of debate about its cost and its place in the town.</p>`, 4) +
		`</article><footer><p>Subscribe to our newsletter</p></footer></body></html>`
	dir := writeSnippetSet(t, snippetData, map[string]string{"comparison/story.html": story, "mock/other.html": "<html><body><p>Home</p></body></html>"})
	if SetName(dir) != "trafilatura-bench" || Role(dir) != "held-out" {
		t.Errorf("set name %q, role %q", SetName(dir), Role(dir))
	}
	cases, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[1].Name != "story.html" || cases[1].URL != "https://example.org/story" || len(cases[1].Snippets.With) != 2 {
		t.Fatalf("loaded %+v", cases)
	}
	ex, err := extract.New(extract.Options{Mode: extract.ModeTrafilatura})
	if err != nil {
		t.Fatal(err)
	}
	r := Run(cases, ex, 1)
	want := SnippetCounts{Found: 2, Missed: 1, Avoided: 2}
	if r.Snippets == nil || *r.Snippets != want {
		t.Fatalf("pooled strings %+v, want %+v", r.Snippets, want)
	}
	if r.Precision != 1 || r.Recall != 2.0/3 {
		t.Errorf("precision %v recall %v, want 1 and 2/3 (pooled over the strings)", r.Precision, r.Recall)
	}

	// A page named in the data and missing from both folders makes the set incomplete.
	broken := writeSnippetSet(t, snippetData, map[string]string{"comparison/story.html": story})
	if _, err := Load(broken); err == nil || !strings.Contains(err.Error(), "other.html") {
		t.Errorf("a missing page: err = %v", err)
	}
}

// trafilaturaBench loads go-trafilatura's benchmark from the module cache, or skips: the
// cache holds it wherever sonda was built, and misses it only when cleaned after the build.
func trafilaturaBench(t *testing.T) []Case {
	t.Helper()
	dir, err := TrafilaturaBenchmark()
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatal(err) // CI built sonda, so the module cache has it
	}
	if err != nil {
		t.Skipf("go-trafilatura's benchmark is not available: %v", err)
	}
	cases, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestTrafilaturaBenchmark reads go-trafilatura's own benchmark from the module cache.
func TestTrafilaturaBenchmark(t *testing.T) {
	cases := trafilaturaBench(t)
	if len(cases) < 900 {
		t.Fatalf("%d pages in go-trafilatura's benchmark, want about 980", len(cases))
	}
	for _, c := range cases {
		if c.URL == "" || c.Snippets == nil || len(c.Snippets.With) == 0 || len(c.Source) == 0 {
			t.Fatalf("page %s is incomplete: url %q, %d bytes, snippets %+v", c.Name, c.URL, len(c.Source), c.Snippets)
		}
	}
}

// TestNoLossOnTrafilaturasBenchmark guards the third, held-out set: on the benchmark
// go-trafilatura was tuned on, sonda's body must not fall more than 0.01 (pooled string
// F1) below go-trafilatura's. It measured −0.004 when the set was added (sonda 0.907,
// go-trafilatura 0.910): the cascade's gain on Dragnet and Readability does not carry to
// this set, and this test keeps a change from making that worse unseen.
func TestNoLossOnTrafilaturasBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the evaluation takes a minute")
	}
	if raceEnabled {
		t.Skip("the race detector makes the evaluation take many minutes; scripts/test.sh runs it without -race")
	}
	cases := trafilaturaBench(t)
	run := func(mode extract.Mode) Result {
		ex, err := extract.New(extract.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return Run(cases, ex, runtime.GOMAXPROCS(0))
	}
	sonda, traf := run(extract.ModeSonda), run(extract.ModeTrafilatura)
	t.Logf("trafilatura-bench (%d pages): string F1 sonda %.4f (P %.3f R %.3f), go-trafilatura %.4f (P %.3f R %.3f): %+.4f",
		len(cases), sonda.F1, sonda.Precision, sonda.Recall, traf.F1, traf.Precision, traf.Recall, sonda.F1-traf.F1)
	for _, st := range ByStage(Compare(sonda, traf)) {
		t.Logf("stage %s decided %d pages: lost %d, won %d; mean page F1 %.4f, go-trafilatura %.4f", st.Stage, st.Pages, st.Lost, st.Won, st.MeanF1, st.MeanBaseF1)
	}
	if sonda.F1 < traf.F1-0.01 {
		t.Errorf("sonda's string F1 %.4f is more than 0.01 below go-trafilatura's %.4f on its own benchmark", sonda.F1, traf.F1)
	}
}

// TestSidebarWrappersKeepTheArticle guards the held-out pages where the sidebar rule
// (extract's bodySides) once read the page again without a layout wrapper named after
// its sidebar (class "sidebar_right", "sidebar-right", "sidebar-and-content-body",
// "sidebar-wrapper", "sidebar-off", "sidebar__main") that held the whole article, and
// the body lost every string go-trafilatura's holds. The rule was fixed on Dragnet's
// terms (a side part holds neither the page's <main> nor three long paragraphs of the
// body; none of Dragnet's 19 sidebar bodies does); these pages were not tuned on, and
// sonda must find at least as many of their "with" strings as go-trafilatura.
func TestSidebarWrappersKeepTheArticle(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads go-trafilatura's benchmark")
	}
	pages := map[string]bool{
		"bundesfeuerwehrverband.at-eröffnet.html": true,
		"infocomcgt.fr.caisse.html":               true,
		"newrepublic.com.neoliberalism.html":      true,
		"fincompare.de.firmenwagen.html":          true,
		"silkes-weinkeller.de-dekantieren.html":   true,
		"lanacion.com.ar-jugada.html":             true,
	}
	var cases []Case
	for _, c := range trafilaturaBench(t) {
		if pages[c.Name] {
			cases = append(cases, c)
		}
	}
	if len(cases) != len(pages) {
		t.Fatalf("found %d of the %d pages in go-trafilatura's benchmark", len(cases), len(pages))
	}
	run := func(mode extract.Mode, c Case) SnippetCounts {
		ex, err := extract.New(extract.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		a, err := ex.Extract(c.Source, c.URL)
		if err != nil {
			t.Fatal(err)
		}
		return CountSnippets(a.Text(), *c.Snippets)
	}
	for _, c := range cases {
		sonda, traf := run(extract.ModeSonda, c), run(extract.ModeTrafilatura, c)
		if sonda.Found < traf.Found || traf.Found == 0 {
			t.Errorf("%s: sonda's body holds %d of the %d strings it must, go-trafilatura's %d", c.Name, sonda.Found, sonda.Found+sonda.Missed, traf.Found)
		}
	}
}
