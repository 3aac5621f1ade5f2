package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/warc"
)

// testCrawl starts a test web of cfg and returns a crawl command of it into a new data
// directory, with extra flags.
func testCrawl(t *testing.T, cfg testweb.Config, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	web, addr := serveWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data") // sonda creates it
	cmd := exec.Command(sondaBin, append(crawlArgs(web, addr, data), extra...)...)
	cmd.Env = append(os.Environ(), quickEnv...)
	return cmd, data
}

// crawlToEnd runs a crawl of a small, plain test web to its end in a new data directory.
func crawlToEnd(t *testing.T) string {
	t.Helper()
	cmd, data := testCrawl(t, testweb.Config{Seed: 11, Hosts: 8, PagesPerHost: 30, Disable: testweb.AllFeatures &^ testweb.Robots}, "--concurrency", "4")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crawl: %v\n%s", err, out)
	}
	t.Logf("crawl took %v", time.Since(start))
	return data
}

// TestCheckAndRepairDamagedWAL damages the crawl database's write-ahead log in its middle
// and a WARC file's middle record: check data must report both and exit 1, status must
// refuse with the log named instead of silently dropping records, and repair must make the
// directory pass check again.
func TestCheckAndRepairDamagedWAL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real crawl")
	}
	data := crawlToEnd(t)
	out, stderr, code := run(t, nil, "check", "data", "--data", data)
	if code != 0 || !strings.Contains(out, "no damage found") {
		t.Fatalf("check data on a sound directory: exit %d\n%s%s", code, out, stderr)
	}

	// The largest log holds the crawl's batches; damage its second block.
	logs, _ := filepath.Glob(filepath.Join(data, "state", "*.log"))
	var log string
	var content []byte
	for _, l := range logs {
		if b, _ := os.ReadFile(l); len(b) > len(content) {
			log, content = l, b
		}
	}
	if len(content) < 3*32<<10 {
		t.Fatalf("the crawl's log has %d bytes: too few to damage its middle", len(content))
	}
	content[32<<10+500] ^= 0x20
	os.WriteFile(log, content, 0o644)

	out, _, code = run(t, nil, "check", "data", "--data", data)
	if code != 1 || !strings.Contains(out, "DAMAGE: store: the write-ahead log is damaged") || !strings.Contains(out, log) || !strings.Contains(out, "sonda repair --data") {
		t.Fatalf("check data on a damaged log: exit %d\n%s", code, out)
	}
	_, stderr, code = run(t, nil, "status", "--data", data)
	if code == 0 || !strings.Contains(stderr, log) {
		t.Fatalf("status on a damaged log: exit %d\n%s", code, stderr)
	}

	start := time.Now()
	out, stderr, code = run(t, nil, "repair", "--data", data)
	t.Logf("repair took %v", time.Since(start))
	if code != 0 || !strings.Contains(out, "store: replayed") || !strings.Contains(out, "index: rebuilt") {
		t.Fatalf("repair: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("repair:\n%s", out)
	out, stderr, code = run(t, nil, "check", "data", "--data", data)
	if code != 0 {
		t.Fatalf("check data after repair: exit %d\n%s%s", code, out, stderr)
	}
	if _, _, code := run(t, nil, "status", "--data", data); code != 0 {
		t.Fatalf("status after repair: exit %d", code)
	}
}

// TestDataDirIsPrivate: with the default data-umask (077), no file or directory a crawl
// creates can be read by anyone but its owner (they were 0644 and 0755).
func TestDataDirIsPrivate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real crawl")
	}
	assertPrivate(t, crawlToEnd(t))
}

// assertPrivate fails for every file or directory under dir that its group or others
// can access.
func assertPrivate(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", path, info.Mode().Perm())
		}
		n++
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

// TestRepairDamagedWARCFile flips a byte in a response record of a finished WARC file:
// check data names the file, repair moves the damaged bytes aside and keeps the file's
// length, and check data afterwards reads every other record and names the one page
// whose capture was lost.
func TestRepairDamagedWARCFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real crawl")
	}
	data := crawlToEnd(t)
	files, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	if len(files) == 0 {
		t.Fatal("the crawl wrote no WARC file")
	}
	rd, err := warc.OpenFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var target *warc.Record
	for n := 0; target == nil; n++ {
		rec, err := rd.Next()
		if err != nil {
			t.Fatalf("no response record among the first %d: %v", n, err)
		}
		// A page's capture: check data names the page record that lost it. A robots.txt
		// capture has no page record, so its loss leaves nothing to name (which response
		// comes 11th depends on the crawl's order: full run 42 picked a robots.txt).
		if rec.Type() == warc.TypeResponse && n > 10 && !strings.HasSuffix(rec.Header.Get(warc.FieldTargetURI), "/robots.txt") {
			target = rec
		}
	}
	rd.Close()
	content, _ := os.ReadFile(files[0])
	content[target.Offset+40] ^= 0x08
	os.WriteFile(files[0], content, 0o600)

	out, _, code := run(t, nil, "check", "data", "--data", data)
	if code != 1 || !strings.Contains(out, "DAMAGE: warc: "+filepath.Base(files[0])) {
		t.Fatalf("check data on a damaged WARC file: exit %d\n%s", code, out)
	}
	out, stderr, code := run(t, nil, "repair", "--data", data)
	if code != 0 || !strings.Contains(out, "warc: repaired "+filepath.Base(files[0])) {
		t.Fatalf("repair: exit %d\n%s%s", code, out, stderr)
	}
	if after, _ := os.ReadFile(files[0]); len(after) != len(content) {
		t.Fatalf("repair changed the file's length from %d to %d", len(content), len(after))
	}
	out, _, code = run(t, nil, "check", "data", "--data", data)
	uri := target.Header.Get(warc.FieldTargetURI)
	if code != 1 || strings.Contains(out, "DAMAGE: warc:") || !strings.Contains(out, "1 page records point at a WARC capture that is not there") || !strings.Contains(out, uri) {
		t.Fatalf("check data after repair: exit %d, want only the lost capture of %s named\n%s", code, uri, out)
	}
}
