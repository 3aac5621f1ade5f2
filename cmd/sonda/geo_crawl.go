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
// vertical writes its catalog into the crawl database, so the database is opened here and
// handed to the crawler; closeDB closes it after the crawler (nil when nothing was opened).
func verticalOptions(cfg config.Config, log *slog.Logger) (opts []crawl.Option, closeDB func() error, err error) {
	if !cfg.Geo.Enabled {
		return nil, nil, nil
	}
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{Logger: log})
	if err != nil {
		return nil, nil, err
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
	return append(v.CrawlOptions(), crawl.WithStore(db)), db.Close, nil
}
