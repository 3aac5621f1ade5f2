package store

import (
	"errors"
	"fmt"
	"io"
	"os"

	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// errReadOnly is what a write to a database opened with Options.ReadOnly meets, at the
// file-system level: Pebble's read-only mode already writes nothing, and this makes sure.
var errReadOnly = errors.New("store: the database is open read-only")

// readOnlyFS is the file system of a database opened read-only. Every call that would
// change a byte of the directory fails, and the LOCK file is locked shared without being
// created or truncated: readers may run together, and a writer (a crawl) excludes them,
// and they it, as Pebble's own exclusive lock does.
type readOnlyFS struct{ vfs.FS }

func (readOnlyFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, fmt.Errorf("%w: create %s", errReadOnly, name)
}

func (readOnlyFS) Link(oldname, _ string) error {
	return fmt.Errorf("%w: link %s", errReadOnly, oldname)
}

func (readOnlyFS) OpenReadWrite(name string, _ vfs.DiskWriteCategory, _ ...vfs.OpenOption) (vfs.File, error) {
	return nil, fmt.Errorf("%w: open %s for writing", errReadOnly, name)
}

func (readOnlyFS) Remove(name string) error {
	return fmt.Errorf("%w: remove %s", errReadOnly, name)
}

func (readOnlyFS) RemoveAll(name string) error {
	return fmt.Errorf("%w: remove %s", errReadOnly, name)
}

func (readOnlyFS) Rename(oldname, _ string) error {
	return fmt.Errorf("%w: rename %s", errReadOnly, oldname)
}

func (readOnlyFS) ReuseForWrite(oldname, _ string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, fmt.Errorf("%w: reuse %s", errReadOnly, oldname)
}

func (readOnlyFS) MkdirAll(dir string, _ os.FileMode) error {
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return nil
	}
	return fmt.Errorf("%w: create %s", errReadOnly, dir)
}

// Lock takes a shared (read) lock on an existing LOCK file, opened read-only.
func (readOnlyFS) Lock(name string) (io.Closer, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	spec := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &spec); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil // closing the file releases the lock
}

func (fs readOnlyFS) Unwrap() vfs.FS { return fs.FS }
