// Package store owns sonda's crawl-state database: one Pebble instance per data directory,
// the layout of its key space, and the per-URL records (page records, visit history and the
// duplicate indexes) that the crawl writes and the exporters, status and search read.
//
// # Key space
//
// Every package that keeps state in the database owns one or more key prefixes, listed here
// so that two owners can never collide:
//
//	p  page record, by URL key (this package)
//	v  visit history, by URL key and visit time (this package)
//	x  exact-duplicate index, by text fingerprint (this package)
//	n  near-duplicate index, by SimHash band (this package)
//	q  frontier queues (package frontier)
//	h  frontier host records (package frontier)
//	s  frontier seen set (package frontier)
//	m  frontier counters (package frontier)
//	r  robots.txt cache (package crawl)
//	t  crawler-trap counters (package crawl)
//	k  crawl settings that must survive restarts, such as every seed given (package crawl)
//	l  link graph: edges with anchors, in-link counts, PageRank (package linkgraph)
//	g  geo vertical: datasets, links to them, producer sites, site link map (package geo/catalog)
//	a  news vertical: article records, by URL key (package news)
//	f  feeds and sitemaps the crawl knows, by URL key (package feeds)
//	o  news topics and their articles with read state (package news)
//	c  cluster mode: the outbox of links and URL states waiting for JetStream (package cluster;
//	   cw and cu: which volunteer worker delivered a page, package cluster/volunteer)
//	i  search index queue: pages committed, not yet persisted in the index (package index)
//
// # Durability
//
// Writes go to Pebble's write-ahead log without an fsync per batch: a batch that Commit
// returned for is in the operating system's page cache, so it survives the crawler process
// being killed (kill -9, a panic, an OOM kill). A background loop fsyncs the log every
// SyncInterval, which bounds what a power failure or kernel crash can lose to that interval.
// Callers that need more (none today) can sync explicitly with Sync.
//
// # Damage
//
// Open scans the write-ahead logs before Pebble replays them: Pebble takes a log that stops
// reading cleanly for a torn tail and drops whatever follows, so a log with intact batches
// after unreadable bytes is refused (WALDamageError) and RepairWAL replays it past the
// damage. A table whose checksum fails is an error naming the file on every read
// (CorruptFiles, Explain), not Pebble's default panic; Salvage rebuilds the database from
// every key that reads. A fatal write error from the disk (full, failing) ends the process
// with a message, as a kill would. Commands that only look open the database with
// Options.ReadOnly and change no byte of it.
package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sonda-search/sonda/internal/crashpoint"
)

// Options tune the database. The zero value is usable.
type Options struct {
	// CacheSize is the memory Pebble may use for cached blocks and memtables together, in
	// bytes (default 160 MiB). Pebble charges its memtables to the block cache, so the cache
	// proper gets what the memtables leave, at least CacheSize − 4 × MemTableSize. It bounds
	// the database's memory, whatever the number of URLs.
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes (default 16 MiB).
	MemTableSize uint64
	// SyncInterval is how often the write-ahead log is fsynced (default 1s; negative
	// disables the background sync, for benchmarks of the write path alone).
	SyncInterval time.Duration
	// Logger receives Pebble's own messages at debug level (nil: discarded).
	Logger *slog.Logger
	// ReadOnly opens an existing database for reading only, for commands that only look
	// (sonda status, search, export): no byte of the directory changes, not even the LOCK
	// file, a write-ahead log left by a killed crawl is replayed in memory only, and
	// several readers may have it open together (but not while a crawl does).
	ReadOnly bool

	lock *pebble.Lock // held by the caller (RepairWAL) rather than taken by Open
	fs   vfs.FS       // the file system Pebble uses (nil: the OS's); tests inject faults through it
}

