package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sonda-search/sonda/internal/crashpoint"
)

// walBlock is the block size of Pebble's log format: a reader can start afresh at any
// multiple of it.
const walBlock = 32 << 10

// WALDamage is a write-ahead log that does not read cleanly to its end although intact
// batches follow the damage: not the torn tail a kill leaves, which Pebble rightly
// ignores, but damage on the disk. Opening the database would replay the log up to the
// damage and drop every batch after it for good, without a word.
type WALDamage struct {
	File   string // path of the log
	Offset int64  // where its first unreadable chunk is
	Before int    // batches that read before the damage
	After  int    // intact batches after it
	Reason string // what the reader found there
}

// ErrWALDamaged is wrapped by the error Open returns for a database whose write-ahead
// log is damaged before its end (see WALDamage).
var ErrWALDamaged = errors.New("store: the write-ahead log is damaged")

// WALDamageError lists the damaged logs Open found.
type WALDamageError struct{ Damage []WALDamage }

func (e *WALDamageError) Error() string {
	var b strings.Builder
	b.WriteString(ErrWALDamaged.Error())
	for _, d := range e.Damage {
		fmt.Fprintf(&b, "; %s: unreadable at offset %d (%s), %d intact batches before it and %d after it, which opening the database would drop",
			d.File, d.Offset, d.Reason, d.Before, d.After)
	}
	b.WriteString(". Nothing was changed. Copy the data directory somewhere safe, then run `sonda repair` on it: it replays every intact batch and reports what was lost")
	return b.String()
}

func (e *WALDamageError) Unwrap() error { return ErrWALDamaged }

// walFiles returns the write-ahead logs in dir, oldest first, with their file numbers.
func walFiles(dir string) ([]string, []uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	var nums []uint64
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseUint(base, 10, 64)
		if err != nil {
			continue
		}
		names = append(names, filepath.Join(dir, e.Name()))
		nums = append(nums, n)
	}
	// Names are zero-padded numbers, and ReadDir sorts them.
	if !slices.IsSorted(nums) {
		return nil, nil, fmt.Errorf("store: log files in %s are not in number order: %v", dir, names)
	}
	return names, nums, nil
}

// checkWALs scans every write-ahead log in dir and returns the damaged ones.
func checkWALs(dir string) ([]WALDamage, error) {
	names, nums, err := walFiles(dir)
	if err != nil {
		return nil, err
	}
	var damage []WALDamage
	for i, name := range names {
		d, err := scanWAL(name, nums[i], nil)
		if err != nil {
			return nil, err
		}
		if d.After > 0 {
			damage = append(damage, d)
		}
	}
	return damage, nil
}

// newLogReader calls record.NewReader, whose file-number type is internal to Pebble.
func newLogReader[N ~uint64](newReader func(io.Reader, N) *record.Reader, r io.Reader, num uint64) *record.Reader {
	return newReader(r, N(num))
}

