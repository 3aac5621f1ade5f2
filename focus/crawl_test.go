package focus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/testweb/topical"
)

// slowAnalyzer stretches a small crawl past the crawler's one-second progress tick.
type slowAnalyzer struct{ d time.Duration }

func (slowAnalyzer) Name() string { return "slow" }
func (s slowAnalyzer) Analyze(context.Context, *crawl.Document) error {
	time.Sleep(s.d)
	return nil
}

// focusedCrawl crawls a small topical web for the nuclear topic with one strategy, one
// fetch at a time, and returns the summary, the relevance analyzer and every progress
// snapshot the crawler reported.
func focusedCrawl(t *testing.T, web *topical.Web, strategy string, maxPages int64, extra ...crawl.Analyzer) (crawl.Summary, *Relevance, []crawl.Progress) {
	t.Helper()
	return crawlTopics(t, web, []string{"nuclear"}, strategy, maxPages, crawl.WithAnalyzers(extra...))
}

// crawlTopics is focusedCrawl for several topics, from the first one's seeds; opts come
// before the relevance analyzer and the strategy.
func crawlTopics(t *testing.T, web *topical.Web, names []string, strategy string, maxPages int64, opts ...crawl.Option) (crawl.Summary, *Relevance, []crawl.Progress) {
	t.Helper()
	var topics []*Topic
	for _, name := range names {
		topic, err := LoadTopic(name)
		if err != nil {
			t.Fatal(err)
		}
		topics = append(topics, topic)
	}
	rel, err := NewRelevance(topics, nil)
	if err != nil {
		t.Fatal(err)
	}
	so := StrategyOptions{Relevance: rel, Seed: 1, BestN: BestNParams{N: 4}}
	if strategy == "mlp" {
		// A network that prefers on-topic anchors: the retrieval stage needs one, and
		// training it is the training stage's business (TestLinkSamplerPairsFeaturesWithPostScore).
		var samples []LinkSample
		for i := 0; i < 20; i++ {
			a := float64(i%5) / 4
			samples = append(samples, LinkSample{X: LinkFeatures{a, 0, 0, 0, 0, 0, a / 2}, Target: a})
		}
		if so.MLP, err = TrainLinkMLP(samples, MLPParams{Epochs: 50, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	scorer := crawl.LinkScorer(crawl.BreadthFirst{})
	if strategy != "bfs" {
		if scorer, err = NewStrategy(strategy, so); err != nil {
			t.Fatal(err)
		}
	}
	cfg := web.Web.CrawlConfig(config.Default())
	cfg.Data = t.TempDir()
	cfg.Crawl.Seeds = web.Seeds(names[0])
	cfg.Crawl.MaxPages = maxPages
	cfg.Crawl.Concurrency = 1
	if c, ok := scorer.(Concurrent); ok { // best-n-first: N fetches in flight, on any host
		cfg.Crawl.Concurrency, cfg.Politeness.PerHost = c.Concurrency(), c.Concurrency()
	}
	cfg.Politeness.MinDelay, cfg.Politeness.DelayFactor = 0, 0
	cfg.WARC.Enabled = false
	c, err := crawl.New(cfg, append(opts, crawl.WithAnalyzers(rel), crawl.WithLinkScorer(scorer))...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress []crawl.Progress
	sum, err := c.Run(context.Background(), nil, func(p crawl.Progress) {
		mu.Lock()
		progress = append(progress, p)
		mu.Unlock()
	})
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("%s: %v", strategy, err)
	}
	return sum, rel, progress
}

// TestProgressLineShowsHarvest: a focused crawl through the real crawler (loopback HTTP,
// Pebble) reports the running harvest rate of the relevance analyzer in every progress
// snapshot, in the form the progress line prints.
func TestProgressLineShowsHarvest(t *testing.T) {
	web := topical.New(topical.Config{Seed: 2, Sites: 40, MeanPages: 10})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	// 100 pages at 25 ms each: about 2.5 s, two or more progress ticks.
	sum, rel, progress := focusedCrawl(t, web, "online", 100, slowAnalyzer{25 * time.Millisecond})
	relevant, judged := rel.Harvest()
	if sum.Judged != judged || sum.Relevant != relevant || judged < 90 || relevant == 0 {
		t.Fatalf("summary judged %d relevant %d; the analyzer judged %d, found %d relevant", sum.Judged, sum.Relevant, judged, relevant)
	}
	var shown int
	for _, p := range progress {
		if p.Pages == 0 {
			continue
		}
		if p.Judged == 0 || p.Relevant > p.Judged || p.Judged > judged || p.Relevant > relevant {
			t.Errorf("progress after %d pages: judged %d, relevant %d (final: %d, %d)", p.Pages, p.Judged, p.Relevant, judged, relevant)
		}
		want := fmt.Sprintf("harvest %.1f%% (%d/%d)", 100*float64(p.Relevant)/float64(p.Judged), p.Relevant, p.Judged)
		if line := p.String(); !strings.Contains(line, want) {
			t.Errorf("progress line %q does not show %q", line, want)
		}
		shown++
	}
	if shown == 0 {
		t.Fatalf("no progress snapshot during a crawl of %s (%d snapshots)", sum.Elapsed, len(progress))
	}
}

// TestEveryStrategyCrawls runs each link strategy through the real crawler on a small
// topical web: every one must spend its whole budget, judge every page, and (all but
// random, whose order ignores relevance) harvest more than breadth-first does.
func TestEveryStrategyCrawls(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a test web once per strategy")
	}
	web := topical.New(topical.Config{Seed: 7, Sites: 80, MeanPages: 20})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	const budget = 250
	harvest := map[string]float64{}
	for _, s := range append([]string{"bfs"}, Strategies()...) {
		sum, rel, _ := focusedCrawl(t, web, s, budget)
		relevant, judged := rel.Harvest()
		// Fetches in flight when the budget runs out finish (best-n-first has 4).
		if sum.Pages < budget || sum.Pages >= budget+4 || judged != sum.Pages {
			t.Errorf("%s: %d pages fetched, %d judged; want %d", s, sum.Pages, judged, budget)
			continue
		}
		harvest[s] = float64(relevant) / float64(judged)
	}
	t.Logf("crawler's harvest after %d fetches: %v", budget, harvest)
	for s, h := range harvest {
		if s != "bfs" && s != "random" && h <= harvest["bfs"] {
			t.Errorf("%s harvests %.3f, no more than breadth-first's %.3f", s, h, harvest["bfs"])
		}
	}
}

// topicsSink collects the topics of every page record a crawl writes.
type topicsSink struct {
	mu     sync.Mutex
	judged int
	count  map[string]int // topic → pages found relevant to it
}

func (*topicsSink) Name() string { return "topics" }
func (s *topicsSink) Consume(_ context.Context, d *crawl.Document) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Record.Relevant == nil {
		return nil
	}
	s.judged++
	if *d.Record.Relevant != (len(d.Record.Topics) > 0) {
		return fmt.Errorf("%s: relevant %v with topics %v", d.URL, *d.Record.Relevant, d.Record.Topics)
	}
	for _, topic := range d.Record.Topics {
		s.count[topic]++
	}
	return nil
}

// TestSeveralTopicsInOneCrawl: a crawl with two topics records, on every page, which of
// them found it relevant; from nuclear seeds, through portals and mixed sites, both are met.
func TestSeveralTopicsInOneCrawl(t *testing.T) {
	web := topical.New(topical.Config{Seed: 7, Sites: 80, MeanPages: 20})
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	sink := &topicsSink{count: map[string]int{}}
	sum, rel, _ := crawlTopics(t, web, []string{"nuclear", "geo"}, "bfs", 400, crawl.WithSinks(sink))
	relevant, judged := rel.Harvest()
	if sink.judged != int(judged) || judged < 390 || sum.Pages != 400 {
		t.Fatalf("%d records judged, the analyzer judged %d, of %d pages fetched", sink.judged, judged, sum.Pages)
	}
	t.Logf("pages relevant per topic: %v of %d judged", sink.count, judged)
	if sink.count["nuclear"] == 0 || sink.count["geo"] == 0 || sink.count["nuclear"]+sink.count["geo"] < int(relevant) {
		t.Errorf("pages relevant per topic %v; %d relevant pages in all", sink.count, relevant)
	}
}