// DB is the crawl-state database of one data directory. It is safe for concurrent use.
type DB struct {
	pdb   *pebble.DB
	cache interface{ Unref() }
	dir   string

	readOnly bool

	corruptMu sync.Mutex
	corrupt   []pebble.DataCorruptionInfo // files found corrupt, once each

	stopSync chan struct{}
	syncDone sync.WaitGroup
	closed   sync.Once
}

// ErrLocked means another process has the database open.
var ErrLocked = errors.New("store: database is in use by another sonda process")

// Open opens (creating it if needed) the crawl-state database in dir.
func Open(dir string, opts Options) (*DB, error) {
	if opts.MemTableSize == 0 {
		opts.MemTableSize = 16 << 20
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = 96<<20 + 4*int64(opts.MemTableSize)
	}
	if opts.SyncInterval == 0 {
		opts.SyncInterval = time.Second
	}
	if SalvageInterrupted(dir) {
		return nil, fmt.Errorf("store: %s: a sonda repair was stopped while it put a salvaged copy of the database in place; run sonda repair again to finish it", dir)
	}
	if opts.ReadOnly {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("store: no crawl database in %s: %w", dir, err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, explainOpenError(dir, err)
	}
	if err := checkManifest(dir); err != nil {
		return nil, err
	}
	damage, err := checkWALs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	if len(damage) > 0 {
		return nil, &WALDamageError{Damage: damage}
	}
	cache := pebble.NewCache(opts.CacheSize)
	po := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                opts.MemTableSize,
		MemTableStopWritesThreshold: 4,
		MaxOpenFiles:                1000,
		Logger:                      pebbleLogger{opts.Logger},
	}
	// Bloom filters make the frontier's seen-set lookups of new URLs (the common case while
	// a crawl grows) cost no disk read.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	if opts.lock != nil {
		po.Lock = opts.lock
	}
	switch {
	case opts.fs != nil:
		po.FS = diskStopFS{opts.fs}
	case crashpoint.Enabled():
		po.FS = diskStopFS{crashFS{vfs.Default}}
	default:
		po.FS = diskStopFS{vfs.Default}
	}
	if opts.ReadOnly {
		po.ReadOnly = true
		base := vfs.Default
		if opts.fs != nil {
			base = opts.fs
		}
		po.FS = readOnlyFS{base}
	}
	// A checksum mismatch in a table must reach the reader as an error naming the file
	// (Pebble's default listener makes it a fatal panic). CorruptFiles keeps the list.
	db := &DB{dir: dir, readOnly: opts.ReadOnly, stopSync: make(chan struct{})}
	po.EventListener = &pebble.EventListener{DataCorruption: func(info pebble.DataCorruptionInfo) {
		db.corruptMu.Lock()
		defer db.corruptMu.Unlock()
		if !slices.ContainsFunc(db.corrupt, func(c pebble.DataCorruptionInfo) bool { return c.Path == info.Path }) {
			db.corrupt = append(db.corrupt, info)
			if opts.Logger != nil {
				opts.Logger.Error("store: a database file is corrupt; sonda check reports what it holds, sonda repair salvages the rest", "file", info.Path, "details", info.Details)
			}
		}
	}}
	po.EnsureDefaults()
	pdb, err := pebble.Open(dir, po)
	if err != nil {
		cache.Unref()
		if isLockError(err) {
			return nil, fmt.Errorf("%w (%s): stop it first, or use another --data directory", ErrLocked, dir)
		}
		return nil, explainOpenError(dir, checkOptions(dir, po, err))
	}
	// The cache reference is ours until Close: Pebble does not keep the cache alive by
	// itself, and a released cache silently caches nothing.
	db.pdb, db.cache = pdb, cache
	if opts.SyncInterval > 0 && !opts.ReadOnly {
		db.syncDone.Add(1)
		go db.syncLoop(opts.SyncInterval)
	}
	return db, nil
}

// isLockError tells a LOCK file held by another process (fcntl answers EAGAIN or EACCES,
// unwrapped) from a LOCK file that could not even be opened (a *PathError: a read-only
// file system, no permission), which is not a sign of another sonda at all.
func isLockError(err error) bool {
	if strings.Contains(err.Error(), "lock held by current process") {
		return true
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return false
	}
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)
}

