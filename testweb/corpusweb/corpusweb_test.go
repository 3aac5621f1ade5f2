package corpusweb

import (
	"html"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

var (
	loadOnce sync.Once
	loaded   []Doc
	loadErr  error
)

// reuters loads the corpus once per test binary; without it the test skips, except under
// CI, where scripts/test.sh installs it.
func reuters(t testing.TB) []Doc {
	t.Helper()
	loadOnce.Do(func() {
		dir, err := ReutersDir()
		if err != nil {
			loadErr = err
			return
		}
		loaded, loadErr = LoadReuters(dir)
	})
	if loadErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(loadErr)
		}
		t.Skip(loadErr)
	}
	return loaded
}

func TestLoadReuters(t *testing.T) {
	docs := reuters(t)
	if len(docs) < 18000 {
		t.Fatalf("%d stories with a body; Reuters-21578 has about 19,000", len(docs))
	}
	count := map[string]int{}
	for _, d := range docs {
		for _, l := range d.Labels {
			count[l]++
		}
		if d.Title == "" || len(d.Paragraphs) == 0 {
			t.Fatalf("story %s: empty title or body", d.ID)
		}
	}
	// The collection's best-known category sizes (stories with a body).
	for l, least := range map[string]int{"earn": 3700, "acq": 2200, "crude": 500, "grain": 500, "coffee": 100} {
		if count[l] < least {
			t.Errorf("%s: %d stories, want at least %d", l, count[l], least)
		}
	}
	if d := docs[0]; d.Day != "1987-02-26" || !d.Has("cocoa") {
		t.Errorf("first story: day %q labels %v, want 1987-02-26 and cocoa", d.Day, d.Labels)
	}
}

func TestWeb(t *testing.T) {
	docs := reuters(t)
	low := New(docs, Config{Seed: 1, Locality: 0.3})
	high := New(docs, Config{Seed: 1, Locality: 0.8})
	topics := low.Topics(100)
	if len(topics) < 10 {
		t.Fatalf("%d topics with 100 stories: %v", len(topics), topics)
	}
	for _, topic := range topics[:10] {
		l, h := low.Locality(topic), high.Locality(topic)
		if !(l < h) {
			t.Errorf("%s: locality %.2f at 0.3 and %.2f at 0.8", topic, l, h)
		}
		base := float64(low.Count(topic)) / float64(len(low.Pages()))
		if l <= base {
			t.Errorf("%s: locality %.2f at 0.3 is not above the base rate %.3f", topic, l, base)
		}
		for _, s := range low.Seeds(topic) {
			if low.Relevant(s, topic) {
				t.Errorf("%s: seed %s is on topic", topic, s)
			}
		}
		if n := len(low.Seeds(topic)); n != 4 {
			t.Errorf("%s: %d seeds", topic, n)
		}
	}
	// The example pool is out of the web.
	pos, neg := low.Examples("grain", 50, 200, 1)
	if len(pos) < 40 || len(pos) > 50 || len(neg) != 200 { // the pool has a tenth of grain's ~580 stories
		t.Fatalf("examples: %d and %d", len(pos), len(neg))
	}
	for _, d := range append(pos, neg...) {
		if low.byURL["http://"+low.sites[0].host+"/story/"+d.ID+".html"] != nil || inWeb(low, d.ID) {
			t.Fatalf("example %s is in the web", d.ID)
		}
	}
	for _, d := range pos {
		if !d.Has("grain") {
			t.Fatalf("positive example %s is not about grain: %v", d.ID, d.Labels)
		}
	}
	t.Logf("%s", low.Describe())
	for _, topic := range topics[:12] {
		p, _ := low.Examples(topic, 50, 0, 1)
		t.Logf("%-12s %4d stories, locality %.2f (0.3) %.2f (0.8), %d positive examples", topic, low.Count(topic), low.Locality(topic), high.Locality(topic), len(p))
	}
}

func inWeb(w *Web, id string) bool {
	for _, p := range w.pages {
		if p.doc != nil && p.doc.ID == id {
			return true
		}
	}
	return false
}

// TestServedPage: a story page as served carries its document's words and
// headline-anchored links; the labels say what it is about.
func TestServedPage(t *testing.T) {
	docs := reuters(t)
	w := New(docs, Config{Seed: 2})
	var story *page
	for _, p := range w.pages {
		if p.doc != nil && p.doc.Has("coffee") && len(p.list) > 0 {
			story = p
			break
		}
	}
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest("GET", story.url(), nil))
	b, _ := io.ReadAll(rec.Body)
	body := string(b)
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d", story.url(), rec.Code)
	}
	words := strings.Fields(story.doc.Paragraphs[0])
	if !strings.Contains(body, strings.Join(words[:min(6, len(words))], " ")) {
		t.Errorf("the page lacks its story's first words:\n%s", body)
	}
	if !strings.Contains(body, ">"+html.EscapeString(story.list[0].title)+"</a>") {
		t.Errorf("the related link's anchor is not its headline:\n%s", body)
	}
	if !w.Relevant(story.url(), "coffee") || w.Relevant(story.site.front.url(), "coffee") {
		t.Errorf("labels: story %v, front %v", w.Relevant(story.url(), "coffee"), w.Relevant(story.site.front.url(), "coffee"))
	}
}
