package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestCorruptTableIsAnErrorAndSalvaged flips a byte in a table file: reads must fail
// with an error naming the file (Pebble's default is a panic), and Salvage must rebuild
// the database from every key outside the damaged block and report the range it lost.
func TestCorruptTableIsAnErrorAndSalvaged(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	put := func(prefix byte, n int) {
		b := db.Pebble().NewBatch()
		for i := range n {
			u := fmt.Sprintf("http://a.example/%d", i)
			uk := key(u)
			k := append([]byte{prefix}, uk[:]...)
			b.Set(k, []byte(`{"url":"`+u+`","title":"`+strings.Repeat("t", 40)+`"}`), nil)
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Pebble().Flush(); err != nil {
			t.Fatal(err)
		}
	}
	put(prefixPage, 3000) // one table of page records
	put('q', 2000)        // one of frontier queues
	db.Close()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) != 2 {
		t.Fatalf("tables %v, want 2", tables)
	}
	pageTable := tables[0] // the first flush
	data, _ := os.ReadFile(pageTable)
	data[len(data)/3] ^= 0x10
	os.WriteFile(pageTable, data, 0o644)

	db, err = Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Pages(func(*Page) error { return nil })
	if !pebble.IsCorruptionError(err) || !strings.Contains(err.Error(), pageTable) {
		t.Fatalf("reading pages from a corrupt table: %v; want a corruption error naming %s", err, pageTable)
	}
	if c := db.CorruptFiles(); len(c) != 1 || c[0].Path != pageTable {
		t.Fatalf("CorruptFiles = %v", c)
	}
	db.Close()

	// A cancelled salvage stops and changes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := hashDir(t, dir)
	if _, err := Salvage(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Salvage: %v", err)
	}
	if d := before.Diff(hashDir(t, dir)); len(d) > 0 {
		t.Fatalf("a cancelled Salvage changed %v", d)
	}
	report, err := Salvage(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("salvage: %q", report)
	if len(report) != 2 || !strings.Contains(report[0], "salvaged ") || !strings.Contains(report[1], pageTable) || !strings.Contains(report[1], "page records") {
		t.Fatalf("report %q", report)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	it, _ := db.Pebble().NewIter(nil)
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	// Every frontier key, and every page record outside the damaged block (the salvage
	// used to drop the corrupt table's whole key range: about 2,000 of the 3,000).
	if err := it.Close(); err != nil || n < 4850 || n >= 5000 || !strings.Contains(report[0], fmt.Sprintf("salvaged %d keys", n)) {
		t.Fatalf("salvaged database: %d keys (err %v), want the 2000 frontier keys and all but one block of the 3000 pages", n, err)
	}
	if again, err := Salvage(context.Background(), dir, Options{}); again != nil || err != nil {
		t.Fatalf("second Salvage: %q, %v; want nothing to do", again, err)
	}
}
