package warc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/sonda-search/sonda/internal/crashpoint"
)

// DefaultMaxFileSize is the rotation size used when WriterOptions.MaxFileSize
// is zero: the 1 GB the WARC specification (Annex B) recommends.
const DefaultMaxFileSize = 1 << 30

// gzipLevel was chosen with BenchmarkGzipLevel: on 20 KB HTML-like
// payloads klauspost's BestSpeed compresses about 1.5 times as fast as the
// default level (~285 against ~185 MB per CPU-second) for output 12% larger
// (26.4% against 23.6% of the input). Compression is most of WriteCapture's
// cost and the crawler's whole pipeline shares two cores, so speed wins.
const gzipLevel = gzip.BestSpeed

// openSuffix marks a file that is still being written (see Durability).
const openSuffix = ".open"

// WriterOptions configures a Writer. The zero value of every field but Dir
// has a sensible default.
type WriterOptions struct {
	// Dir receives the files; it is created if missing.
	Dir string
	// Prefix starts every file name (default "sonda"). Files are named
	// PREFIX-YYYYMMDDHHMMSS-NNNNN-RANDOM.warc.gz.
	Prefix string
	// MaxFileSize is the size in bytes a file may reach before the writer
	// starts the next one (default DefaultMaxFileSize). A capture is never
	// split: one bigger than the limit goes alone into a file after the
	// warcinfo record.
	MaxFileSize int64
	// Software, Operator and Description go into the warcinfo record that
	// starts every file, together with the format, the host name and the
	// robots policy ("obey").
	Software, Operator, Description string
	// Uncompressed writes plain .warc files. By default (false) every record
	// is its own gzip member in a .warc.gz file, which standard tools expect
	// and which lets a single record be read from its Location.
	Uncompressed bool
}

// Location says where a record was written: enough to read it back alone
// with ReadRecordAt, or to build a CDX-style index.
type Location struct {
	// File is the base name of the WARC file, as it is named once finished
	// (without the ".open" suffix it carries while being written).
	File string
	// Offset and Length delimit the record in the file: its gzip member for
	// compressed files, the record itself for plain ones.
	Offset, Length int64
	// RecordID is the record's WARC-Record-ID, which a later revisit record
	// names in WARC-Refers-To.
	RecordID string
}

// Capture is one fetch, written as a request, a response and a metadata
// record, contiguously, sharing one WARC-Date and linked by
// WARC-Concurrent-To.
type Capture struct {
	// TargetURI is the URL fetched, already percent-encoded (no spaces).
	TargetURI string
	// Date is when the fetch began; zero means now.
	Date time.Time
	// IP is the server address the fetch connected to; empty if unknown.
	IP string
	// Request is the request header block as sent
	// ("GET /x HTTP/1.1\r\nHost: ...\r\n\r\n"); the request record is
	// omitted if it is empty.
	Request []byte
	// ResponseHeader is the status line and header lines received. A
	// missing final empty line is added. Because Payload is de-chunked, a
	// Transfer-Encoding line is renamed X-Sonda-Orig-Transfer-Encoding so
	// that replay tools do not try to de-chunk it again.
	ResponseHeader []byte
	// Payload is the entity body as received: content-encoded (gzip stays
	// gzip), transfer-decoded, possibly truncated.
	Payload []byte
	// Truncated is the WARC-Truncated reason ("length", "time",
	// "disconnect", "unspecified") when Payload is incomplete, else "".
	Truncated string
	// Metadata fields (outlinks, fetch timings, detected charset...) go into
	// a metadata record; it is omitted when Metadata is empty. Control
	// characters in values are replaced by spaces.
	Metadata []Field
}

// Writer appends records to size-rotated WARC files. Its methods are safe
// for concurrent use: records are serialized and compressed in the calling
// goroutine, so concurrent captures compress in parallel, and only the final
// write to the file is serialized.
type Writer struct {
	opts     WriterOptions
	ext      string
	hostname string

	mu     sync.Mutex
	f      *os.File
	name   string // final base name of the file being written
	size   int64  // bytes in the file
	after  int64  // size just after the file's warcinfo record
	infoID string // WARC-Record-ID of the file's warcinfo record
	gen    uint64 // incremented on every new file
	serial int    // serial of the file being written
	err    error  // sticky: once set, every write fails with it
}

