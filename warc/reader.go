package warc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// ErrTruncated is wrapped by Reader errors when the input ends inside a
// record or a gzip member: the signature of a file whose writer was killed.
var ErrTruncated = errors.New("truncated")

// Limits that keep a malformed or hostile file from making the reader
// buffer without bound before it can tell the input is wrong. Blocks are
// not limited here; their memory grows only with bytes actually read.
const (
	maxHeaderBytes = 1 << 20
	maxLineBytes   = 64 << 10
)

// Reader reads the records of a WARC file in order. It detects gzip input
// (any number of members, one record per member or several) and plain
// input by the first bytes.
type Reader struct {
	src    *countingReader
	br     *bufio.Reader // the raw input
	gz     *gzip.Reader  // non-nil for gzip input
	ur     *bufio.Reader // the uncompressed data: over gz, or br itself
	closer io.Closer     // set by OpenFile

	inMember    bool  // a gzip member is open and has more data
	memberStart int64 // offset of the open gzip member
	end         int64 // offset just past the last complete record
	err         error // sticky
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// NewReader returns a Reader of r. It reads the first bytes of r to tell
// gzip from plain input; empty input gives a Reader whose Next returns io.EOF.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{src: &countingReader{r: r}}
	rd.br = bufio.NewReaderSize(rd.src, 64<<10)
	magic, err := rd.br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("warc: read start of input: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		rd.gz = new(gzip.Reader)
		rd.ur = bufio.NewReaderSize(nil, 64<<10)
	} else {
		rd.ur = rd.br
	}
	return rd, nil
}

// OpenFile opens a WARC file for reading; Close the Reader when done.
func OpenFile(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("warc: open %s: %w", path, err)
	}
	r.closer = f
	return r, nil
}

// Close closes the file opened by OpenFile; for a Reader made by NewReader
// it does nothing.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	return err
}

// ReadRecordAt reads the single record at loc in directory dir, looking for
// the file also under its ".open" name in case it is still being written.
func ReadRecordAt(dir string, loc Location) (*Record, error) {
	if loc.File == "" || loc.File != filepath.Base(loc.File) {
		return nil, fmt.Errorf("warc: location file %q is not a plain file name", loc.File)
	}
	path := filepath.Join(dir, loc.File)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.Open(path + openSuffix)
	}
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	defer f.Close()
	if loc.Offset < 0 || loc.Length <= 0 {
		return nil, fmt.Errorf("warc: %s: bad location offset %d length %d", loc.File, loc.Offset, loc.Length)
	}
	r, err := NewReader(io.NewSectionReader(f, loc.Offset, loc.Length))
	if err != nil {
		return nil, fmt.Errorf("warc: %s at %d: %w", loc.File, loc.Offset, err)
	}
	rec, err := r.Next()
	if err == io.EOF {
		err = fmt.Errorf("%w: no record", ErrTruncated)
	}
	if err != nil {
		return nil, fmt.Errorf("warc: %s at %d: %w", loc.File, loc.Offset, err)
	}
	rec.Offset = loc.Offset
	return rec, nil
}

// pos is the offset in the raw input of the next unread byte.
func (r *Reader) pos() int64 { return r.src.n - int64(r.br.Buffered()) }

// Next returns the next record, or io.EOF after the last one. An input that
// ends inside a record gives an error wrapping ErrTruncated and naming the
// offset where that record starts. Errors are sticky.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return rec, nil
}

func (r *Reader) next() (*Record, error) {
	offset := r.pos()
	if r.gz != nil {
		var err error
		if offset, err = r.enterRecordGzip(); err != nil {
			return nil, err
		}
	} else if err := skipBlankLines(r.ur); err != nil {
		return nil, err
	} else {
		offset = r.pos()
	}
	where := offset
	if where < 0 {
		where = r.memberStart
	}
	rec, err := readRecord(r.ur)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			if _, more := r.br.Peek(1); r.gz != nil && more == nil {
				err = fmt.Errorf("%w (a record continuing into the next gzip member is not supported)", err)
			} else {
				err = fmt.Errorf("%w: %w", ErrTruncated, err)
			}
		}
		return nil, fmt.Errorf("warc: record at offset %d: %w", where, err)
	}
	rec.Offset = offset
	if r.gz == nil {
		r.end = r.pos()
		return rec, nil
	}
	// Peeking past the record makes the gzip reader reach the end of the
	// member, if this was its last record, and check the member's CRC and
	// length: a record counts as complete only when its member does.
	if _, err := r.ur.Peek(1); err == io.EOF {
		r.inMember = false
		r.end = r.pos()
	} else if err != nil {
		return nil, fmt.Errorf("warc: record at offset %d: gzip member: %w", where, gzipErr(err))
	}
	return rec, nil
}

