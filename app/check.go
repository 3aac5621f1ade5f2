package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/warc"
)

// CheckReport is what Check found in a data directory.
type CheckReport struct {
	Keys       int // keys read from the crawl database
	Pages      int // page records
	Pointers   int // page records that point at a WARC capture
	Files      int // finished WARC files read
	Records    int // WARC records read whole, digests verified
	Problems   []string
	Notes      []string // worth knowing, not damage: files a crash left for recovery
	Repairable bool     // sonda repair can fix or salvage some of the problems
}

// Check verifies a data directory without changing it: the crawl database (the
// write-ahead logs, then every key of every table, checksums included), every finished
// WARC file (every record, digests included), and the two against each other (every page
// record that points at a capture finds a response record for its URL there).
func Check(ctx context.Context, cfg config.Config) (CheckReport, error) {
	var r CheckReport
	stateDir, warcDir := crawl.StateDir(cfg.Data), crawl.WARCDir(cfg.Data)
	if _, err := os.Stat(stateDir); err != nil {
		return r, fmt.Errorf("no crawl in %s: %w", cfg.Data, err)
	}
	// Captures by file and offset: the URL of each intact response record.
	responses := map[string]map[int64]string{}
	entries, err := os.ReadDir(warcDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".open"):
			r.Notes = append(r.Notes, fmt.Sprintf("warc: %s was left open by an interrupted crawl; the next crawl, or sonda repair, finishes it", name))
			r.Repairable = true
			continue
		case strings.Contains(name, warc.DamagedSuffix):
			r.Notes = append(r.Notes, fmt.Sprintf("warc: %s holds damaged bytes an earlier recovery moved aside", name))
			continue
		case !strings.HasSuffix(name, ".warc.gz") && !strings.HasSuffix(name, ".warc"):
			continue
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		r.Files++
		offs, n, problem := checkWARCFile(filepath.Join(warcDir, name))
		r.Records += n
		responses[name] = offs
		if problem != "" {
			r.Problems = append(r.Problems, problem)
			r.Repairable = true
		}
	}

	db, err := store.Open(stateDir, store.Options{ReadOnly: true})
	var wal *store.WALDamageError
	if errors.As(err, &wal) {
		r.Problems = append(r.Problems, err.Error())
		r.Repairable = true
		return r, nil
	}
	if errors.Is(err, store.ErrManifestDamaged) {
		r.Problems = append(r.Problems, err.Error())
		return r, nil
	}
	if errors.Is(err, store.ErrOptionsDamaged) {
		r.Problems = append(r.Problems, err.Error())
		r.Repairable = true
		return r, nil
	}
	if err != nil {
		return r, err
	}
	defer db.Close()
	// After the store: its lock tells a running crawl, which holds the index's, at once.
	for _, p := range checkIndex(cfg.Data) {
		r.Problems = append(r.Problems, p)
		r.Repairable = true
	}
	keys, err := store.CountKeys(ctx, db)
	r.Keys = keys
	for _, c := range db.CorruptFiles() {
		r.Problems = append(r.Problems, fmt.Sprintf("store: %s is corrupt: %v", c.Path, c.Details))
		r.Repairable = true
	}
	if err != nil && len(db.CorruptFiles()) == 0 {
		return r, err
	}
	var missing []string
	err = db.Pages(func(p *store.Page) error {
		r.Pages++
		file, off, ok := strings.Cut(p.WARC, "#")
		if !ok {
			return ctx.Err()
		}
		r.Pointers++
		n, err := strconv.ParseInt(off, 10, 64)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s (bad pointer %q)", p.URL, p.WARC))
			return nil
		}
		if got, ok := responses[file][n]; !ok || got != p.FinalURL && got != p.URL {
			missing = append(missing, fmt.Sprintf("%s (%s)", p.URL, p.WARC))
		}
		return ctx.Err()
	})
	if err != nil && len(db.CorruptFiles()) == 0 {
		return r, err
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		shown := missing[:min(len(missing), 10)]
		r.Problems = append(r.Problems, fmt.Sprintf("%d page records point at a WARC capture that is not there (the page is fetched again only if its record goes): %s",
			len(missing), strings.Join(shown, ", ")))
	}
	return r, nil
}

