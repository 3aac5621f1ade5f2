package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hostileSizes is a web whose pages are as large as sonda reads (fetch.max-body, 10 MiB;
// feeds 50 MiB) or expand without end: six 10 MiB text pages (prose, and numbers and
// dates, which the change fingerprint masks), six 10 MiB HTML pages, a 50 MiB sitemap,
// a 50 MiB sitemap of nested elements, a gzipped sitemap and a gzip-encoded page that
// expand to a gibibyte each. Bodies are generated as they are written.
type hostileSizes struct {
	mu    sync.Mutex
	fetch map[string]int
}

const (
	hugeBody  = 10 << 20
	hugePages = 6 // of each kind
)

func (h *hostileSizes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.fetch[r.URL.Path]++
	h.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	case p == "/":
		w.Header().Set("Content-Type", "text/html")
		var b strings.Builder
		b.WriteString("<html><head><title>Big pages</title></head><body>")
		for i := range hugePages {
			fmt.Fprintf(&b, `<a href="/text/%d">text %d</a> <a href="/html/%d">html %d</a> `, i, i, i, i)
		}
		b.WriteString(`<a href="/sitemap.xml">sitemap</a> <a href="/deep/sitemap.xml">deep</a> <a href="/bomb/sitemap.xml.gz">bomb</a> <a href="/encoded">encoded</a></body></html>`)
		io.WriteString(w, b.String())
	case strings.HasPrefix(p, "/text/"):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		numbers := strings.HasSuffix(p, "1") || strings.HasSuffix(p, "3") || strings.HasSuffix(p, "5")
		writeGenerated(w, hugeBody, func(rng *rand.Rand, b *bytes.Buffer) {
			if numbers {
				fmt.Fprintf(b, "%d.%d-%d/%d 2024-%02d-%02d %d:%02d ", rng.Intn(99), rng.Intn(9), rng.Intn(99), rng.Intn(9), 1+rng.Intn(12), 1+rng.Intn(28), rng.Intn(24), rng.Intn(60))
			} else {
				b.WriteString(proseWords[rng.Intn(len(proseWords))])
				b.WriteByte(' ')
			}
		})
	case strings.HasPrefix(p, "/html/"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head><title>A long page</title></head><body>")
		writeGenerated(w, hugeBody-100, func(rng *rand.Rand, b *bytes.Buffer) {
			b.WriteString("<p>")
			for range 12 {
				b.WriteString(proseWords[rng.Intn(len(proseWords))])
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, `<a href="/html/x%d">more</a></p>`, rng.Intn(1<<30))
		})
	case p == "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		writeGenerated(w, 50<<20-100, func(rng *rand.Rand, b *bytes.Buffer) {
			fmt.Fprintf(b, "<url><loc>http://elsewhere.test/p/%d</loc><lastmod>2024-01-01</lastmod></url>\n", rng.Intn(1<<30))
		})
		io.WriteString(w, "</urlset>")
	case p == "/deep/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, "<urlset>")
		writeGenerated(w, 50<<20, func(_ *rand.Rand, b *bytes.Buffer) { b.WriteString("<url><a>") })
	case p == "/bomb/sitemap.xml.gz":
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(gzipOf([]byte(`<urlset><url><loc>http://elsewhere.test/`)))
		member := gzipOf(make([]byte, 1<<20))
		for range 1 << 10 {
			if _, err := w.Write(member); err != nil {
				return
			}
		}
	case p == "/encoded":
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gzipOf([]byte("<html><body><p>")))
		member := gzipOf(bytes.Repeat([]byte("a "), 1<<19))
		for range 1 << 10 {
			if _, err := w.Write(member); err != nil {
				return
			}
		}
	default:
		http.NotFound(w, r)
	}
}

var proseWords = strings.Fields("the reactor core holds fuel rods of uranium that heat water into steam which turns a turbine and the operators watch pressure and temperature through the night while inspectors read the logs")

// writeGenerated writes about n bytes made by gen, in 64 KiB pieces, stopping when the
// client goes away.
func writeGenerated(w io.Writer, n int, gen func(*rand.Rand, *bytes.Buffer)) {
	rng := rand.New(rand.NewSource(int64(n)))
	var b bytes.Buffer
	for sent := 0; sent < n; {
		b.Reset()
		for b.Len() < 64<<10 {
			gen(rng, &b)
		}
		chunk := b.Bytes()[:min(b.Len(), n-sent)]
		if _, err := w.Write(chunk); err != nil {
			return
		}
		sent += len(chunk)
	}
}