// enterRecordGzip positions ur at the start of the next record, opening gzip
// members (and passing over empty ones) as needed. It returns the record's
// offset: its member's, or -1 if the record shares a member with the
// previous one.
func (r *Reader) enterRecordGzip() (int64, error) {
	for {
		if r.inMember {
			err := skipBlankLines(r.ur)
			if err == nil {
				return -1, nil
			}
			if err != io.EOF {
				return 0, fmt.Errorf("warc: gzip member at offset %d: %w", r.memberStart, gzipErr(err))
			}
			r.inMember = false
			r.end = r.pos()
		}
		start := r.pos()
		if _, err := r.br.Peek(1); err == io.EOF {
			return 0, io.EOF
		} else if err != nil {
			return 0, fmt.Errorf("warc: read at offset %d: %w", start, err)
		}
		if err := r.gz.Reset(r.br); err != nil {
			return 0, fmt.Errorf("warc: gzip member at offset %d: %w", start, gzipErr(err))
		}
		r.gz.Multistream(false)
		r.ur.Reset(r.gz)
		r.inMember, r.memberStart = true, start
		// Decide now whether the member holds a record: once any of it is
		// consumed, pos() (which counts compressed bytes) can no longer tell
		// a member's first record from a later one.
		if err := skipBlankLines(r.ur); err == nil {
			return start, nil
		} else if err != io.EOF {
			return 0, fmt.Errorf("warc: gzip member at offset %d: %w", start, gzipErr(err))
		}
		r.inMember = false
		r.end = r.pos()
	}
}

// gzipErr marks the errors of a gzip stream that simply stops as truncation.
func gzipErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %v", ErrTruncated, io.ErrUnexpectedEOF)
	}
	return err
}

// skipBlankLines passes over stray line ends between records, which some
// writers leave. It returns io.EOF at the end of the data.
func skipBlankLines(br *bufio.Reader) error {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return err
		}
		if b[0] != '\r' && b[0] != '\n' {
			return nil
		}
		br.Discard(1)
	}
}

// readRecord reads one record (version line, fields, empty line, block,
// CRLF CRLF) from br.
func readRecord(br *bufio.Reader) (*Record, error) {
	head, err := readHeaderBlock(br)
	if err != nil {
		return nil, err
	}
	version, fields, _ := bytes.Cut(head, []byte("\n"))
	version = bytes.TrimRight(version, "\r")
	if !bytes.HasPrefix(version, []byte("WARC/")) {
		return nil, fmt.Errorf("no WARC version line, found %q", truncateForError(version))
	}
	h, err := parseFields(fields)
	if err != nil {
		return nil, err
	}
	cl := h.Get(FieldContentLength)
	if cl == "" {
		return nil, fmt.Errorf("no %s field", FieldContentLength)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("bad %s %q", FieldContentLength, cl)
	}
	content, err := readN(br, n)
	if err != nil {
		return nil, fmt.Errorf("block of %d bytes ends after %d: %w", n, len(content), unexpectedEOF(err))
	}
	var tail [4]byte
	if k, err := io.ReadFull(br, tail[:]); err != nil {
		return nil, fmt.Errorf("record end after %d of 4 bytes: %w", k, unexpectedEOF(err))
	}
	if string(tail[:]) != "\r\n\r\n" {
		return nil, fmt.Errorf("block not followed by CRLF CRLF but %q (wrong Content-Length?)", tail[:])
	}
	return &Record{Header: h, Content: content}, nil
}

// readHeaderBlock returns the bytes up to and including the empty line that
// ends a record header, within maxHeaderBytes.
func readHeaderBlock(br *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(line) > maxLineBytes {
			return nil, fmt.Errorf("header line longer than %d bytes", maxLineBytes)
		}
		if err == io.EOF {
			if len(head) == 0 && len(line) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("header ends after %d bytes: %w", len(head)+len(line), io.ErrUnexpectedEOF)
		}
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		head = append(head, line...)
		if len(head) > maxHeaderBytes {
			return nil, fmt.Errorf("header longer than %d bytes", maxHeaderBytes)
		}
		if len(line) <= 2 && len(bytes.TrimRight(line, "\r\n")) == 0 {
			return head, nil
		}
	}
}

// unexpectedEOF turns the end of input in the middle of a record into
// io.ErrUnexpectedEOF, leaving other errors as they are.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readN reads exactly n bytes. It allocates as data arrives rather than
// trusting n up front, so a lying Content-Length costs no memory.
func readN(r io.Reader, n int64) ([]byte, error) {
	const chunk = 1 << 20
	buf := make([]byte, 0, min(n, chunk))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(n-int64(len(buf)), int64(cap(buf))+chunk))...)[:len(buf)]
		}
		k, err := r.Read(buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+k]
		if err != nil && int64(len(buf)) < n {
			return buf, err
		}
	}
	return buf, nil
}
