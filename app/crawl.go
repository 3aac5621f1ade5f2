package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/feeds"
	"github.com/sonda-search/sonda/focus"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/discover"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/store"
)

// CrawlOptions are the options of one crawl on the instance, for the configuration cfg
// (the instance's, possibly adjusted for this crawl: a page limit, a duration). It may
// adjust cfg in turn: a link strategy that needs a given concurrency (best-n-first) sets
// crawl.concurrency. Build them anew for every crawl: scorers and analyzers keep per-crawl
// state.
//
// Each extension point gets one coherent setting, whatever the verticals on:
//
//   - the store: the instance's database (crawl.WithStore);
//   - analyzers, in this order: language detection (with no topic; the relevance analyzer
//     detects it otherwise), the geo vertical, feeds, news articles, topic relevance;
//   - one link scorer: the configured strategy (a focused one with a topic, else
//     crawl.link-strategy as package crawl knows it), with the geo vertical's producer
//     boost on top when geo.enabled;
//   - one revisit policy (revisit.policy), which the feeds' and news topics' revisit
//     overrides take some URLs from;
//   - sinks: the verticals' own, then the link graph and the index (search.index), the
//     graph first so a page's anchors are in it when the index writes the page.
func (in *Instance) CrawlOptions(cfg *config.Config) ([]crawl.Option, error) {
	a, err := in.assemble(cfg)
	if err != nil {
		return nil, err
	}
	return a.opts, nil
}

// assembly is one crawl's options, with the parts the assembly chose kept for tests.
type assembly struct {
	opts      []crawl.Option
	analyzers []string            // names of the analyzers, in the order they run
	scorer    crawl.LinkScorer    // the one link scorer installed
	base      crawl.LinkScorer    // the configured strategy, before any vertical's boost
	geo       *discover.Vertical  // nil unless geo.enabled
	policy    crawl.RevisitPolicy // nil without a revisit policy
	sinks     []string            // names of the sinks, in order
	focus     *Focus              // nil without a topic
}

func (a *assembly) add(o ...crawl.Option) { a.opts = append(a.opts, o...) }

func (a *assembly) analyzer(an crawl.Analyzer) {
	a.add(crawl.WithAnalyzers(an))
	a.analyzers = append(a.analyzers, an.Name())
}

func (in *Instance) assemble(cfg *config.Config) (*assembly, error) {
	if !in.crawl {
		return nil, fmt.Errorf("app: %s was not opened for crawling (Options.Crawl)", in.cfg.Data)
	}
	a := &assembly{}
	a.add(crawl.WithStore(in.DB), crawl.WithLogger(in.log))
	f, err := LoadFocus(cfg)
	if err != nil {
		return nil, err
	}
	a.focus = f
	if f == nil {
		a.analyzer(focus.Language{})
	}
	if a.base, err = f.linkScorer(cfg.Crawl.LinkStrategy); err != nil {
		return nil, err
	}
	a.scorer = a.base
	if cfg.Geo.Enabled {
		a.geo = discover.New(catalog.New(in.DB), discover.Options{
			MinPageHits:     cfg.Geo.MinPageHits,
			WindowWords:     cfg.Geo.WindowWords,
			MaxDatasetBytes: int64(cfg.Geo.MaxDatasetBytes),
			Base:            a.base,
			Data:            cfg.Data,
			TempDir:         os.TempDir(),
			Normalizer:      in.norm,
			Logger:          in.log,
		})
		// The vertical's options install it as analyzer, link filter, request policy, sink
		// and link scorer: the configured strategy plus its producer boost.
		a.add(a.geo.CrawlOptions()...)
		a.analyzers = append(a.analyzers, a.geo.Name())
		a.sinks = append(a.sinks, a.geo.Name())
		a.scorer = a.geo
	} else {
		a.add(crawl.WithLinkScorer(a.base))
	}
	nopts, names, err := in.newsOptions(*cfg)
	if err != nil {
		return nil, err
	}
	a.add(nopts...)
	a.analyzers = append(a.analyzers, names...)
	if f != nil {
		in.log.Info("focused crawl", "topics", strings.Join(cfg.Focus.Topics, ", "), "page-model", cfg.Focus.PageModel, "link-strategy", f.Strategy)
		a.analyzer(f.Relevance)
	}
	policy, err := revisit.FromConfig(*cfg)
	if err != nil {
		return nil, err
	}
	if policy != nil {
		a.policy = policy
		a.add(crawl.WithRevisitPolicy(policy))
	}
	if cfg.Search.Index && in.isink != nil {
		a.add(crawl.WithSinks(in.gsink, in.isink))
		a.sinks = append(a.sinks, in.gsink.Name(), in.isink.Name())
	}
	if in.geo != nil { // the geo catalog tells it of datasets; as a sink it hears of gone ones
		a.add(crawl.WithSinks(in.geo))
		a.sinks = append(a.sinks, in.geo.Name())
	}
	return a, nil
}

