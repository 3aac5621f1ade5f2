package warc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic, must
// stop (no record is empty of input), and what it accepts must survive
// VerifyDigests and Payload without panicking either.
func FuzzReader(f *testing.F) {
	f.Add([]byte(rawRecord("WARC/1.1", "resource", "hello", "WARC-Block-Digest: sha1:AAAA")))
	f.Add(gz(rawRecord("WARC/1.0", "warcinfo", "a: b\r\n"), rawRecord("WARC/1.1", "metadata", "")))
	f.Add(gz(rawRecord("WARC/1.1", "response", "HTTP/1.1 200 OK\r\n\r\nx", "Content-Type: application/http")))
	f.Add([]byte("WARC/1.1\r\nContent-Length: 99999999999\r\n\r\n"))
	f.Add([]byte("WARC/1.1\r\n X: y\r\nContent-Length: 0\r\n\r\n\r\n\r\n"))
	dir := f.TempDir()
	w, err := NewWriter(testOptions(dir, false))
	if err != nil {
		f.Fatal(err)
	}
	w.WriteCapture(testCapture(0, 200))
	w.Close()
	for _, path := range warcFiles(f, dir) {
		data, _ := os.ReadFile(path)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err) // a bytes.Reader never fails to read
		}
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("%d records from %d bytes", i, len(data))
			}
			rec, err := r.Next()
			if err != nil {
				if err != io.EOF && err.Error() == "" {
					t.Fatal("empty error message")
				}
				break
			}
			VerifyDigests(rec)
			rec.Payload()
			ParseFields(rec.Content)
			ParseDate(rec.Header.Get(FieldDate))
		}
		for _, gz := range []bool{false, true} {
			s, err := scanFile(bytes.NewReader(data), int64(len(data)), gz, true)
			if err != nil {
				t.Fatalf("scanFile on in-memory data: %v", err)
			}
			// Damage is ordered, disjoint and before what is kept; only a
			// torn tail shortens the file.
			at := int64(0)
			for _, d := range s.damaged {
				if d.start < at || d.end <= d.start || d.end > s.keep {
					t.Fatalf("gz=%v: damage %+v after %d, keep %d", gz, d, at, s.keep)
				}
				at = d.end
			}
			if s.keep < 0 || s.keep > int64(len(data)) || (s.keep < int64(len(data))) != (s.torn != "") || s.records < 0 {
				t.Fatalf("gz=%v: keep %d of %d, torn %q, %d records", gz, s.keep, len(data), s.torn, s.records)
			}
		}
	})
}

// FuzzCaptureRoundTrip writes a capture built from arbitrary strings and
// checks that it is either rejected with an error or read back unchanged,
// with valid digests: no input may produce a file that reads differently.
func FuzzCaptureRoundTrip(f *testing.F) {
	f.Add("http://example.org/", "127.0.0.1", []byte("GET / HTTP/1.1\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\n"), []byte("body"), "", "outlink", "http://a/")
	f.Add("http://x/\r\nWARC-Type: y", "", []byte(nil), []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), []byte("\r\n\r\nWARC/1.1"), "time", "a", "\x00\r\n")
	f.Fuzz(func(t *testing.T, uri, ip string, req, respHead, payload []byte, truncated, metaName, metaValue string) {
		dir := t.TempDir()
		w, err := NewWriter(WriterOptions{Dir: dir, Uncompressed: len(payload)%2 == 1})
		if err != nil {
			t.Fatal(err)
		}
		c := Capture{
			TargetURI: uri, IP: ip, Date: time.Unix(1700000000, 0), Request: req,
			ResponseHeader: respHead, Payload: payload, Truncated: truncated,
		}
		if metaName != "" {
			c.Metadata = []Field{{metaName, metaValue}}
		}
		loc, err := w.WriteCapture(c)
		if cerr := w.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if err != nil {
			return // rejected input is fine; what matters is what is accepted
		}
		rec, err := ReadRecordAt(dir, loc)
		if err != nil {
			t.Fatalf("reading back %+v: %v", loc, err)
		}
		if err := VerifyDigests(rec); err != nil {
			t.Fatal(err)
		}
		if rec.Type() != TypeResponse || rec.Header.Get(FieldTargetURI) != uri || rec.Header.Get(FieldTruncated) != truncated {
			t.Fatalf("fields changed: %v", rec.Header)
		}
		if !bytes.HasSuffix(rec.Content, payload) {
			t.Fatalf("block %q does not end with payload %q", rec.Content, payload)
		}
		// The payload is what follows the first empty line of the block;
		// a header that already holds one splits differently, by design of
		// HTTP, so compare only when it does not.
		if bytes.Count(httpHeaderBlock(respHead, true), []byte("\n\r\n"))+bytes.Count(httpHeaderBlock(respHead, true), []byte("\n\n")) == 1 &&
			!bytes.Equal(rec.Payload(), payload) {
			t.Fatalf("payload %q, want %q", rec.Payload(), payload)
		}
		files := warcFiles(t, dir)
		if len(files) != 1 {
			t.Fatalf("files %v", files)
		}
		r, _ := OpenFile(files[0])
		defer r.Close()
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("whole file: %v", err)
				}
				break
			}
		}
	})
}
