package topical

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/urlnorm"
)

var small = Config{Seed: 3, Sites: 80, MeanPages: 25}

func get(t *testing.T, w *Web, url string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d", url, rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return b
}

func TestDeterministic(t *testing.T) {
	a, b := New(small), New(small)
	if !slices.Equal(a.Pages(), b.Pages()) {
		t.Fatal("two webs from one config differ in pages")
	}
	for _, u := range a.Pages()[:50] {
		if a.Label(u) != b.Label(u) || !bytes.Equal(get(t, a, u), get(t, b, u)) {
			t.Fatalf("%s differs between two webs from one config", u)
		}
	}
	if pages := a.Pages(); len(slices.Compact(slices.Clone(pages))) != len(pages) {
		t.Error("two generated pages share a URL")
	}
	if other := New(Config{Seed: 4, Sites: 80, MeanPages: 25}); slices.Equal(other.Pages(), a.Pages()) {
		t.Error("another seed gives the same web")
	}
}

// TestHTMLMatchesModel: what a parser finds on each served page is exactly the model's
// links, so the ground truth describes what crawlers see.
func TestHTMLMatchesModel(t *testing.T) {
	w := New(small)
	norm := urlnorm.New(urlnorm.Options{})
	for _, p := range w.pages[:300] {
		page, err := parse.Parse(get(t, w, p.url()), p.url(), parse.Options{Resolver: norm})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, l := range page.Links {
			got = append(got, l.URL)
		}
		for _, l := range p.links {
			want = append(want, l.to.url())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: links in HTML %v, in the model %v", p.url(), got, want)
		}
		if page.Title != p.title {
			t.Fatalf("%s: title %q, want %q", p.url(), page.Title, p.title)
		}
	}
}

// TestTopicalLocality checks the properties focused crawling relies on and must cope
// with: on-topic pages link to on-topic pages far more often than the topic's share of
// the web, yet some on-topic pages have only off-topic pages linking to them.
func TestTopicalLocality(t *testing.T) {
	w := New(Config{Seed: 5, Sites: 200, MeanPages: 40})
	for _, topic := range []string{Nuclear, Geo} {
		th := themeByName(topic)
		share := float64(w.Count(topic)) / float64(len(w.pages))
		var links, onTopic int
		in := map[*page][]*page{}
		for _, p := range w.pages {
			for _, l := range p.links {
				in[l.to] = append(in[l.to], p)
				if p.theme == th {
					links++
					if l.to.theme == th {
						onTopic++
					}
				}
			}
		}
		locality := float64(onTopic) / float64(links)
		if share < 0.03 || share > 0.15 || locality < 3*share || locality > 0.9 {
			t.Errorf("%s: %.1f%% of pages, %.1f%% of their links stay on topic", topic, 100*share, 100*locality)
		}
		behind := 0
		for _, p := range w.pages {
			if p.theme != th || len(in[p]) == 0 {
				continue
			}
			if !slices.ContainsFunc(in[p], func(q *page) bool { return q.theme == th }) {
				behind++
			}
		}
		if behind < 10 {
			t.Errorf("%s: only %d on-topic pages are reached through off-topic pages alone", topic, behind)
		}
	}
	reachable := map[string]bool{}
	for _, u := range w.Reachable() {
		reachable[u] = true
	}
	n := 0
	for _, u := range w.Pages() {
		if reachable[u] {
			n++
		}
	}
	if frac := float64(n) / float64(len(w.pages)); frac < 0.9 {
		t.Errorf("only %.0f%% of generated pages are reachable from the seeds", 100*frac)
	}
}

func TestLabelsAndSeeds(t *testing.T) {
	w := New(small)
	var buf bytes.Buffer
	if err := w.WriteLabels(&buf); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != len(w.pages) {
		t.Fatalf("%d label lines for %d pages", len(lines), len(w.pages))
	}
	var l Label
	if err := json.Unmarshal(lines[0], &l); err != nil || l.URL == "" || l.Kind == "" || l.Site == "" {
		t.Fatalf("label line %s: %v", lines[0], err)
	}
	seeds := w.Seeds(Nuclear)
	if len(seeds) < 3 || w.Label(seeds[0]) != Nuclear {
		t.Errorf("seeds %v: the first must be a nuclear site's front page", seeds)
	}
	if w.Label("http://www.site00.test/") != "" {
		t.Error("testweb's own pages are about nothing")
	}
}
