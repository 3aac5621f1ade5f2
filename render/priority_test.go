//go:build linux

package render

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// niceOf is the nice value of thread task of process pid (or of the process, task "").
func niceOf(t *testing.T, path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false // the thread or process ended meanwhile
	}
	f := statFields(b)
	if len(f) < 17 {
		t.Fatalf("%s: %d fields", path, len(f))
	}
	n, err := strconv.Atoi(string(f[16]))
	if err != nil {
		t.Fatalf("%s: nice %q", path, f[16])
	}
	return n, true
}

// TestBrowserRunsBelowSondaPriority: with Options.Nice every thread of every process of the
// browser runs that much below this process's priority, after a render, which makes
// Chromium start its renderer and set its threads' priorities. As root (CAP_SYS_NICE)
// Chromium raises nice(1)'s priority back to 0 and -8 unless it is started without the
// capability: this test fails then.
func TestBrowserRunsBelowSondaPriority(t *testing.T) {
	_, f := scriptWeb(t)
	const steps = 7
	r := newRenderer(t, Options{Tabs: 1, Nice: steps})
	self, _ := niceOf(t, "/proc/self/stat")
	want := min(self+steps, 19)
	if _, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.spa.test/article/3"), Gate: &fetcherGate{f: f}}); err != nil {
		t.Fatal(err)
	}
	tree := processTree(r.BrowserPID())
	if len(tree) < 3 {
		t.Fatalf("browser process tree %v: want the browser, its zygote and a renderer at least", tree)
	}
	threads := 0
	for _, p := range tree {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/stat")
		for _, task := range tasks {
			n, ok := niceOf(t, task)
			if !ok {
				continue
			}
			threads++
			if n < want {
				t.Errorf("%s: nice %d, want ≥ %d (sonda's %d + %d)", task, n, want, self, steps)
			}
		}
	}
	t.Logf("%d processes, %d threads, all at nice ≥ %d (hasCapSysNice %v)", len(tree), threads, want, hasCapSysNice())
}

// TestCPUTime: the CPU time of the browser's processes (what a crawl's render governor
// weighs renders by) is 0 before the browser starts and grows with a render; it is at
// least what the browser process alone used, read here from /proc by hand.
func TestCPUTime(t *testing.T) {
	_, f := scriptWeb(t)
	r := newRenderer(t, Options{Tabs: 1, Lazy: true})
	if c := r.CPUTime(); c != 0 {
		t.Fatalf("CPUTime %v before the browser started, want 0", c)
	}
	if _, err := r.Render(testCtx(t), Page{Response: get(t, f, "http://www.spa.test/article/3"), Gate: &fetcherGate{f: f}}); err != nil {
		t.Fatal(err)
	}
	got := r.CPUTime()
	own := time.Duration(processCPU(r.BrowserPID())) * time.Second / userHZ
	if got <= 0 || got < own {
		t.Fatalf("CPUTime %v after a render, want > 0 and ≥ the browser process's own %v", got, own)
	}
	t.Logf("browser tree CPU after starting and one render: %v (browser process %v)", got, own)
}
