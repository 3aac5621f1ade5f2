package main

import (
	"log/slog"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/feeds"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
)

// newsEnabled reports whether cfg turns on a part of the news vertical (both need the
// crawl database open before the crawler: they keep records in it).
func newsEnabled(cfg config.Config) bool { return cfg.Feeds.Enabled || cfg.News.Enabled }

// newsOptions installs the parts of the news vertical cfg turns on: feeds.enabled (feeds
// and sitemaps found, read and revisited on their own schedule) and news.enabled (article
// records, filed under the topics they match; the topics' sources revisited daily). db is
// the crawl database, open (newsEnabled says it must be).
func newsOptions(cfg config.Config, db *store.DB, log *slog.Logger) ([]crawl.Option, error) {
	var opts []crawl.Option
	if cfg.Feeds.Enabled {
		fo := feeds.OptionsFromConfig(cfg)
		fo.Logger = log
		v, err := feeds.New(db, fo)
		if err != nil {
			return nil, err
		}
		opts = append(opts, v.CrawlOptions()...)
	}
	if cfg.News.Enabled {
		no, err := news.OptionsFromConfig(cfg)
		if err != nil {
			return nil, err
		}
		mo := news.MonitorOptionsFromConfig(cfg, db)
		mo.Logger = log
		if no.Monitor, err = news.OpenMonitor(db, mo); err != nil {
			return nil, err
		}
		an, err := news.NewAnalyzer(db, no)
		if err != nil {
			return nil, err
		}
		opts = append(opts, an.CrawlOptions()...)
	}
	return opts, nil
}
