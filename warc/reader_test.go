package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// rawRecord builds a record by hand, independently of the writer.
func rawRecord(version, typ, content string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\n", version, typ, typ)
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s\r\n\r\n", len(content), content)
	return b.String()
}

func gz(parts ...string) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		w := gzip.NewWriter(&b)
		w.Write([]byte(p))
		w.Close()
	}
	return b.Bytes()
}

// cat returns a new slice holding a then b.
func cat(a, b []byte) []byte {
	return append(append([]byte(nil), a...), b...)
}

type readResult struct {
	types   []string
	offsets []int64
	err     error
}

func readBytes(t *testing.T, data []byte) readResult {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var res readResult
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return res
		}
		if err != nil {
			res.err = err
			if _, again := r.Next(); again != err {
				t.Errorf("error not sticky: %v then %v", err, again)
			}
			return res
		}
		res.types = append(res.types, rec.Type())
		res.offsets = append(res.offsets, rec.Offset)
	}
}

func TestReaderFormats(t *testing.T) {
	a := rawRecord("WARC/1.0", "warcinfo", "software: x\r\n")
	b := rawRecord("WARC/1.1", "resource", "hello", "WARC-Target-URI: file:///x")
	c := rawRecord("WARC/1.1", "metadata", "")
	la, lb := int64(len(a)), int64(len(b))
	gzA, gzB := int64(len(gz(a))), int64(len(gz(b)))
	for _, tc := range []struct {
		name    string
		data    []byte
		offsets []int64
	}{
		{"empty", nil, nil},
		{"plain", []byte(a + b + c), []int64{0, la, la + lb}},
		{"plain with stray line ends", []byte("\r\n" + a + "\n" + b + "\r\n\r\n" + c), []int64{2, la + 3, la + lb + 7}},
		{"gzip member per record", gz(a, b, c), []int64{0, gzA, gzA + gzB}},
		{"whole file one member", gz(a + b + c), []int64{0, -1, -1}},
		{"mixed members, empty member", gz(a+b, "", c), []int64{0, -1, int64(len(gz(a+b, "")))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readBytes(t, tc.data)
			if res.err != nil {
				t.Fatal(res.err)
			}
			if fmt.Sprint(res.offsets) != fmt.Sprint(tc.offsets) {
				t.Errorf("offsets %v, want %v", res.offsets, tc.offsets)
			}
		})
	}
}

func TestReaderContentAndFolding(t *testing.T) {
	data := "WARC/1.1\r\nWARC-Type: resource\r\nX-Long: first\r\n  second\r\n\tthird\r\ncontent-length:  3\r\n\r\nabc\r\n\r\n"
	r, _ := NewReader(strings.NewReader(data))
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Header.Get("x-long"); got != "first second third" {
		t.Errorf("folded value %q", got)
	}
	if string(rec.Content) != "abc" || string(rec.Payload()) != "abc" {
		t.Errorf("content %q payload %q", rec.Content, rec.Payload())
	}
}

func TestReaderErrors(t *testing.T) {
	good := rawRecord("WARC/1.1", "resource", "0123456789")
	gzGood := gz(good)
	long := "WARC/1.1\r\nX: " + strings.Repeat("a", maxLineBytes) + "\r\n\r\n"
	huge := "WARC/1.1\r\n" + strings.Repeat("X-Field: "+strings.Repeat("b", 1000)+"\r\n", maxHeaderBytes/1000+1)
	for _, tc := range []struct {
		name      string
		data      []byte
		records   int
		want      string
		truncated bool
	}{
		{"no version line", []byte("HTTP/1.1 200 OK\r\n\r\n"), 0, `record at offset 0: no WARC version line, found "HTTP/1.1 200 OK"`, false},
		{"no content length", []byte("WARC/1.1\r\nWARC-Type: x\r\n\r\n"), 0, "no Content-Length field", false},
		{"bad content length", []byte("WARC/1.1\r\nContent-Length: -4\r\n\r\n"), 0, `bad Content-Length "-4"`, false},
		{"field without colon", []byte("WARC/1.1\r\nnonsense\r\nContent-Length: 0\r\n\r\n\r\n\r\n"), 0, "fields line 1: no colon", false},
		{"length too short", []byte(strings.Replace(good, "Length: 10", "Length: 8", 1)), 0, "block not followed by CRLF CRLF", false},
		{"line too long", []byte(long), 0, "header line longer than", false},
		{"header too long", []byte(huge), 0, "header longer than", false},
		{"torn header", []byte(good + good[:20]), 1, fmt.Sprintf("record at offset %d: truncated: header ends after 20 bytes", len(good)), true},
		{"torn block", []byte(good + good[:len(good)-8]), 1, fmt.Sprintf("record at offset %d: truncated: block of 10 bytes ends after 6", len(good)), true},
		{"torn end", []byte(good + good[:len(good)-2]), 1, "record end after 2 of 4 bytes", true},
		{"torn gzip member", cat(gzGood, gzGood[:len(gzGood)-5]), 1, fmt.Sprintf("record at offset %d: gzip member: truncated", len(gzGood)), true},
		{"torn gzip header", cat(gzGood, gzGood[:6]), 1, fmt.Sprintf("gzip member at offset %d: truncated", len(gzGood)), true},
		{"garbage after gzip", cat(gzGood, []byte("garbage, not gzip")), 1, fmt.Sprintf("gzip member at offset %d: gzip: invalid header", len(gzGood)), false},
		{"corrupt gzip checksum", cat(gzGood[:len(gzGood)-8], []byte{1, 2, 3, 4, 5, 6, 7, 8}), 0, "record at offset 0: gzip member: gzip: invalid checksum", false},
		{"record split across members", gz(good[:30], good[30:]), 0, "continuing into the next gzip member is not supported", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readBytes(t, tc.data)
			if len(res.types) != tc.records {
				t.Errorf("read %d records before the error, want %d", len(res.types), tc.records)
			}
			if res.err == nil || !strings.Contains(res.err.Error(), tc.want) || !strings.HasPrefix(res.err.Error(), "warc: ") {
				t.Fatalf("error %v, want one containing %q", res.err, tc.want)
			}
			if errors.Is(res.err, ErrTruncated) != tc.truncated {
				t.Errorf("errors.Is(%v, ErrTruncated) = %v, want %v", res.err, !tc.truncated, tc.truncated)
			}
		})
	}
}

func TestReadRecordAtErrors(t *testing.T) {
	dir := t.TempDir()
	for _, loc := range []Location{
		{File: "", Offset: 0, Length: 10},
		{File: "../x.warc.gz", Offset: 0, Length: 10},
		{File: "missing.warc.gz", Offset: 0, Length: 10},
	} {
		if _, err := ReadRecordAt(dir, loc); err == nil {
			t.Errorf("ReadRecordAt(%+v) succeeded", loc)
		}
	}
}