func gzipOf(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// TestCrawlMemoryBoundedOnHugeBodies crawls the hostileSizes web with the real binary, the
// feeds vertical on (sitemaps read), and reads the crawl process's peak resident set size
// from the kernel (getrusage's ru_maxrss) while every page is fetched and the sitemaps
// are read or refused with their reasons. See the bound below.
func TestCrawlMemoryBoundedOnHugeBodies(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls 200 MiB of pages")
	}
	web := &hostileSizes{fetch: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: web}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	data := t.TempDir()
	cmd := exec.Command(sondaBin, "crawl", "--data", data, "--seed", "http://"+ln.Addr().String()+"/", "--allow-private",
		"--min-delay", "0", "--concurrency", "8", "--max-pages", fmt.Sprint(2*hugePages+5))
	// memory-limit 320 MiB, not the default 384: see the bound below.
	cmd.Env = append(withoutEnv("GOMEMLIMIT", "SONDA_MEMORY_LIMIT"), "SONDA_MEMORY_LIMIT=320MiB", "SONDA_LOG_LEVEL=warn", "SONDA_FEEDS_ENABLED=true", "SONDA_FEEDS_INTERVAL=-1s", "SONDA_POLITENESS_PER_HOST=8")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	sampled := sampleMemory(cmd.Process.Pid)
	err = cmd.Wait()
	timer.Stop()
	// The peak is the crawl's VmHWM (its address space's high-water mark), not getrusage's
	// ru_maxrss: Go starts a command with vfork, so the child execs from the test process's
	// address space, and Linux keeps that space's high-water mark in the child's ru_maxrss.
	// Late in the suite's cmd/sonda run (a -race test process of 530+ MiB) that was what the
	// test measured: full runs 39, 41 and 42 failed at 535, 543 and 530 MiB while the crawl's
	// own RSS, sampled, never passed 395 MiB.
	mem := sampled()
	peak := mem.hwm
	t.Logf("crawl took %s, peak RSS %d MiB (anonymous up to %d MiB, file-backed up to %d MiB; ru_maxrss, which counts the test process's, %d MiB)\n%s",
		time.Since(start).Round(time.Millisecond), peak>>20, mem.anon>>20, mem.file>>20, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss>>10, out.String())
	if peak == 0 {
		t.Fatal("the crawl's memory was never sampled")
	}
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	for _, want := range []string{"bad-sitemap 2", "decompression-bomb 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not count %q", want)
		}
	}
	web.mu.Lock()
	defer web.mu.Unlock()
	for _, p := range []string{"/text/0", "/text/5", "/html/0", "/html/5", "/sitemap.xml", "/deep/sitemap.xml", "/bomb/sitemap.xml.gz", "/encoded"} {
		if web.fetch[p] == 0 {
			t.Errorf("%s was never fetched", p)
		}
	}
	// Issue 14's goal is 500 MiB. Measured 1,079 MiB without a memory limit; 515-562 MiB
	// with memory-limit 384 MiB while plain text pages were analysed whole (the heap at its
	// peak: 147 MB of bodies in flight, 120 MB of their text, 70 MB of its normalized copy
	// for the fingerprint); 467-486 MiB since they are cut to the 1 MiB the parser keeps of
	// an HTML page's text (heap peak 245 MB). On a busy machine a third of the runs went
	// to 570-800 MiB: Bleve's segment builder sized each new segment's buffer from the last
	// segment's bytes per document times the batch's documents plus a hundred, 287 MB
	// after a batch of these pages (index/zapbuffer.go); 427-506 MiB in 10 runs at load
	// 5-11 since. CI still failed it at 526 and 542 MiB: the peak RSS is the memory limit
	// plus the executable's 66-69 MiB as soon as live data passes half the limit, and a
	// soft limit is overrun when collections run back to back. With the bodies held at
	// once bounded (fetch.large-body-memory) the live heap's peak fell from 224-317 MB to
	// 156-218 MB, away from the limit; RSS 449-469 MiB, but the suite's own load still
	// took it to 522 MiB (full run 37). The crawl therefore runs with memory-limit
	// 320 MiB, which a user who wants RSS under 500 MiB sets: RSS 397-399 MiB at a load
	// of 9 with six busy loops beside it (live heap 179-215 MB), 120 MiB below the bound
	// for the overruns of a soft limit on a loaded machine (up to 90 MiB seen). The
	// default (384 MiB) stays: serve's heap on a 100k-page index is ~300 MiB.
	// The failures in full test runs (526 and 542 MiB in CI, 522-555 in the suite) were
	// at least partly ru_maxrss counting the test process (see above): a Go program
	// holding 600 MiB that runs /bin/true reads 603 MiB for it.
	if peak > 520<<20 {
		t.Errorf("the crawl's peak RSS was %d MiB, want under 520 MiB (515-562 MiB when text pages were analysed whole)", peak>>20)
	}
	// The cut is recorded on the page.
	exported, stderr, code := run(t, nil, "export", "--data", data, "--what", "pages")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	cut := 0
	for _, line := range strings.Split(exported, "\n") {
		if strings.Contains(line, `/text/0"`) {
			if !strings.Contains(line, `"text_truncated":true`) {
				t.Errorf("the 10 MiB text page's record does not say its text was cut: %.300s", line)
			}
			cut++
		}
	}
	if cut == 0 {
		t.Error("no record of /text/0 in the export")
	}
}

// withoutEnv is the test's environment without the named variables.
func withoutEnv(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			env = append(env, kv)
		}
	}
	return env
}

// processMemory is the most of each kind of resident memory seen in a process, in bytes.
type processMemory struct{ hwm, anon, file int64 }

// sampleMemory reads /proc/PID/status every 10 ms until the process is gone and returns a
// function that waits for that and says what it saw: VmHWM, the high-water mark of the
// process's own resident set, which the kernel keeps between samples, and the most
// anonymous (the Go heap, C allocations such as Pebble's memtables) and file-backed (the
// executable, mapped index files) memory seen.
func sampleMemory(pid int) func() processMemory {
	var mu sync.Mutex
	var most processMemory
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil || bytes.Contains(b, []byte("State:\tZ")) {
				return
			}
			mu.Lock()
			for _, line := range strings.Split(string(b), "\n") {
				name, value, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				var kb int64
				fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(value), " kB"), &kb)
				switch name {
				case "VmHWM":
					most.hwm = max(most.hwm, kb<<10)
				case "RssAnon":
					most.anon = max(most.anon, kb<<10)
				case "RssFile":
					most.file = max(most.file, kb<<10)
				}
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() processMemory {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}
