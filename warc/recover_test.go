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
	"strconv"
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
				s, err := scanFile(bytes.NewReader(full[:cut]), int64(cut), !uncompressed, true)
				if err != nil {
					t.Fatalf("cut at %d: %v", cut, err)
				}
				if len(s.damaged) > 0 {
					t.Fatalf("cut at %d: a torn tail taken for damage: %+v", cut, s.damaged)
				}
				keep := s.keep
				if s.records == 0 {
					keep = 0
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
	// The deadline only bounds a child that stopped writing: at a load of 28 under -race
	// the child wrote 378 captures in the 20 s this once allowed (full run 43).
	deadline := time.Now().Add(3 * time.Minute)
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

// flipFixture is an abandoned ".open" file of several captures and the
// offsets and bytes of every record in it.
type flipFixture struct {
	name string
	data []byte
	recs []flipRecord
}

type flipRecord struct {
	start, end int64
	id         string
}

func newFlipFixture(t *testing.T, uncompressed bool, captures int) flipFixture {
	t.Helper()
	src := t.TempDir()
	w := mustWriter(t, testOptions(src, uncompressed))
	for i := range captures {
		if _, err := w.WriteCapture(testCapture(i, 400+i*37)); err != nil {
			t.Fatal(err)
		}
	}
	name, data := openFileBytes(t, src)
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var recs []flipRecord
	for {
		start := r.end
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, flipRecord{start: start, end: r.end, id: rec.Header.Get(FieldRecordID)})
	}
	return flipFixture{name: name, data: data, recs: recs}
}

// TestRecoverKeepsRecordsAroundDamage flips one byte at offsets all over an
// abandoned file and checks what Recover makes of it: the file keeps its
// length, every record the flip did not touch reads at its old offset (so
// the crawl database's Locations stay valid) and in sequence, and the
// damaged bytes are in the file the report names, exactly as they were.
func TestRecoverKeepsRecordsAroundDamage(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			fx := newFlipFixture(t, uncompressed, 12)
			final := strings.TrimSuffix(fx.name, openSuffix)
			// Each check costs a few fsyncs: ~100 offsets spread over the file,
			// flipping one bit or a whole byte in turn.
			stride := len(fx.data)/90 + 1
			for i, off := 0, 0; off < len(fx.data); i, off = i+1, off+stride {
				checkFlip(t, fx, final, off, []byte{0x01, 0xff}[i%2], uncompressed)
			}
			// Every byte of the first record's gzip header and of a middle
			// record's start.
			mid := fx.recs[len(fx.recs)/2].start
			for off := range 12 {
				checkFlip(t, fx, final, off, 0x10, uncompressed)
				checkFlip(t, fx, final, int(mid)+off, 0x10, uncompressed)
			}
		})
	}
}

func checkFlip(t *testing.T, fx flipFixture, final string, off int, mask byte, uncompressed bool) {
	t.Helper()
	dir := t.TempDir()
	damaged := bytes.Clone(fx.data)
	damaged[off] ^= mask
	if err := os.WriteFile(filepath.Join(dir, fx.name), damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	report, err := Recover(dir)
	if err != nil {
		t.Fatalf("flip %#x at %d: %v", mask, off, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, final))
	if err != nil {
		t.Fatalf("flip %#x at %d: %v (report %q)", mask, off, err, report)
	}
	if len(got) != len(fx.data) {
		t.Fatalf("flip %#x at %d: recovered file has %d bytes, had %d (report %q)", mask, off, len(got), len(fx.data), report)
	}
	// Records the flip did not touch read at their offsets, unchanged.
	for _, r := range fx.recs {
		if int64(off) >= r.start && int64(off) < r.end {
			continue
		}
		if !bytes.Equal(got[r.start:r.end], fx.data[r.start:r.end]) {
			t.Fatalf("flip %#x at %d: record %s at %d changed (report %q)", mask, off, r.id, r.start, report)
		}
		rec, err := ReadRecordAt(dir, Location{File: final, Offset: r.start, Length: r.end - r.start})
		if err != nil || rec.Header.Get(FieldRecordID) != r.id {
			t.Fatalf("flip %#x at %d: record %s at %d: %v (report %q)", mask, off, r.id, r.start, err, report)
		}
	}
	// The whole file reads in sequence, without an error.
	rd, err := NewReader(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("flip %#x at %d: recovered file: %v (report %q)", mask, off, err, report)
		}
		if err := VerifyDigests(rec); err != nil {
			t.Fatalf("flip %#x at %d: recovered file: %v (report %q)", mask, off, err, report)
		}
	}
	if n < len(fx.recs)-1 {
		t.Fatalf("flip %#x at %d: %d records read in sequence, want at least %d (report %q)", mask, off, n, len(fx.recs)-1, report)
	}
	// What was damaged is aside, byte for byte, where the report says.
	asides, _ := filepath.Glob(filepath.Join(dir, final+DamagedSuffix+"*"))
	if n == len(fx.recs) {
		if len(asides) != 0 || !strings.HasSuffix(report[0], "intact") {
			t.Fatalf("flip %#x at %d changed nothing readable, yet %v aside (report %q)", mask, off, asides, report)
		}
		return
	}
	if len(asides) != 1 {
		t.Fatalf("flip %#x at %d: damaged bytes aside in %v, want one file (report %q)", mask, off, asides, report)
	}
	at, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Base(asides[0]), final+DamagedSuffix), 10, 64)
	saved, _ := os.ReadFile(asides[0])
	if int64(off) < at || int64(off) >= at+int64(len(saved)) || !bytes.Equal(saved, damaged[at:at+int64(len(saved))]) {
		t.Fatalf("flip %#x at %d: %s does not hold the damaged bytes", mask, off, asides[0])
	}
	if !strings.Contains(report[0], "moved to "+filepath.Base(asides[0])) {
		t.Fatalf("flip %#x at %d: report %q does not name %s", mask, off, report, asides[0])
	}
}