// explainOpenError names the file-system conditions a user can fix.
func explainOpenError(dir string, err error) error {
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("store: %s is on a read-only file system; sonda crawl and serve write there (sonda status, search and export only read): %w", dir, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("store: no permission to write in %s; run sonda as the directory's owner or fix its permissions: %w", dir, err)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("store: the disk holding %s is full; free space, then run the command again: %w", dir, err)
	}
	return fmt.Errorf("store: open %s: %w", dir, err)
}

func (db *DB) syncLoop(every time.Duration) {
	defer db.syncDone.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-db.stopSync:
			return
		case <-t.C:
			_ = db.Sync()
		}
	}
}

// Sync makes every committed batch durable against power loss.
func (db *DB) Sync() error {
	return db.pdb.LogData(nil, pebble.Sync)
}

// CorruptFiles lists the database files found corrupt so far (a checksum mismatch while
// reading them), each with the key range it holds.
func (db *DB) CorruptFiles() []pebble.DataCorruptionInfo {
	db.corruptMu.Lock()
	defer db.corruptMu.Unlock()
	return slices.Clone(db.corrupt)
}

// Explain adds to a read error what a user needs when it comes from a corrupt file: the
// file's path and how to recover. Other errors are returned as they are.
func (db *DB) Explain(err error) error {
	if err == nil || !pebble.IsCorruptionError(err) {
		return err
	}
	var paths []string
	for _, c := range db.CorruptFiles() {
		paths = append(paths, c.Path)
	}
	if len(paths) == 0 {
		paths = []string{"a file of " + db.dir}
	}
	return fmt.Errorf("%w; the crawl database is damaged (%s is corrupt): `sonda check --data DATA` says what it holds, `sonda repair --data DATA` keeps every key that reads and reports the rest", err, strings.Join(paths, ", "))
}

// Pebble returns the underlying database for packages that own a key prefix (see the
// package doc). They must not write outside their prefixes.
func (db *DB) Pebble() *pebble.DB { return db.pdb }

// Dir is the directory the database lives in.
func (db *DB) Dir() string { return db.dir }

// ReadOnly reports whether the database was opened with Options.ReadOnly: every write
// fails (callers that can say why in their own words ask first).
func (db *DB) ReadOnly() bool { return db.readOnly }

// Close syncs and closes the database.
func (db *DB) Close() error {
	var err error
	db.closed.Do(func() {
		close(db.stopSync)
		db.syncDone.Wait()
		if !db.readOnly {
			if e := db.Sync(); e != nil {
				err = fmt.Errorf("store: final sync: %w", e)
			}
		}
		if e := db.pdb.Close(); e != nil && err == nil {
			err = fmt.Errorf("store: close %s: %w", db.dir, e)
		}
		db.cache.Unref()
	})
	return err
}

// DiskUsage is the size in bytes of the database files.
func (db *DB) DiskUsage() int64 {
	var n int64
	_ = filepath.Walk(db.dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l != nil {
		p.l.Debug("pebble: " + fmt.Sprintf(format, args...))
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	if p.l != nil {
		p.l.Warn("pebble: " + fmt.Sprintf(format, args...))
	}
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.l != nil {
		p.l.Error("pebble: " + msg)
	}
	// Pebble calls Fatalf when it cannot go on, and it must not return. A failed write to
	// the disk (full, failing, turned read-only) is not a bug worth a stack trace: the
	// process stops at once, exactly as a kill would, which loses nothing committed.
	if fatalDiskError(msg) {
		stopForDisk(msg)
	}
	panic("pebble: " + msg)
}

// PrefixEnd is the smallest key greater than every key that starts with p: the exclusive
// upper bound for iterating over a key prefix (nil when there is none).
func PrefixEnd(p []byte) []byte {
	end := append([]byte{}, p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
