package store

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestInjectedFaultsLoseNothing sweeps one injected EIO (through Pebble's errorfs) over
// every file-system read operation of opening a database and reading all of it back,
// read-write and read-only, on a database whose pages are in tables, and read-only on one left as a kill
// -9 leaves it (its pages only in the write-ahead log). (Opening that one read-write
// flushes the log in the background, where a failure is fatal by Pebble's design: the
// process stops as a kill would, which cmd/sonda's TestDiskFullStopsAndResumes covers
// with a real full disk.) At every point Open or the reads fail
// with an error that carries the injected one, or succeed with every page intact: never a
// panic, never a wrong or missing page. And the next open without faults finds every page:
// a failed open (which may have begun writing a new manifest or log) costs nothing.
func TestInjectedFaultsLoseNothing(t *testing.T) {
	const n = 200
	flushed := t.TempDir()
	writePagesTo(t, flushed, n, true)
	for _, c := range []struct {
		name     string
		dir      string
		readOnly bool
	}{
		{"tables, read-write", flushed, false},
		{"tables, read-only", flushed, true},
		{"log only, read-only", killedCopy(t, n), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The k-th read operation (open, read, stat...) fails with EIO; writes are left
			// alone (see above).
			faultAt := func(k int32) (errorfs.Injector, *atomic.Int32) {
				var seen atomic.Int32
				return errorfs.InjectorFunc(func(op errorfs.Op) error {
					if op.Kind.ReadOrWrite() != errorfs.OpIsRead {
						return nil
					}
					if seen.Add(1)-1 == k {
						return fmt.Errorf("%s: %w (%w)", op.Path, syscall.EIO, errorfs.ErrInjected)
					}
					return nil
				}), &seen
			}
			count, counted := faultAt(-1)
			readAll(t, c.dir, Options{SyncInterval: -1, ReadOnly: c.readOnly, fs: errorfs.Wrap(vfs.Default, count)}, n)
			ops := int(counted.Load())
			if ops < 5 {
				t.Fatalf("only %d file-system operations counted", ops)
			}
			failed := 0
			for k := range ops {
				inj, _ := faultAt(int32(k))
				err := tryReadAll(c.dir, Options{SyncInterval: -1, ReadOnly: c.readOnly, fs: errorfs.Wrap(vfs.Default, inj)}, n)
				switch {
				case err == nil:
				case errors.Is(err, syscall.EIO) || strings.Contains(err.Error(), "input/output error"):
					if failed == 0 || k == ops-1 {
						t.Logf("fault at operation %d: %v", k, err)
					}
					failed++
				default:
					t.Errorf("fault at operation %d of %d: %v (not the injected error)", k, ops, err)
				}
				// Whatever happened, a clean open finds everything.
				readAll(t, c.dir, Options{SyncInterval: -1, ReadOnly: c.readOnly}, n)
			}
			t.Logf("%d operations, a fault at each: %d reported it, %d did not need the failed operation", ops, failed, ops-failed)
		})
	}
}

// writePagesTo writes n pages into a new database in dir and, with flush, flushes them
// into tables before closing it.
func writePagesTo(t *testing.T, dir string, n int, flush bool) {
	t.Helper()
	db, err := Open(dir, Options{SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		b := db.Pebble().NewBatch()
		u := fmt.Sprintf("http://a.example/%d", i)
		if err := PutPage(b, key(u), &Page{URL: u, Title: strings.Repeat("t", 100)}); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if flush {
		if err := db.Pebble().Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// tryReadAll opens dir with o and reads every page, checking each; it returns the first
// error, or one describing a wrong or missing page.
func tryReadAll(dir string, o Options, n int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	db, err := Open(dir, o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil && !errors.Is(cerr, syscall.EIO) {
			err = cerr
		}
	}()
	seen := 0
	err = db.Pages(func(p *Page) error {
		if !strings.HasPrefix(p.URL, "http://a.example/") || p.Title != strings.Repeat("t", 100) {
			return fmt.Errorf("a wrong page: %+v", p)
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != n {
		return fmt.Errorf("%d pages read, %d written (no error said any was missing)", seen, n)
	}
	return nil
}

func readAll(t *testing.T, dir string, o Options, n int) {
	t.Helper()
	if err := tryReadAll(dir, o, n); err != nil {
		t.Fatalf("open without a fault: %v", err)
	}
}