// TestFiller checks that filler makes exactly the length asked for, and
// that it reads as no record at all, alone and between records.
func TestFiller(t *testing.T) {
	for _, n := range []int64{20, 21, 22, 23, 24, 50, 201, 250, 65555, 65556, 65557, 65575, 65576, 65578, 1 << 17, 300007} {
		for _, gz := range []bool{true, false} {
			b := filler(n, "x.warc.gz.damaged-5", gz)
			if int64(len(b)) != n {
				t.Fatalf("filler(%d, gz=%v) has %d bytes", n, gz, len(b))
			}
			rd, err := NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if rec, err := rd.Next(); err != io.EOF {
				t.Fatalf("filler(%d, gz=%v): Next gives %v, %v; want io.EOF", n, gz, rec, err)
			}
		}
	}
	if b := filler(19, "x", true); b != nil {
		t.Errorf("filler(19) for gzip: %d bytes, want nil", len(b))
	}
}

// TestRecoverDamageAndTornTail: damage in the middle is moved aside, the torn
// tail after it is cut, and a file with no intact record at all is moved
// aside whole, never removed.
func TestRecoverDamageAndTornTail(t *testing.T) {
	fx := newFlipFixture(t, false, 8)
	final := strings.TrimSuffix(fx.name, openSuffix)
	dir := t.TempDir()
	data := bytes.Clone(fx.data)
	mid := fx.recs[3]
	data[mid.start+40] ^= 0x08
	last := fx.recs[len(fx.recs)-1]
	data = data[:last.start+(last.end-last.start)/2] // torn inside the last record
	os.WriteFile(filepath.Join(dir, fx.name), data, 0o644)
	report, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Capture 7 is a request and a response: the request goes with it.
	req := fx.recs[len(fx.recs)-2]
	got, _ := os.ReadFile(filepath.Join(dir, final))
	if int64(len(got)) != req.start {
		t.Fatalf("recovered %d bytes, want %d (report %q)", len(got), req.start, report)
	}
	for _, want := range []string{
		fmt.Sprintf("%d records kept, %d bytes of torn tail cut", len(fx.recs)-3, len(data)-int(req.start)),
		fmt.Sprintf("%d damaged bytes at offset %d", mid.end-mid.start, mid.start),
		"moved to " + final + DamagedSuffix + fmt.Sprint(mid.start),
	} {
		if !strings.Contains(report[0], want) {
			t.Errorf("report %q lacks %q", report[0], want)
		}
	}

	// The warcinfo record alone, damaged: nothing intact, all moved aside.
	dir = t.TempDir()
	data = bytes.Clone(fx.data[:fx.recs[0].end])
	data[30] ^= 0x01
	os.WriteFile(filepath.Join(dir, fx.name), data, 0o644)
	report, err = Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, final+DamagedSuffix+"0"))
	if !bytes.Equal(saved, data) || !strings.Contains(report[0], "no intact record") {
		t.Fatalf("whole damaged file: aside %d bytes (%v), report %q", len(saved), err, report)
	}
}

// TestRepairFileNeverShortens mends finished files: damage in the middle or at the end,
// and a file cut short, all keep their length; every other record reads at its offset.
func TestRepairFileNeverShortens(t *testing.T) {
	fx := newFlipFixture(t, false, 8)
	final := strings.TrimSuffix(fx.name, openSuffix)
	last := fx.recs[len(fx.recs)-1]
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
		hit    flipRecord
	}{
		{"middle", func(b []byte) []byte { b[fx.recs[3].start+50] ^= 1; return b }, fx.recs[3]},
		{"last record", func(b []byte) []byte { b[last.start+30] ^= 1; return b }, last},
		{"cut short", func(b []byte) []byte { return b[:last.end-5] }, last},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, final)
			data := c.damage(bytes.Clone(fx.data))
			os.WriteFile(path, data, 0o644)
			report, err := RepairFile(path)
			if err != nil || !strings.Contains(report, "moved to "+final+DamagedSuffix) {
				t.Fatalf("RepairFile: %q, %v", report, err)
			}
			got, _ := os.ReadFile(path)
			if len(got) != len(data) {
				t.Fatalf("repaired file has %d bytes, had %d", len(got), len(data))
			}
			for _, r := range fx.recs {
				if r == c.hit {
					continue
				}
				if rec, err := ReadRecordAt(dir, Location{File: final, Offset: r.start, Length: r.end - r.start}); err != nil || rec.Header.Get(FieldRecordID) != r.id {
					t.Fatalf("record %s at %d after repair: %v", r.id, r.start, err)
				}
			}
			if n := len(readAll(t, path)); n != len(fx.recs)-1 {
				t.Fatalf("%d records read in sequence, want %d", n, len(fx.recs)-1)
			}
			if again, err := RepairFile(path); again != "" || err != nil {
				t.Fatalf("second RepairFile: %q, %v", again, err)
			}
		})
	}
}
