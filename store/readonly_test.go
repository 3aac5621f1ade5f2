package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/internal/dirsnap"
)

// killedCopy writes n pages through an open database and copies its directory as a
// kill -9 would leave it: the write-ahead log holds batches no flush has written to a
// table. The original is closed afterwards.
func killedCopy(t *testing.T, n int) string {
	t.Helper()
	src := t.TempDir()
	db, err := Open(src, Options{SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range n {
		b := db.Pebble().NewBatch()
		u := fmt.Sprintf("http://a.example/%d", i)
		if err := PutPage(b, key(u), &Page{URL: u, Title: strings.Repeat("t", 100)}); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Pebble hands a NoSync batch to the log file from a background goroutine: wait for
	// it, as the few milliseconds before a real kill would.
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func hashDir(t *testing.T, dir string) dirsnap.Snapshot {
	t.Helper()
	s, err := dirsnap.Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReadOnlyChangesNothing opens what a killed crawl left read-only: every page is
// readable (the log is replayed in memory) and no file of the directory changes, not
// even its modification time. Opened read-write, the same directory does change.
func TestReadOnlyChangesNothing(t *testing.T) {
	const n = 500
	dir := killedCopy(t, n)
	before := hashDir(t, dir)
	for round := range 2 { // twice, and two readers at once
		db, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		other, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("second reader: %v", err)
		}
		count := 0
		if err := db.Pages(func(*Page) error { count++; return nil }); err != nil || count != n {
			t.Fatalf("round %d: %d pages (err %v), want %d", round, count, err, n)
		}
		b := db.Pebble().NewBatch()
		b.Set([]byte("zz"), nil, nil)
		if err := b.Commit(pebble.NoSync); err == nil {
			t.Fatal("a write to a read-only database succeeded")
		}
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if d := before.Diff(hashDir(t, dir)); len(d) > 0 {
		t.Errorf("read-only opens changed the directory: %v", d)
	}

	// The check itself can fail: a read-write open rewrites the directory.
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(before.Diff(hashDir(t, dir))) == 0 {
		t.Error("a read-write open changed nothing either: the test proves nothing")
	}
}

// TestWALDamageDetectedAndRepaired flips a byte early in the write-ahead log a killed
// crawl left: Pebble alone would replay up to it and drop every later batch without a
// word. Open must refuse, naming the log, read-only or not, and change nothing;
// RepairWAL must bring back every batch but those in the damaged block.
func TestWALDamageDetectedAndRepaired(t *testing.T) {
	const n = 2000
	dir := killedCopy(t, n)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var data []byte
	for _, l := range logs { // the log that holds the batches
		if d, _ := os.ReadFile(l); len(d) > len(data) {
			data, logs[0] = d, l
		}
	}
	if len(data) < 4*walBlock {
		t.Fatalf("log of %d bytes: too short to damage its middle", len(data))
	}
	data[walBlock+1000] ^= 0x04
	os.WriteFile(logs[0], data, 0o644)
	before := hashDir(t, dir)
	for _, ro := range []bool{true, false} {
		_, err := Open(dir, Options{ReadOnly: ro})
		if !errors.Is(err, ErrWALDamaged) || !strings.Contains(err.Error(), logs[0]) || !strings.Contains(err.Error(), "sonda repair") {
			t.Fatalf("read-only=%v: Open gives %v; want ErrWALDamaged naming %s and the repair", ro, err, logs[0])
		}
	}
	if d := before.Diff(hashDir(t, dir)); len(d) > 0 {
		t.Errorf("a refused Open changed the directory: %v", d)
	}

	report, err := RepairWAL(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair: %q", report)
	if len(report) != 1 || !strings.Contains(report[0], "lost") {
		t.Fatalf("report %q; want one line saying what was lost", report)
	}
	db, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := 0
	db.Pages(func(*Page) error { count++; return nil })
	// One 32 KiB block holds about 32768/170 batches of this size.
	if count >= n || count < n-250 {
		t.Fatalf("%d pages after repair, want between %d and %d", count, n-250, n-1)
	}
	if _, err := os.Stat(filepath.Join(DamagedDir(dir), filepath.Base(logs[0]))); err != nil {
		t.Errorf("damaged log not kept: %v", err)
	}
}

// TestOpenErrorsNameTheCause: a LOCK file that cannot be opened is not another sonda.
func TestOpenErrorsNameTheCause(t *testing.T) {
	lockPath := "/data/state/LOCK"
	for _, c := range []struct {
		err    error
		locked bool
		want   string
	}{
		{syscall.EAGAIN, true, ""},
		{syscall.EACCES, true, ""},
		{fmt.Errorf("pebble: %w", syscall.EAGAIN), true, ""},
		{&os.PathError{Op: "open", Path: lockPath, Err: syscall.EROFS}, false, "read-only file system"},
		{&os.PathError{Op: "open", Path: lockPath, Err: syscall.EACCES}, false, "no permission"},
		{&os.PathError{Op: "open", Path: lockPath, Err: syscall.ENOSPC}, false, "disk holding /data/state is full"},
	} {
		if got := isLockError(c.err); got != c.locked {
			t.Errorf("isLockError(%v) = %v", c.err, got)
		}
		if c.want != "" {
			if msg := explainOpenError("/data/state", c.err).Error(); !strings.Contains(msg, c.want) {
				t.Errorf("explainOpenError(%v) = %q, want it to say %q", c.err, msg, c.want)
			}
		}
	}
}

func TestFatalDiskError(t *testing.T) {
	for msg, want := range map[string]bool{
		"pebble: fatal commit error: write /d/state/000009.log: no space left on device": true,
		"pebble: flush: write /d/000010.sst: input/output error":                         true,
		"pebble: open /d/OPTIONS: read-only file system":                                 true,
		"pebble: unexpected sequence number 7 (want 8)":                                  false,
	} {
		if got := fatalDiskError(msg); got != want {
			t.Errorf("fatalDiskError(%q) = %v", msg, got)
		}
	}
}
