package main

import (
	"log/slog"
	"os"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/discover"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// verticalOptions installs the verticals cfg turns on (today: geo.enabled). The geo
// vertical writes its catalog into the crawl database, which the caller opened (see
// openCrawlDB) and hands to the crawler.
func verticalOptions(cfg config.Config, db *store.DB, log *slog.Logger) ([]crawl.Option, error) {
	if !cfg.Geo.Enabled {
		return nil, nil
	}
	v := discover.New(catalog.New(db), discover.Options{
		MinPageHits:     cfg.Geo.MinPageHits,
		WindowWords:     cfg.Geo.WindowWords,
		MaxDatasetBytes: int64(cfg.Geo.MaxDatasetBytes),
		Data:            cfg.Data,
		TempDir:         os.TempDir(),
		Normalizer:      urlnorm.New(crawl.NormalizerOptions(cfg)),
		Logger:          log,
	})
	return v.CrawlOptions(), nil
}
