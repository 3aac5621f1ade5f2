package focuseval

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sonda-search/sonda/focus"
	"github.com/sonda-search/sonda/testweb/topical"
)

// BenchmarkFocusStrategies is the focused-crawling acceptance benchmark: every strategy
// crawls the default topical test web (1,000 sites, about 100,000 pages) from the same
// seeds for 5,000 fetches, looking for the nuclear topic (seed 001's vocabulary), and the
// harvest is judged by the web's ground truth. It fails unless sonda's default (online)
// reaches at least twice the harvest of breadth-first and beats naive best-first, and the
// seed 001 link MLP beats breadth-first. It prints the table docs/benchmarks.md shows;
// SONDA_FOCUS_PLOT=FILE also draws the plot. Environment: SONDA_FOCUS_TOPIC (nuclear or
// geo), SONDA_FOCUS_WEB_SEED (web seed, default 1).
//
//	go test -run XXX -bench FocusStrategies -benchtime 1x -timeout 30m ./focus/focuseval
func BenchmarkFocusStrategies(b *testing.B) {
	topicName, webSeed := benchTopicAndSeed()
	topic, err := focus.LoadTopic(topicName)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w := topical.New(topical.Config{Seed: webSeed})
		if _, err := w.Start(); err != nil {
			b.Fatal(err)
		}
		bench := &Bench{Web: w, Topics: []*focus.Topic{topic}, MaxPages: 5000, Dir: b.TempDir(), Seed: 1}
		var traces []*Trace
		harvest := map[string]float64{}
		for _, s := range []string{"bfs", "random", "best-first", "best-n-first", "fish", "shark", "mlp", "online"} {
			t, err := bench.Run(context.Background(), s)
			if err != nil {
				b.Fatal(err)
			}
			traces = append(traces, t)
			harvest[s] = t.Harvest(5000, ByLabels)
			b.ReportMetric(harvest[s], "harvest-"+s)
			if t.Note != "" {
				b.Logf("%s: %s", s, t.Note)
			}
		}
		w.Close()
		// The table goes to stdout: the benchmark log would cut it.
		fmt.Printf("%s; %d pages about %s; seeds %v\n\n%s\n", w.Describe(), w.Count(topicName), topicName, w.Seeds(topicName),
			Table(traces, []int{500, 1000, 2000, 5000}, 500))
		if path := os.Getenv("SONDA_FOCUS_PLOT"); path != "" {
			if err := Plot(traces, path, 500, ByLabels); err != nil {
				b.Fatal(err)
			}
		}
		if harvest["online"] < 2*harvest["bfs"] || harvest["online"] <= harvest["best-first"] || harvest["mlp"] <= harvest["bfs"] {
			b.Fatalf("acceptance: online %.3f must be ≥ 2 × bfs %.3f and > best-first %.3f; mlp %.3f must beat bfs",
				harvest["online"], harvest["bfs"], harvest["best-first"], harvest["mlp"])
		}
	}
}

// benchTopicAndSeed reads SONDA_FOCUS_TOPIC (default nuclear) and SONDA_FOCUS_WEB_SEED
// (default 1).
func benchTopicAndSeed() (topic string, webSeed int64) {
	topic, webSeed = os.Getenv("SONDA_FOCUS_TOPIC"), 1
	if topic == "" {
		topic = topical.Nuclear
	}
	if s := os.Getenv("SONDA_FOCUS_WEB_SEED"); s != "" {
		fmt.Sscan(s, &webSeed)
	}
	return topic, webSeed
}
