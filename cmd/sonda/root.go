package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "sonda",
		Short: "A vertical web search engine: focused crawling, freshness, extraction and search",
		Long: `sonda crawls the part of the web that matters to one domain, keeps it fresh,
pulls structured records out of it and serves ranked search over it.

Start here:
  sonda demo                      crawl the built-in test web offline, search it, serve the UI
  sonda init mycrawl              write a commented mycrawl/sonda.yaml to edit
                                  (--profile topic, news or geo for a focused, news or geo crawl)
  sonda crawl -c mycrawl/sonda.yaml --seed https://example.org/
  sonda status --data mycrawl/sonda-data
  sonda search --data mycrawl/sonda-data 'reactor "fuel rods" site:example.org'
  sonda serve --data mycrawl/sonda-data   web UI, JSON API and /metrics; crawls run inside it
  sonda export --data mycrawl/sonda-data --what pages > pages.jsonl

Settings come from sonda.yaml, then SONDA_* environment variables, then flags.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       crawl.Version,
	}
	root.PersistentFlags().StringP("config", "c", "", "`FILE` with settings (see `sonda init`)")
	root.PersistentFlags().String("data", "", "data `DIR` (crawl state, WARC files); overrides the config's data")
	root.PersistentFlags().String("log-level", "", "debug, info, warn or error")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})
	for _, build := range commandBuilders {
		root.AddCommand(build())
	}
	return root
}

// commandBuilders make the subcommands. Each command's file registers its builder from an
// init function, so adding a command touches no other file.
var commandBuilders []func() *cobra.Command

func register(build func() *cobra.Command) { commandBuilders = append(commandBuilders, build) }

// settingFlag binds a command-line flag to a config field; it is applied only when the
// user set the flag, so unset flags never override the file or the environment.
type settingFlag struct {
	name  string
	apply func(c *config.Config, f *pflag.FlagSet) error
}

// loadConfig layers defaults, the -c file, SONDA_* variables and the given flags.
func loadConfig(cmd *cobra.Command, flags ...settingFlag) (config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, err := config.Load(path, os.Environ())
	if err != nil {
		return cfg, usageError{err}
	}
	if d, _ := cmd.Flags().GetString("data"); d != "" {
		cfg.Data = d
	}
	if l, _ := cmd.Flags().GetString("log-level"); l != "" {
		cfg.Log.Level = l
	}
	for _, f := range flags {
		if !cmd.Flags().Changed(f.name) {
			continue
		}
		if err := f.apply(&cfg, cmd.Flags()); err != nil {
			return cfg, usageError{fmt.Errorf("--%s: %w", f.name, err)}
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	applyDataUmask(cfg)
	setMemoryLimit(cfg.MemoryLimit)
	return cfg, nil
}

// applyDataUmask makes every file and directory the process creates from here on
// (crawl state, WARC files, index) as private as data-umask says.
func applyDataUmask(cfg config.Config) {
	mask, _ := cfg.Umask() // Validate checked it
	syscall.Umask(mask)
}

// setMemoryLimit sets the Go runtime's soft memory limit (0: none) unless GOMEMLIMIT is
// set. Every command applies memory-limit (loadConfig); those that answer searches from an
// index raise it by their caches' bounds (config.Config.SearchMemoryLimit).
func setMemoryLimit(limit config.ByteSize) {
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(limit))
	}
}

func newLogger(cfg config.Config) *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func formatDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
