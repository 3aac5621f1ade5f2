package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// diskStopFS stops the process, with the same message as a fatal disk error, when an
// operation Pebble cannot take back fails for a reason of the disk (full, failing, turned
// read-only): an fsync of any file or directory, or creating or closing a write-ahead log.
// Pebble itself panics on these (an fsync that failed may have dropped the data it was to
// make durable: see https://wiki.postgresql.org/wiki/Fsync_Errors), and a panic while it
// holds its locks turns into "unlock of unlocked mutex", a stack trace for a full disk.
// Stopping at once is what Pebble's fatal path does too, and loses nothing committed: a
// batch is acknowledged only once its log is synced. TestInjectedWriteFaultsLoseNothing
// sweeps the faults.
type diskStopFS struct{ vfs.FS }

func (fs diskStopFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(f, name, "creating", err)
}

func (fs diskStopFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, o ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, o...)
	return fs.wrap(f, name, "", err)
}

func (fs diskStopFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	return fs.wrap(f, name, "", err)
}

func (fs diskStopFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(f, newname, "reusing", err)
}

func (fs diskStopFS) Unwrap() vfs.FS { return fs.FS }

// wrap checks a failed create of a log (what) and wraps the file.
func (fs diskStopFS) wrap(f vfs.File, name, what string, err error) (vfs.File, error) {
	if err != nil {
		if what != "" && fileKind(name) == "log" {
			stopOnDiskError(what+" "+name, err)
		}
		return f, err
	}
	return diskStopFile{File: f, name: name}, nil
}

type diskStopFile struct {
	vfs.File
	name string
}

func (f diskStopFile) Sync() error {
	err := f.File.Sync()
	stopOnDiskError("syncing "+f.name, err)
	return err
}

func (f diskStopFile) SyncData() error {
	err := f.File.SyncData()
	stopOnDiskError("syncing "+f.name, err)
	return err
}

func (f diskStopFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	stopOnDiskError("syncing "+f.name, err)
	return full, err
}

func (f diskStopFile) Close() error {
	err := f.File.Close()
	if fileKind(f.name) == "log" {
		stopOnDiskError("closing "+f.name, err)
	}
	return err
}

// diskErrnos are the errors that say the disk, not sonda, failed.
var diskErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EROFS, syscall.EDQUOT}

// stopOnDiskError ends the process when err is a disk error (and returns otherwise).
func stopOnDiskError(what string, err error) {
	if err == nil {
		return
	}
	for _, e := range diskErrnos {
		if errors.Is(err, e) {
			stopForDisk(fmt.Sprintf("%s: %v", filepath.Base(what), err))
		}
	}
}

// stopForDisk says why the database cannot write and ends the process at once, as a kill
// would.
func stopForDisk(msg string) {
	fmt.Fprintf(os.Stderr, "sonda: the crawl database cannot write: %s\n"+
		"sonda: stopped at once, as a kill would: nothing committed is lost. Free space (or fix the disk), then run the command again to resume.\n", msg)
	os.Exit(1)
}

// fatalDiskError tells a Pebble fatal error caused by the disk from one caused by a bug.
func fatalDiskError(msg string) bool {
	for _, e := range diskErrnos {
		if strings.Contains(msg, e.Error()) {
			return true
		}
	}
	return false
}
