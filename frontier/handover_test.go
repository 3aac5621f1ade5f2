package frontier

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestPurgeRestore hands a host over and back: Purge forgets its queue but not its seen
// set, keeps busy hosts, and Restore requeues what the cluster's record says, with the
// host's rest time, surviving a reopen.
func TestPurgeRestore(t *testing.T) {
	fs := vfs.NewMem()
	db := memDB(t, fs)
	clock := &fakeClock{t: time.Unix(1000, 0)}
	f := open(t, db, clock, Options{})
	a1, a2, b1 := item("a.test", "/1", 1), item("a.test", "/2", 2), item("b.test", "/1", 1)
	if _, err := f.Add([]Item{a1, a2, b1}); err != nil {
		t.Fatal(err)
	}
	lb := nextNow(t, f) // a.test/2 has the highest priority
	if lb.Item.Host != "a.test" {
		t.Fatalf("leased %s, want a.test first", lb.Item.URL)
	}
	purged, busy, err := f.Purge(func(h string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if purged != 1 || busy != 1 {
		t.Fatalf("purged %d busy %d, want 1 (b.test) and 1 (a.test in flight)", purged, busy)
	}
	if err := f.Release(lb, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if purged, busy, err = f.Purge(func(h string) bool { return h == "a.test" }); err != nil || purged != 2 || busy != 0 {
		t.Fatalf("second purge: %d %d %v, want 2 0", purged, busy, err)
	}
	if st := f.Stats(); st.Queued != 0 || st.Hosts != 0 {
		t.Fatalf("after purge: %+v, want nothing queued", st)
	}
	if un, _, _ := f.Unseen([]Item{a1, b1, item("c.test", "/", 0), item("c.test", "/", 0)}); len(un) != 1 || un[0].Host != "c.test" {
		t.Fatalf("Unseen = %v, want only c.test once: the seen set survives a purge", un)
	}
	rest := clock.Now().Add(time.Minute)
	due := a2
	due.Due = clock.Now().Add(time.Second)
	if err := f.Restore([]Item{a1, due}, [][16]byte{b1.Key}, map[string]time.Time{"a.test": rest}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f = open(t, db, clock, Options{})
	if st := f.Stats(); st.Queued != 2 || st.Seen != 3 {
		t.Fatalf("after restore and reopen: %+v, want 2 queued, 3 seen", st)
	}
	if l := nextNow(t, f); l != nil {
		t.Fatalf("leased %s before the host's rest time", l.Item.URL)
	}
	clock.Advance(time.Minute)
	if l := nextNow(t, f); l == nil || l.Item.URL != due.URL {
		t.Fatalf("after the rest, want the due scheduled fetch first, got %v", l)
	}
}

// TestEndless: an endless frontier waits for URLs instead of reporting itself drained.
func TestEndless(t *testing.T) {
	db := memDB(t, vfs.NewMem())
	f, err := Open(db, Options{Endless: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on an empty endless frontier = %v, want it to wait", err)
	}
	go func() { _, _ = f.Add([]Item{item("a.test", "/", 0)}) }()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if l, err := f.Next(ctx2); err != nil || l.Item.Host != "a.test" {
		t.Fatalf("Next = %v, %v; want the URL added meanwhile", l, err)
	}
}

// TestRests lists the hosts still resting, with their time, for a hand-over: a lease handed
// back (as after a robots.txt request) sets a rest too, and a rest over is not listed.
func TestRests(t *testing.T) {
	db := memDB(t, vfs.NewMem())
	clock := &fakeClock{t: time.Unix(1000, 0)}
	f := open(t, db, clock, Options{})
	if _, err := f.Add([]Item{item("a.test", "/1", 1), item("b.test", "/1", 1), item("c.test", "/1", 1)}); err != nil {
		t.Fatal(err)
	}
	until := map[string]time.Time{"a.test": clock.Now().Add(time.Minute), "b.test": clock.Now().Add(time.Second)}
	for range 3 {
		l := nextNow(t, f)
		if err := f.Release(l, until[l.Item.Host]); err != nil {
			t.Fatal(err)
		}
	}
	got := f.Rests(func(h string) bool { return h != "b.test" })
	if len(got) != 1 || !got["a.test"].Equal(until["a.test"]) {
		t.Fatalf("Rests = %v, want only a.test until %v (b.test not matched, c.test not resting)", got, until["a.test"])
	}
	clock.t = clock.t.Add(2 * time.Minute)
	if got := f.Rests(func(string) bool { return true }); len(got) != 0 {
		t.Fatalf("Rests after every rest ended = %v, want none", got)
	}
}

// syncCountingFS counts the syncs of the files it creates (Pebble's log among them).
type syncCountingFS struct {
	vfs.FS
	syncs *atomic.Int64
}

type syncCountingFile struct {
	vfs.File
	syncs *atomic.Int64
}

func (f syncCountingFile) Sync() error     { f.syncs.Add(1); return f.File.Sync() }
func (f syncCountingFile) SyncData() error { f.syncs.Add(1); return f.File.SyncData() }

func (fs syncCountingFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return syncCountingFile{f, fs.syncs}, err
}

func (fs syncCountingFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(old, name, c)
	return syncCountingFile{f, fs.syncs}, err
}

// TestAddRecorded: AddRecorded admits as Add does (each URL once, never a seen one again)
// but does not wait for a log sync, which Add does.
func TestAddRecorded(t *testing.T) {
	var syncs atomic.Int64
	db := memDB(t, syncCountingFS{vfs.NewMem(), &syncs})
	f := open(t, db, &fakeClock{t: time.Unix(1000, 0)}, Options{})
	before := syncs.Load()
	adm, err := f.AddRecorded([]Item{item("a.test", "/1", 1), item("a.test", "/2", 1), item("a.test", "/1", 1)})
	if err != nil || adm.Added != 2 {
		t.Fatalf("AddRecorded: %+v, %v; want 2 added", adm, err)
	}
	if got := syncs.Load() - before; got != 0 {
		t.Errorf("AddRecorded synced %d times, want 0", got)
	}
	if adm, err = f.AddRecorded([]Item{item("a.test", "/2", 1)}); err != nil || adm.Added != 0 || adm.Seen != 1 {
		t.Errorf("AddRecorded of a seen URL: %+v, %v; want it seen, not added", adm, err)
	}
	if st := f.Stats(); st.Queued != 2 || st.Seen != 2 {
		t.Errorf("after AddRecorded: %+v, want 2 queued, 2 seen", st)
	}
	before = syncs.Load()
	if _, err := f.Add([]Item{item("b.test", "/", 1)}); err != nil {
		t.Fatal(err)
	}
	if syncs.Load() == before {
		t.Error("Add did not sync: the counting file system sees no sync at all")
	}
}

// TestAddUnseen: AddUnseen admits what Unseen found unseen without reading the seen set
// again, yet never admits a URL twice: one admitted between the two calls is caught by the
// seen cache, and once the cache no longer holds all that was added since (it rotated
// twice), by reading the seen set.
func TestAddUnseen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache int // Options.SeenCache: 4 keeps two generations of 2 keys
		check bool
	}{
		{"cache covers", 0, true},
		{"cache rotated past the check", 4, true},
		{"zero check", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, memDB(t, vfs.NewMem()), &fakeClock{t: time.Unix(1000, 0)}, Options{SeenCache: tc.cache})
			a, b := item("a.test", "/a", 1), item("b.test", "/b", 1)
			fresh, c, err := f.Unseen([]Item{a, b, a})
			if err != nil || len(fresh) != 2 {
				t.Fatalf("Unseen: %v, %v; want a and b once", fresh, err)
			}
			// a is admitted meanwhile, and then (small cache) enough others to evict it.
			others := []Item{a}
			for i := range 6 {
				others = append(others, item("c.test", fmt.Sprintf("/%d", i), 1))
			}
			if _, err := f.AddRecorded(others); err != nil {
				t.Fatal(err)
			}
			if !tc.check {
				c = SeenCheck{}
			}
			adm, err := f.AddUnseen(fresh, c)
			if err != nil || adm.Added != 1 || adm.Seen != 1 {
				t.Fatalf("AddUnseen: %+v, %v; want b added and a seen (admitted in between)", adm, err)
			}
			if st := f.Stats(); st.Queued != 8 || st.Seen != 8 {
				t.Errorf("after AddUnseen: %+v, want 8 queued, 8 seen", st)
			}
		})
	}
}
