package store

import (
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sonda-search/sonda/internal/crashpoint"
)

// crashFS gives crash tests (package crashpoint) points inside Pebble's own writes:
// "store.write.KIND" tears a write in two and kills the process between the halves,
// "store.sync.KIND" kills it before a sync, "store.rename" before a rename; KIND is the
// kind of file (log, sst, manifest, marker, other). Open installs it only when a crash
// test set the process up.
type crashFS struct{ vfs.FS }

func fileKind(name string) string {
	base := filepath.Base(name)
	switch {
	case strings.HasSuffix(base, ".log"):
		return "log"
	case strings.HasSuffix(base, ".sst"):
		return "sst"
	case strings.HasPrefix(base, "MANIFEST-"):
		return "manifest"
	case strings.HasPrefix(base, "marker."):
		return "marker"
	}
	return "other"
}

func (fs crashFS) wrap(f vfs.File, name string, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return crashFile{File: f, kind: fileKind(name)}, nil
}

func (fs crashFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(f, name, err)
}

func (fs crashFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, o ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, o...)
	return fs.wrap(f, name, err)
}

func (fs crashFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(f, newname, err)
}

func (fs crashFS) Rename(oldname, newname string) error {
	crashpoint.Here("store.rename")
	return fs.FS.Rename(oldname, newname)
}

func (fs crashFS) Unwrap() vfs.FS { return fs.FS }

type crashFile struct {
	vfs.File
	kind string
}

func (f crashFile) Write(p []byte) (int, error) {
	if crashpoint.Armed("store.write." + f.kind) {
		f.File.Write(p[:len(p)/2])
		crashpoint.Kill()
	}
	return f.File.Write(p)
}

func (f crashFile) Sync() error {
	crashpoint.Here("store.sync." + f.kind)
	return f.File.Sync()
}

func (f crashFile) SyncData() error {
	crashpoint.Here("store.sync." + f.kind)
	return f.File.SyncData()
}
