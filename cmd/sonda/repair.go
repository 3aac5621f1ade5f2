package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
)

func init() { register(newRepairCmd) }

func newCheckDataCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "data [--data DIR]",
		Short: "Verify a data directory: crawl database, WARC files, and the two against each other",
		Long: `check data reads the whole data directory without changing a byte of it, and reports
what is damaged:

  - the crawl database (DIR/state): its write-ahead logs, then every key of every table,
    checksums included;
  - every finished WARC file (DIR/warc): every record, digests included;
  - the two against each other: every page record that points at a capture finds a
    response record there.

It also notes what a crash left for recovery (WARC files still ".open") and what an earlier
recovery moved aside (".damaged-OFFSET" files). The exit status is 0 when nothing is
damaged, 1 otherwise; sonda repair fixes or salvages what can be. The data directory must
not be in use by a crawl.

  sonda check data --data sonda-data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			r, err := app.Check(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "store: %d keys, %d page records (%d point at a WARC capture)\n", r.Keys, r.Pages, r.Pointers)
			fmt.Fprintf(out, "warc:  %d files, %d records with their digests verified\n", r.Files, r.Records)
			for _, n := range r.Notes {
				fmt.Fprintln(out, "note:", n)
			}
			for _, p := range r.Problems {
				fmt.Fprintln(out, "DAMAGE:", p)
			}
			if len(r.Problems) == 0 {
				fmt.Fprintln(out, "no damage found")
				return nil
			}
			if r.Repairable {
				fmt.Fprintf(out, "copy %s somewhere safe, then run: sonda repair --data %s\n", cfg.Data, cfg.Data)
			}
			return silentExit{1}
		},
	}
}

func newRepairCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "repair [--data DIR]",
		Short: "Get a damaged data directory working again, and say what was lost",
		Long: `repair fixes what sonda check data reports, keeping every byte that can be read:

  - WARC files a crash left ".open" are finished: a torn last record is cut, damaged
    records are moved to FILE.damaged-OFFSET and filled in place so every other record
    keeps its offset;
  - finished WARC files are read whole, and damaged records are moved aside and filled in
    the same way (a finished file is never shortened); their captures are lost, their page
    records stay, and check data lists them;
  - a write-ahead log damaged before its end is replayed past the damage (Pebble alone
    would stop there and drop the rest); the log is kept in DIR/damaged;
  - a crawl database with corrupt tables is rebuilt from every key that reads; the
    damaged database is kept in DIR/damaged, and the key ranges lost are named;
  - after either, the search index is rebuilt from the crawl records and WARC files.

Each step prints what it did. Run it with no crawl or server using the directory; copy
the directory first if its contents matter. The exit status is 0 when the directory is
usable again.

  sonda check data --data sonda-data || sonda repair --data sonda-data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			// A repair stopped while swapping in a salvaged database may have left none.
			if err := requireCrawl(cfg.Data); err != nil && !store.SalvageInterrupted(crawl.StateDir(cfg.Data)) {
				return err
			}
			report, err := app.Repair(cmd.Context(), cfg, app.RebuildOptions{Logger: newLogger(cfg)})
			out := cmd.OutOrStdout()
			for _, line := range report {
				fmt.Fprintln(out, line)
			}
			if err != nil {
				return err
			}
			if len(report) == 0 {
				fmt.Fprintln(out, "nothing to repair")
			}
			return nil
		},
	}
}

// requireCrawl is the usage error of a command that needs a crawl in data.
func requireCrawl(data string) error {
	if _, err := os.Stat(crawl.StateDir(data)); err != nil {
		return usageError{fmt.Errorf("no crawl in %s: %w", data, err)}
	}
	return nil
}