// scanWAL reads the log at path (file number num) to its end, handing each intact batch
// to keep (if not nil) in order. After damage it starts afresh at the next block
// boundary, as many times as needed, so every intact batch is seen. The returned
// WALDamage has After > 0 only when intact batches follow unreadable bytes.
func scanWAL(path string, num uint64, keep func(batch []byte) error) (WALDamage, error) {
	d := WALDamage{File: path, Offset: -1}
	f, err := os.Open(path)
	if err != nil {
		return d, fmt.Errorf("store: read log %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return d, fmt.Errorf("store: read log %s: %w", path, err)
	}
	for start := int64(0); start < info.Size(); {
		r := newLogReader(record.NewReader, io.NewSectionReader(f, start, info.Size()-start), num)
		for {
			at := start + r.Offset()
			rec, err := r.Next()
			var batch []byte
			if err == nil {
				batch, err = io.ReadAll(rec)
			}
			if err == io.EOF {
				return d, nil
			}
			if err != nil && !record.IsInvalidRecord(err) && !errors.Is(err, record.ErrInvalidChunk) && !errors.Is(err, record.ErrZeroedChunk) {
				return d, fmt.Errorf("store: read log %s: %w", path, err)
			}
			if err != nil {
				if d.Offset < 0 {
					d.Offset, d.Reason = at, err.Error()
				}
				start = (at/walBlock + 1) * walBlock
				break
			}
			if d.Offset < 0 {
				d.Before++
			} else {
				d.After++
			}
			if keep != nil {
				if err := keep(batch); err != nil {
					return d, err
				}
			}
		}
	}
	return d, nil
}

// DamagedDir is where RepairWAL moves damaged logs: beside the database directory.
func DamagedDir(dir string) string { return filepath.Join(filepath.Dir(dir), "damaged") }

// RepairWAL makes a database whose write-ahead log is damaged (see WALDamage) open again
// with every batch that can be read. Each damaged log, and every newer one, is moved to
// DamagedDir; the database is opened (replaying the older logs); then every intact batch
// of the moved logs is applied again, in order, and synced. It returns one line per log
// saying what was replayed and what was lost. A repair interrupted after the move is
// finished by the next one (a moved log without its ".replayed" mark is applied again:
// the crawl database holds no merge operands, so applying a batch twice in order leaves
// the state applying it once does). It returns nil for a database without damage.
func RepairWAL(dir string, opts Options) ([]string, error) {
	lock, err := pebble.LockDirectory(dir, vfs.Default)
	if err != nil {
		if isLockError(err) {
			return nil, fmt.Errorf("%w (%s): stop it first", ErrLocked, dir)
		}
		return nil, fmt.Errorf("store: repair %s: %w", dir, err)
	}
	defer lock.Close()
	opts.lock = lock
	damage, err := checkWALs(dir)
	if err != nil {
		return nil, err
	}
	names, _, err := walFiles(dir)
	if err != nil {
		return nil, err
	}
	aside := DamagedDir(dir)
	var moved []string
	if len(damage) > 0 {
		first := slices.Index(names, damage[0].File)
		if err := os.MkdirAll(aside, 0o700); err != nil {
			return nil, fmt.Errorf("store: repair: %w", err)
		}
		for _, name := range names[first:] {
			to := filepath.Join(aside, filepath.Base(name))
			if _, err := os.Stat(to); err == nil {
				return nil, fmt.Errorf("store: repair: %s already exists; move it away first", to)
			}
			if err := os.Rename(name, to); err != nil {
				return nil, fmt.Errorf("store: repair: %w", err)
			}
			moved = append(moved, to)
			crashpoint.Here("store.repair.moved")
		}
		if err := syncDir(dir); err != nil {
			return nil, err
		}
		if err := syncDir(aside); err != nil {
			return nil, err
		}
	}
	// Logs moved by an earlier, interrupted repair are applied too, oldest first.
	pending, pnums, err := walFiles(aside)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var todo []string
	var todoNums []uint64
	for i, p := range pending {
		if _, err := os.Stat(p + ".replayed"); err != nil {
			todo, todoNums = append(todo, p), append(todoNums, pnums[i])
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	db, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	var report []string
	for i, p := range todo {
		d, err := scanWAL(p, todoNums[i], func(repr []byte) error {
			b := db.pdb.NewBatch()
			if err := b.SetRepr(repr); err != nil {
				return err
			}
			crashpoint.Here("store.repair.batch")
			return b.Commit(pebble.NoSync) // Close syncs them all
		})
		if err != nil {
			db.Close()
			return report, fmt.Errorf("store: repair: replaying %s: %w", p, err)
		}
		line := fmt.Sprintf("store: replayed %d batches of %s", d.Before+d.After, p)
		if d.Offset >= 0 {
			line += fmt.Sprintf("; unreadable from offset %d (%s) to the next 32 KiB block: the batches there are lost", d.Offset, d.Reason)
		}
		report = append(report, line)
	}
	if err := db.Close(); err != nil {
		return report, err
	}
	crashpoint.Here("store.repair.replayed")
	for i, p := range todo {
		if err := os.WriteFile(p+".replayed", []byte(report[i]+"\n"), 0o600); err != nil {
			return report, fmt.Errorf("store: repair: %w", err)
		}
	}
	return report, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: sync %s: %w", dir, err)
	}
	return nil
}