var errClosed = errors.New("warc: writer is closed")

// NewWriter creates o.Dir if needed and opens the first file, so that a
// misconfigured directory is reported at start-up rather than at the first
// capture.
func NewWriter(o WriterOptions) (*Writer, error) {
	if o.Dir == "" {
		return nil, errors.New("warc: WriterOptions.Dir is empty")
	}
	if o.Prefix == "" {
		o.Prefix = "sonda"
	}
	if strings.ContainsAny(o.Prefix, `/\`) || strings.ContainsFunc(o.Prefix, func(r rune) bool { return r <= ' ' }) {
		return nil, fmt.Errorf("warc: prefix %q must not contain path separators or spaces", o.Prefix)
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: create directory: %w", err)
	}
	w := &Writer{opts: o, ext: ".warc.gz"}
	if o.Uncompressed {
		w.ext = ".warc"
	}
	w.hostname, _ = os.Hostname()
	last, err := lastSerial(o.Dir, o.Prefix)
	if err != nil {
		return nil, err
	}
	w.serial = last
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.openLocked(); err != nil {
		return nil, err
	}
	return w, nil
}

// lastSerial returns the highest serial among prefix's files in dir, so that
// a resumed crawl keeps numbering where the previous run stopped.
func lastSerial(dir, prefix string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("warc: list %s: %w", dir, err)
	}
	last := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix+"-")
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, "-", 3)
		if len(parts) < 3 || len(parts[0]) != 14 {
			continue
		}
		if n, err := strconv.Atoi(parts[1]); err == nil && n > last {
			last = n
		}
	}
	return last, nil
}

// WriteCapture writes c's records contiguously in one file, with a single
// write, and returns the Location of the response record.
func (w *Writer) WriteCapture(c Capture) (Location, error) {
	if err := checkTargetURI(c.TargetURI); err != nil {
		return Location{}, fmt.Errorf("warc: capture %q: %w", c.TargetURI, err)
	}
	if len(c.ResponseHeader) == 0 {
		return Location{}, fmt.Errorf("warc: capture %s: empty response header", c.TargetURI)
	}
	ip, err := normalizeIP(c.IP)
	if err != nil {
		return Location{}, fmt.Errorf("warc: capture %s: %w", c.TargetURI, err)
	}
	if c.Truncated != "" && !isToken(c.Truncated) {
		return Location{}, fmt.Errorf("warc: capture %s: truncation reason %q is not a token", c.TargetURI, c.Truncated)
	}
	for _, f := range c.Metadata {
		if !isToken(f.Name) {
			return Location{}, fmt.Errorf("warc: capture %s: metadata name %q is not a token", c.TargetURI, f.Name)
		}
	}
	if c.Date.IsZero() {
		c.Date = time.Now()
	}
	date := formatDate(c.Date)

	// Everything that does not depend on which file the capture lands in is
	// computed once, outside the retry loop in commit.
	respHead := httpHeaderBlock(c.ResponseHeader, true)
	respID := NewRecordID()
	respBlockDigest := sha1Digest(respHead, c.Payload)
	payloadDigest := sha1Digest(c.Payload)
	var reqHead []byte
	var reqID, reqDigest string
	if len(c.Request) > 0 {
		reqHead = httpHeaderBlock(c.Request, false)
		reqID = NewRecordID()
		reqDigest = sha1Digest(reqHead)
	}
	var meta []byte
	var metaID, metaDigest string
	if len(c.Metadata) > 0 {
		var mb bytes.Buffer
		for _, f := range c.Metadata {
			mb.WriteString(f.Name)
			mb.WriteString(": ")
			mb.WriteString(cleanFieldValue(f.Value))
			mb.WriteString("\r\n")
		}
		meta = mb.Bytes()
		metaID = NewRecordID()
		metaDigest = sha1Digest(meta)
	}

	return w.commit(respID, func(e *encoder, infoID string) (int64, int64) {
		common := func(h Header, typ, id string) Header {
			h = append(h,
				Field{FieldType, typ},
				Field{FieldRecordID, id},
				Field{FieldDate, date},
				Field{FieldTargetURI, c.TargetURI})
			if ip != "" {
				h = append(h, Field{FieldIPAddress, ip})
			}
			return append(h, Field{FieldWarcinfoID, infoID})
		}
		var h Header
		// Request and metadata records point at the response they belong to.
		linked := func(typ, id, contentType, digest string, block []byte) {
			h = common(h[:0], typ, id)
			h = append(h,
				Field{FieldConcurrentTo, respID},
				Field{FieldContentType, contentType},
				Field{FieldBlockDigest, digest})
			e.record(h, block)
		}
		if reqHead != nil {
			linked(TypeRequest, reqID, ContentTypeHTTPRequest, reqDigest, reqHead)
		}
		h = common(h[:0], TypeResponse, respID)
		if c.Truncated != "" {
			h = append(h, Field{FieldTruncated, c.Truncated})
		}
		h = append(h,
			Field{FieldContentType, ContentTypeHTTPResponse},
			Field{FieldBlockDigest, respBlockDigest},
			Field{FieldPayloadDigest, payloadDigest})
		off, n := e.record(h, respHead, c.Payload)
		if meta != nil {
			linked(TypeMetadata, metaID, ContentTypeWarcFields, metaDigest, meta)
		}
		return off, n
	})
}

// WriteRecord writes one record as given, filling in what it lacks:
// WARC-Record-ID, WARC-Date (now), WARC-Warcinfo-ID (except on warcinfo
// records), WARC-Block-Digest and, where the record type defines a payload,
// WARC-Payload-Digest. Content-Length is always set from r.Content. The
// record's WARC-Type is required; r is not modified.
func (w *Writer) WriteRecord(r *Record) (Location, error) {
	typ := r.Header.Get(FieldType)
	if !isToken(typ) {
		return Location{}, fmt.Errorf("warc: write record: %s %q is missing or not a token", FieldType, typ)
	}
	for _, f := range r.Header {
		if err := checkField(f); err != nil {
			return Location{}, fmt.Errorf("warc: write %s record: %w", typ, err)
		}
	}
	h := make(Header, 0, len(r.Header)+6)
	for _, f := range r.Header {
		if !strings.EqualFold(f.Name, FieldContentLength) {
			h = append(h, f)
		}
	}
	if h.Get(FieldRecordID) == "" {
		h = append(h, Field{FieldRecordID, NewRecordID()})
	}
	if h.Get(FieldDate) == "" {
		h = append(h, Field{FieldDate, formatDate(time.Now())})
	}
	if h.Get(FieldBlockDigest) == "" {
		h = append(h, Field{FieldBlockDigest, sha1Digest(r.Content)})
	}
	if h.Get(FieldPayloadDigest) == "" {
		if p := (&Record{Header: h, Content: r.Content}).Payload(); p != nil {
			h = append(h, Field{FieldPayloadDigest, sha1Digest(p)})
		}
	}
	needInfo := !strings.EqualFold(typ, TypeWarcinfo) && h.Get(FieldWarcinfoID) == ""
	return w.commit(h.Get(FieldRecordID), func(e *encoder, infoID string) (int64, int64) {
		hh := h
		if needInfo {
			hh = append(h[:len(h):len(h)], Field{FieldWarcinfoID, infoID})
		}
		return e.record(hh, r.Content)
	})
}

// commit serializes records with build and appends them to the current
// file with one write. build receives the WARC-Record-ID of the file's
// warcinfo record and returns the offset and length, within what it
// encoded, of the record whose Location the caller wants.
//
// build runs without the lock so that goroutines compress in parallel. If
// the file changes meanwhile (rotation), or the bytes would overflow the
// file, the capture is encoded again for the next file: records name their
// file's warcinfo record, and a capture is never split across files.
func (w *Writer) commit(id string, build func(e *encoder, infoID string) (off, n int64)) (Location, error) {
	e := getEncoder(!w.opts.Uncompressed)
	defer putEncoder(e)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.err != nil {
			return Location{}, w.err
		}
		gen, infoID := w.gen, w.infoID
		w.mu.Unlock()
		e.reset()
		off, n := build(e, infoID)
		w.mu.Lock()
		if w.err != nil {
			return Location{}, w.err
		}
		if gen != w.gen {
			continue
		}
		if w.size > w.after && w.size+int64(e.buf.Len()) > w.opts.MaxFileSize {
			if err := w.rotateLocked(); err != nil {
				w.err = err
				return Location{}, err
			}
			continue
		}
		loc := Location{File: w.name, Offset: w.size + off, Length: n, RecordID: id}
		if err := w.writeLocked(e.buf.Bytes()); err != nil {
			return Location{}, err
		}
		return loc, nil
	}
}

// writeLocked appends b with a single write call (the unit a kill can tear).
// A failed write is cut off again so the file stays a sequence of whole
// records; if that fails too the writer is broken for good.
func (w *Writer) writeLocked(b []byte) error {
	if crashpoint.Armed("warc.write") { // a kill tears the record
		w.f.Write(b[:len(b)/2])
		crashpoint.Kill()
	}
	_, err := w.f.Write(b)
	if err == nil {
		w.size += int64(len(b))
		crashpoint.Here("warc.written")
		return nil
	}
	err = fmt.Errorf("warc: write %s: %w", w.name, err)
	if terr := w.f.Truncate(w.size); terr != nil {
		w.err = fmt.Errorf("%w; cutting off the partial record also failed: %v", err, terr)
		return w.err
	}
	return err
}

// openLocked starts a new file and writes its warcinfo record.
func (w *Writer) openLocked() error {
	now := time.Now().UTC()
	var rnd [4]byte
	rand.Read(rnd[:])
	w.serial++
	name := fmt.Sprintf("%s-%s-%05d-%s%s", w.opts.Prefix, now.Format("20060102150405"), w.serial, hex.EncodeToString(rnd[:]), w.ext)
	path := filepath.Join(w.opts.Dir, name+openSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("warc: create %s: %w", path, err)
	}
	infoID := NewRecordID()
	var block bytes.Buffer
	appendFields(&block, w.warcinfoFields())
	h := Header{
		{FieldType, TypeWarcinfo},
		{FieldRecordID, infoID},
		{FieldDate, formatDate(now)},
		{FieldFilename, name},
		{FieldContentType, ContentTypeWarcFields},
		{FieldBlockDigest, sha1Digest(block.Bytes())},
	}
	e := getEncoder(!w.opts.Uncompressed)
	defer putEncoder(e)
	e.record(h, block.Bytes())
	crashpoint.Here("warc.create")
	if _, err := f.Write(e.buf.Bytes()); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("warc: write warcinfo to %s: %w", path, err)
	}
	w.f, w.name, w.infoID = f, name, infoID
	w.size = int64(e.buf.Len())
	w.after = w.size
	w.gen++
	return nil
}

func (w *Writer) warcinfoFields() []Field {
	fs := []Field{
		{"software", w.opts.Software},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{"hostname", w.hostname},
		{"robots", "obey"},
		{"operator", w.opts.Operator},
		{"description", w.opts.Description},
	}
	out := fs[:0]
	for _, f := range fs {
		if f.Value = cleanFieldValue(f.Value); f.Value != "" {
			out = append(out, f)
		}
	}
	return out
}

// finishLocked makes the current file durable and gives it its final name.
func (w *Writer) finishLocked() error {
	open := filepath.Join(w.opts.Dir, w.name+openSuffix)
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return fmt.Errorf("warc: sync %s: %w", open, err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("warc: close %s: %w", open, err)
	}
	w.f = nil
	crashpoint.Here("warc.finish")
	if err := os.Rename(open, filepath.Join(w.opts.Dir, w.name)); err != nil {
		return fmt.Errorf("warc: finish %s: %w", open, err)
	}
	return syncDir(w.opts.Dir)
}

func (w *Writer) rotateLocked() error {
	if err := w.finishLocked(); err != nil {
		return err
	}
	return w.openLocked()
}

// Sync flushes the file being written to stable storage, making every
// capture written so far survive a power failure, not only a process kill.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", w.name, err)
	}
	return nil
}

// Close finishes the current file (fsync, then rename to drop ".open").
// Writes after Close fail; a second Close returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == errClosed {
		return nil
	}
	if w.f == nil { // a failed rotation left no file open
		err := w.err
		w.err = errClosed
		return err
	}
	err := w.finishLocked()
	w.err = errClosed
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("warc: sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("warc: sync directory %s: %w", dir, err)
	}
	return nil
}

// checkTargetURI rejects what would break the header line or the URI
// grammar: emptiness, whitespace and control characters.
func checkTargetURI(u string) error {
	if u == "" {
		return errors.New("empty target URI")
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= ' ' || u[i] == 0x7f {
			return fmt.Errorf("target URI has a space or control character at byte %d", i)
		}
	}
	return nil
}

// normalizeIP returns the address in the form WARC-IP-Address wants (dotted
// quad, or RFC 4291 text for IPv6, without zone), or "" for "".
func normalizeIP(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", fmt.Errorf("IP address %q: %w", s, err)
	}
	return a.Unmap().WithZone("").String(), nil
}

// httpHeaderBlock makes head a complete HTTP header block ending in an empty
// line. For responses it also renames Transfer-Encoding (see
// Capture.ResponseHeader). head is copied only when it has to change.
func httpHeaderBlock(head []byte, response bool) []byte {
	out := head
	if response {
		if i := headerLineIndex(head, "transfer-encoding"); i >= 0 {
			out = make([]byte, 0, len(head)+32)
			out = append(out, head[:i]...)
			out = append(out, "X-Sonda-Orig-"...)
			out = append(out, head[i:]...)
		}
	}
	switch {
	case bytes.HasSuffix(out, []byte("\r\n\r\n")) || bytes.HasSuffix(out, []byte("\n\n")):
		return out
	case bytes.HasSuffix(out, []byte("\n")):
		return append(out[:len(out):len(out)], "\r\n"...)
	}
	return append(out[:len(out):len(out)], "\r\n\r\n"...)
}

// headerLineIndex returns the offset of the first header line (after the
// start line) whose field name is name, compared case-insensitively, or -1.
func headerLineIndex(head []byte, name string) int {
	i := bytes.IndexByte(head, '\n') + 1
	for i > 0 && i < len(head) {
		line := head[i:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if n, _, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(bytes.TrimSpace(n)), name) {
			return i
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break // end of the header block
		}
		i += len(line) + 1
	}
	return -1
}

// encoder serializes records into buf, each as its own gzip member when
// compressing. Encoders are pooled. The gzip state (about 600 KB with its window) is
// pooled apart and taken only while a record is compressed: an encoder is held from
// its capture's encoding until its bytes are written, through the wait for the
// writer's lock, and with hundreds of fetch workers waiting there, each with its own
// gzip state, the waiting states were 60–100 MB of a crawl's Go heap (2026-11-27).
type encoder struct {
	buf      bytes.Buffer
	head     bytes.Buffer
	compress bool
}

var (
	encoders    = sync.Pool{New: func() any { return new(encoder) }}
	gzipWriters = sync.Pool{New: func() any {
		gz, _ := gzip.NewWriterLevel(nil, gzipLevel) // the level is a valid constant
		return gz
	}}
)

// getEncoder returns an encoder with an empty buffer.
func getEncoder(compress bool) *encoder {
	e := encoders.Get().(*encoder)
	e.compress = compress
	e.buf.Reset()
	return e
}

func putEncoder(e *encoder) {
	if e.buf.Cap() > 16<<20 {
		return // let a huge capture's buffer go rather than pin it
	}
	encoders.Put(e)
}

func (e *encoder) reset() { e.buf.Reset() }

// record appends one record (header, empty line, block parts, CRLF CRLF)
// and returns its offset and length in e.buf. Content-Length is appended to
// h here, from the parts.
func (e *encoder) record(h Header, block ...[]byte) (off, n int64) {
	var size int
	for _, p := range block {
		size += len(p)
	}
	e.head.Reset()
	e.head.WriteString("WARC/1.1\r\n")
	appendFields(&e.head, h)
	e.head.WriteString(FieldContentLength + ": ")
	e.head.WriteString(strconv.Itoa(size))
	e.head.WriteString("\r\n\r\n")

	start := e.buf.Len()
	if !e.compress {
		e.buf.Write(e.head.Bytes())
		for _, p := range block {
			e.buf.Write(p)
		}
		e.buf.WriteString("\r\n\r\n")
	} else {
		// Writes to a bytes.Buffer cannot fail, so neither can these.
		gz := gzipWriters.Get().(*gzip.Writer)
		gz.Reset(&e.buf)
		gz.Write(e.head.Bytes())
		for _, p := range block {
			gz.Write(p)
		}
		gz.Write([]byte("\r\n\r\n"))
		gz.Close()
		gz.Reset(nil) // drop the reference to e.buf before pooling it
		gzipWriters.Put(gz)
	}
	return int64(start), int64(e.buf.Len() - start)
}
