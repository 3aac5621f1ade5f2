package focuseval

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sonda-search/sonda/testweb/corpusweb"
)

var (
	reutersOnce sync.Once
	reutersDocs []corpusweb.Doc
	reutersErr  error
)

// reuters loads Reuters-21578 once per test binary; without it the test skips, except under
// CI, where scripts/test.sh installs it.
func reuters(t testing.TB) []corpusweb.Doc {
	t.Helper()
	reutersOnce.Do(func() {
		dir, err := corpusweb.ReutersDir()
		if err != nil {
			reutersErr = err
			return
		}
		reutersDocs, reutersErr = corpusweb.LoadReuters(dir)
	})
	if reutersErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(reutersErr)
		}
		t.Skip(reutersErr)
	}
	return reutersDocs
}

// BenchmarkCorpusWeb is the focused-crawling evaluation on real documents: a corpus web of
// Reuters-21578 (testweb/corpusweb) at each topical locality, every topic with at least 150
// stories, a page model trained on at most 50 + 200 example stories kept out of the web, and
// a crawl per strategy from four off-topic seeds, the perfect-classifier oracle among them.
// It prints the harvest tables of docs/benchmarks.md. Environment: SONDA_FOCUS_LOCALITY
// (comma-separated, default 0.3,0.55,0.8), SONDA_FOCUS_TOPICS (default: every topic with
// 150 stories), SONDA_FOCUS_STRATEGIES (default bfs,best-first,online,oracle),
// SONDA_FOCUS_MAX_PAGES (default 5000).
//
//	go test -run XXX -bench CorpusWeb -benchtime 1x -timeout 3h ./focus/focuseval
func BenchmarkCorpusWeb(b *testing.B) {
	docs := reuters(b)
	localities := envList("SONDA_FOCUS_LOCALITY", "0.3,0.55,0.8")
	strategies := envList("SONDA_FOCUS_STRATEGIES", "bfs,best-first,online,"+Oracle)
	maxPages := int64(5000)
	if s := os.Getenv("SONDA_FOCUS_MAX_PAGES"); s != "" {
		maxPages, _ = strconv.ParseInt(s, 10, 64)
	}
	for b.Loop() {
		for _, ls := range localities {
			loc, _ := strconv.ParseFloat(ls, 64)
			w := corpusweb.New(docs, corpusweb.Config{Seed: 1, Locality: loc})
			if _, err := w.Start(); err != nil {
				b.Fatal(err)
			}
			topics := envList("SONDA_FOCUS_TOPICS", strings.Join(w.Topics(150), ","))
			var results []*CorpusTopic
			for _, topic := range topics {
				ct, err := RunCorpusTopic(context.Background(), w, topic, strategies, maxPages, b.TempDir(), 1)
				if err != nil {
					b.Fatal(err)
				}
				results = append(results, ct)
				fmt.Printf("%s done\n", topic)
			}
			w.Close()
			fmt.Printf("\nlocality %s: %s\n\n%s\n%s\n%s\n", ls, w.Describe(), CorpusTable(results, 1000), CorpusTable(results, int(maxPages)),
				JudgmentTable(results, strategies))
		}
	}
}

func envList(name, def string) []string {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
