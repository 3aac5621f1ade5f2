package focuseval

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/focus"
)

// Web is a test web a Bench crawls: the topical web (testweb/topical) or a corpus web
// (testweb/corpusweb), serving on loopback.
type Web interface {
	CrawlConfig(config.Config) config.Config
	Seeds(topic string) []string
	Relevant(url, topic string) bool
}

// Oracle is the strategy name of the perfect-classifier oracle: naive best-first whose
// page verdicts are the ground truth, what a crawler that judged pages without error and
// followed links from relevant pages first would harvest. "oracle:S" runs strategy S with
// the ground truth as its page classifier: how much S loses to its classifier's mistakes.
const Oracle = "oracle"

// Bench compares link strategies by crawling a test web, serving on loopback,
// from the same seeds for the same number of fetches. Crawls are sequential (one fetch at
// a time, no politeness pause) and priorities never tie (focus.TieBroken, also applied to
// breadth-first: ties within a depth are served in URL-hash order), so a strategy's
// figures hardly depend on the machine or the run: the frontier still serves hosts in
// another order now and then (a timing effect in its host scheduling, not yet explained),
// which moves the harvest at 5,000 fetches by about ±0.01. Best-N-First is the exception:
// it gets its N fetches in flight, on any hosts.
type Bench struct {
	Web      Web
	Topics   []*focus.Topic // judge pages; Topics[0].Name is the theme the labels count
	Model    *focus.PageModel
	Seeds    []string // default: Web.Seeds(Topics[0].Name)
	MaxPages int64    // fetches per crawl (the MLP's training stage makes as many again)
	Dir      string   // where crawl data directories go (one per strategy)
	Seed     uint64   // random choices of the strategies
	Log      *slog.Logger
	Options  focus.StrategyOptions // strategy parameters; Relevance and Seed are set per run
	// SelfTrain, when set, makes Model retrain during each crawl on these examples plus
	// the pages it judges confidently (every strategy but the oracle).
	SelfTrain *Trained
}

// Run crawls with one strategy ("bfs", a focus strategy, Oracle or "oracle:S") and returns
// its trace. For
// "mlp" it first runs seed 001's training stage, a random-order crawl of as many fetches
// from the same seeds, and trains the network on it; the trace notes that stage.
func (b *Bench) Run(ctx context.Context, strategy string) (*Trace, error) {
	topic := b.Topics[0].Name
	labels := webLabels{b.Web, topic}
	opts := b.Options
	opts.Seed = b.Seed
	// The oracle is best-first judged by the truth; "oracle:S" is strategy S judged so.
	base, truth := strategy, false
	if strategy == Oracle {
		base, truth = "best-first", true
	} else if s, ok := strings.CutPrefix(strategy, Oracle+":"); ok {
		base, truth = s, true
	}
	var note string
	if base == "mlp" {
		net, stage, err := b.trainMLP(ctx)
		if err != nil {
			return nil, err
		}
		opts.MLP, note = net, stage
	}
	rel, err := focus.NewRelevance(b.Topics, b.Model)
	if err != nil {
		return nil, err
	}
	switch {
	case truth:
		rel = focus.NewTruthRelevance(b.Topics[0], labels)
	case b.SelfTrain != nil:
		if err := rel.SelfTrain(b.SelfTrain.Examples, b.SelfTrain.Options, focus.SelfTrainParams{}); err != nil {
			return nil, err
		}
	}
	scorer := focus.TieBroken(crawl.BreadthFirst{})
	concurrency := 1
	if base != "bfs" {
		opts.Relevance = rel
		if scorer, err = focus.NewStrategy(base, opts); err != nil {
			return nil, err
		}
		if c, ok := scorer.(focus.Concurrent); ok {
			concurrency = c.Concurrency()
		}
	}
	t := &Trace{Strategy: strategy, Topic: topic, Note: note}
	rec := &Recorder{Trace: t, Labels: labels, Topic: topic}
	start := time.Now()
	if err := b.crawl(ctx, strategy, concurrency, rel, scorer, rec); err != nil {
		return nil, err
	}
	t.Elapsed = time.Since(start)
	if n, err := rel.SelfTrained(); n > 0 || err != nil {
		t.Note = strings.TrimPrefix(t.Note+fmt.Sprintf("; page model retrained %d times on confidently judged pages", n), "; ")
		if err != nil {
			t.Note += fmt.Sprintf(" (last error: %v)", err)
		}
	}
	if len(t.Fetches) > int(b.MaxPages) {
		t.Fetches = t.Fetches[:b.MaxPages]
	}
	return t, nil
}

// trainMLP runs the training stage and returns the trained network.
func (b *Bench) trainMLP(ctx context.Context) (*focus.MLP, string, error) {
	rel, err := focus.NewRelevance(b.Topics, b.Model)
	if err != nil {
		return nil, "", err
	}
	sampler := focus.NewLinkSampler(rel, nil, focus.NewRandom(b.Seed^0x7ea1), b.Options.Context, b.Options.Memo)
	rel.AddObserver(sampler)
	if err := b.crawl(ctx, "mlp-training", 1, rel, sampler, nil); err != nil {
		return nil, "", err
	}
	samples := sampler.Samples()
	p := focus.MLPDefaults
	p.Seed = b.Seed
	net, err := focus.TrainLinkMLP(samples, p)
	if err != nil {
		return nil, "", err
	}
	return net, fmt.Sprintf("trained on a random-order crawl of %d fetches (%d samples; SSE %.1f → %.1f over %d epochs)",
		b.MaxPages, len(samples), net.SSE[0], net.SSE[len(net.SSE)-1], len(net.SSE)), nil
}

// crawl runs one crawl of the test web into a fresh directory.
func (b *Bench) crawl(ctx context.Context, name string, concurrency int, rel *focus.Relevance, scorer crawl.LinkScorer, rec *Recorder) error {
	dir := filepath.Join(b.Dir, strings.ReplaceAll(name, "/", "_"))
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	cfg := b.Web.CrawlConfig(config.Default())
	cfg.Data = dir
	cfg.Crawl.Seeds = b.seeds()
	// Fetches in flight when the budget runs out are canceled; with several in flight, the
	// budget has room for them and the trace is cut at MaxPages.
	cfg.Crawl.MaxPages = b.MaxPages + int64(concurrency-1)
	cfg.Crawl.Concurrency = concurrency
	// Best-N-First fetches the N best URLs together, wherever they are: a host may have
	// all N (the test web does not mind; a crawl of the real web keeps per-host at 1, so
	// its N best URLs come from N hosts).
	cfg.Politeness.PerHost = concurrency
	cfg.Politeness.MinDelay, cfg.Politeness.DelayFactor = 0, 0
	cfg.WARC.Enabled = false
	opts := []crawl.Option{crawl.WithAnalyzers(rel), crawl.WithLinkScorer(scorer)}
	if rec != nil {
		opts = append(opts, crawl.WithSinks(rec))
	}
	if b.Log != nil {
		opts = append(opts, crawl.WithLogger(b.Log))
	}
	c, err := crawl.New(cfg, opts...)
	if err != nil {
		return err
	}
	_, err = c.Run(ctx, nil, nil)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("focuseval: crawl with %s: %w", name, err)
	}
	return os.RemoveAll(dir)
}

func (b *Bench) seeds() []string {
	if len(b.Seeds) > 0 {
		return b.Seeds
	}
	return b.Web.Seeds(b.Topics[0].Name)
}

// webLabels is a test web's ground truth for one topic.
type webLabels struct {
	w     Web
	topic string
}

func (l webLabels) Relevant(url string) (bool, bool) { return l.w.Relevant(url, l.topic), true }
