package warc

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// The cross-check with warcio.js needs node and the warcio package:
//
//	npm install --prefix "$HOME/.cache/sonda/warcio" warcio@2.4.11
//
// The test looks for it in $SONDA_WARCIO_DIR, then in
// $HOME/.cache/sonda/warcio. It skips when either is missing, except under
// CI=true, where a missing tool is a failure.
func warcioDir(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(why string) {
		const how = `npm install --prefix "$HOME/.cache/sonda/warcio" warcio@2.4.11 (or set SONDA_WARCIO_DIR)`
		if os.Getenv("CI") == "true" {
			t.Fatalf("warcio.js cross-check cannot run: %s; install with: %s", why, how)
		}
		t.Skipf("warcio.js cross-check skipped: %s; install with: %s", why, how)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found")
	}
	dir = os.Getenv("SONDA_WARCIO_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "sonda", "warcio")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "warcio", "package.json")); err != nil {
		missing("no node_modules/warcio in " + dir)
	}
	return node, dir
}

type warcioRecord struct {
	File     string `json:"file"`
	Offset   int64  `json:"offset"`
	Length   int    `json:"length"`
	Declared int    `json:"declared"`
	Type     string `json:"type"`
	URI      string `json:"uri"`
	ID       string `json:"id"`
	Date     string `json:"date"`
	Block    string `json:"block"`
	Payload  string `json:"payload"`
	Status   int    `json:"status"`
}

// TestWarcioReadsOurFiles writes gzip (rotated) and plain files and has
// warcio.js read them: it must find every record we wrote, at the same
// offsets, with the same types, URIs and IDs, and agree with every digest.
func TestWarcioReadsOurFiles(t *testing.T) {
	node, warcio := warcioDir(t)
	dir := t.TempDir()
	var files []string
	for _, uncompressed := range []bool{false, true} {
		sub := filepath.Join(dir, map[bool]string{false: "gz", true: "plain"}[uncompressed])
		o := testOptions(sub, uncompressed)
		o.MaxFileSize = 24 << 10
		w := mustWriter(t, o)
		for i := range 12 {
			if _, err := w.WriteCapture(testCapture(i, 3000+i*100)); err != nil {
				t.Fatal(err)
			}
		}
		// A content-encoded body whose header said chunked, a redirect
		// with no body, and a resource record.
		var zipped bytes.Buffer
		zw := gzip.NewWriter(&zipped)
		zw.Write(htmlPayload(99, 5000))
		zw.Close()
		extra := []Capture{{
			TargetURI:      "https://example.org/zipped",
			ResponseHeader: []byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n"),
			Payload:        zipped.Bytes(),
		}, {
			TargetURI:      "http://example.org/moved",
			ResponseHeader: []byte("HTTP/1.1 301 Moved Permanently\r\nLocation: /new\r\n\r\n"),
		}}
		for _, c := range extra {
			if _, err := w.WriteCapture(c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.WriteRecord(&Record{Header: Header{{FieldType, TypeResource}, {FieldTargetURI, "urn:test:resource"}, {FieldContentType, "text/plain"}}, Content: []byte("a resource")}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, warcFiles(t, sub)...)
	}

	script, _ := filepath.Abs(filepath.Join("testdata", "warcio_check.cjs"))
	cmd := exec.Command(node, append([]string{script, warcio}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio.js failed: %v\n%s", err, stderr.String())
	}
	var theirs []warcioRecord
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r warcioRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad line from warcio_check.cjs: %q: %v", line, err)
		}
		theirs = append(theirs, r)
	}

	var ours []*Record
	var names []string
	for _, f := range files {
		for _, rec := range readAll(t, f) {
			ours = append(ours, rec)
			names = append(names, filepath.Base(f))
		}
	}
	if len(theirs) != len(ours) {
		t.Fatalf("warcio.js read %d records, we wrote %d", len(theirs), len(ours))
	}
	types := map[string]int{}
	for i, want := range ours {
		got := theirs[i]
		types[got.Type]++
		if got.File != names[i] || got.Offset != want.Offset || got.Type != want.Type() ||
			got.URI != want.Header.Get(FieldTargetURI) || got.ID != want.Header.Get(FieldRecordID) ||
			got.Date != want.Header.Get(FieldDate) || got.Length != len(want.Content) || got.Declared != len(want.Content) {
			t.Errorf("record %d: warcio.js saw %+v; we wrote %s %s at %s@%d", i, got, want.Type(), want.Header.Get(FieldRecordID), names[i], want.Offset)
		}
		if got.Block != "ok" {
			t.Errorf("record %d (%s %s): block digest %s", i, got.Type, got.URI, got.Block)
		}
		wantPayload := "absent"
		if want.Header.Get(FieldPayloadDigest) != "" {
			wantPayload = "ok"
		}
		if got.Payload != wantPayload {
			t.Errorf("record %d (%s %s): payload digest %s, want %s", i, got.Type, got.URI, got.Payload, wantPayload)
		}
		if want.Type() == TypeResponse {
			wantStatus := 200
			if strings.HasSuffix(got.URI, "/moved") {
				wantStatus = 301
			}
			if got.Status != wantStatus {
				t.Errorf("record %d: warcio.js parsed HTTP status %d, want %d", i, got.Status, wantStatus)
			}
		}
	}
	if types[TypeWarcinfo] < 3 || types[TypeRequest] == 0 || types[TypeResponse] == 0 || types[TypeMetadata] == 0 || types[TypeResource] != 2 {
		t.Errorf("record types seen by warcio.js: %v; want warcinfo (several files), request, response, metadata, resource", types)
	}
}

// TestWarcioReadsRecoveredFile damages a record in the middle of an
// abandoned file, recovers it, and has warcio.js read the result: it must
// pass over the filler and find every other record at its offset.
func TestWarcioReadsRecoveredFile(t *testing.T) {
	node, warcio := warcioDir(t)
	fx := newFlipFixture(t, false, 12)
	dir := t.TempDir()
	damaged := bytes.Clone(fx.data)
	mid := fx.recs[len(fx.recs)/2]
	damaged[(mid.start+mid.end)/2] ^= 0x40
	if err := os.WriteFile(filepath.Join(dir, fx.name), damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(dir); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, strings.TrimSuffix(fx.name, openSuffix))
	script, _ := filepath.Abs(filepath.Join("testdata", "warcio_check.cjs"))
	cmd := exec.Command(node, script, warcio, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio.js failed on the recovered file: %v\n%s", err, stderr.String())
	}
	seen := map[string]int64{} // record ID: offset
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r warcioRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad line from warcio_check.cjs: %q: %v", line, err)
		}
		if r.Block != "ok" {
			t.Errorf("record at %d: block digest %s", r.Offset, r.Block)
		}
		seen[r.ID] = r.Offset
	}
	for i, r := range fx.recs {
		at, ok := seen[r.id]
		switch {
		case r == mid:
			if ok {
				t.Errorf("warcio.js read the damaged record %s", r.id)
			}
		case !ok:
			t.Errorf("warcio.js did not read record %s at %d", r.id, r.start)
		case at != r.start && !(i > 0 && fx.recs[i-1] == mid && at == mid.start):
			// warcio.js counts the empty members before a record as its
			// start, so the record after the filler is placed there.
			t.Errorf("warcio.js read record %s at %d, want %d", r.id, at, r.start)
		}
	}
	if len(seen) != len(fx.recs)-1 {
		t.Errorf("warcio.js read %d records, want %d", len(seen), len(fx.recs)-1)
	}
}
