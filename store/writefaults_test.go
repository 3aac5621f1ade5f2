package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// The write-fault child: the test binary re-run with these set writes pages into a database
// through errorfs and fails the k-th write operation (create, write, sync, rename, close...)
// with an errno. Pebble ends the process when a write it cannot take back fails (a flush, a
// manifest), so each fault gets a process of its own, as a real full disk would.
const (
	faultDirEnv  = "STORE_WRITE_FAULT_DIR"  // the database directory
	faultAtEnv   = "STORE_WRITE_FAULT_AT"   // the index of the write operation to fail; -1 counts them
	faultKindEnv = "STORE_WRITE_FAULT_KIND" // "enospc" (every write from then on fails: a full disk) or "eio" (that one only)
)

// Workload size: enough pages, in small memtables, that the run flushes tables, writes the
// manifest and rotates logs (the kinds of writes the sweep needs to reach).
const (
	faultPages = 600
	faultBatch = 5
)

func faultTitle(i int) string { return fmt.Sprintf("page %d %s", i, strings.Repeat("t", 80)) }

// TestWriteFaultChild is the child's body; it does nothing in a normal run.
func TestWriteFaultChild(t *testing.T) {
	dir := os.Getenv(faultDirEnv)
	if dir == "" {
		t.Skip("the child of TestInjectedWriteFaultsLoseNothing")
	}
	at, _ := strconv.Atoi(os.Getenv(faultAtEnv))
	sticky := os.Getenv(faultKindEnv) == "enospc"
	errno := syscall.EIO
	if sticky {
		errno = syscall.ENOSPC
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush() // each line must be out before a fatal error ends the process
	}
	var seen atomic.Int32
	var failing atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() != errorfs.OpIsWrite {
			return nil
		}
		k := seen.Add(1) - 1
		if at < 0 {
			say("op %d %s", op.Kind, fileKind(op.Path))
			return nil
		}
		if int(k) == at || sticky && failing.Load() {
			if !failing.Swap(true) {
				say("fault %d %s %s", op.Kind, fileKind(op.Path), filepath.Base(op.Path))
			}
			return fmt.Errorf("%s: %w (%w)", op.Path, errno, errorfs.ErrInjected)
		}
		return nil
	})
	stop := func(err error) {
		say("stopped: %v", err)
		os.Exit(3)
	}
	db, err := Open(dir, Options{SyncInterval: -1, MemTableSize: 32 << 10, fs: errorfs.Wrap(vfs.Default, inj)})
	if err != nil {
		stop(err)
	}
	for i := 0; i < faultPages; i += faultBatch {
		b := db.Pebble().NewBatch()
		for j := i; j < i+faultBatch; j++ {
			u := fmt.Sprintf("http://f.example/%d", j)
			if err := PutPage(b, key(u), &Page{URL: u, Title: faultTitle(j)}); err != nil {
				stop(err)
			}
		}
		if err := b.Commit(pebble.Sync); err != nil {
			stop(err)
		}
		say("ack %d", i+faultBatch) // pages [0, i+faultBatch) are committed
	}
	if err := db.Close(); err != nil {
		stop(err)
	}
	say("done %d", seen.Load())
}

