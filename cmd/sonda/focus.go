package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/focus"
)

// focusSetup is focused crawling as configured: the relevance analyzer and, unless the
// strategy is one package crawl provides, the link scorer.
type focusSetup struct {
	Relevance *focus.Relevance
	Scorer    crawl.LinkScorer // nil: crawl.link-strategy as package crawl knows it
	Strategy  string
}

// loadFocus builds focused crawling from cfg.Focus and crawl.link-strategy; it returns nil
// when no topic or page model is set (and no focused strategy asks for one).
func loadFocus(cfg *config.Config) (*focusSetup, error) {
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
	s := &focusSetup{Relevance: rel, Strategy: name}
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

// focusOptions are the crawl options of focused crawling (none without a topic). They go
// after other verticals' options, so a topic's link strategy is the one used.
func focusOptions(cfg *config.Config, log *slog.Logger) ([]crawl.Option, error) {
	s, err := loadFocus(cfg)
	if err != nil || s == nil {
		return nil, err
	}
	log.Info("focused crawl", "topics", strings.Join(cfg.Focus.Topics, ", "), "page-model", cfg.Focus.PageModel, "link-strategy", s.Strategy)
	opts := []crawl.Option{crawl.WithAnalyzers(s.Relevance)}
	if s.Scorer != nil {
		opts = append(opts, crawl.WithLinkScorer(s.Scorer))
	}
	return opts, nil
}

// linkStrategyHelp lists every strategy name for flag help.
func linkStrategyHelp() string {
	var names []string
	for _, n := range append(crawl.LinkStrategies(), focus.Strategies()...) {
		if n != "auto" {
			names = append(names, n)
		}
	}
	return "link prioritization: auto (online with a topic, else bfs), " + strings.Join(names, ", ")
}
