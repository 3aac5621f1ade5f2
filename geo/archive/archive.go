// Package archive unpacks the zip archives geographic data comes in, safely: every limit a
// hostile or broken archive could abuse is enforced while bytes are written, not trusted
// from the archive's own headers.
//
//   - Entry count, total unpacked size and per-entry size are capped.
//   - The unpacked/packed ratio of each entry is capped (zip bombs), with a small allowance
//     so tiny, highly compressible files (a .prj, an empty .dbf) pass.
//   - Names are cleaned: absolute paths, ".." components, drive letters and backslash tricks
//     are rejected, never followed; symlinks and special files are skipped.
//   - Archives inside archives are unpacked to a bounded depth, each into its own folder.
//
// Everything lands under one directory the caller owns and removes.
package archive

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits bound what Extract may unpack. Zero fields take the defaults.
type Limits struct {
	MaxEntries int   // files across the archive and its nested archives (default 10,000)
	MaxTotal   int64 // bytes unpacked in all (default 2 GiB)
	MaxEntry   int64 // bytes unpacked from one entry (default 1 GiB)
	MaxRatio   int64 // unpacked bytes per packed byte for one entry (default 200)
	MaxDepth   int   // archives inside archives followed (default 2; 0 means the default, -1 none)
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = 10000
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = 2 << 30
	}
	if l.MaxEntry <= 0 {
		l.MaxEntry = 1 << 30
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = 200
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = 2
	}
	if l.MaxDepth < 0 {
		l.MaxDepth = 0
	}
	return l
}

// ratioAllowance is unpacked bytes always allowed per entry whatever its ratio.
const ratioAllowance = 1 << 20

// File is one unpacked file.
type File struct {
	Name string // path inside the archive, with nested archives as "outer.zip!/inner/a.shp"
	Path string // where it is on disk
	Size int64
}

// Errors that describe a hostile or broken archive.
var (
	ErrBomb      = errors.New("archive: zip bomb: unpacked size exceeds the limits")
	ErrTooMany   = errors.New("archive: too many entries")
	ErrUnsafe    = errors.New("archive: unsafe entry name")
	ErrNotZip    = errors.New("archive: not a zip archive")
	ErrTooDeeply = errors.New("archive: archives nested too deeply")
)

// IsZip reports whether data starts like a zip archive.
func IsZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// Extract unpacks the zip at src into dir (which must exist) and returns the files, nested
// archives included (each unpacked next to itself in a "NAME.d" folder; the nested .zip
// file itself is removed once unpacked). Entries with unsafe names are skipped and reported
// in the returned skipped list; a limit being hit stops everything with an error.
func Extract(src, dir string, lim Limits) (files []File, skipped []string, err error) {
	lim = lim.withDefaults()
	x := &extractor{lim: lim}
	err = x.extract(src, dir, "", 0)
	return x.files, x.skipped, err
}

type extractor struct {
	lim     Limits
	files   []File
	skipped []string
	entries int
	total   int64
}

func (x *extractor) extract(src, dir, prefix string, depth int) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return fmt.Errorf("%w: %s", ErrNotZip, prefix+filepath.Base(src))
		}
		return fmt.Errorf("archive: open %s: %w", prefix+filepath.Base(src), err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if !f.Mode().IsRegular() {
			x.skipped = append(x.skipped, prefix+f.Name+" (not a regular file)")
			continue
		}
		rel, ok := cleanName(f.Name)
		if !ok {
			x.skipped = append(x.skipped, prefix+f.Name+" (unsafe name)")
			continue
		}
		if x.entries++; x.entries > x.lim.MaxEntries {
			return fmt.Errorf("%w: more than %d", ErrTooMany, x.lim.MaxEntries)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		n, err := x.write(f, dst)
		if err != nil {
			return fmt.Errorf("%s: %w", prefix+f.Name, err)
		}
		name := prefix + rel
		if strings.EqualFold(path.Ext(rel), ".zip") {
			if depth >= x.lim.MaxDepth {
				x.skipped = append(x.skipped, name+" (nested deeper than "+fmt.Sprint(x.lim.MaxDepth)+")")
				_ = os.Remove(dst)
				continue
			}
			sub := dst + ".d"
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return fmt.Errorf("archive: %w", err)
			}
			err := x.extract(dst, sub, name+"!/", depth+1)
			_ = os.Remove(dst)
			if errors.Is(err, ErrNotZip) {
				x.skipped = append(x.skipped, name+" (not a zip archive)")
				continue
			}
			if err != nil {
				return err
			}
			continue
		}
		x.files = append(x.files, File{Name: name, Path: dst, Size: n})
	}
	return nil
}

// write copies one entry to dst, counting bytes against the limits as they are written.
func (x *extractor) write(f *zip.File, dst string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, fmt.Errorf("archive: %w", err)
	}
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("archive: %w", err)
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, fmt.Errorf("archive: %w (two entries with the same name?)", err)
	}
	defer out.Close()
	limit := min(x.lim.MaxEntry, x.lim.MaxTotal-x.total)
	if byRatio := int64(f.CompressedSize64)*x.lim.MaxRatio + ratioAllowance; f.CompressedSize64 < 1<<40 && byRatio < limit {
		limit = byRatio
	}
	n, err := io.Copy(out, io.LimitReader(rc, limit+1))
	x.total += n
	if n > limit {
		return n, fmt.Errorf("%w (entry of %d packed bytes unpacks past %d)", ErrBomb, f.CompressedSize64, limit)
	}
	if err != nil {
		return n, fmt.Errorf("archive: %w", err)
	}
	return n, nil
}

// cleanName turns an entry name into a safe relative path, or reports that it is unsafe.
func cleanName(name string) (string, bool) {
	name = strings.ReplaceAll(name, "\\", "/")
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) ||
		len(name) >= 2 && name[1] == ':' { // C:/...
		return "", false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", false
		}
	}
	clean := path.Clean(name)
	if clean == "." || strings.HasPrefix(clean, "../") || len(clean) > 1024 {
		return "", false
	}
	// Leave macOS resource forks out: they are not data.
	if strings.HasPrefix(clean, "__MACOSX/") {
		return "", false
	}
	return clean, true
}