// TestInjectedWriteFaultsLoseNothing (issue 14 §1) fails one write operation inside Pebble
// with EIO, or every write from one on with ENOSPC (a disk that fills up), at points spread
// over a run that writes 600 pages in synced batches through 32 KiB memtables: the log's
// writes and syncs, table and manifest writes of flushes, renames, creates and closes.
// At each point the run must stop cleanly (Pebble's fatal disk error, which sonda turns
// into an exit naming the disk, or an error returned to the writer) or finish; never
// panic. Then a clean open (read-write, as the next crawl) must succeed and hold every
// page whose batch was acknowledged, each intact, and no page that was never written.
func TestInjectedWriteFaultsLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary once per fault point")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type result struct {
		code   int
		stdout string
		stderr string
	}
	child := func(at int, kind string) (string, result) {
		dir := filepath.Join(t.TempDir(), "db")
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWriteFaultChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), faultDirEnv+"="+dir, faultAtEnv+"="+strconv.Itoa(at), faultKindEnv+"="+kind)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		r := result{stdout: stdout.String(), stderr: stderr.String()}
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			r.code = exit.ExitCode()
		default:
			t.Fatalf("running the child: %v", err)
		}
		return dir, r
	}

	// A run without a fault numbers the write operations and says what each writes.
	_, ref := child(-1, "eio")
	if ref.code != 0 || !strings.Contains(ref.stdout, "done ") {
		t.Fatalf("the run without a fault ended with %d: %s %s", ref.code, ref.stdout, ref.stderr)
	}
	var ops []string // "kind file" by index
	for _, line := range strings.Split(ref.stdout, "\n") {
		var kind int
		var file string
		if _, err := fmt.Sscanf(line, "op %d %s", &kind, &file); err == nil {
			ops = append(ops, opName(errorfs.OpKind(kind))+"/"+file)
		}
	}
	// The points: every operation that is not the log's own write or sync (the first of each
	// kind of file and operation, up to 4 each), and the log's at 12 places spread over the run.
	var points []int
	perKind := map[string]int{}
	for i, op := range ops {
		if op == "write/log" || op == "sync/log" {
			continue
		}
		if perKind[op] < 4 {
			perKind[op]++
			points = append(points, i)
		}
	}
	for i := 1; i <= 12; i++ {
		points = append(points, i*len(ops)/13)
	}
	sort.Ints(points)
	t.Logf("%d write operations in the run; %d fault points over %d kinds: %v", len(ops), len(points), len(perKind), perKind)

	outcomes := map[string]int{}
	hit := map[string]int{}
	for n, at := range points {
		kind := []string{"enospc", "eio"}[n%2]
		dir, r := child(at, kind)
		if ctx.Err() != nil {
			t.Fatalf("out of time after %d of %d points", n, len(points))
		}
		acked, faulted := 0, ""
		for _, line := range strings.Split(r.stdout, "\n") {
			fmt.Sscanf(line, "ack %d", &acked)
			if strings.HasPrefix(line, "fault ") {
				var k int
				var file, name string
				fmt.Sscanf(line, "fault %d %s %s", &k, &file, &name)
				faulted = opName(errorfs.OpKind(k)) + "/" + file
			}
		}
		if faulted != "" {
			hit[faulted]++
		}
		what := fmt.Sprintf("%s at write %d (%s)", kind, at, faulted)
		switch {
		case r.code == 0:
			outcomes["finished"]++
		case r.code == 1 && strings.Contains(r.stderr, "the crawl database cannot write"):
			outcomes["stopped by Pebble's fatal disk error"]++
		case r.code == 3 && (strings.Contains(r.stdout, syscall.ENOSPC.Error()) || strings.Contains(r.stdout, syscall.EIO.Error())):
			outcomes["stopped by an error returned to the writer"]++
		default:
			t.Errorf("%s: the child ended with %d, not a clean stop:\n%s", what, r.code, firstPanic(r.stderr))
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			if acked > 0 {
				t.Errorf("%s: %d pages acknowledged but no database directory", what, acked)
			}
			continue
		}
		// The next run opens the directory read-write, without faults.
		db, err := Open(dir, Options{SyncInterval: -1})
		if err != nil {
			t.Errorf("%s: %d pages acknowledged, then the clean open fails: %v", what, acked, err)
			continue
		}
		have := map[int]bool{}
		err = db.Pages(func(p *Page) error {
			i, err := strconv.Atoi(strings.TrimPrefix(p.URL, "http://f.example/"))
			if err != nil || i < 0 || i >= faultPages || p.Title != faultTitle(i) {
				return fmt.Errorf("a page that was never written: %+v", p)
			}
			have[i] = true
			return nil
		})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Errorf("%s: reading back: %v", what, err)
			continue
		}
		for i := range acked {
			if !have[i] {
				t.Errorf("%s: page %d of %d acknowledged is lost (%d pages found)", what, i, acked, len(have))
				break
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
	t.Logf("operations the faults hit: %v", hit)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// opName names the write operations errorfs counts.
func opName(k errorfs.OpKind) string {
	switch k {
	case errorfs.OpCreate:
		return "create"
	case errorfs.OpLink:
		return "link"
	case errorfs.OpRemove, errorfs.OpRemoveAll:
		return "remove"
	case errorfs.OpRename:
		return "rename"
	case errorfs.OpReuseForWrite:
		return "reuse"
	case errorfs.OpMkdirAll:
		return "mkdir"
	case errorfs.OpLock:
		return "lock"
	case errorfs.OpFileClose:
		return "close"
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		return "write"
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFileFlush:
		return "sync"
	case errorfs.OpFilePreallocate:
		return "preallocate"
	}
	return fmt.Sprintf("op%d", k)
}

// firstPanic is the panic line of a child's stderr and the frames below it.
func firstPanic(s string) string {
	i := strings.Index(s, "panic: ")
	if i < 0 {
		return lastLines(s, 15)
	}
	lines := strings.Split(s[i:], "\n")
	return strings.Join(lines[:min(len(lines), 12)], "\n")
}
