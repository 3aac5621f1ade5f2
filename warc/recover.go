package warc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonda-search/sonda/internal/crashpoint"
)

// DamagedSuffix starts the name of the file, beside a WARC file, that holds
// bytes Recover found damaged at an offset of it: NAME.damaged-OFFSET.
const DamagedSuffix = ".damaged-"

// Recover finishes the files a killed writer left behind in dir: every
// "*.open" file is checked record by record and renamed to its final name.
// It returns one line per file saying what was done (nothing for a clean
// directory or a missing one). Run it before NewWriter, while no writer uses
// dir.
//
// A kill can only tear the last write (see Durability), so the one thing
// Recover ever cuts off is a torn tail: bytes after the last intact record
// that read as a clean prefix of a record and stop with the file. Anything
// else that does not read cleanly (a flipped byte, a bad sector, a failed
// checksum) is damage: Recover resynchronises on the next record that reads
// cleanly (the next gzip member, as every record is its own member), copies
// the damaged bytes into NAME.damaged-OFFSET beside the file, and overwrites
// them in place with filler of the same length (an empty gzip member whose
// comment names the copy, or blank lines in a plain file), so that every
// intact record keeps its offset, and the Locations the crawl database holds
// stay valid. A file without a single intact record is removed when it is
// only a torn tail and moved aside whole otherwise.
func Recover(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("warc: recover %s: %w", dir, err)
	}
	var report []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), openSuffix) {
			continue
		}
		line, err := recoverFile(dir, e.Name())
		if err != nil {
			return report, err
		}
		report = append(report, line)
	}
	if len(report) > 0 {
		if err := syncDir(dir); err != nil {
			return report, err
		}
	}
	return report, nil
}

// damage is a stretch of a file that holds no intact record.
type damage struct {
	start, end int64
	reason     string
}

// scan is what Recover found in one file.
type scan struct {
	records int      // intact records kept
	keep    int64    // the file's length once a torn tail is cut
	torn    string   // why the tail was cut ("" when it was not)
	damaged []damage // in file order, all before keep
}

func recoverFile(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	final := strings.TrimSuffix(name, openSuffix)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	size := info.Size()
	s, err := scanFile(f, size, !strings.HasSuffix(final, ".warc"), true)
	if err != nil {
		return "", fmt.Errorf("warc: recover %s: %w", path, err)
	}
	if s.records == 0 {
		f.Close()
		if len(s.damaged) == 0 {
			if err := os.Remove(path); err != nil {
				return "", fmt.Errorf("warc: recover: %w", err)
			}
			return fmt.Sprintf("warc: removed %s: no complete record in %d bytes (%s)", name, size, s.torn), nil
		}
		aside := final + DamagedSuffix + "0"
		if err := renameNew(path, filepath.Join(dir, aside)); err != nil {
			return "", err
		}
		return fmt.Sprintf("warc: no intact record in %s (%d bytes; %s): moved to %s", name, size, s.damaged[0].reason, aside), nil
	}
	lines, err := moveDamage(f, dir, final, s.damaged)
	if err != nil {
		return "", fmt.Errorf("warc: recover %s: %w", path, err)
	}
	if s.keep < size {
		if err := f.Truncate(s.keep); err != nil {
			return "", fmt.Errorf("warc: recover %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("warc: recover %s: %w", path, err)
	}
	crashpoint.Here("warc.recover.finish")
	if err := renameNew(path, filepath.Join(dir, final)); err != nil {
		return "", err
	}
	head := fmt.Sprintf("warc: recovered %s: %d records", final, s.records)
	switch {
	case s.keep < size:
		head += fmt.Sprintf(" kept, %d bytes of torn tail cut (%s)", size-s.keep, s.torn)
	case len(lines) == 0:
		head += ", intact"
	default:
		head += " kept"
	}
	if len(lines) > 0 {
		head += "; " + strings.Join(lines, "; ") + "; each replaced in place by filler of the same length, so later records keep their offsets"
	}
	return head, nil
}

// moveDamage copies each damaged stretch of f (the file whose final name is final, in
// dir) to FINAL.damaged-OFFSET, makes the copies durable, then overwrites the stretch in
// place with filler of the same length. It returns one report line per stretch.
func moveDamage(f *os.File, dir, final string, damaged []damage) ([]string, error) {
	if len(damaged) == 0 {
		return nil, nil
	}
	var lines []string
	fills := make([][]byte, len(damaged))
	gz := !strings.HasSuffix(final, ".warc")
	for i, d := range damaged {
		aside := final + DamagedSuffix + fmt.Sprint(d.start)
		if err := saveAside(f, d, filepath.Join(dir, aside)); err != nil {
			return nil, err
		}
		fills[i] = filler(d.end-d.start, aside, gz)
		line := fmt.Sprintf("%d damaged bytes at offset %d (%s) moved to %s", d.end-d.start, d.start, d.reason, aside)
		if fills[i] == nil {
			line = fmt.Sprintf("%d damaged bytes at offset %d (%s) copied to %s and left in place, too short to replace", d.end-d.start, d.start, d.reason, aside)
		}
		lines = append(lines, line)
	}
	// The copies must be durable before the originals are overwritten.
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	for i, d := range damaged {
		if fills[i] == nil {
			continue
		}
		if crashpoint.Armed("warc.recover.fill") {
			f.WriteAt(fills[i][:len(fills[i])/2], d.start)
			crashpoint.Kill()
		}
		if _, err := f.WriteAt(fills[i], d.start); err != nil {
			return nil, fmt.Errorf("overwrite damaged bytes at %d: %w", d.start, err)
		}
	}
	return lines, nil
}

// RepairFile mends a finished WARC file in place as Recover mends an open one, except that
// it never shortens it: a finished file was closed whole, so a bad end is damage like any
// other, moved aside and filled. Every intact record keeps its offset. It returns what it
// did, or "" when the file reads cleanly.
func RepairFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("warc: repair: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("warc: repair: %w", err)
	}
	name := filepath.Base(path)
	s, err := scanFile(f, info.Size(), !strings.HasSuffix(name, ".warc"), false)
	if err != nil {
		return "", fmt.Errorf("warc: repair %s: %w", path, err)
	}
	if len(s.damaged) == 0 {
		return "", nil
	}
	lines, err := moveDamage(f, filepath.Dir(path), name, s.damaged)
	if err != nil {
		return "", fmt.Errorf("warc: repair %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("warc: repair %s: %w", path, err)
	}
	return fmt.Sprintf("warc: repaired %s: %s; each replaced in place by filler of the same length, so the other records keep their offsets", name, strings.Join(lines, "; ")), nil
}

// renameNew renames from to to, refusing to replace an existing file.
func renameNew(from, to string) error {
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("warc: recover %s: %s already exists", from, filepath.Base(to))
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("warc: recover: %w", err)
	}
	return nil
}

// saveAside copies d's bytes of f into path and syncs it. A copy of the same
// size already there is kept: a run interrupted while overwriting the
// damage leaves the first, faithful copy, and the next run finds the same
// stretch (its ends are intact records) half overwritten.
func saveAside(f *os.File, d damage, path string) error {
	if info, err := os.Stat(path); err == nil && info.Size() == d.end-d.start {
		return nil
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(f, d.start, d.end-d.start))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("save damaged bytes to %s: %w", path, err)
	}
	return nil
}