// checkWARCFile reads a finished WARC file whole and returns the target URI of each
// response record by offset, how many records read, and what is wrong, if anything.
func checkWARCFile(path string) (map[int64]string, int, string) {
	offs := map[int64]string{}
	rd, err := warc.OpenFile(path)
	if err != nil {
		return offs, 0, err.Error()
	}
	defer rd.Close()
	n := 0
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return offs, n, ""
		}
		if err == nil {
			err = warc.VerifyDigests(rec)
		}
		if err != nil {
			return offs, n, fmt.Sprintf("warc: %s: %v (records after it were not checked)", filepath.Base(path), err)
		}
		n++
		if rec.Type() == warc.TypeResponse {
			offs[rec.Offset] = rec.Header.Get(warc.FieldTargetURI)
		}
	}
}

// Repair gets a damaged data directory working again and says what it did and what was
// lost: WARC files a crash left open are finished (warc.Recover), damaged records of
// finished ones are moved aside (warc.RepairFile), a write-ahead log
// damaged before its end is replayed up to and past the damage (store.RepairWAL), a
// database with corrupt tables is rebuilt from every key that reads (store.Salvage), and
// then the search index is rebuilt from the store and the WARC files so it agrees with
// what is left. It returns no lines when nothing needed repair.
func Repair(ctx context.Context, cfg config.Config, o RebuildOptions) ([]string, error) {
	stateDir := crawl.StateDir(cfg.Data)
	// A salvage that a crash stopped while swapping databases is finished first (there may
	// be no database in stateDir until then).
	report, err := store.FinishSalvage(stateDir)
	if err != nil {
		return report, err
	}
	// Until the end, the index counts as unfinished: a crash anywhere in between (after
	// the logs were replayed, say) must not leave an index that the next repair thinks
	// agrees with the store.
	rebuild := len(report) > 0 || rebuildUnfinished(cfg.Data)
	if damage := checkIndex(cfg.Data); len(damage) > 0 {
		report = append(report, damage...)
		rebuild = true
	}
	if err := markRebuild(cfg.Data); err != nil {
		return report, err
	}
	warcDir := crawl.WARCDir(cfg.Data)
	lines, err := warc.Recover(warcDir)
	report = append(report, lines...)
	if err != nil {
		return report, err
	}
	files, err := filepath.Glob(filepath.Join(warcDir, "*.warc*"))
	if err != nil {
		return report, err
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".warc") && !strings.HasSuffix(f, ".warc.gz") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return report, err
		}
		line, err := warc.RepairFile(f)
		if err != nil {
			return report, err
		}
		if line != "" {
			report = append(report, line, "the captures in those bytes are lost; their page records stay (sonda check data lists them)")
		}
	}
	line, err := store.RepairOptions(stateDir)
	if err != nil {
		return report, err
	}
	if line != "" {
		report = append(report, line)
	}
	lines, err = store.RepairWAL(stateDir, store.Options{Logger: o.Logger})
	report = append(report, lines...)
	if err != nil {
		return report, err
	}
	walRepaired := len(lines) > 0
	lines, err = store.Salvage(ctx, stateDir, store.Options{Logger: o.Logger})
	report = append(report, lines...)
	if err != nil {
		return report, err
	}
	if walRepaired || len(lines) > 0 || rebuild {
		if err := ctx.Err(); err != nil {
			return report, err
		}
		st, err := Rebuild(ctx, cfg, o)
		if err != nil {
			return report, fmt.Errorf("rebuilding the search index after the repair: %w", err)
		}
		report = append(report, fmt.Sprintf("index: rebuilt from %d page records (%d without a readable capture)", st.Pages, st.Missing))
		report = append(report, "the frontier keeps what survived: URLs whose records were lost are fetched again when a crawl finds their links")
		return report, nil
	}
	return report, os.Remove(rebuildMark(cfg.Data))
}
