package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openFileBytes returns the name and content of the single ".open" file in dir.
func openFileBytes(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*"+openSuffix))
	if len(matches) != 1 {
		t.Fatalf("want one open file in %s, found %v", dir, matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(matches[0]), data
}

// countRecords returns how many records data holds, failing on any error.
func countRecords(t *testing.T, data []byte) int {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, err := r.Next(); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecoverEveryTornTail cuts a file at every byte of its last capture, as
// a kill during that capture's write could, and checks that Recover keeps
// exactly the captures before it. Cuts earlier in the file are sampled.
func TestRecoverEveryTornTail(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			src := t.TempDir()
			w := mustWriter(t, testOptions(src, uncompressed))
			_, data := openFileBytes(t, src)
			infoEnd := len(data)
			for _, i := range []int{0, 2, 4} { // the last capture has all three records
				_, data = openFileBytes(t, src)
				if _, err := w.WriteCapture(testCapture(i, 300)); err != nil {
					t.Fatal(err)
				}
			}
			before := len(data)
			wantBefore := countRecords(t, data)
			name, full := openFileBytes(t, src)
			final := strings.TrimSuffix(name, openSuffix)
			wantFull := countRecords(t, full)

			// Every cut is checked in memory through completePrefix, which
			// decides what Recover keeps; a sample also goes through Recover
			// on disk (each costs two fsyncs).
			dir := t.TempDir()
			for cut := 0; cut <= len(full); cut++ {
				if cut < before && cut%61 != 0 && cut != infoEnd-1 && cut != infoEnd {
					continue
				}
				_, keep, _, err := completePrefix(bytes.NewReader(full[:cut]))
				if err != nil {
					t.Fatalf("cut at %d: %v", cut, err)
				}
				n := countRecords(t, full[:keep])
				switch {
				case cut < infoEnd:
					if keep != 0 {
						t.Fatalf("cut at %d inside warcinfo: keeps %d bytes", cut, keep)
					}
				case cut == len(full):
					if n != wantFull {
						t.Fatalf("uncut file: %d records kept, want %d", n, wantFull)
					}
				case cut >= before:
					// The request record may survive only with its response.
					if n != wantBefore && n != wantBefore+2 {
						t.Fatalf("cut at %d: %d records kept, want %d or %d", cut, n, wantBefore, wantBefore+2)
					}
				}
				switch {
				case cut%127 == 0, cut == infoEnd-1, cut == before, cut == before+1, cut == len(full)-1, cut == len(full):
				default:
					continue
				}
				os.WriteFile(filepath.Join(dir, name), full[:cut], 0o644)
				report, err := Recover(dir)
				if err != nil {
					t.Fatalf("cut at %d: %v", cut, err)
				}
				if len(report) != 1 {
					t.Fatalf("cut at %d: report %q, want one line", cut, report)
				}
				entries, _ := os.ReadDir(dir)
				if keep == 0 {
					if len(entries) != 0 || !strings.Contains(report[0], "removed") {
						t.Fatalf("cut at %d: %v left, report %q; want the file removed", cut, entries, report)
					}
					continue
				}
				if len(entries) != 1 || entries[0].Name() != final {
					t.Fatalf("cut at %d: directory holds %v, want %s", cut, entries, final)
				}
				got, _ := os.ReadFile(filepath.Join(dir, final))
				os.Remove(filepath.Join(dir, final))
				if !bytes.Equal(got, full[:keep]) {
					t.Fatalf("cut at %d: recovered %d bytes, want the first %d of the original", cut, len(got), keep)
				}
			}
		})
	}
}

func TestRecoverReports(t *testing.T) {
	if r, err := Recover(filepath.Join(t.TempDir(), "missing")); r != nil || err != nil {
		t.Errorf("missing dir: %q, %v", r, err)
	}
	dir := t.TempDir()
	w := mustWriter(t, testOptions(dir, false))
	if _, err := w.WriteCapture(testCapture(0, 100)); err != nil {
		t.Fatal(err)
	}
	// Abandon w as a kill would; add a torn copy and a finished file.
	name, data := openFileBytes(t, dir)
	torn := strings.Replace(name, "-00001-", "-00002-", 1)
	os.WriteFile(filepath.Join(dir, torn), data[:len(data)-10], 0o644)
	os.WriteFile(filepath.Join(dir, "done.warc.gz"), data, 0o644)
	report, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(report, "\n")
	for _, want := range []string{
		"warc: recovered " + strings.TrimSuffix(name, openSuffix) + ": 4 records, intact",
		"warc: recovered " + strings.TrimSuffix(torn, openSuffix) + ": 3 records kept,",
		"bytes of torn tail cut (warc: record at offset",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report %q lacks %q", got, want)
		}
	}
	if again, err := Recover(dir); len(again) != 0 || err != nil {
		t.Errorf("second Recover: %q, %v", again, err)
	}
}

// TestKillDuringWrites runs a writer in a child process, kills it with
// SIGKILL in the middle of writing, and checks that Recover keeps every
// capture the child saw WriteCapture return for.
func TestKillDuringWrites(t *testing.T) {
	if os.Getenv("SONDA_WARC_KILL_CHILD") != "" {
		t.Skip("running as the child")
	}
	for _, kills := range []int{50, 200, 450} {
		t.Run(fmt.Sprint(kills), func(t *testing.T) { killAfter(t, kills) })
	}
}

func killAfter(t *testing.T, acks int) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
	cmd.Env = append(os.Environ(), "SONDA_WARC_KILL_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[Location]bool{}
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(20 * time.Second)
	for len(acked) < acks && time.Now().Before(deadline) && sc.Scan() {
		var loc Location
		if json.Unmarshal(sc.Bytes(), &loc) == nil && loc.File != "" {
			acked[loc] = true
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if len(acked) < acks {
		t.Fatalf("child acknowledged only %d captures", len(acked))
	}

	report, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recovery: %q", report)
	found := map[Location]bool{}
	for _, path := range warcFiles(t, dir) {
		for _, rec := range readAll(t, path) {
			if err := VerifyDigests(rec); err != nil {
				t.Error(err)
			}
			if rec.Type() == TypeResponse {
				found[Location{File: filepath.Base(path), Offset: rec.Offset}] = true
			}
		}
	}
	for loc := range acked {
		if !found[Location{File: loc.File, Offset: loc.Offset}] {
			t.Errorf("acknowledged capture at %+v lost", loc)
		}
	}
}

// TestKillChild is the writer process of TestKillDuringWrites; it writes
// until killed and prints each capture's Location after WriteCapture returns.
func TestKillChild(t *testing.T) {
	dir := os.Getenv("SONDA_WARC_KILL_CHILD")
	if dir == "" {
		t.Skip("only run as TestKillDuringWrites' child")
	}
	o := testOptions(dir, false)
	o.MaxFileSize = 256 << 10 // rotate often, so kills also land near rotations
	w := mustWriter(t, o)
	enc := json.NewEncoder(os.Stdout)
	for i := 0; ; i++ {
		loc, err := w.WriteCapture(testCapture(i, 2000+i%5000))
		if err != nil {
			t.Fatal(err)
		}
		enc.Encode(loc)
	}
}
