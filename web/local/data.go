package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/web"
)

// Data is a data directory opened for serving: the crawl-state database, the backends the
// web layer reads, and the runner that crawls into them. Close it when done.
type Data struct {
	cfg    config.Config
	log    *slog.Logger
	DB     *store.DB
	Runner *Runner
}

// Options configure Open.
type Options struct {
	Logger *slog.Logger
	// CrawlOptions are added to every crawl the runner starts (analyzers, a link scorer);
	// the runner already wires the store and the sinks that feed the backends.
	CrawlOptions func() ([]crawl.Option, error)
	// Progress receives the progress of crawls every second (see RunnerOptions).
	Progress func(crawl.Progress)
}

// ErrInUse means another process has the data directory open.
var ErrInUse = errors.New("the data directory is in use by another sonda process")

// Open opens cfg.Data for serving, creating it when it does not exist.
func Open(cfg config.Config, o Options) (*Data, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := store.Open(crawl.StateDir(cfg.Data), store.Options{Logger: o.Logger})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%w (%s): stop the crawl or server using it first; sonda serve can run crawls itself (dashboard, or POST /api/crawl/start)", ErrInUse, cfg.Data)
	}
	if err != nil {
		return nil, err
	}
	d := &Data{cfg: cfg, log: o.Logger, DB: db}
	d.Runner = NewRunner(cfg, db, RunnerOptions{Logger: o.Logger, Progress: o.Progress, Options: func() ([]crawl.Option, error) {
		var opts []crawl.Option
		if o.CrawlOptions != nil {
			extra, err := o.CrawlOptions()
			if err != nil {
				return nil, err
			}
			opts = append(opts, extra...)
		}
		return append(opts, crawl.WithSinks(d.sinks()...)), nil
	}})
	return d, nil
}

// sinks are the crawl sinks that keep the backends current as pages are fetched.
func (d *Data) sinks() []crawl.Sink { return nil }

// WebOptions are the backends for web.New; the caller adds the token.
func (d *Data) WebOptions() web.Options {
	return web.Options{Crawl: d.Runner, Stats: statsSource{d}, Logger: d.log}
}

// statsSource reports what the data directory holds.
type statsSource struct{ d *Data }

func (s statsSource) Stats(ctx context.Context) (web.Stats, error) {
	return web.Stats{}, nil
}

// Close stops a running crawl, then closes the backends and the database.
func (d *Data) Close() error {
	errs := []error{d.Runner.Close()}
	errs = append(errs, d.DB.Close())
	return errors.Join(errs...)
}
