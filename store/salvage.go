package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/internal/crashpoint"
)

// Salvage rebuilds the database in dir from what reads cleanly, for a database with a
// corrupt table file (a checksum mismatch, which every read of that file meets). Every key
// outside the key ranges of the corrupt files is copied into a new database; the old one
// is moved into DamagedDir (state-TIME) and the new one takes its place. It returns what
// was done and what was lost: the key range of each corrupt file, with the owners of the
// prefixes it spans (see the package doc), since a key there may have lived in a sound
// file too but cannot be read past the corrupt one. It returns nil, and changes nothing,
// when every key reads. Run RepairWAL first: Open refuses a damaged log.
func Salvage(ctx context.Context, dir string, opts Options) ([]string, error) {
	if resumed, err := FinishSalvage(dir); err != nil || resumed != nil {
		return resumed, err
	}
	src, err := Open(dir, Options{ReadOnly: true, Logger: opts.Logger, CacheSize: opts.CacheSize})
	if err != nil {
		return nil, err
	}
	// First pass: read every key, collecting the corrupt ranges; nothing is written when
	// there are none.
	skip, copied, err := scanAll(ctx, src, nil)
	if err != nil || len(skip) == 0 {
		src.Close()
		return nil, err
	}
	tmp := dir + ".salvage"
	if err := os.RemoveAll(tmp); err != nil {
		src.Close()
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	dst, err := Open(tmp, Options{SyncInterval: -1, Logger: opts.Logger})
	if err != nil {
		src.Close()
		return nil, err
	}
	_, copied, err = scanAll(ctx, src, dst)
	src.Close()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	aside := filepath.Join(DamagedDir(dir), "state-"+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(DamagedDir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	report := []string{fmt.Sprintf("store: salvaged %d keys into a new database; the damaged one is in %s", copied, aside)}
	for _, l := range skip {
		details, _, _ := strings.Cut(l.Details.Error(), "\n") // one line: the mark file holds one a line
		report = append(report, fmt.Sprintf("store: %s is corrupt (%s): the keys from %q to %q are lost (%s)",
			l.Files, details, l.From, l.To, prefixOwners(l.From, l.To)))
	}
	// The mark says the copy is whole, where the damaged database goes and what was lost:
	// from here on, a crash between the two renames (no database in dir at all) is
	// finished by FinishSalvage, never taken for a new crawl.
	mark := aside + "\n" + strings.Join(report, "\n") + "\n"
	if err := os.WriteFile(salvagedMark(dir), []byte(mark), 0o600); err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	crashpoint.Here("store.salvage.copied")
	if err := os.Rename(dir, aside); err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	crashpoint.Here("store.salvage.swap")
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("store: salvage: moved the damaged database to %s but could not put the salvaged one (%s) in its place: %w", aside, tmp, err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	if err := os.Remove(salvagedMark(dir)); err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	return report, nil
}

// salvagedMark is the file beside the database dir that says a salvaged copy of it
// (dir.salvage) is whole and about to take its place.
func salvagedMark(dir string) string { return dir + ".salvaged" }

// SalvageInterrupted reports whether a salvage of the database in dir was interrupted
// while swapping the databases: only FinishSalvage (sonda repair) may touch it then.
func SalvageInterrupted(dir string) bool {
	_, err := os.Stat(salvagedMark(dir))
	return err == nil
}

// FinishSalvage completes a salvage of the database in dir that a crash interrupted, and
// returns the interrupted salvage's report (nil when there was none to finish). With the mark there (the copy is whole), a database
// still in dir is the damaged one and goes aside, and the copy takes its place; without
// it, a leftover partial copy is removed (the next Salvage makes a new one).
func FinishSalvage(dir string) ([]string, error) {
	tmp := dir + ".salvage"
	mark, err := os.ReadFile(salvagedMark(dir))
	if errors.Is(err, os.ErrNotExist) {
		if err := os.RemoveAll(tmp); err != nil {
			return nil, fmt.Errorf("store: salvage: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	aside, report, _ := strings.Cut(strings.TrimSpace(string(mark)), "\n")
	if _, err := os.Stat(tmp); err == nil {
		if _, err := os.Stat(dir); err == nil {
			if err := os.Rename(dir, aside); err != nil {
				return nil, fmt.Errorf("store: finishing an interrupted salvage: %w", err)
			}
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, fmt.Errorf("store: finishing an interrupted salvage: %w", err)
		}
		if err := syncDir(filepath.Dir(dir)); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(salvagedMark(dir)); err != nil {
		return nil, fmt.Errorf("store: salvage: %w", err)
	}
	return append([]string{"store: finished a salvage a crash interrupted; it had found:"}, strings.Split(report, "\n")...), nil
}

// lostRange is a stretch of keys a scan stepped over: a corrupt block of a table, and
// whatever keys of other tables fall in its span (an iterator cannot read past it).
type lostRange struct {
	Files    string // the corrupt files it lies in
	Details  error
	From, To []byte // the keys in [From, To) were not read
}

// scanAll reads every key of src in order, stepping over each corrupt stretch it meets,
// and copies what it reads into dst when dst is not nil. It returns the stretches
// stepped over and how many keys it read. It stops early, with ctx's error, when ctx
// ends.
//
// A corrupt block fails every read whose position falls in its span, and no read past
// it: the scan resumes at the smallest key it finds readable (by bisection between the
// last key read and the end of the corrupt files), so the loss is the damaged block's
// span, not the whole table's.
func scanAll(ctx context.Context, src, dst *DB) ([]lostRange, int, error) {
	var skip []lostRange
	n := 0
	var from []byte
	for {
		if err := ctx.Err(); err != nil {
			return skip, n, err
		}
		it, err := src.pdb.NewIter(&pebble.IterOptions{LowerBound: from})
		if err != nil {
			return skip, n, err
		}
		var b *pebble.Batch
		if dst != nil {
			b = dst.pdb.NewBatch()
		}
		var last []byte
		for it.First(); it.Valid(); it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				break
			}
			last = append(last[:0], it.Key()...)
			if n++; n%4096 == 0 && ctx.Err() != nil {
				it.Close()
				return skip, n, ctx.Err()
			}
			if b != nil {
				b.Set(it.Key(), v, nil)
				if b.Len() > 4<<20 {
					if err := b.Commit(pebble.NoSync); err != nil {
						it.Close()
						return skip, n, err
					}
					b = dst.pdb.NewBatch()
				}
			}
		}
		iterErr := it.Error()
		it.Close()
		if b != nil {
			if err := b.Commit(pebble.NoSync); err != nil {
				return skip, n, err
			}
		}
		if iterErr == nil {
			return skip, n, nil
		}
		corrupt := src.CorruptFiles()
		if len(corrupt) == 0 || !pebble.IsCorruptionError(iterErr) {
			return skip, n, iterErr
		}
		lo := from
		if last != nil {
			lo = append(bytes.Clone(last), 0) // the first key after the last one read
		}
		var hi []byte // past the end of every corrupt file: where the old scan resumed
		var files []string
		for _, c := range corrupt {
			if end := append(bytes.Clone(c.Bounds.End.Key), 0); bytes.Compare(end, hi) > 0 {
				hi = end
			}
			if bytes.Compare(c.Bounds.Start, lo) <= 0 || lo == nil {
				files = append(files, c.Path)
			}
		}
		next := hi
		if !readable(src, lo) {
			next = firstReadable(src, lo, hi)
		}
		if bytes.Compare(next, lo) <= 0 || (from != nil && bytes.Compare(next, from) <= 0) {
			return skip, n, fmt.Errorf("store: salvage cannot step over the damage at %q: %w", lo, iterErr)
		}
		skip = append(skip, lostRange{Files: strings.Join(files, ", "), Details: iterErr, From: lo, To: next})
		from = next
	}
}

// readable reports whether a scan of db from key k reads its first key without error.
func readable(db *DB, k []byte) bool {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: k})
	if err != nil {
		return false
	}
	if it.First() {
		_, err = it.ValueAndErr()
	}
	if err == nil {
		err = it.Error()
	}
	it.Close()
	return err == nil
}

// firstReadable finds, by bisection, the smallest key (to a precision of one more byte
// than lo and hi have) from which a scan of db reads, given that none does from lo and
// one does from hi.
func firstReadable(db *DB, lo, hi []byte) []byte {
	width := max(len(lo), len(hi)) + 1
	num := func(k []byte) *big.Int {
		b := make([]byte, width)
		copy(b, k)
		return new(big.Int).SetBytes(b)
	}
	key := func(x *big.Int) []byte { return x.FillBytes(make([]byte, width)) }
	l, h := num(lo), num(hi)
	one := big.NewInt(1)
	for new(big.Int).Sub(h, l).Cmp(one) > 0 {
		mid := new(big.Int).Add(l, h)
		mid.Rsh(mid, 1)
		if readable(db, key(mid)) {
			h = mid
		} else {
			l = mid
		}
	}
	return key(h)
}

// prefixOwners names the owners (see the package doc) of the key prefixes from lo to hi.
func prefixOwners(lo, hi []byte) string {
	owners := map[byte]string{
		'p': "page records", 'v': "visit history", 'x': "exact-duplicate index", 'n': "near-duplicate index",
		'q': "frontier queues", 'h': "frontier hosts", 's': "frontier seen set", 'm': "frontier counters",
		'r': "robots.txt cache", 't': "trap counters", 'k': "crawl settings", 'l': "link graph",
		'g': "geo catalog", 'a': "news articles", 'f': "feeds and sitemaps", 'o': "news topics",
	}
	if len(lo) == 0 || len(hi) == 0 {
		return "unknown prefixes"
	}
	var names []string
	for p := lo[0]; ; p++ {
		if o, ok := owners[p]; ok {
			names = append(names, o)
		}
		if p >= hi[0] || p == 0xff {
			break
		}
	}
	if len(names) == 0 {
		return "no known prefix"
	}
	return fmt.Sprint(names)
}

// CountKeys reads every key of db, stepping over corrupt files as Salvage does (they are
// then in db.CorruptFiles), and returns how many it read. The error is the last one met.
func CountKeys(ctx context.Context, db *DB) (int, error) {
	skip, n, err := scanAll(ctx, db, nil)
	if err == nil && len(skip) > 0 {
		err = fmt.Errorf("store: %d corrupt files", len(skip))
	}
	return n, err
}
