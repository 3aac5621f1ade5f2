package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/testweb"
)

// tmpfs mounts a tmpfs of size (mount's syntax, e.g. 2m) at a new directory, unmounted
// when the test ends. It skips the test where mounting is not permitted (not root, or
// a container without the capability): filling a real disk is the only faithful way to
// meet ENOSPC in every writer at once (Pebble's log and tables, WARC, index).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (%v: %s); run as root to test a full disk", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskFullStopsAndResumes crawls into a file system too small for the crawl. With the
// default crawl.min-free-space the crawl refuses to start; without it, the disk fills
// mid-crawl: the crawl must stop with a message saying so (not a panic), and once the file
// system is grown, a resume must fetch every URL of the web, and check data must find
// every page's capture.
func TestDiskFullStopsAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real crawls on a full file system")
	}
	mnt := tmpfs(t, "2m")
	web, addr := serveWeb(t, testweb.Config{Seed: 31, Hosts: 20, PagesPerHost: 30, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := filepath.Join(mnt, "data")
	args := append(crawlArgs(web, addr, data), "--concurrency", "8")

	_, stderr, code := run(t, quickEnv, args...)
	if code == 0 || !strings.Contains(stderr, "crawl.min-free-space") {
		t.Fatalf("crawl into 2 MB with the default reserve: exit %d\n%s", code, stderr)
	}

	_, stderr, code = run(t, append(quickEnv, "SONDA_CRAWL_MIN_FREE_SPACE=0"), args...)
	if code != 1 || !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "run the command again") || strings.Contains(stderr, "panic") {
		t.Fatalf("crawl until the disk is full: exit %d, want 1 with a message\n%s", code, stderr)
	}
	t.Logf("the crawl on a full disk said:\n%s", stderr)
	if out, err := exec.Command("mount", "-o", "remount,size=300m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v: %s", err, out)
	}
	_, stderr, code = run(t, append(quickEnv, "SONDA_CRAWL_MIN_FREE_SPACE=0"), args...)
	if code != 0 {
		t.Fatalf("resume after freeing space: exit %d\n%s", code, stderr)
	}
	checkAfterKills(t, web, 1, 8)
	out, stderr, code := run(t, nil, "check", "data", "--data", data)
	if code != 0 {
		t.Fatalf("check data after the resume: exit %d\n%s%s", code, out, stderr)
	}
}
