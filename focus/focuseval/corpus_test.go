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
// SONDA_FOCUS_MAX_PAGES (default 5000), SONDA_FOCUS_SELF_TRAIN=1 (self-training on), SONDA_FOCUS_PRIOR (focus.TrainOptions.Prior).
//
//	go test -run XXX -bench CorpusWeb -benchtime 1x -timeout 3h ./focus/focuseval
func BenchmarkCorpusWeb(b *testing.B) {
	docs := reuters(b)
	localities := envList("SONDA_FOCUS_LOCALITY", "0.3,0.55,0.8")
	strategies := envList("SONDA_FOCUS_STRATEGIES", "bfs,best-first,online,"+Oracle)
	selfTrain := os.Getenv("SONDA_FOCUS_SELF_TRAIN") == "1"
	prior, _ := strconv.ParseFloat(os.Getenv("SONDA_FOCUS_PRIOR"), 64)
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
				ct, err := RunCorpusTopic(context.Background(), w, topic, CorpusRun{Strategies: strategies, MaxPages: maxPages, Dir: b.TempDir(), Seed: 1, SelfTrain: selfTrain, Prior: prior})
				if err != nil {
					b.Fatal(err)
				}
				results = append(results, ct)
				fmt.Printf("%s done\n", topic)
			}
			w.Close()
			fmt.Printf("\nlocality %s, self-training %v: %s\n\n%s\n%s\n%s\n", ls, selfTrain, w.Describe(), CorpusTable(results, 1000), CorpusTable(results, int(maxPages)),
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

// TestCorpusWebAcceptance guards the goal on the Reuters web with its weakest topical
// locality (0.3) for a held-out topic and one more (acceptanceTopics): sonda's default
// strategy, with a page model trained on at most 50 + 200 example stories kept out of the
// web, must harvest at least 0.7 × the perfect-classifier oracle and no less than
// breadth-first over the first 1,000 fetches, and the crawler's own verdicts must keep
// their precision and recall against the true labels. It skips under -short and the race
// detector (minutes there); scripts/test.sh runs it without.
func TestCorpusWebAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls the Reuters web")
	}
	if raceEnabled {
		t.Skip("the race detector makes the crawls take minutes; scripts/test.sh runs this test without -race")
	}
	docs := reuters(t)
	w := corpusweb.New(docs, corpusweb.Config{Seed: 1, Locality: 0.3})
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 1000
	for _, topic := range acceptanceTopics {
		ct, err := RunCorpusTopic(context.Background(), w, topic, CorpusRun{Strategies: []string{"bfs", "online", Oracle}, MaxPages: n, Dir: t.TempDir(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		bfs, online, oracle := ct.Trace("bfs").Harvest(n, ByLabels), ct.Trace("online").Harvest(n, ByLabels), ct.Trace(Oracle).Harvest(n, ByLabels)
		p, r := ct.Trace("online").Agreement()
		t.Logf("%s (%d pages, locality %.2f, %d+%d examples): harvest@%d bfs %.3f, online %.3f, oracle %.3f; online's verdicts: precision %.2f, recall %.2f",
			topic, ct.Relevant, ct.Locality, ct.Pos, ct.Neg, n, bfs, online, oracle, p, r)
		if online < 0.7*oracle || online < bfs {
			t.Errorf("%s: online harvest %.3f must be ≥ 0.7 × the oracle's %.3f and ≥ bfs %.3f", topic, online, oracle, bfs)
		}
		if p < acceptancePrecision || r < acceptanceRecall {
			t.Errorf("%s: the crawler's verdicts: precision %.2f, recall %.2f; want at least %.2f and %.2f", topic, p, r, acceptancePrecision, acceptanceRecall)
		}
	}
}

// acceptanceTopics: wheat was never looked at while developing; crude was seen once, in
// the first baseline run, before any change (docs/benchmarks.md lists the split). The verdict floors are below what they reach now
// (precision 0.83 and 0.62, recall 0.95 and 0.93). Recall is what Tune's threshold keeps
// up with few examples (TestTuneFewExamples: the fixed 0.5 loses most relevant pages).
var acceptanceTopics = []string{"crude", "wheat"}

const acceptancePrecision, acceptanceRecall = 0.5, 0.8
