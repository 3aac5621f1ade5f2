package warc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var fileNameRE = regexp.MustCompile(`^crawl-\d{14}-\d{5}-[0-9a-f]{8}\.warc(\.gz)?$`)

// checkCapture asserts that recs, starting at recs[0], are capture c's
// records as WriteCapture writes them, and returns how many it consumed.
func checkCapture(t *testing.T, recs []*Record, c Capture, warcinfoID string) int {
	t.Helper()
	i := 0
	var req *Record
	if len(c.Request) > 0 {
		req = recs[i]
		i++
	}
	resp := recs[i]
	i++
	var meta *Record
	if len(c.Metadata) > 0 {
		meta = recs[i]
		i++
	}
	wantDate := formatDate(c.Date)
	for _, rec := range []*Record{req, resp, meta} {
		if rec == nil {
			continue
		}
		if err := VerifyDigests(rec); err != nil {
			t.Error(err)
		}
		for name, want := range map[string]string{
			FieldTargetURI:  c.TargetURI,
			FieldDate:       wantDate,
			FieldWarcinfoID: warcinfoID,
			FieldIPAddress:  c.IP,
		} {
			if got := rec.Header.Get(name); got != want {
				t.Errorf("%s record of %s: %s = %q, want %q", rec.Type(), c.TargetURI, name, got, want)
			}
		}
		if !regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`).MatchString(rec.Header.Get(FieldRecordID)) {
			t.Errorf("record ID %q is not a v4 UUID URN", rec.Header.Get(FieldRecordID))
		}
		if rec.Header.Get(FieldBlockDigest) == "" {
			t.Errorf("%s record has no block digest", rec.Type())
		}
	}
	respID := resp.Header.Get(FieldRecordID)
	if resp.Type() != TypeResponse || resp.Header.Get(FieldContentType) != ContentTypeHTTPResponse {
		t.Fatalf("record %d of capture %s: type %q content type %q, want response", i, c.TargetURI, resp.Type(), resp.Header.Get(FieldContentType))
	}
	if !bytes.Equal(resp.Payload(), c.Payload) {
		t.Errorf("response payload of %s differs (%d bytes, want %d)", c.TargetURI, len(resp.Payload()), len(c.Payload))
	}
	if !bytes.HasPrefix(resp.Content, c.ResponseHeader) {
		t.Errorf("response block of %s does not start with the response header", c.TargetURI)
	}
	if got := resp.Header.Get(FieldTruncated); got != c.Truncated {
		t.Errorf("WARC-Truncated = %q, want %q", got, c.Truncated)
	}
	if resp.Header.Get(FieldPayloadDigest) != sha1Digest(c.Payload) {
		t.Errorf("payload digest %q, want %q", resp.Header.Get(FieldPayloadDigest), sha1Digest(c.Payload))
	}
	if req != nil {
		if req.Type() != TypeRequest || req.Header.Get(FieldContentType) != ContentTypeHTTPRequest {
			t.Errorf("first record: type %q content type %q, want request", req.Type(), req.Header.Get(FieldContentType))
		}
		if !bytes.Equal(req.Content, c.Request) {
			t.Errorf("request block %q, want %q", req.Content, c.Request)
		}
		if got := req.Header.Get(FieldConcurrentTo); got != respID {
			t.Errorf("request WARC-Concurrent-To = %q, want response ID %q", got, respID)
		}
	}
	if meta != nil {
		if meta.Type() != TypeMetadata || meta.Header.Get(FieldContentType) != ContentTypeWarcFields {
			t.Errorf("last record: type %q content type %q, want metadata", meta.Type(), meta.Header.Get(FieldContentType))
		}
		if got := meta.Header.Get(FieldConcurrentTo); got != respID {
			t.Errorf("metadata WARC-Concurrent-To = %q, want response ID %q", got, respID)
		}
		fields, err := ParseFields(meta.Content)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(fields) != fmt.Sprint(Header(c.Metadata)) {
			t.Errorf("metadata fields %v, want %v", fields, c.Metadata)
		}
		if meta.Payload() != nil {
			t.Error("metadata record has a payload")
		}
	}
	return i
}

// resp returns the response record of capture c, whose records start recs.
func resp(recs []*Record, c Capture) *Record {
	if len(c.Request) > 0 {
		return recs[1]
	}
	return recs[0]
}

// checkWarcinfo asserts that rec starts the file at path and returns its ID.
func checkWarcinfo(t *testing.T, rec *Record, path string) string {
	t.Helper()
	if rec.Type() != TypeWarcinfo || rec.Offset != 0 {
		t.Fatalf("%s: first record is %q at %d, want warcinfo at 0", path, rec.Type(), rec.Offset)
	}
	if got := rec.Header.Get(FieldFilename); got != filepath.Base(path) {
		t.Errorf("WARC-Filename %q, want %q", got, filepath.Base(path))
	}
	if rec.Header.Get(FieldWarcinfoID) != "" {
		t.Error("warcinfo record names a warcinfo record")
	}
	if err := VerifyDigests(rec); err != nil {
		t.Error(err)
	}
	fields, err := ParseFields(rec.Content)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"software": "sonda-test/1", "operator": "ops@example.org", "description": "unit test",
		"format": "WARC File Format 1.1", "robots": "obey",
	} {
		if got := fields.Get(name); got != want {
			t.Errorf("warcinfo %s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"hostname", "conformsTo"} {
		if fields.Get(name) == "" {
			t.Errorf("warcinfo has no %s", name)
		}
	}
	return rec.Header.Get(FieldRecordID)
}

func mustWriter(t testing.TB, o WriterOptions) *Writer {
	t.Helper()
	w, err := NewWriter(o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func testOptions(dir string, uncompressed bool) WriterOptions {
	return WriterOptions{
		Dir: dir, Prefix: "crawl", Software: "sonda-test/1", Operator: "ops@example.org",
		Description: "unit test", Uncompressed: uncompressed,
	}
}

func TestRoundTripWithRotation(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions(dir, uncompressed)
			o.MaxFileSize = 40 << 10
			w := mustWriter(t, o)
			var captures []Capture
			var locs []Location
			for i := 0; i < 40; i++ {
				c := testCapture(i, 1000+i*300)
				loc, err := w.WriteCapture(c)
				if err != nil {
					t.Fatal(err)
				}
				captures = append(captures, c)
				locs = append(locs, loc)
				// A record can be read back while its file is still open.
				if i == 3 {
					if rec, err := ReadRecordAt(dir, loc); err != nil || rec.Type() != TypeResponse {
						t.Fatalf("ReadRecordAt on the open file: %v", err)
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files := warcFiles(t, dir)
			if len(files) < 3 {
				t.Fatalf("got %d files, want rotation into at least 3", len(files))
			}
			next := 0
			for _, path := range files {
				name := filepath.Base(path)
				if !fileNameRE.MatchString(name) || strings.HasSuffix(name, ".gz") == uncompressed {
					t.Errorf("file name %q does not match the naming scheme", name)
				}
				st, _ := os.Stat(path)
				recs := readAll(t, path)
				infoID := checkWarcinfo(t, recs[0], path)
				recs = recs[1:]
				n := 0
				for len(recs) > 0 {
					if next >= len(captures) {
						t.Fatalf("%s: more records than captures", path)
					}
					for _, r := range recs {
						if r.Offset < 0 {
							t.Fatalf("%s: record %s at unknown offset", path, r.Header.Get(FieldRecordID))
						}
					}
					used := checkCapture(t, recs, captures[next], infoID)
					// The Location names this file and reads back the response.
					loc := locs[next]
					if loc.File != name {
						t.Errorf("capture %d: location file %q, want %q", next, loc.File, name)
					}
					if id := resp(recs, captures[next]).Header.Get(FieldRecordID); loc.RecordID != id {
						t.Errorf("capture %d: location record ID %q, want the response's %q", next, loc.RecordID, id)
					}
					rec, err := ReadRecordAt(dir, loc)
					if err != nil {
						t.Fatal(err)
					}
					if want := resp(recs, captures[next]); rec.Header.Get(FieldRecordID) != want.Header.Get(FieldRecordID) || rec.Offset != want.Offset {
						t.Errorf("capture %d: ReadRecordAt(%+v) gave record %s at %d, want %s at %d", next, loc,
							rec.Header.Get(FieldRecordID), rec.Offset, want.Header.Get(FieldRecordID), want.Offset)
					}
					recs = recs[used:]
					next++
					n++
				}
				if n == 0 || (n > 1 && st.Size() > o.MaxFileSize) {
					t.Errorf("%s: %d bytes with %d captures; want 1 or more captures within %d bytes", path, st.Size(), n, o.MaxFileSize)
				}
			}
			if next != len(captures) {
				t.Errorf("read back %d captures, wrote %d", next, len(captures))
			}
		})
	}
}

func TestCaptureLargerThanMaxFileSizeGetsItsOwnFile(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, false)
	o.MaxFileSize = 4 << 10
	w := mustWriter(t, o)
	small, big := testCapture(0, 100), testCapture(1, 64<<10)
	big.Payload = make([]byte, 64<<10)
	rand.NewChaCha8([32]byte{1}).Read(big.Payload) // incompressible
	for _, c := range []Capture{small, big, small} {
		if _, err := w.WriteCapture(c); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	files := warcFiles(t, dir)
	if len(files) != 3 {
		t.Fatalf("got %d files, want 3 (small, big alone, small)", len(files))
	}
	recs := readAll(t, files[1])
	if len(recs) != 1+3 || !bytes.Equal(recs[2].Payload(), big.Payload) {
		t.Errorf("middle file has %d records, want warcinfo + the big capture", len(recs))
	}
}

func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, false)
	o.MaxFileSize = 64 << 10
	w := mustWriter(t, o)
	const workers, each = 6, 40
	locs := make([][]Location, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c := testCapture(g*1000+i, 500+i*50)
				c.Request = []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				c.Metadata = []Field{{"worker", fmt.Sprint(g)}}
				loc, err := w.WriteCapture(c)
				if err != nil {
					t.Error(err)
					return
				}
				locs[g] = append(locs[g], loc)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	responses := map[string]bool{} // file@offset
	captures := 0
	for _, path := range warcFiles(t, dir) {
		recs := readAll(t, path)
		info := recs[0].Header.Get(FieldRecordID)
		recs = recs[1:]
		if len(recs)%3 != 0 {
			t.Fatalf("%s: %d records after warcinfo, not whole captures", path, len(recs))
		}
		for i := 0; i < len(recs); i += 3 {
			req, resp, meta := recs[i], recs[i+1], recs[i+2]
			id := resp.Header.Get(FieldRecordID)
			if req.Type() != TypeRequest || resp.Type() != TypeResponse || meta.Type() != TypeMetadata ||
				req.Header.Get(FieldConcurrentTo) != id || meta.Header.Get(FieldConcurrentTo) != id ||
				req.Header.Get(FieldTargetURI) != resp.Header.Get(FieldTargetURI) {
				t.Fatalf("%s: records %d-%d are not one capture", path, i+1, i+3)
			}
			for _, r := range recs[i : i+3] {
				if r.Header.Get(FieldWarcinfoID) != info {
					t.Errorf("%s: record names warcinfo %s, file's is %s", path, r.Header.Get(FieldWarcinfoID), info)
				}
			}
			if err := VerifyDigests(resp); err != nil {
				t.Error(err)
			}
			responses[fmt.Sprintf("%s@%d", filepath.Base(path), resp.Offset)] = true
			captures++
		}
	}
	if captures != workers*each {
		t.Errorf("read %d captures, wrote %d", captures, workers*each)
	}
	for _, ls := range locs {
		for _, loc := range ls {
			if !responses[fmt.Sprintf("%s@%d", loc.File, loc.Offset)] {
				t.Errorf("location %+v is not the offset of a response record", loc)
			}
		}
	}
}

func TestWriteCaptureRejectsBadInput(t *testing.T) {
	w := mustWriter(t, testOptions(t.TempDir(), false))
	defer w.Close()
	good := testCapture(0, 10)
	for _, tc := range []struct {
		name   string
		modify func(*Capture)
		want   string
	}{
		{"empty URI", func(c *Capture) { c.TargetURI = "" }, "empty target URI"},
		{"space in URI", func(c *Capture) { c.TargetURI = "http://x/a b" }, "space or control character at byte 10"},
		{"newline in URI", func(c *Capture) { c.TargetURI = "http://x/\r\nWARC-Type: x" }, "control character"},
		{"no response", func(c *Capture) { c.ResponseHeader = nil }, "empty response header"},
		{"bad IP", func(c *Capture) { c.IP = "300.1.1.1" }, `IP address "300.1.1.1"`},
		{"bad truncation", func(c *Capture) { c.Truncated = "too long" }, "not a token"},
		{"bad metadata name", func(c *Capture) { c.Metadata = []Field{{"a: b", "c"}} }, `metadata name "a: b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.modify(&c)
			_, err := w.WriteCapture(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "warc: capture") {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestWriteCaptureNormalizes(t *testing.T) {
	dir := t.TempDir()
	w := mustWriter(t, testOptions(dir, true))
	c := Capture{
		TargetURI:      "http://x.example/",
		IP:             "::ffff:10.1.2.3",
		ResponseHeader: []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain"),
		Payload:        []byte("hello"),
		Metadata:       []Field{{"outlink", "http://a/\r\nWARC-Type: evil"}},
	}
	before := time.Now().Add(-time.Second)
	if _, err := w.WriteCapture(c); err != nil {
		t.Fatal(err)
	}
	w.Close()
	recs := readAll(t, warcFiles(t, dir)[0])
	resp, meta := recs[1], recs[2]
	want := "HTTP/1.1 200 OK\r\nX-Sonda-Orig-Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\nhello"
	if string(resp.Content) != want {
		t.Errorf("response block %q, want %q", resp.Content, want)
	}
	if got := resp.Header.Get(FieldIPAddress); got != "10.1.2.3" {
		t.Errorf("IP %q, want the unmapped IPv4 address", got)
	}
	if d, err := ParseDate(resp.Header.Get(FieldDate)); err != nil || d.Before(before) {
		t.Errorf("zero Date became %q (%v), want now", resp.Header.Get(FieldDate), err)
	}
	if got := string(meta.Content); got != "outlink: http://a/  WARC-Type: evil\r\n" {
		t.Errorf("metadata block %q: line break not neutralized", got)
	}
}

func TestHTTPHeaderBlock(t *testing.T) {
	for _, tc := range []struct {
		in       string
		response bool
		want     string
	}{
		{"HTTP/1.1 200 OK\r\nA: b\r\n\r\n", true, "HTTP/1.1 200 OK\r\nA: b\r\n\r\n"},
		{"HTTP/1.1 200 OK\r\nA: b\r\n", true, "HTTP/1.1 200 OK\r\nA: b\r\n\r\n"},
		{"HTTP/1.1 200 OK\r\nA: b", true, "HTTP/1.1 200 OK\r\nA: b\r\n\r\n"},
		{"HTTP/1.0 200 OK\n\n", true, "HTTP/1.0 200 OK\n\n"},
		{"HTTP/1.1 200 OK\r\ntransfer-encoding : chunked\r\n\r\n", true, "HTTP/1.1 200 OK\r\nX-Sonda-Orig-transfer-encoding : chunked\r\n\r\n"},
		{"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", false, "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"},
		// Only the header block is searched, not a body that follows.
		{"HTTP/1.1 200 OK\r\n\r\nTransfer-Encoding: x\r\n\r\n", true, "HTTP/1.1 200 OK\r\n\r\nTransfer-Encoding: x\r\n\r\n"},
		{"Transfer-Encoding: chunked\r\n\r\n", true, "Transfer-Encoding: chunked\r\n\r\n"}, // a start line is never renamed
	} {
		if got := string(httpHeaderBlock([]byte(tc.in), tc.response)); got != tc.want {
			t.Errorf("httpHeaderBlock(%q, %v) = %q, want %q", tc.in, tc.response, got, tc.want)
		}
	}
}

func TestWriteRecord(t *testing.T) {
	dir := t.TempDir()
	w := mustWriter(t, testOptions(dir, false))
	refersTo := NewRecordID()
	resource := &Record{Header: Header{
		{FieldType, TypeResource}, {FieldTargetURI, "dns:example.org"}, {FieldContentType, "text/dns"},
		{FieldContentLength, "999"}, // wrong on purpose: the writer sets it
	}, Content: []byte("20240101000000\nexample.org. 300 IN A 10.0.0.1\n")}
	revisit := &Record{Header: Header{
		{FieldType, TypeRevisit}, {FieldTargetURI, "http://x/"}, {FieldRefersTo, refersTo},
		{FieldProfile, "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"},
		{FieldPayloadDigest, "sha1:AIKLJM2V2EOKR4WOIWUWRQTEMUN57P4D"},
		{FieldContentType, ContentTypeHTTPResponse}, {FieldTruncated, "length"},
	}, Content: []byte("HTTP/1.1 200 OK\r\n\r\n")}
	before := fmt.Sprint(resource.Header)
	var locs []Location
	for _, r := range []*Record{resource, revisit} {
		loc, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	if fmt.Sprint(resource.Header) != before {
		t.Error("WriteRecord modified its argument")
	}
	for _, bad := range []*Record{
		{Header: Header{{FieldTargetURI, "http://x/"}}},
		{Header: Header{{FieldType, "resource"}, {"Bad Name", "x"}}},
		{Header: Header{{FieldType, "resource"}, {"X-Ok", "line\nbreak"}}},
	} {
		if _, err := w.WriteRecord(bad); err == nil || !strings.HasPrefix(err.Error(), "warc: write") {
			t.Errorf("WriteRecord(%v) error = %v, want a warc: write error", bad.Header, err)
		}
	}
	w.Close()
	recs := readAll(t, warcFiles(t, dir)[0])
	if len(recs) != 3 {
		t.Fatalf("got %d records, want warcinfo + 2", len(recs))
	}
	info := recs[0].Header.Get(FieldRecordID)
	for i, rec := range recs[1:] {
		if err := VerifyDigests(rec); err != nil {
			t.Error(err)
		}
		if rec.Header.Get(FieldWarcinfoID) != info || rec.Header.Get(FieldRecordID) == "" || rec.Header.Get(FieldDate) == "" {
			t.Errorf("record %d lacks a filled-in field: %v", i, rec.Header)
		}
		if got, err := ReadRecordAt(dir, locs[i]); err != nil || got.Header.Get(FieldRecordID) != rec.Header.Get(FieldRecordID) || locs[i].RecordID != rec.Header.Get(FieldRecordID) {
			t.Errorf("ReadRecordAt(%+v) = %v, %v", locs[i], got, err)
		}
	}
	if got := recs[1].Header.Get(FieldContentLength); got != fmt.Sprint(len(resource.Content)) {
		t.Errorf("Content-Length %s, want %d", got, len(resource.Content))
	}
	if got := recs[1].Header.Get(FieldPayloadDigest); got != sha1Digest(resource.Content) {
		t.Errorf("resource payload digest %q, want the block's", got)
	}
	if got := recs[2].Header.Get(FieldPayloadDigest); got != "sha1:AIKLJM2V2EOKR4WOIWUWRQTEMUN57P4D" {
		t.Errorf("revisit payload digest %q was replaced", got)
	}
}

func TestWriterLifecycle(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, false)
	w := mustWriter(t, o)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := w.WriteCapture(testCapture(0, 10)); err == nil {
		t.Error("WriteCapture after Close succeeded")
	}
	// A second writer (a resumed crawl) starts a new file, numbered after
	// the existing ones.
	w2, err := NewWriter(o)
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	files := warcFiles(t, dir)
	if len(files) != 2 || !strings.Contains(files[0], "-00001-") || !strings.Contains(files[1], "-00002-") {
		t.Errorf("files %v, want serials 00001 and 00002", files)
	}

	for _, bad := range []WriterOptions{{}, {Dir: dir, Prefix: "a/b"}, {Dir: dir, Prefix: "a b"}} {
		if _, err := NewWriter(bad); err == nil {
			t.Errorf("NewWriter(%+v) succeeded", bad)
		}
	}
}

func TestWriteFailureBreaksWriter(t *testing.T) {
	dir := t.TempDir()
	w := mustWriter(t, testOptions(dir, false))
	if _, err := w.WriteCapture(testCapture(1, 100)); err != nil {
		t.Fatal(err)
	}
	// Close the descriptor under the writer: the next write fails, and so
	// does the truncation meant to undo it, which must break the writer.
	w.f.Close()
	if _, err := w.WriteCapture(testCapture(2, 100)); err == nil || !strings.Contains(err.Error(), "warc: write") {
		t.Fatalf("write to a closed file: %v", err)
	}
	if _, err := w.WriteCapture(testCapture(3, 100)); err == nil || !strings.Contains(err.Error(), "cutting off the partial record also failed") {
		t.Errorf("writer not broken after a failed rollback: %v", err)
	}
}

func TestLastSerial(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"crawl-20240101000000-00007-abcd0123.warc.gz",
		"crawl-20240101000000-00012-abcd0123.warc.gz.open",
		"crawl-x-00099-abcd0123.warc.gz",        // not a timestamp
		"other-20240101000000-00500-aa.warc.gz", // other prefix
		"crawl-20240101000000-junk-aa.warc.gz",
	} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	if n, err := lastSerial(dir, "crawl"); err != nil || n != 12 {
		t.Errorf("lastSerial = %d, %v; want 12", n, err)
	}
}
