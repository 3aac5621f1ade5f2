package warc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Recover finishes the files a killed writer left behind in dir: every
// "*.open" file is cut back to its last complete record and renamed to its
// final name; one without a single complete record is removed. It returns
// one line per file saying what was done (nothing for a clean directory or
// a missing one). Run it before NewWriter, while no writer uses dir.
//
// A torn final record is the only damage a kill can do (see Durability), so
// Recover cuts at the first record that does not read cleanly, whatever the
// reason, and reports that reason.
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
	records, keep, reason, err := completePrefix(f)
	if err != nil {
		return "", fmt.Errorf("warc: recover %s: %w", path, err)
	}
	if keep == 0 {
		f.Close()
		if err := os.Remove(path); err != nil {
			return "", fmt.Errorf("warc: recover: %w", err)
		}
		return fmt.Sprintf("warc: removed %s: no complete record in %d bytes (%s)", name, info.Size(), reason), nil
	}
	cut := info.Size() - keep
	if cut > 0 {
		if err := f.Truncate(keep); err != nil {
			return "", fmt.Errorf("warc: recover %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("warc: recover %s: %w", path, err)
	}
	if _, err := os.Stat(filepath.Join(dir, final)); err == nil {
		return "", fmt.Errorf("warc: recover %s: %s already exists", path, final)
	}
	if err := os.Rename(path, filepath.Join(dir, final)); err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	if cut == 0 {
		return fmt.Sprintf("warc: recovered %s: %d records, intact", final, records), nil
	}
	return fmt.Sprintf("warc: recovered %s: %d records kept, %d bytes of torn tail cut (%s)", final, records, cut, reason), nil
}

// completePrefix reads r and returns how many records, and how many bytes,
// precede the first record that does not read cleanly, and why reading
// stopped there. A request record left last is dropped too: WriteCapture
// never ends with one, so it is the start of a capture whose response was
// torn off (even when the tear fell exactly between records), and the crawler,
// which never got that capture's Location, will fetch the URL again.
// err is set only when reading r itself fails: an I/O error must not be
// mistaken for a torn tail and cut good records off.
func completePrefix(r io.Reader) (records int, size int64, reason string, err error) {
	src := &ioErrReader{r: r}
	rd, err := NewReader(src)
	if err != nil {
		return 0, 0, "", err
	}
	var lastType string
	var lastStart int64
	for n := 0; ; {
		start := rd.end
		rec, err := rd.Next()
		if src.err != nil {
			return 0, 0, "", src.err
		}
		if err != nil {
			reason = "end of file"
			if err != io.EOF {
				reason = err.Error()
			}
			if lastType == TypeRequest {
				records, size = records-1, lastStart
				reason += "; dropped the request record before it"
			}
			return records, size, reason, nil
		}
		// Only a record that ends its gzip member is complete (rd.end moves).
		n++
		if rd.end > size {
			records, size = n, rd.end
			lastType, lastStart = rec.Type(), start
		}
	}
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
