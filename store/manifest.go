package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// ErrManifestDamaged is wrapped by the error Open returns for a database whose MANIFEST
// (the log of which table files make up the database) is damaged.
var ErrManifestDamaged = errors.New("store: the database's MANIFEST is damaged")

// ManifestDamageError names a damaged MANIFEST. Pebble reads a MANIFEST up to its first
// bad record and takes the rest for a torn tail: the tables added after that point are
// no longer part of the database, and the next read-write open deletes them as obsolete
// files. One flipped byte in a MANIFEST of 121 bytes lost every page record of a crawl
// that way, silently. Open refuses such a database instead, changing nothing.
type ManifestDamageError struct {
	File   string
	Offset int64 // of the first chunk whose checksum does not match
}

func (e *ManifestDamageError) Error() string {
	return fmt.Sprintf("%v: %s: the record at offset %d does not match its checksum (damage on the disk: a crash only ever cuts the end). "+
		"Opening the database would drop every table listed after it, and a crawl would then delete those tables. Nothing was changed; "+
		"copy the data directory somewhere safe: sonda repair cannot rebuild a MANIFEST, and the tables in %s are intact",
		ErrManifestDamaged, e.File, e.Offset, filepath.Dir(e.File))
}

func (e *ManifestDamageError) Unwrap() error { return ErrManifestDamaged }

// currentManifest is the MANIFEST the marker file of dir names ("" for a new database).
func currentManifest(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	best, bestIter := "", -1
	for _, e := range entries {
		// marker.manifest.ITERATION.MANIFEST-NUMBER
		rest, ok := strings.CutPrefix(e.Name(), "marker.manifest.")
		if !ok {
			continue
		}
		iter, name, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(iter)
		if !ok || err != nil || !strings.HasPrefix(name, "MANIFEST-") {
			continue
		}
		if n > bestIter {
			best, bestIter = name, n
		}
	}
	if best == "" {
		return "", nil
	}
	return filepath.Join(dir, best), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkManifest verifies every chunk of dir's current MANIFEST against its checksum. Pebble
// writes it in the LevelDB log format with 7-byte headers (checksum, length, type), in
// 32 KiB blocks whose last bytes may be zero padding. A chunk that runs past the end of
// the file is a torn tail (a crash while writing it) and is no damage; a complete chunk
// whose checksum fails is.
func checkManifest(dir string) error {
	path, err := currentManifest(dir)
	if err != nil || path == "" {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("store: read %s: %w", path, err)
	}
	const header = 7
	for block := 0; block < len(b); block += walBlock {
		end := min(block+walBlock, len(b))
		for p := block; p+header <= end; {
			length := int(binary.LittleEndian.Uint16(b[p+4 : p+6]))
			sum := binary.LittleEndian.Uint32(b[p : p+4])
			if sum == 0 && length == 0 && b[p+6] == 0 {
				break // zero padding to the block's end (or a preallocated tail)
			}
			if p+header+length > end {
				// A torn tail, unless the checksum matches a shorter chunk: then the
				// chunk is whole and its length field is what was damaged.
				if end < len(b) || lengthDamaged(b[p+6:end], sum) {
					return &ManifestDamageError{File: path, Offset: int64(p)}
				}
				return nil
			}
			if maskedCRC(crc32.Checksum(b[p+6:p+header+length], castagnoli)) != sum {
				return &ManifestDamageError{File: path, Offset: int64(p)}
			}
			p += header + length
		}
	}
	return nil
}

// maskedCRC is Pebble's checksum of a chunk: CRC-32C, rotated and offset.
func maskedCRC(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }

// lengthDamaged reports whether some prefix of rest (a chunk's type byte and what follows
// it to the end of the file) matches the chunk's checksum: a whole chunk with a damaged
// length field, not a torn one.
func lengthDamaged(rest []byte, sum uint32) bool {
	var c uint32
	for i := range rest {
		c = crc32.Update(c, castagnoli, rest[i:i+1])
		if maskedCRC(c) == sum {
			return true
		}
	}
	return false
}

// ErrOptionsDamaged is wrapped by the error Open returns when Pebble cannot read the
// database's newest OPTIONS file (RepairOptions moves it aside).
var ErrOptionsDamaged = errors.New("store: the database's OPTIONS file is unreadable")

// latestOptions is the newest OPTIONS file of dir ("" when there is none). Pebble writes
// one at every read-write open and checks the newest against its settings at the next.
func latestOptions(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	best, bestNum := "", -1
	for _, f := range files {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "OPTIONS-"))
		if err == nil && n > bestNum {
			best, bestNum = f, n
		}
	}
	return best
}

// checkOptions says which OPTIONS file an open that failed with err could not read, if
// it was that: Pebble's own message names neither the file nor a way out.
func checkOptions(dir string, po *pebble.Options, err error) error {
	path := latestOptions(dir)
	if path == "" {
		return err
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		return err
	}
	if cerr := po.CheckCompatibility(dir, string(b)); cerr != nil {
		return fmt.Errorf("%w: %s is damaged or not a Pebble OPTIONS file (%v). It only records the settings the database was made with: "+
			"sonda repair moves it aside, and the next open writes a new one", ErrOptionsDamaged, path, cerr)
	}
	return err
}

// RepairOptions moves a damaged newest OPTIONS file of the database in dir (one Open
// refuses) into DamagedDir, and says so ("" when it reads).
func RepairOptions(dir string) (string, error) {
	path := latestOptions(dir)
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("store: repair: %w", err)
	}
	po := &pebble.Options{}
	po.EnsureDefaults()
	if po.CheckCompatibility(dir, string(b)) == nil {
		return "", nil
	}
	if err := os.MkdirAll(DamagedDir(dir), 0o700); err != nil {
		return "", fmt.Errorf("store: repair: %w", err)
	}
	to := filepath.Join(DamagedDir(dir), filepath.Base(path))
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("store: repair: %w", err)
	}
	return fmt.Sprintf("store: moved the damaged %s to %s (it only records settings; the next open writes a new one)", path, to), nil
}