// filler returns n bytes that read as no record. In a gzip file it is a
// run of empty gzip members (RFC 1952), which readers pass over: the first
// one's comment names where the damaged bytes went, and their extra fields
// (zeros) make up the length. In a plain file it is blank lines, which
// readers skip between records. It returns nil for a gzip stretch shorter
// than the smallest member (20 bytes), which a stretch that held a whole
// member never is.
func filler(n int64, note string, gz bool) []byte {
	if !gz {
		b := bytes.Repeat([]byte("\r\n"), int(n/2))
		if n%2 == 1 {
			b = append(b, '\n')
		}
		return b
	}
	const (
		minMember = 10 + 2 + 8 // header, an empty final deflate block, trailer
		maxExtra  = 1<<16 - 1
	)
	if n < minMember {
		return nil
	}
	comment := "sonda: damaged bytes moved to " + note
	if len(comment) > 200 {
		comment = comment[:200] // readers cap header strings (Go's at 511 bytes)
	}
	b := make([]byte, 0, n)
	for first := true; int64(len(b)) < n; first = false {
		left := int(n) - len(b)
		useComment := first && left >= minMember+len(comment)+1
		if !useComment {
			comment = ""
		}
		base := minMember
		if useComment {
			base += len(comment) + 1
		}
		extra := -1 // no extra field
		switch rest := left - base; {
		case rest == 1:
			if useComment {
				comment += " "
			} else {
				useComment = true // an empty comment is its NUL alone
			}
		case rest >= 2 && rest-2 <= maxExtra:
			extra = rest - 2
		case rest >= 2:
			// Leave at least a whole member for the next round.
			extra = min(maxExtra, rest-2-minMember)
		}
		flags := byte(0)
		if extra >= 0 {
			flags |= 0x04 // FEXTRA
		}
		if useComment {
			flags |= 0x10 // FCOMMENT
		}
		b = append(b, 0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 0xff) // deflate, no mtime, unknown OS
		if extra >= 0 {
			b = binary.LittleEndian.AppendUint16(b, uint16(extra))
			b = append(b, make([]byte, extra)...)
		}
		if useComment {
			b = append(append(b, comment...), 0)
		}
		b = append(b, 3, 0)                        // a final fixed-Huffman block holding only its end
		b = binary.LittleEndian.AppendUint32(b, 0) // CRC-32 of nothing
		b = binary.LittleEndian.AppendUint32(b, 0) // length of nothing
	}
	return b
}

