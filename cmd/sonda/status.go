package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/store"
)

func init() { register(newStatusCmd) }

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:         "status [--data DIR]",
		Annotations: map[string]string{annotStop: stopAtOnce},
		Short:       "Show the state of a crawl: running or not, pages, queue, errors",
		Long: `status reads DIR/status.json, which a running crawl rewrites every two seconds, and says
whether that crawl is still running. When no crawl is running it also opens the crawl
state to report the frontier exactly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			st, err := crawl.ReadStatus(cfg.Data)
			if errors.Is(err, fs.ErrNotExist) {
				if _, serr := os.Stat(crawl.StateDir(cfg.Data)); serr != nil {
					return usageError{noCrawlError(cfg.Data)}
				}
			} else if err != nil {
				return err
			}
			running := st.State == "running" && processAlive(st.PID)
			switch {
			case running:
			case st.State == "running":
				st.State = fmt.Sprintf("interrupted (process %d is gone; run sonda crawl again to resume)", st.PID)
				fallthrough
			default:
				if fst, err := frontierStats(cfg.Data); err == nil {
					st.Queued, st.Seen, st.Hosts, st.InFlight = fst.Queued, fst.Seen, fst.Hosts, 0
				} else if !errors.Is(err, store.ErrLocked) {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			fmt.Fprintf(out, "data:      %s\n", cfg.Data)
			fmt.Fprintf(out, "state:     %s\n", orDefault(st.State, "never run to completion of a status write"))
			if !st.Updated.IsZero() {
				fmt.Fprintf(out, "updated:   %s (%s ago)\n", st.Updated.Local().Format(time.DateTime), formatDuration(time.Since(st.Updated)))
			}
			fmt.Fprintf(out, "pages:     %d fetched (%d robots.txt), %s, %.1f pages/s\n", st.Pages, st.RobotsTxt, crawl.FormatBytes(st.Bytes), st.PagesPerS)
			fmt.Fprintf(out, "frontier:  %d queued, %d in flight, %d seen, %d hosts active\n", st.Queued, st.InFlight, st.Seen, st.Hosts)
			if st.BudgetNote != "" {
				fmt.Fprintf(out, "budget:    %s\n", st.BudgetNote)
			}
			for _, name := range slices.Sorted(maps.Keys(st.Backlogs)) {
				b := st.Backlogs[name]
				fmt.Fprintf(out, "%-10s %d pages behind the crawl, the oldest for %s\n", name+":", b.Documents, formatDuration(b.Lag))
			}
			if st.Judged > 0 {
				fmt.Fprintf(out, "harvest:   %d of %d judged pages relevant (%.1f%%)\n", st.Relevant, st.Judged, 100*float64(st.Relevant)/float64(st.Judged))
			}
			if len(st.Statuses) > 0 {
				fmt.Fprintf(out, "responses: %s\n", joinCounts(st.Statuses))
			}
			if len(st.Errors) > 0 {
				fmt.Fprintf(out, "errors:    %s\n", joinCounts(st.Errors))
			}
			if len(st.Waiting) > 0 {
				fmt.Fprintf(out, "waiting:   %s for a retry (sonda crawl again retries them):\n", plural(int64(len(st.Waiting)), "host", "hosts"))
				for _, w := range st.Waiting {
					fmt.Fprintf(out, "  %s: %s (%s queued, retry after %s)\n", w.Host, w.Reason, plural(w.Queued, "URL", "URLs"), w.Until.Local().Format(time.DateTime))
				}
			}
			if r := st.Render; r != nil {
				fmt.Fprintf(out, "render:    %s: %d rendered (p50 %dms, p99 %dms), %d failed, %d browser restarts, browser %s, %d links only in rendered pages\n",
					r.Mode, r.Renders, r.P50Ms, r.P99Ms, r.Failures, r.Restarts, crawl.FormatBytes(r.MemoryBytes), r.LinksAdded)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func frontierStats(data string) (frontier.Stats, error) {
	db, err := store.Open(crawl.StateDir(data), store.Options{ReadOnly: true})
	if err != nil {
		return frontier.Stats{}, err
	}
	defer db.Close()
	f, err := frontier.Open(db.Pebble(), frontier.Options{})
	if err != nil {
		return frontier.Stats{}, err
	}
	return f.Stats(), nil
}

// noCrawlError says that dir holds no crawl, and suggests starting one there only when dir
// is new or empty: a directory full of other things (/etc, a home directory) is almost
// surely a mistyped --data, not a place to crawl into.
func noCrawlError(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return fmt.Errorf("no crawl in %s (start one with: sonda crawl --data %s --seed URL)", dir, dir)
	}
	return fmt.Errorf("no crawl in %s: it is not a sonda data directory (it has no state/ or status.json); "+
		"give the --data (or -c sonda.yaml) of an existing crawl, or start one in a new directory: sonda crawl --data DIR --seed URL", dir)
}
