package main

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/internal/crashpoint"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/warc"
)

// crashWeb is the test web of the crash sweeps: small, with robots.txt rules, so that one
// crawl meets every crash point several times in a few seconds.
var crashWeb = testweb.Config{Seed: 23, Hosts: 4, PagesPerHost: 25, Disable: testweb.AllFeatures &^ testweb.Robots}

// crashEnv makes WARC files rotate and the index persist often, so that a crawl of
// crashWeb passes every kind of write many times.
var crashEnv = []string{"SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=error", "SONDA_WARC_MAX_FILE_SIZE=64KiB",
	"SONDA_SEARCH_BATCH_SIZE=16"}

const crashConcurrency = 4

// runCrash runs sonda with args and env plus the crash variables at (NAME:N, or "" for
// none) and trace (a file, or ""). It reports whether the process was killed by its crash
// point; any other end but exit 0 fails the test.
func runCrash(t *testing.T, env []string, at, trace string, args ...string) (killed bool, out string) {
	t.Helper()
	cmd := exec.Command(sondaBin, args...)
	cmd.Env = append(append(os.Environ(), env...), crashpoint.EnvAt+"="+at, crashpoint.EnvTrace+"="+trace)
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("sonda %s (crash at %q) still running after 2 minutes\n%s", args[0], at, b.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && at != "" {
			return true, b.String()
		}
		t.Fatalf("sonda %s (crash at %q): %v\n%s", strings.Join(args, " "), at, err, b.String())
	} else if err != nil {
		t.Fatal(err)
	}
	return false, b.String()
}

// traceCounts reads a crash trace: how often each point was reached.
func traceCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		counts[sc.Text()]++
	}
	return counts
}

// crashPlan spreads the crash points of a run over it: the first arrival at each point,
// then, for points reached at least 4 times, the arrival a quarter of the way (which a
// resumed crawl, having less to do, reaches at a later stage of the whole crawl).
func crashPlan(counts map[string]int) []string {
	var first, later []string
	for _, p := range slices.Sorted(maps.Keys(counts)) {
		first = append(first, p+":1")
		if c := counts[p]; c >= 4 {
			later = append(later, fmt.Sprintf("%s:%d", p, c/4))
		}
	}
	return append(first, later...)
}

// checkData runs sonda check data's verification (in this process: it only reads) and
// returns what it found.
func checkReport(t *testing.T, data string) app.CheckReport {
	t.Helper()
	cfg := config.Default()
	cfg.Data = data
	r, err := app.Check(context.Background(), cfg)
	if err != nil {
		t.Fatalf("check data %s: %v", data, err)
	}
	return r
}

// checkData fails the test unless check data finds no damage in data.
func checkData(t *testing.T, data, when string) {
	t.Helper()
	if r := checkReport(t, data); len(r.Problems) > 0 {
		t.Fatalf("%s: check data found damage:\n%s", when, strings.Join(r.Problems, "\n"))
	}
}

// indexDocs is how many documents the search index of data holds.
func indexDocs(t *testing.T, data string) int {
	t.Helper()
	ix, err := index.Open(index.DataDir(data), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open the index of %s: %v", data, err)
	}
	defer ix.Close()
	return int(ix.Stats().Documents)
}