// scanFile reads f (size bytes, gzip or plain) record by record and says
// which stretches hold intact records, which are damage, and whether the end
// is a torn tail: only in a file still open (a finished one was closed whole,
// so a bad end is damage). Only an I/O error is returned as an error: it must
// not be mistaken for damage or a torn tail.
func scanFile(f io.ReaderAt, size int64, gz, open bool) (scan, error) {
	s := scan{keep: size}
	r, err := readRun(f, 0, size, gz)
	if err != nil {
		return s, err
	}
	for {
		s.records += r.records
		if r.stop == nil {
			if open && r.lastType == TypeRequest {
				// WriteCapture never ends with a request record: the capture's
				// response was torn off, even if exactly between records, and the
				// crawler, which never got its Location, will fetch it again.
				s.records--
				s.keep = r.lastStart
				s.torn = "end of file; dropped the request record before it"
			}
			return s, nil
		}
		next, nr, found, err := resync(f, r.end+1, size, gz)
		if err != nil {
			return s, err
		}
		if found {
			s.damaged = append(s.damaged, damage{start: r.end, end: next, reason: r.stop.Error()})
			r = nr
			continue
		}
		if open && errors.Is(r.stop, ErrTruncated) {
			s.keep, s.torn = r.end, r.stop.Error()
			if r.lastType == TypeRequest {
				s.records--
				s.keep = r.lastStart
				s.torn += "; dropped the request record before it"
			}
			return s, nil
		}
		// Not a clean prefix of a record: damage, kept aside, never cut.
		s.damaged = append(s.damaged, damage{start: r.end, end: size, reason: r.stop.Error()})
		return s, nil
	}
}

// run is what readRun read: records from its start up to end, the offset
// just past the last intact one, and why it stopped (nil at the end of the
// file).
type run struct {
	records   int
	end       int64
	lastType  string
	lastStart int64
	stop      error
}

// readRun reads intact records from pos on, until the end of the file or the
// first record that does not read cleanly, whose digests do not match, or,
// in a gzip file, whose gzip member does not end with it.
func readRun(f io.ReaderAt, pos, size int64, gz bool) (run, error) {
	out := run{end: pos, lastStart: -1}
	if gz {
		var magic [3]byte
		n, err := f.ReadAt(magic[:], pos)
		if err != nil && err != io.EOF {
			return out, err
		}
		if !bytes.HasPrefix(gzipMagic, magic[:n]) {
			out.stop = fmt.Errorf("warc: no gzip member starts at offset %d", pos)
			return out, nil
		}
		if n < len(magic) {
			out.stop = fmt.Errorf("warc: gzip member at offset %d: %w: %v", pos, ErrTruncated, io.ErrUnexpectedEOF)
			return out, nil
		}
	}
	src := &ioErrReader{r: io.NewSectionReader(f, pos, size-pos)}
	rd, err := NewReader(src)
	if err != nil {
		return out, err
	}
	for {
		start := pos + rd.end
		rec, err := rd.Next()
		if src.err != nil {
			return out, src.err
		}
		if err == io.EOF {
			out.end = pos + rd.end
			return out, nil
		}
		if err == nil {
			err = VerifyDigests(rec)
		}
		if err == nil && pos+rd.end == start {
			err = fmt.Errorf("warc: record at offset %d: its gzip member holds more than one record", start)
		}
		if err != nil {
			out.stop = err
			return out, nil
		}
		out.records++
		out.end = pos + rd.end
		out.lastType, out.lastStart = rec.Type(), start
	}
}

var gzipMagic = []byte{0x1f, 0x8b, 8}

// resync finds the first offset at or after from where an intact record
// starts (at a gzip member header, or in a plain file a "WARC/1." line) and
// returns the run of intact records read from there.
func resync(f io.ReaderAt, from, size int64, gz bool) (int64, run, bool, error) {
	pattern := gzipMagic
	if !gz {
		pattern = []byte("\nWARC/1.")
		from-- // the pattern starts with the line end before the record
	}
	const chunk = 256 << 10
	buf := make([]byte, chunk+len(pattern))
	for at := from; at < size; at += chunk {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
		if err != nil && err != io.EOF {
			return 0, run{}, false, err
		}
		for i := 0; ; {
			j := bytes.Index(buf[i:n], pattern)
			if j < 0 || i+j >= chunk {
				break
			}
			c := at + int64(i+j)
			if !gz {
				c++
			}
			r, err := readRun(f, c, size, gz)
			if err != nil {
				return 0, run{}, false, err
			}
			if r.records > 0 {
				return c, r, true, nil
			}
			i += j + 1
		}
	}
	return 0, run{}, false, nil
}

// ioErrReader remembers the first error other than io.EOF from r.
type ioErrReader struct {
	r   io.Reader
	err error
}

func (e *ioErrReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}
