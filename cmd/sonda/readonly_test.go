package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/internal/dirsnap"
	"github.com/sonda-search/sonda/testweb"
)

func snapshotDir(t *testing.T, dir string) dirsnap.Snapshot {
	t.Helper()
	s, err := dirsnap.Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReadOnlyCommandsChangeNothing kills a crawl with SIGKILL, leaving a write-ahead log
// to replay, then runs status, export and search on its data directory: they must report
// what the crawl stored and change no byte of the directory (search opens the index
// read-only too).
func TestReadOnlyCommandsChangeNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a real crawl process")
	}
	// 300 ms a host: the crawl (about 20 pages a host) must outlive status.json's first
	// rewrite, 2 s after the start, which is what the test waits for.
	cmd, data := testCrawl(t, testweb.Config{Seed: 7, Hosts: 5, Disable: testweb.Slow}, "--min-delay", "300ms", "--concurrency", "2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Kill once the crawl has stored pages (its status file says so), or give up after 30 s.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(data, "status.json"))
		if strings.Contains(string(b), `"pages"`) && !strings.Contains(string(b), `"pages": 0`) || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the crawl ended before it could be killed: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done

	before := snapshotDir(t, data)
	out, stderr, code := run(t, nil, "status", "--data", data)
	if code != 0 || !strings.Contains(out, "interrupted") {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, nil, "export", "--data", data, "--what", "pages")
	if code != 0 || !strings.Contains(out, `"url"`) {
		t.Fatalf("export: exit %d\n%s\n%s", code, out, stderr)
	}
	if d := before.Diff(snapshotDir(t, data)); len(d) > 0 {
		t.Fatalf("status and export changed the data directory: %v", d)
	}
	_, stderr, code = run(t, nil, "search", "--data", data, "page")
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	if d := before.Diff(snapshotDir(t, data)); len(d) > 0 {
		t.Fatalf("search changed the data directory: %v", d)
	}
}