// newsOptions install the parts of the news vertical cfg turns on: feeds.enabled (feeds
// and sitemaps found, read and revisited on their own schedule) and news.enabled (article
// records, filed under the topics they match; the topics' sources revisited daily).
// It also returns the names of the analyzers they install, in order.
func (in *Instance) newsOptions(cfg config.Config) (opts []crawl.Option, analyzers []string, err error) {
	if cfg.Feeds.Enabled {
		fo := feeds.OptionsFromConfig(cfg)
		fo.Logger = in.log
		v, err := feeds.New(in.DB, fo)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, v.CrawlOptions()...)
		analyzers = append(analyzers, v.Name())
	}
	if cfg.News.Enabled {
		no, err := news.OptionsFromConfig(cfg)
		if err != nil {
			return nil, nil, err
		}
		mo := news.MonitorOptionsFromConfig(cfg, in.DB)
		mo.Logger = in.log
		if no.Monitor, err = news.OpenMonitor(in.DB, mo); err != nil {
			return nil, nil, err
		}
		an, err := news.NewAnalyzer(in.DB, no)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, an.CrawlOptions()...)
		analyzers = append(analyzers, an.Name())
	}
	return opts, analyzers, nil
}

// Restorers are the analyzers that give a replayed page (index.Replay: sonda index
// rebuild, the catch-up after a crash) the results the live crawl's analyzers gave it,
// from the records they stored in db, so the index shapes it the same way. They run
// whatever the configuration says now: a record in the store is what the crawl found.
// A vertical whose analyzer leaves an index.Shaper in crawl.Document.Results adds its
// restorer here.
func Restorers(db *store.DB) []crawl.Analyzer {
	return []crawl.Analyzer{news.NewRestorer(db)}
}

// Focus is focused crawling as configured: the relevance analyzer and, unless the strategy
// is one package crawl provides, its link scorer.
type Focus struct {
	Relevance *focus.Relevance
	Scorer    crawl.LinkScorer // nil: crawl.link-strategy as package crawl knows it
	Strategy  string           // the strategy's name ("auto" resolved)
}

// LoadFocus builds focused crawling from cfg.Focus and crawl.link-strategy; it returns nil
// when no topic or page model is set (and no focused strategy asks for one). A strategy
// that needs a given concurrency (best-n-first) sets cfg.Crawl.Concurrency.
func LoadFocus(cfg *config.Config) (*Focus, error) {
	f := cfg.Focus
	name := cfg.Crawl.LinkStrategy
	if len(f.Topics) == 0 && f.PageModel == "" {
		if focus.IsStrategy(name) {
			return nil, fmt.Errorf("crawl.link-strategy %s ranks links by relevance: give a topic (--topic FILE) or a page model (--page-model FILE)", name)
		}
		return nil, nil
	}
	var topics []*focus.Topic
	for _, path := range f.Topics {
		t, err := focus.LoadTopic(path)
		if err != nil {
			return nil, err
		}
		if f.Threshold > 0 {
			t.Threshold = f.Threshold
		}
		topics = append(topics, t)
	}
	var model *focus.PageModel
	if f.PageModel != "" {
		m, err := focus.LoadPageModel(f.PageModel)
		if err != nil {
			return nil, err
		}
		if f.Threshold > 0 && f.Threshold < 1 {
			m.Threshold = f.Threshold
		}
		model = m
	}
	rel, err := focus.NewRelevance(topics, model)
	if err != nil {
		return nil, err
	}
	s := &Focus{Relevance: rel, Strategy: name}
	if name == "auto" {
		s.Strategy = "online"
	}
	if !focus.IsStrategy(s.Strategy) {
		return s, nil // bfs, or another strategy registered with package crawl
	}
	opts := focus.StrategyOptions{
		Relevance: rel, Seed: f.Seed,
		BestN:  focus.BestNParams{N: f.BestN},
		Fish:   focus.FishParams{Width: f.Fish.Width, A: f.Fish.A, Depth: f.Fish.Depth},
		Shark:  focus.SharkParams{Depth: f.Shark.Depth, Decay: f.Shark.Decay, Beta: f.Shark.Beta, Gamma: f.Shark.Gamma, Window: f.Shark.Window},
		Online: focus.OnlineParams{LearningRate: f.Online.LearningRate, Bonus: f.Online.Bonus, Explore: f.Online.Explore},
	}
	if s.Strategy == "mlp" {
		if f.LinkModel == "" {
			return nil, fmt.Errorf("crawl.link-strategy mlp needs focus.link-model (--link-model FILE); `sonda train links` makes one")
		}
		if opts.MLP, err = focus.LoadMLP(f.LinkModel); err != nil {
			return nil, err
		}
	}
	if s.Scorer, err = focus.NewStrategy(s.Strategy, opts); err != nil {
		return nil, err
	}
	if c, ok := s.Scorer.(focus.Concurrent); ok {
		cfg.Crawl.Concurrency = c.Concurrency()
	}
	return s, nil
}

// linkScorer is the configured link strategy: the focused one when there is one (f may
// be nil), else the one package crawl knows by name.
func (f *Focus) linkScorer(name string) (crawl.LinkScorer, error) {
	if f != nil && f.Scorer != nil {
		return f.Scorer, nil
	}
	if f != nil {
		name = f.Strategy
	}
	return crawl.NewLinkStrategy(name)
}