// TestCrashSweepCrawl kills a real crawl with SIGKILL at every crash point of its write
// paths (package crashpoint: halfway through a WARC record, between a record and the
// database batch that points at it, before a WARC file is renamed, inside each kind of
// Pebble write and sync, before the search index persists a batch), at the first arrival
// and at a later one, and resumes it each time, every third time
// after sonda repair. After each repair, and at the end, sonda check data must find every
// page's capture in the WARC files and every record whole; at the end the test web's
// request log must show every allowed URL fetched (refetched at most once per page in
// flight at a kill), nothing disallowed fetched, and the index must hold what an
// uninterrupted crawl's does.
func TestCrashSweepCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real crawl processes")
	}
	start := time.Now()
	trace := filepath.Join(t.TempDir(), "trace")
	ref, refAddr := serveWeb(t, crashWeb)
	refData := filepath.Join(t.TempDir(), "data")
	args := append(crawlArgs(ref, refAddr, refData), "--concurrency", strconv.Itoa(crashConcurrency))
	runCrash(t, crashEnv, "", trace, args...)
	if p := ref.CheckFetches(); len(p) > 0 {
		t.Fatalf("the uninterrupted crawl: %s", strings.Join(p, "\n"))
	}
	counts := traceCounts(t, trace)
	wantDocs := indexDocs(t, refData)
	t.Logf("uninterrupted crawl: %v, %d documents, crash points reached: %v", time.Since(start), wantDocs, counts)
	for _, p := range []string{"warc.write", "warc.written", "warc.finish", "warc.create", "store.write.log", "store.sync.log", "index.persist"} {
		if counts[p] == 0 {
			t.Errorf("the crawl never reached crash point %s", p)
		}
	}
	plan := crashPlan(counts)

	var (
		web   *testweb.Web
		data  string
		kills int
		round int
	)
	newRound := func() {
		round++
		var addr string
		web, addr = serveWeb(t, crashWeb)
		data = filepath.Join(t.TempDir(), "data")
		args = append(crawlArgs(web, addr, data), "--concurrency", strconv.Itoa(crashConcurrency))
		kills = 0
	}
	endRound := func() {
		checkData(t, data, fmt.Sprintf("round %d, after %d kills", round, kills))
		checkAfterKills(t, web, kills, crashConcurrency)
		if got := indexDocs(t, data); got != wantDocs {
			t.Errorf("round %d: the index holds %d documents after %d kills, an uninterrupted crawl's %d", round, got, kills, wantDocs)
		}
	}
	newRound()
	total := 0
	for i := 0; i < len(plan); i++ {
		at := plan[i]
		killed, out := runCrash(t, crashEnv, at, "", args...)
		if !killed {
			// The crawl ended before reaching the point: it has too little left to do.
			endRound()
			if kills == 0 {
				t.Fatalf("a fresh crawl did not reach crash point %s\n%s", at, out)
			}
			newRound()
			i--
			continue
		}
		kills++
		total++
		if total%3 == 0 {
			runCrash(t, crashEnv, "", "", "repair", "--data", data)
			checkData(t, data, "after a kill at "+at+" and sonda repair")
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	if killed, _ := runCrash(t, crashEnv, "", "", args...); killed {
		t.Fatal("unreachable")
	}
	endRound()
	t.Logf("%d kills at %d crash points in %d rounds, %v", total, len(plan), round, time.Since(start))
}

// damagedTemplate crawls crashWeb into a data directory whose crawl database has both a
// table and a write-ahead log (the crawl is killed halfway and resumed), then damages one
// byte in each kind of thing sonda repair mends: the table, the log (in its middle) and a
// response record of a finished WARC file.
func damagedTemplate(t *testing.T) string {
	t.Helper()
	web, addr := serveWeb(t, crashWeb)
	data := filepath.Join(t.TempDir(), "data")
	args := append(crawlArgs(web, addr, data), "--concurrency", strconv.Itoa(crashConcurrency))
	if killed, _ := runCrash(t, crashEnv, "store.write.log:50", "", args...); !killed {
		t.Fatal("the crawl ended before its 50th log write")
	}
	runCrash(t, crashEnv, "", "", args...)
	state := filepath.Join(data, "state")
	flip := func(glob string, at func(size int) int) string {
		files, _ := filepath.Glob(filepath.Join(state, glob))
		slices.Sort(files)
		if len(files) == 0 {
			t.Fatalf("no %s in %s", glob, state)
		}
		f := files[len(files)-1]
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		i := at(len(b))
		if i < 0 {
			t.Fatalf("%s has %d bytes: too few to damage", f, len(b))
		}
		b[i] ^= 0x20
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	flip("*.sst", func(n int) int { return n / 3 })
	flip("*.log", func(n int) int {
		if n < 3*32<<10 {
			return -1
		}
		return 32<<10 + 500
	})
	warcs, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	slices.Sort(warcs)
	rd, err := warc.OpenFile(warcs[1])
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	for n := 0; off < 0; n++ {
		rec, err := rd.Next()
		if err != nil {
			t.Fatalf("no response record among the first %d of %s: %v", n, warcs[1], err)
		}
		if rec.Type() == warc.TypeResponse && n > 4 {
			off = rec.Offset
		}
	}
	rd.Close()
	b, _ := os.ReadFile(warcs[1])
	b[off+40] ^= 0x08
	os.WriteFile(warcs[1], b, 0o600)
	return data
}

// copyData copies a data directory to a new one.
func copyData(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return to
}

// repairOutcome is what a repaired directory looks like from outside: what check data
// reports (its counts and damage, which repair cannot undo: lost captures) and how many
// documents the index has.
func repairOutcome(t *testing.T, data string) string {
	t.Helper()
	r := checkReport(t, data)
	problems := slices.Clone(r.Problems)
	return fmt.Sprintf("%d keys, %d pages, %d pointers, %d WARC files, %d records, %d index documents; problems: %q",
		r.Keys, r.Pages, r.Pointers, r.Files, r.Records, indexDocs(t, data), problems)
}

// TestCrashSweepRepair kills sonda repair with SIGKILL at the crash points it passes
// while mending a directory with a damaged table, write-ahead log and WARC record: each
// of its own steps (moving logs aside, replaying batches, copying and swapping the
// salvaged database, overwriting damaged WARC bytes, rebuilding the index) and Pebble's
// log and table writes, at their first arrival, and halfway through the replay. Repair
// then runs again (every fourth time after a second kill at another point): the
// directory must end exactly as an uninterrupted repair leaves it (check data's counts
// and findings, the index's documents).
func TestCrashSweepRepair(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real sonda processes")
	}
	start := time.Now()
	template := damagedTemplate(t)
	if r := checkReport(t, template); len(r.Problems) < 2 {
		t.Fatalf("the damaged template: check data found %q, want the log and the WARC file", r.Problems)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	ref := copyData(t, template)
	_, out := runCrash(t, crashEnv, "", trace, "repair", "--data", ref)
	for _, want := range []string{"warc: repaired", "store: replayed", "store: salvaged", "index: rebuilt"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the uninterrupted repair did not say %q:\n%s", want, out)
		}
	}
	want := repairOutcome(t, ref)
	counts := traceCounts(t, trace)
	t.Logf("uninterrupted repair (%v): %s\ncrash points reached: %v", time.Since(start), want, counts)
	for _, p := range []string{"warc.recover.fill", "store.repair.moved", "store.repair.batch", "store.repair.replayed",
		"store.salvage.copied", "store.salvage.swap", "app.rebuild.removed", "index.persist", "store.write.sst"} {
		if counts[p] == 0 {
			t.Errorf("the repair never reached crash point %s", p)
		}
	}
	// The first arrival at each point of repair's own steps and of Pebble's writes of
	// logs and tables (the manifest, marker and other small files are Pebble's own
	// crash-safe protocol, swept in the crawl), and one halfway through the replay.
	var plan []string
	for _, p := range slices.Sorted(maps.Keys(counts)) {
		if strings.HasPrefix(p, "store.sync.") || strings.HasPrefix(p, "store.write.") && !strings.HasSuffix(p, ".log") && !strings.HasSuffix(p, ".sst") {
			continue
		}
		plan = append(plan, p+":1")
	}
	plan = append(plan, fmt.Sprintf("store.repair.batch:%d", counts["store.repair.batch"]/2))
	for i, at := range plan {
		data := copyData(t, template)
		if killed, out := runCrash(t, crashEnv, at, "", "repair", "--data", data); !killed {
			t.Fatalf("repair did not reach crash point %s\n%s", at, out)
		}
		if i%4 == 3 { // and a second kill, in the repair that finishes the first
			runCrash(t, crashEnv, plan[(i+len(plan)/2)%len(plan)], "", "repair", "--data", data)
		}
		_, out := runCrash(t, crashEnv, "", "", "repair", "--data", data)
		if got := repairOutcome(t, data); got != want {
			t.Fatalf("killed at %s, then repaired:\n%s\nan uninterrupted repair:\n%s\nrepair said:\n%s", at, got, want, out)
		}
	}
	t.Logf("%d kills of repair, %v", len(plan), time.Since(start))
}
